"""vLLM's /metrics names by release, and one scraped page read into a `Scrape`.

Names change between releases (0.6 to 0.33): the KV cache gauge is `gpu_cache_usage_perc` up to
0.9 and `kv_cache_usage_perc` from 0.9.2 (the old one gone by 0.15); inter-token latency is
`time_per_output_token_seconds` up to 0.11 and `inter_token_latency_seconds` from 0.11 (the old
one gone by 0.15); `num_requests_swapped` is V0 only; `num_requests_waiting_by_reason` is 0.20+,
`admission_rejections_total` 0.33 with `--max-num-queued-reqs`. Ray Serve re-exports the same
metrics as `ray_vllm:...` or `ray_vllm_...`. Each field takes the newest name present; several
engines (data parallel) add up, except the KV cache usage, where the fullest engine counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from servetune.measure.server_metrics import NAMES, Series, series

# field -> names, newest first; the bench's own table (measure.server_metrics.NAMES) is reused.
GAUGES: Mapping[str, tuple[str, ...]] = {
    "running": NAMES["running"],
    "waiting": NAMES["waiting"],
    "swapped": ("vllm:num_requests_swapped",),
    "kv_cache_usage": NAMES["kv_cache_usage"],
}
COUNTERS: Mapping[str, tuple[str, ...]] = {
    "preemptions": NAMES["preemptions_total"],
    "prompt_tokens": ("vllm:prompt_tokens_total",),
    "generation_tokens": ("vllm:generation_tokens_total",),
    "admission_rejections": ("vllm:admission_rejections_total",),
}
HISTOGRAMS: Mapping[str, tuple[str, ...]] = {
    "ttft": ("vllm:time_to_first_token_seconds",),
    "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    "queue": ("vllm:request_queue_time_seconds",),
    "step_tokens": ("vllm:iteration_tokens_total",),  # a histogram despite its name
}
WAITING_BY_REASON = "vllm:num_requests_waiting_by_reason"
_MAX_OVER_ENGINES = frozenset(GAUGES["kv_cache_usage"])


@dataclass(frozen=True)
class Histogram:
    """A Prometheus histogram: cumulative counts per upper bound (ascending, `inf` last)."""

    buckets: tuple[tuple[float, float], ...]
    count: float
    total: float  # the sum of the observed values

    def minus(self, earlier: Histogram) -> Histogram | None:
        """What was observed since `earlier`; None after a reset or a change of buckets."""
        bounds = [b for b, _ in self.buckets]
        if bounds != [b for b, _ in earlier.buckets] or self.count < earlier.count:
            return None
        grown = tuple(
            (b, now - then)
            for (b, now), (_, then) in zip(self.buckets, earlier.buckets, strict=True)
        )
        return Histogram(grown, self.count - earlier.count, self.total - earlier.total)

    def plus(self, other: Histogram) -> Histogram:
        """Both together (same buckets: the same server's histogram over two intervals)."""
        if [b for b, _ in self.buckets] != [b for b, _ in other.buckets]:
            return self
        summed = tuple(
            (b, one + two) for (b, one), (_, two) in zip(self.buckets, other.buckets, strict=True)
        )
        return Histogram(summed, self.count + other.count, self.total + other.total)


@dataclass(frozen=True)
class Scrape:
    """One /metrics page; None where the server does not export the metric."""

    running: float | None = None
    waiting: float | None = None
    swapped: float | None = None
    kv_cache_usage: float | None = None  # 0-1
    deferred: float | None = None  # waiting, by reason "deferred" (0.20+)
    counters: Mapping[str, float] = field(default_factory=dict)  # COUNTERS fields, totals
    histograms: Mapping[str, Histogram] = field(default_factory=dict)  # HISTOGRAMS fields


def canonical(name: str) -> str:
    """The vLLM name of a metric Ray Serve re-exports (`ray_vllm:x`, `ray_vllm_x` -> `vllm:x`)."""
    for prefix in ("ray_vllm:", "ray_vllm_"):
        if name.startswith(prefix):
            return "vllm:" + name[len(prefix) :]
    return name


def _newest(table: Mapping[str, tuple[str, ...]], found: Mapping[str, float]) -> dict[str, float]:
    values: dict[str, float] = {}
    for key, names in table.items():
        value = next((found[n] for n in names if n in found), None)
        if value is not None:
            values[key] = value
    return values


def _histogram(base: str, lines: Iterable[Series]) -> Histogram | None:
    buckets: dict[float, float] = {}
    count = total = 0.0
    seen = False
    for line in lines:
        if line.name == base + "_bucket" and "le" in line.labels:
            bound = float(line.labels["le"])
            buckets[bound] = buckets.get(bound, 0.0) + line.value
            seen = True
        elif line.name == base + "_count":
            count += line.value
        elif line.name == base + "_sum":
            total += line.value
    if not seen:
        return None
    return Histogram(tuple(sorted(buckets.items())), count, total)


def _histograms(lines: list[Series]) -> dict[str, Histogram]:
    found: dict[str, Histogram] = {}
    for key, names in HISTOGRAMS.items():
        for name in names:
            histogram = _histogram(name, lines)
            if histogram is not None:
                found[key] = histogram
                break
    return found


def _plain(lines: Iterable[Series]) -> dict[str, float]:
    """Gauges and counters by name, summed over label sets (the KV cache: the fullest engine)."""
    found: dict[str, float] = {}
    for line in lines:
        if line.name in _MAX_OVER_ENGINES:
            found[line.name] = max(found.get(line.name, 0.0), line.value)
        else:
            found[line.name] = found.get(line.name, 0.0) + line.value
    return found


def read(text: str) -> Scrape:
    """A /metrics page (Prometheus text format) as a `Scrape`."""
    lines = [Series(canonical(s.name), s.labels, s.value) for s in series(text)]
    plain = _plain(s for s in lines if s.name != WAITING_BY_REASON)
    gauges = _newest(GAUGES, plain)
    by_reason = [s for s in lines if s.name == WAITING_BY_REASON]
    deferred = [s.value for s in by_reason if s.labels.get("reason") == "deferred"]
    return Scrape(
        running=gauges.get("running"),
        waiting=gauges.get("waiting"),
        swapped=gauges.get("swapped"),
        kv_cache_usage=gauges.get("kv_cache_usage"),
        deferred=sum(deferred) if deferred else None,
        counters=_newest(COUNTERS, plain),
        histograms=_histograms(lines),
    )
