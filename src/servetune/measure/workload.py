"""What a load test sends: prompts with their output lengths.

Datasets: `random` (prompts of a requested token length), `jsonl` (one `{"prompt": ...}` or
`{"messages": [...]}` per line, optional `max_tokens`) and `sharegpt` (a ShareGPT-format JSON
file given by path; nothing is downloaded).

Random prompts are cut to length with the server's own tokenizer when it offers `/tokenize` and
`/detokenize` (vLLM does): long random texts are tokenized, and each prompt is a window of
exactly the requested number of token ids, detokenized. Without those endpoints the documented
approximation is one common English word per token. Either way, the prompt token counts in the
results are the ones the server reports in `usage`.

No two random prompts share their first KV block (16 tokens) after the optional shared
`--random-prefix-len` prefix, however many there are: a prefix cache (on by default in vLLM)
cannot skip the prefill of one prompt because of another. `vllm bench serve` gets the same from
its construction (consecutive token ids from a per-prompt random offset); servetune keeps a set
of first blocks and never hands out one twice.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from servetune.errors import UsageError
from servetune.texts import ErrorText

DatasetName = Literal["random", "jsonl", "sharegpt"]
Tokenize = Callable[[str], Awaitable[list[int] | None]]
KV_BLOCK_TOKENS = 16  # vLLM's default block size on GPUs: prompts differ within their first block
_SEGMENT_WORDS = 4096  # words per tokenized text: about as many window offsets
_DETOKENIZE_AT_ONCE = 16
_FRESH_SEGMENTS_PER_PROMPT = 3
Detokenize = Callable[[list[int]], Awaitable[str | None]]

_WORDS = (  # noqa: SIM905 - a word list reads better as text
    "the of and to in is it you that he was for on are with as his they be at one have this "
    "from or had by hot word but what some we can out other were all there when up use your "
    "how said an each she which do their time if will way about many then them write would "
    "like so these her long make thing see him two has look more day could go come did number "
    "sound no most people my over know water than call first who may down side been now find "
    "any new work part take get place made live where after back little only round man year "
    "came show every good me give our under name very through just form sentence great think "
    "say help low line differ turn cause much mean before move right boy old too same tell"
).split()


@dataclass(frozen=True)
class Prompt:
    """One request's input. Exactly one of `text` and `messages` is set."""

    text: str | None
    messages: tuple[dict[str, object], ...] | None
    max_tokens: int
    input_len: int | None  # tokens requested or counted before the run (None: unknown)


@dataclass(frozen=True)
class WorkloadSpec:
    dataset_name: DatasetName = "random"
    dataset_path: Path | None = None
    num_prompts: int = 1000
    random_input_len: int = 1024
    random_output_len: int = 128
    random_range_ratio: float = 0.0
    random_prefix_len: int = 0
    sharegpt_output_len: int | None = None
    tokenizer_mode: Literal["server", "approximate"] | None = None  # set after the build


def _lengths(base: int, ratio: float, n: int, rng: random.Random) -> list[int]:
    """Lengths drawn uniformly from [base x (1 - ratio), base x (1 + ratio)], at least 1."""
    if ratio <= 0:
        return [max(1, base)] * n
    low, high = max(1, int(base * (1 - ratio))), max(1, int(base * (1 + ratio)))
    return [rng.randint(low, high) for _ in range(n)]


def _words(count: int, rng: random.Random) -> list[str]:
    return [rng.choice(_WORDS) for _ in range(count)]


@dataclass
class _Windows:
    """Distinct windows of token ids cut from segments of tokenized random text.

    Every window starts at its own offset, and no two windows share their first `key_len` ids
    (one KV block): the server's prefix cache finds nothing to reuse between two prompts. A
    segment of T ids offers T - longest + 1 offsets; more segments are tokenized as needed.
    """

    key_len: int
    seen: set[tuple[int, ...]] = field(default_factory=set)
    offsets: list[tuple[int, int]] = field(default_factory=list)  # (segment, offset), unused
    segments: list[list[int]] = field(default_factory=list)

    def add(self, ids: list[int], longest: int, rng: random.Random) -> None:
        number = len(self.segments)
        self.segments.append(ids)
        fresh = [(number, s) for s in range(len(ids) - longest + 1)]
        rng.shuffle(fresh)
        self.offsets = fresh + self.offsets  # popped from the end: older offsets go first

    def take(self, length: int, *, unique: bool = True) -> list[int] | None:
        """A window of `length` ids whose first block no earlier window had (any window when
        not `unique`); None when this pool has no such offset left."""
        while self.offsets:
            number, start = self.offsets.pop()
            window = self.segments[number][start : start + length]
            key = tuple(window[: self.key_len])
            if key not in self.seen or not unique:
                self.seen.add(key)
                return window
        return None


async def _segment(
    words: int, longest: int, rng: random.Random, tokenize: Tokenize
) -> list[int] | None:
    """Token ids of a fresh random text long enough for one window of `longest` ids."""
    for _ in range(4):  # a tokenizer that merges words: try longer texts
        ids = await tokenize(" ".join(_words(words, rng)))
        if not ids:
            return None
        if len(ids) >= longest:
            return ids
        words *= 2
    return None


async def _server_windows(
    lengths: list[int], rng: random.Random, tokenize: Tokenize
) -> list[list[int]] | None:
    """One distinct window per length, or None when the server cannot tokenize."""
    longest = max(lengths, default=1)
    pool = _Windows(key_len=KV_BLOCK_TOKENS)
    words = max(2 * longest, _SEGMENT_WORDS)
    windows: list[list[int]] = []
    for length in lengths:
        # A prompt shorter than a block fills no block a cache could share (and there may be
        # fewer distinct short windows than prompts): it need not be unique.
        unique = length >= KV_BLOCK_TOKENS
        window = pool.take(length, unique=unique)
        tries = 0
        while window is None:
            ids = await _segment(words, longest, rng, tokenize)
            if ids is None:
                return None
            pool.add(ids, longest, rng)
            tries += 1  # a tokenizer with very few distinct ids: stop insisting at some point
            window = pool.take(length, unique=unique and tries < _FRESH_SEGMENTS_PER_PROMPT)
        windows.append(window)
    return windows


async def _detokenize_all(windows: list[list[int]], detokenize: Detokenize) -> list[str | None]:
    """Every window as text, a few requests at a time (order kept)."""
    limit = asyncio.Semaphore(_DETOKENIZE_AT_ONCE)

    async def one(ids: list[int]) -> str | None:
        async with limit:
            return await detokenize(ids)

    return list(await asyncio.gather(*(one(w) for w in windows)))


async def _server_prompts(
    spec: WorkloadSpec,
    lengths: list[int],
    outputs: list[int],
    rng: random.Random,
    calls: tuple[Tokenize, Detokenize],
) -> list[Prompt] | None:
    tokenize, detokenize = calls
    prefix = ""
    if spec.random_prefix_len:
        head = await _segment(spec.random_prefix_len, spec.random_prefix_len, rng, tokenize)
        text = await detokenize(head[: spec.random_prefix_len]) if head else None
        if text is None:
            return None
        prefix = text
    windows = await _server_windows(lengths, rng, tokenize)
    if windows is None:
        return None
    bodies = await _detokenize_all(windows, detokenize)
    prompts = []
    for body, length, out in zip(bodies, lengths, outputs, strict=True):
        if body is None:
            return None
        prompts.append(Prompt(_join(prefix, body), None, out, length + spec.random_prefix_len))
    return prompts


def _join(prefix: str, body: str) -> str:
    """Prefix and body with a space between when neither brings one: a window may start or end
    inside a word, and two word pieces written together would tokenize as something else."""
    if prefix and body and not prefix[-1].isspace() and not body[0].isspace():
        return f"{prefix} {body}"
    return prefix + body


def _approximate_prompts(
    spec: WorkloadSpec, lengths: list[int], outputs: list[int], rng: random.Random
) -> list[Prompt]:
    """One common word per token; the first block of words distinct between prompts."""
    shared = _words(spec.random_prefix_len, rng)
    seen: set[tuple[str, ...]] = set()
    prompts = []
    for length, out in zip(lengths, outputs, strict=True):
        chosen = _words(length, rng)
        for _ in range(100):  # 200 words to the power 16: a repeat is all but impossible
            key = tuple(chosen[:KV_BLOCK_TOKENS])
            if key not in seen:
                break
            chosen = _words(length, rng)
        seen.add(tuple(chosen[:KV_BLOCK_TOKENS]))
        text = " ".join(shared + chosen)
        prompts.append(Prompt(text, None, out, length + spec.random_prefix_len))
    return prompts


async def random_prompts(
    spec: WorkloadSpec,
    rng: random.Random,
    tokenize: Tokenize | None = None,
    detokenize: Detokenize | None = None,
    *,
    content_rng: random.Random | None = None,
) -> tuple[list[Prompt], str]:
    """`num_prompts` random prompts and how their length was made ("server" or "approximate").

    `rng` draws the lengths (the workload's shape), `content_rng` (default: `rng`) the text.
    No two prompts share their first KV block of tokens after the `random_prefix_len` prefix
    that all of them share, however many there are.
    """
    n = spec.num_prompts
    inputs = _lengths(spec.random_input_len, spec.random_range_ratio, n, rng)
    outputs = _lengths(spec.random_output_len, spec.random_range_ratio, n, rng)
    text_rng = content_rng or rng
    if tokenize is not None and detokenize is not None:
        made = await _server_prompts(spec, inputs, outputs, text_rng, (tokenize, detokenize))
        if made is not None:
            return made, "server"
    return _approximate_prompts(spec, inputs, outputs, text_rng), "approximate"


def _read_json_file(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(ErrorText("cannot-read", path=path, reason=exc.strerror or exc)) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(ErrorText("workload.not-json", path=path, reason=exc)) from exc


def _jsonl_line(obj: object, where: str, default_output: int) -> Prompt:
    if not isinstance(obj, dict):
        raise UsageError(ErrorText("workload.not-object", where=where))
    max_tokens = obj.get("max_tokens", default_output)
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise UsageError(ErrorText("workload.max-tokens", where=where))
    if isinstance(obj.get("prompt"), str):
        return Prompt(str(obj["prompt"]), None, max_tokens, None)
    messages = obj.get("messages")
    if isinstance(messages, list) and messages and all(isinstance(m, dict) for m in messages):
        return Prompt(None, tuple(messages), max_tokens, None)
    raise UsageError(ErrorText("workload.no-prompt", where=where))


def jsonl_prompts(path: Path, default_output: int) -> list[Prompt]:
    """Every line of a JSONL file as a prompt (blank lines skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(ErrorText("cannot-read", path=path, reason=exc)) from exc
    prompts = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            said = ErrorText("workload.line-not-json", path=path, number=number, reason=exc)
            raise UsageError(said) from exc
        prompts.append(_jsonl_line(obj, f"{path}:{number}", default_output))
    if not prompts:
        raise UsageError(ErrorText("workload.no-prompts", path=path))
    return prompts


def _turn_text(turn: object) -> tuple[str, str] | None:
    if not isinstance(turn, dict):
        return None
    speaker = turn.get("from", turn.get("role"))
    text = turn.get("value", turn.get("content"))
    if isinstance(speaker, str) and isinstance(text, str):
        return speaker, text
    return None


def sharegpt_prompts(path: Path, fixed_output: int | None) -> list[Prompt]:
    """First human turn as the prompt; the answer's length (in words x 1.3, or the fixed
    --sharegpt-output-len) as max_tokens."""
    data = _read_json_file(path)
    if not isinstance(data, list):
        raise UsageError(ErrorText("workload.not-sharegpt", path=path))
    prompts = []
    for item in data:
        turns = item.get("conversations") if isinstance(item, dict) else None
        if not isinstance(turns, list):
            continue
        read = [t for t in (_turn_text(turn) for turn in turns) if t is not None]
        if len(read) < 2 or not read[0][1].strip():
            continue
        answer_tokens = max(1, round(len(read[1][1].split()) * 1.3))
        prompts.append(Prompt(read[0][1], None, fixed_output or answer_tokens, None))
    if not prompts:
        raise UsageError(ErrorText("workload.no-conversations", path=path))
    return prompts


def pick(prompts: Sequence[Prompt], n: int, rng: random.Random) -> list[Prompt]:
    """`n` prompts in a seeded order, cycling through the file when it holds fewer."""
    order = list(prompts)
    rng.shuffle(order)
    return [order[i % len(order)] for i in range(n)]
