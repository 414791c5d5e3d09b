"""Repeated runs and the server's prefix cache: isolation, the hit rate from /metrics, the warning.

The stand-in server keeps a prefix cache the way vLLM counts one: prompts tokenized (here one word
a token), full 16-token blocks each keyed by every token up to its end; `prefix_cache_queries`
grows by a prompt's tokens, `prefix_cache_hits` by the tokens of its blocks seen before. With
`dev_mode` it also offers `POST /reset_prefix_cache`, as vLLM does with VLLM_SERVER_DEV_MODE=1.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from servetune.measure.bench import BenchConfig, run_bench
from servetune.measure.result_schema import ResultDoc
from servetune.measure.results import document, summarize
from servetune.measure.workload import WorkloadSpec
from servetune.render.bench import bench_text

from stub_server import StubBehaviour, StubServer, ThreadedStub

BLOCK = 16


class CachingStub(StubServer):
    def __init__(self, *, dev_mode: bool) -> None:
        super().__init__(StubBehaviour())
        self.seen: set[tuple[str, ...]] = set()
        self.hits = self.queries = 0
        self.scanned = 0
        self.resets = 0
        if dev_mode:
            self._routes["/reset_prefix_cache"] = ("POST", self._reset_cache)

    def _scan(self) -> None:
        for request in self.received[self.scanned :]:
            body = request.body or {}
            if request.path != "/v1/completions" or not isinstance(body.get("prompt"), str):
                continue
            words = tuple(body["prompt"].split())
            self.queries += len(words)
            for end in range(BLOCK, len(words) + 1, BLOCK):
                if words[:end] in self.seen:
                    self.hits += BLOCK
                self.seen.add(words[:end])
        self.scanned = len(self.received)

    def _metrics(self, request: Any) -> tuple[int, bytes, str]:
        self._scan()
        status, body, kind = super()._metrics(request)
        labels = '{engine="0",model_name="stub"}'
        extra = (
            f"vllm:prefix_cache_queries_total{labels} {float(self.queries)}\n"
            f"vllm:prefix_cache_hits_total{labels} {float(self.hits)}\n"
        )
        return status, body + extra.encode(), kind

    def _reset_cache(self, _: Any) -> tuple[int, bytes, str]:
        self._scan()
        self.seen.clear()
        self.resets += 1
        return 200, b"", "text/plain"


def caching_stub(*, dev_mode: bool) -> ThreadedStub:
    threaded = ThreadedStub()
    threaded.server = CachingStub(dev_mode=dev_mode)
    return threaded


@pytest.fixture
def plain() -> Iterator[ThreadedStub]:
    with caching_stub(dev_mode=False) as running:
        yield running


@pytest.fixture
def dev() -> Iterator[ThreadedStub]:
    with caching_stub(dev_mode=True) as running:
        yield running


def run_once(stub: ThreadedStub, **extra: Any) -> ResultDoc:
    spec = WorkloadSpec(
        num_prompts=30,
        random_input_len=48,
        random_output_len=4,
        random_prefix_len=extra.pop("prefix", 0),
    )
    config = BenchConfig(
        base_url=stub.base_url,
        model="stub",
        workload=spec,
        seed=3,
        request_rate=200.0,
        metrics_interval_s=0.2,
        **extra,
    )
    run = asyncio.run(run_bench(config))
    return document(run, summarize(run))


def test_a_repeated_prompt_seed_hits_the_cache_and_says_so(plain: ThreadedStub) -> None:
    first = run_once(plain, prompt_seed=9)
    again = run_once(plain, prompt_seed=9)
    one, two = first["servetune"]["prefix_cache"], again["servetune"]["prefix_cache"]
    assert one["isolation"] == two["isolation"] == "none"
    assert one["hit_rate"] == 0.0 and not one["unexpected_hits"]
    # The same 30 prompts again: their 3 blocks each were all cached by the first run.
    assert two["hit_rate"] == pytest.approx(1.0)
    assert two["unexpected_hits"]
    summary = again["servetune"]["server_metrics"]["summary"]
    assert summary is not None and summary.get("prefix_cache_queries") == 30 * 48
    text = bench_text(again, None, "en")
    assert "Prefix cache hit rate: 100.0%" in text and "WARNING: the server found" in text
    assert "警告" in bench_text(again, None, "zh-TW")
    assert "WARNING: the server found" not in bench_text(first, None, "en")


def test_repeats_get_fresh_prompts_when_the_cache_cannot_be_reset(plain: ThreadedStub) -> None:
    first = run_once(plain)
    again = run_once(plain)
    one, two = first["servetune"]["prefix_cache"], again["servetune"]["prefix_cache"]
    assert one["isolation"] == two["isolation"] == "fresh-prompts" and not two["reset"]
    assert one["prompt_seed"] != two["prompt_seed"]  # drawn per run, recorded
    assert two["hit_rate"] == 0.0 and not two["unexpected_hits"]
    # The shape of the workload stays the seed's: the same lengths, the same schedule.
    shape = [
        (r["input_len"], r["max_tokens"], r["scheduled_s"]) for r in first["servetune"]["requests"]
    ]
    assert shape == [
        (r["input_len"], r["max_tokens"], r["scheduled_s"]) for r in again["servetune"]["requests"]
    ]
    assert "fresh prompt texts, --prompt-seed" in bench_text(again, None, "en")


def test_a_dev_mode_server_is_reset_and_the_seed_replays(dev: ThreadedStub) -> None:
    first = run_once(dev)
    again = run_once(dev)
    two = again["servetune"]["prefix_cache"]
    assert two["isolation"] == "reset" and two["reset"] and two["prompt_seed"] == 3
    assert isinstance(dev.server, CachingStub) and dev.server.resets == 2
    assert two["hit_rate"] == 0.0  # the same prompts, but the cache was emptied first
    sent = [r.body for r in dev.server.received if r.path == "/v1/completions"]
    assert sent[:30] == sent[30:]  # exactly the same texts both times
    assert first["servetune"]["schema_version"] == 2


def test_a_shared_prefix_is_expected_in_the_cache(plain: ThreadedStub) -> None:
    doc = run_once(plain, prefix=48)
    prefix = doc["servetune"]["prefix_cache"]
    assert prefix["expected_hit_rate"] == 0.5
    # 29 of 30 prompts find the 48-token prefix (3 blocks): 29 x 48 of 30 x 96 tokens.
    assert prefix["hit_rate"] == pytest.approx(29 * 48 / (30 * 96))
    assert not prefix["unexpected_hits"]
