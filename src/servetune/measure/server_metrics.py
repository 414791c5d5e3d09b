"""Reading vLLM's Prometheus `/metrics` while a load test runs.

Once a second the bench samples the scheduler's state: requests running and waiting, KV cache
usage (0-1) and the preemption counter. Its summary later tells which limit a run hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Metric name -> sample field. Older vLLM called the KV cache gauge gpu_cache_usage_perc.
_NAMES = {
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv_cache_usage",
    "vllm:gpu_cache_usage_perc": "kv_cache_usage",
    "vllm:num_preemptions_total": "preemptions_total",
    "vllm:num_preemptions": "preemptions_total",
}


@dataclass(frozen=True)
class MetricsSample:
    """One scrape; None where the server does not export the metric."""

    t_s: float  # seconds since the run started
    running: float | None
    waiting: float | None
    kv_cache_usage: float | None
    preemptions_total: float | None


@dataclass(frozen=True)
class MetricsSummary:
    samples: int
    peak_running: float | None
    peak_waiting: float | None
    peak_kv_cache_usage: float | None
    preemptions: float | None  # during the run: last counter value - first


def parse(text: str) -> dict[str, float]:
    """Sum each known metric over its label sets (several engines add up)."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        name_part, _, value_part = line.rpartition(" ")
        name = name_part.split("{", 1)[0].strip()
        field = _NAMES.get(name)
        if field is None:
            continue
        try:
            value = float(value_part)
        except ValueError:
            continue
        values[field] = values.get(field, 0.0) + value
    return values


def sample(t_s: float, text: str) -> MetricsSample:
    values = parse(text)
    return MetricsSample(
        t_s=t_s,
        running=values.get("running"),
        waiting=values.get("waiting"),
        kv_cache_usage=values.get("kv_cache_usage"),
        preemptions_total=values.get("preemptions_total"),
    )


def _peak(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def summarize(samples: Sequence[MetricsSample]) -> MetricsSummary:
    counters = [s.preemptions_total for s in samples if s.preemptions_total is not None]
    return MetricsSummary(
        samples=len(samples),
        peak_running=_peak([s.running for s in samples]),
        peak_waiting=_peak([s.waiting for s in samples]),
        peak_kv_cache_usage=_peak([s.kv_cache_usage for s in samples]),
        preemptions=counters[-1] - counters[0] if counters else None,
    )
