"""Reading vLLM's Prometheus `/metrics` while a load test runs.

The bench samples the scheduler's state once before the first request, once a second while the
run goes, and once after the last request: requests running and waiting, KV cache usage (0-1),
the preemption counter and the prefix cache counters. The summary later tells which limit a run
hit, and how much of the prompts the server took from its prefix cache.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from servetune.measure.client import HttpClient, RequestFailed

# Sample field -> metric names by release, newest first (a release in between may export an old
# name next to its new one: only the first name found counts, never both).
_NAMES: dict[str, tuple[str, ...]] = {
    "running": ("vllm:num_requests_running",),
    "waiting": ("vllm:num_requests_waiting",),
    "kv_cache_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    "preemptions_total": ("vllm:num_preemptions_total", "vllm:num_preemptions"),
    # Tokens looked up in / found in the prefix cache (0.9.2+; 0.8-0.9 had the gpu_ names).
    "prefix_cache_queries": (
        "vllm:prefix_cache_queries_total",
        "vllm:gpu_prefix_cache_queries_total",
    ),
    "prefix_cache_hits": ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
}
_FIELD_OF = {name: field for field, names in _NAMES.items() for name in names}
NAMES: Mapping[str, tuple[str, ...]] = _NAMES  # read by monitor/ (watch, postmortem)


@dataclass(frozen=True)
class MetricsSample:
    """One scrape; None where the server does not export the metric."""

    t_s: float  # seconds since the run started (negative: taken just before it)
    running: float | None
    waiting: float | None
    kv_cache_usage: float | None
    preemptions_total: float | None
    prefix_cache_queries: float | None = None  # counters: tokens since the server started
    prefix_cache_hits: float | None = None


@dataclass(frozen=True)
class MetricsSummary:
    samples: int
    peak_running: float | None
    peak_waiting: float | None
    peak_kv_cache_usage: float | None
    preemptions: float | None  # during the run: last counter value - first
    prefix_cache_queries: float | None = None  # prompt tokens looked up during the run
    prefix_cache_hits: float | None = None  # of those, tokens found in the cache
    prefix_cache_hit_rate: float | None = None  # hits / queries (None: no lookups seen)


@dataclass(frozen=True)
class Series:
    """One sample line of a Prometheus text page: `name{labels} value`."""

    name: str
    labels: Mapping[str, str]
    value: float


_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _series(line: str) -> Series | None:
    brace = line.find("{")
    if 0 <= brace < line.find(" "):
        close = line.rfind("}")
        name, labels, rest = line[:brace], line[brace + 1 : close], line[close + 1 :]
    else:
        name, _, rest = line.partition(" ")
        labels = ""
    words = rest.split()
    if not words:
        return None
    try:
        value = float(words[0])  # a timestamp may follow the value
    except ValueError:
        return None
    return Series(name.strip(), dict(_LABEL.findall(labels)), value)


def series(text: str) -> Iterator[Series]:
    """Every sample line of a Prometheus text page, comments and malformed lines skipped."""
    for raw in text.splitlines():
        line = raw.strip()
        if line and line[0] != "#" and (found := _series(line)) is not None:
            yield found


def parse(text: str) -> dict[str, float]:
    """Each known field, its metric summed over label sets (several engines add up); where a
    field has several names, the newest one present."""
    by_name: dict[str, float] = {}
    for found in series(text):
        if found.name in _FIELD_OF:
            by_name[found.name] = by_name.get(found.name, 0.0) + found.value
    values: dict[str, float] = {}
    for field, names in _NAMES.items():
        value = next((by_name[n] for n in names if n in by_name), None)
        if value is not None:
            values[field] = value
    return values


def sample(t_s: float, text: str) -> MetricsSample:
    values = parse(text)
    return MetricsSample(
        t_s=t_s,
        running=values.get("running"),
        waiting=values.get("waiting"),
        kv_cache_usage=values.get("kv_cache_usage"),
        preemptions_total=values.get("preemptions_total"),
        prefix_cache_queries=values.get("prefix_cache_queries"),
        prefix_cache_hits=values.get("prefix_cache_hits"),
    )


def _peak(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _growth(values: list[float | None]) -> float | None:
    """How much a counter grew from its first known value to its last."""
    known = [v for v in values if v is not None]
    return known[-1] - known[0] if known else None


def summarize(samples: Sequence[MetricsSample]) -> MetricsSummary:
    queries = _growth([s.prefix_cache_queries for s in samples])
    hits = _growth([s.prefix_cache_hits for s in samples])
    return MetricsSummary(
        samples=len(samples),
        peak_running=_peak([s.running for s in samples]),
        peak_waiting=_peak([s.waiting for s in samples]),
        peak_kv_cache_usage=_peak([s.kv_cache_usage for s in samples]),
        preemptions=_growth([s.preemptions_total for s in samples]),
        prefix_cache_queries=queries,
        prefix_cache_hits=hits,
        prefix_cache_hit_rate=hits / queries if hits is not None and queries else None,
    )


class Sampler:
    """Scrapes `/metrics` into samples: `scrape()` once before the run and once after it (so
    the samples always span the run, and the counters' growth covers all of it), `every()` in
    between. A busy server may answer late: a scrape waits up to `timeout_s`, and the next one
    starts `interval_s` after it ends."""

    def __init__(
        self, client: HttpClient, clock: Callable[[], float], interval_s: float, timeout_s: float
    ) -> None:
        self.client = client
        self.clock = clock
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.available: bool | None = None  # None until the server answered once
        self._taken: list[tuple[float, str]] = []  # (clock time, page)

    async def scrape(self) -> None:
        try:
            response = await self.client.request("GET", "/metrics", timeout_s=self.timeout_s)
        except (RequestFailed, TimeoutError, OSError):
            return
        if response.status == 200:
            self._taken.append((self.clock(), response.body.decode("utf-8", "replace")))
            self.available = True
        elif response.status == 404 and self.available is None:
            self.available = False

    async def every(self) -> None:
        """Scrape every `interval_s` until cancelled (stops early on a server without one)."""
        while self.available is not False:
            await asyncio.sleep(self.interval_s)
            await self.scrape()

    def samples(self, start: float) -> list[MetricsSample]:
        """The samples in the order taken, timed from `start` (the run's start)."""
        return [sample(at - start, text) for at, text in self._taken]


async def reset_prefix_cache(client: HttpClient) -> bool:
    """Empty the server's prefix cache: True when it did. vLLM offers `POST /reset_prefix_cache`
    only with VLLM_SERVER_DEV_MODE=1; elsewhere the answer is 404 and nothing changes."""
    try:
        response = await client.request("POST", "/reset_prefix_cache", b"", timeout_s=30.0)
    except (RequestFailed, TimeoutError, OSError):
        return False
    return response.status == 200
