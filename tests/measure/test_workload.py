"""Random prompts: exact lengths and no prefix a cache could share, at any number of prompts."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from servetune.measure import workload
from servetune.measure.workload import KV_BLOCK_TOKENS, Prompt, WorkloadSpec


class SubwordTokenizer:
    """A stand-in for a byte-level BPE tokenizer (GPT-2 / Qwen style), served as `/tokenize` and
    `/detokenize` would be: a text splits at spaces into words (a word keeps its leading space),
    each word into pieces of up to three characters. Like a real one, several ids make one word,
    a window of ids can start or end inside a word, and decode(encode(text)) == text."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.pieces: list[str] = []
        self.calls = 0

    def encode(self, text: str) -> list[int]:
        out = []
        for word in re.findall(r" ?[^ ]+| ", text):
            for i in range(0, len(word), 3):
                piece = word[i : i + 3]
                if piece not in self.ids:
                    self.ids[piece] = len(self.pieces)
                    self.pieces.append(piece)
                out.append(self.ids[piece])
        return out

    def decode(self, ids: list[int]) -> str:
        return "".join(self.pieces[i] for i in ids)

    async def tokenize(self, text: str) -> list[int] | None:
        self.calls += 1
        return self.encode(text)

    async def detokenize(self, ids: list[int]) -> str | None:
        return self.decode(ids)


def prefix_cache_hits(token_lists: list[list[int]], block: int = KV_BLOCK_TOKENS) -> int:
    """Tokens a prefix cache of unlimited size would serve from cache, sending the prompts in
    order: vLLM's rule (full blocks only, each keyed by its tokens and every block before it)."""
    seen: set[tuple[int, ...]] = set()
    hits = 0
    for ids in token_lists:
        for end in range(block, len(ids) + 1, block):
            key = tuple(ids[:end])
            if key in seen:
                hits += block
            seen.add(key)
    return hits


def make(spec: WorkloadSpec, seed: int = 0) -> tuple[list[Prompt], SubwordTokenizer, str]:
    tok = SubwordTokenizer()
    prompts, mode = asyncio.run(
        workload.random_prompts(spec, random.Random(seed), tok.tokenize, tok.detokenize)
    )
    return prompts, tok, mode


def test_10000_prompts_share_no_block_beyond_the_common_prefix() -> None:
    spec = WorkloadSpec(
        num_prompts=10_000,
        random_input_len=64,
        random_output_len=8,
        random_range_ratio=0.5,
        random_prefix_len=40,
    )
    prompts, tok, mode = make(spec)
    assert mode == "server"
    assert len(prompts) == 10_000
    as_served = [tok.encode(p.text or "") for p in prompts]  # what the server tokenizes
    # The prefix and a prompt's own tokens are cut from different texts: where they meet, the
    # word pieces on either side may tokenize a little differently. Nowhere else.
    assert all(
        abs(len(ids) - (p.input_len or 0)) <= 2 for ids, p in zip(as_served, prompts, strict=True)
    )
    assert len({p.input_len for p in prompts}) > 30  # the range ratio really varied them
    assert len({tuple(ids[:36]) for ids in as_served}) == 1
    # A prefix cache serves the prefix's two full blocks again and again, and nothing else:
    # every prompt is distinct from the first block after the prefix on.
    assert prefix_cache_hits(as_served) == (10_000 - 1) * 32
    assert prefix_cache_hits([ids[32:] for ids in as_served]) == 0
    assert tok.calls < 20  # a handful of long texts, not one call per prompt


def test_long_prompts_without_a_prefix_never_hit_a_cache() -> None:
    spec = WorkloadSpec(num_prompts=500, random_input_len=1024, random_output_len=8)
    prompts, tok, _ = make(spec, seed=3)
    as_served = [tok.encode(p.text or "") for p in prompts]
    assert all(len(ids) == 1024 for ids in as_served)  # no prefix: exactly the asked length
    assert prefix_cache_hits(as_served) == 0


def test_the_seed_decides_and_the_content_seed_changes_only_the_text() -> None:
    spec = WorkloadSpec(
        num_prompts=50, random_input_len=48, random_output_len=8, random_range_ratio=0.3
    )
    first, _, _ = make(spec, seed=5)
    again, _, _ = make(spec, seed=5)
    assert [p.text for p in first] == [p.text for p in again]
    tok = SubwordTokenizer()
    other, _ = asyncio.run(
        workload.random_prompts(
            spec, random.Random(5), tok.tokenize, tok.detokenize, content_rng=random.Random(6)
        )
    )
    # Same shape (lengths drawn from the seed), other texts: repeats do not warm each other.
    assert [(p.input_len, p.max_tokens) for p in other] == [
        (p.input_len, p.max_tokens) for p in first
    ]
    both = [tok.encode(p.text or "") for p in first] + [tok.encode(p.text or "") for p in other]
    assert prefix_cache_hits(both) == 0


def test_without_a_tokenizer_prompts_are_distinct_words() -> None:
    spec = WorkloadSpec(
        num_prompts=3000, random_input_len=20, random_output_len=8, random_prefix_len=4
    )
    prompts, mode = asyncio.run(workload.random_prompts(spec, random.Random(0)))
    assert mode == "approximate"
    words = [(p.text or "").split() for p in prompts]
    assert all(len(w) == 24 for w in words)
    assert len({tuple(w[:4]) for w in words}) == 1
    assert len({tuple(w[4 : 4 + KV_BLOCK_TOKENS]) for w in words}) == 3000


@pytest.mark.parametrize("length", [1, 5])
def test_prompts_shorter_than_a_block_still_come(length: int) -> None:
    """Fewer distinct starts than prompts is possible below one block; they come anyway."""
    spec = WorkloadSpec(num_prompts=2000, random_input_len=length, random_output_len=4)
    prompts, tok, _ = make(spec)
    assert len(prompts) == 2000
    assert all(len(tok.encode(p.text or "")) == length for p in prompts)


def test_a_server_without_a_tokenizer_falls_back() -> None:
    async def refuse(_: str) -> list[int] | None:
        return None

    async def never(_: list[int]) -> str | None:
        return None

    spec = WorkloadSpec(num_prompts=3, random_input_len=10, random_output_len=4)
    prompts, mode = asyncio.run(workload.random_prompts(spec, random.Random(0), refuse, never))
    assert mode == "approximate" and len(prompts) == 3
