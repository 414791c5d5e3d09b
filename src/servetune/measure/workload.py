"""What a load test sends: prompts with their output lengths.

Datasets: `random` (prompts of a requested token length), `jsonl` (one `{"prompt": ...}` or
`{"messages": [...]}` per line, optional `max_tokens`) and `sharegpt` (a ShareGPT-format JSON
file given by path; nothing is downloaded).

Random prompts are cut to length with the server's own tokenizer when it offers `/tokenize` and
`/detokenize` (vLLM does): a long random text is tokenized once, and each prompt is a window of
exactly the requested number of token ids, detokenized. Without those endpoints the documented
approximation is one common English word per token. Either way, the prompt token counts in the
results are the ones the server reports in `usage`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from servetune.errors import UsageError

DatasetName = Literal["random", "jsonl", "sharegpt"]
Tokenize = Callable[[str], Awaitable[list[int] | None]]
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


async def random_prompts(
    spec: WorkloadSpec,
    rng: random.Random,
    tokenize: Tokenize | None = None,
    detokenize: Detokenize | None = None,
) -> tuple[list[Prompt], str]:
    """`num_prompts` random prompts and how their length was made ("server" or "approximate")."""
    n = spec.num_prompts
    inputs = _lengths(spec.random_input_len, spec.random_range_ratio, n, rng)
    outputs = _lengths(spec.random_output_len, spec.random_range_ratio, n, rng)
    longest = max(inputs, default=0) + spec.random_prefix_len
    words = [rng.choice(_WORDS) for _ in range(max(64, longest * 2))]
    ids = await tokenize(" ".join(words)) if tokenize is not None else None
    if ids and detokenize is not None:
        while len(ids) < longest + 1:
            ids = ids + ids
        prefix = await detokenize(ids[: spec.random_prefix_len]) if spec.random_prefix_len else ""
        prompts = []
        for length, out in zip(inputs, outputs, strict=True):
            start = rng.randrange(spec.random_prefix_len, len(ids) - length + 1)
            body = await detokenize(ids[start : start + length])
            if body is None:
                break
            text = f"{prefix}{body}" if prefix else body
            prompts.append(Prompt(text, None, out, length + spec.random_prefix_len))
        else:
            return prompts, "server"
    shared = words[: spec.random_prefix_len]
    approximate = []
    for length, out in zip(inputs, outputs, strict=True):
        chosen = [rng.choice(_WORDS) for _ in range(length)]
        approximate.append(
            Prompt(" ".join(shared + chosen), None, out, length + spec.random_prefix_len)
        )
    return approximate, "approximate"


def _read_json_file(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from exc


def _jsonl_line(obj: object, where: str, default_output: int) -> Prompt:
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected a JSON object")
    max_tokens = obj.get("max_tokens", default_output)
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise UsageError(f"{where}: max_tokens must be a positive integer")
    if isinstance(obj.get("prompt"), str):
        return Prompt(str(obj["prompt"]), None, max_tokens, None)
    messages = obj.get("messages")
    if isinstance(messages, list) and messages and all(isinstance(m, dict) for m in messages):
        return Prompt(None, tuple(messages), max_tokens, None)
    raise UsageError(
        f"{where}: needs a string 'prompt' or a list of 'messages'",
        'each line: {"prompt": "..."} or {"messages": [{"role": "user", "content": "..."}]}',
    )


def jsonl_prompts(path: Path, default_output: int) -> list[Prompt]:
    """Every line of a JSONL file as a prompt (blank lines skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc
    prompts = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{path}:{number}: not valid JSON ({exc})") from exc
        prompts.append(_jsonl_line(obj, f"{path}:{number}", default_output))
    if not prompts:
        raise UsageError(f"{path} holds no prompts")
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
        raise UsageError(f"{path} is not a ShareGPT file (a JSON list of conversations)")
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
        raise UsageError(f"{path} holds no usable conversations", "expected ShareGPT format")
    return prompts


def pick(prompts: Sequence[Prompt], n: int, rng: random.Random) -> list[Prompt]:
    """`n` prompts in a seeded order, cycling through the file when it holds fewer."""
    order = list(prompts)
    rng.shuffle(order)
    return [order[i % len(order)] for i in range(n)]
