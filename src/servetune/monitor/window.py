"""Samples over time: scrapes turned into `Point`s (counters into per-second rates, histograms into
what was observed in each interval) and the `Signals` of a sliding window.

Percentiles come from the server's own buckets, the way Prometheus' `histogram_quantile` reads
them: the bucket the rank falls in, linearly interpolated between its bounds (a rank in the
`+Inf` bucket reads as the highest finite bound). A counter that went down (the server
restarted) gives no rate for that interval, never a negative one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from servetune.monitor.scrape import Histogram, Scrape


@dataclass(frozen=True)
class Point:
    """The server over one interval ending at `t` (seconds): the gauges at its end, the rates
    over it (None: not exported, or the first sample), the histograms observed during it."""

    t: float
    dt: float
    running: float | None
    waiting: float | None
    kv_cache_usage: float | None
    deferred: float | None = None
    preemptions_per_s: float | None = None
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    admission_rejections_per_s: float | None = None
    histograms: Mapping[str, Histogram] = field(default_factory=dict)


def _rate(now: Scrape, then: Scrape, key: str, dt: float) -> float | None:
    a, b = then.counters.get(key), now.counters.get(key)
    if a is None or b is None or dt <= 0 or b < a:
        return None
    return (b - a) / dt


def _observed(now: Scrape, then: Scrape | None) -> dict[str, Histogram]:
    if then is None:
        return {}
    found: dict[str, Histogram] = {}
    for key, histogram in now.histograms.items():
        earlier = then.histograms.get(key)
        grown = histogram.minus(earlier) if earlier is not None else None
        if grown is not None:
            found[key] = grown
    return found


def point(t: float, now: Scrape, previous: tuple[float, Scrape] | None) -> Point:
    """The interval from the previous scrape (taken at its time) to this one."""
    then = previous[1] if previous else None
    dt = t - previous[0] if previous else 0.0

    def rate(key: str) -> float | None:
        return _rate(now, then, key, dt) if then is not None else None

    return Point(
        t=t,
        dt=dt,
        running=now.running,
        waiting=now.waiting,
        kv_cache_usage=now.kv_cache_usage,
        deferred=now.deferred,
        preemptions_per_s=rate("preemptions"),
        prompt_tokens_per_s=rate("prompt_tokens"),
        generation_tokens_per_s=rate("generation_tokens"),
        admission_rejections_per_s=rate("admission_rejections"),
        histograms=_observed(now, then),
    )


def points(scrapes: Sequence[tuple[float, Scrape]]) -> list[Point]:
    """Scrapes in time order as points (the first one has no rates)."""
    return [point(t, s, scrapes[i - 1] if i else None) for i, (t, s) in enumerate(scrapes)]


def quantile(histogram: Histogram, q: float) -> float | None:
    """The q-quantile (0-1) of a histogram, as Prometheus' histogram_quantile reads it."""
    total = histogram.buckets[-1][1] if histogram.buckets else 0.0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, cumulative in histogram.buckets:
        if cumulative >= rank:
            if math.isinf(bound):
                return lower
            share = (rank - below) / (cumulative - below) if cumulative > below else 1.0
            return lower + (bound - lower) * share
        lower, below = bound, cumulative
    return lower


@dataclass(frozen=True)
class Signals:
    """What a window of points shows; None where no point had it."""

    points: int
    seconds: float
    running: float | None  # at the window's end
    waiting: float | None
    kv_cache_usage: float | None
    mean_running: float | None = None
    peak_running: float | None = None
    low_running: float | None = None
    mean_waiting: float | None = None
    peak_waiting: float | None = None
    peak_kv_cache_usage: float | None = None
    mean_deferred: float | None = None
    preemptions_per_s: float | None = None
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    admission_rejections_per_s: float | None = None
    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    itl_p50_ms: float | None = None
    itl_p99_ms: float | None = None
    queue_p99_ms: float | None = None
    step_tokens_p99: float | None = None
    itl_rise: tuple[float, float, float, float] | None = None  # few, low ms, many, high ms
    stalled_s: float | None = None  # requests in the engine, no token generated, for so long


def _known(values: Sequence[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def _mean(values: Sequence[float | None]) -> float | None:
    known = _known(values)
    return sum(known) / len(known) if known else None


def _peak(values: Sequence[float | None]) -> float | None:
    return max(_known(values), default=None)


def _low(values: Sequence[float | None]) -> float | None:
    return min(_known(values), default=None)


def _weighted(window: Sequence[Point], key: str) -> float | None:
    """A rate over the window: each interval's rate weighted by its length."""
    pairs = [(getattr(p, key), p.dt) for p in window if getattr(p, key) is not None and p.dt > 0]
    seconds = sum(dt for _, dt in pairs)
    return sum(rate * dt for rate, dt in pairs) / seconds if seconds else None


def _summed(window: Sequence[Point], key: str) -> Histogram | None:
    found: Histogram | None = None
    for p in window:
        histogram = p.histograms.get(key)
        if histogram is not None:
            found = histogram if found is None else found.plus(histogram)
    return found


def _ms(histogram: Histogram | None, q: float, scale: float = 1000.0) -> float | None:
    value = quantile(histogram, q) if histogram is not None else None
    return None if value is None else value * scale


def _itl_ms(p: Point) -> float | None:
    """The interval's mean inter-token latency: from the histogram, else (a log's stats lines)
    the seconds between two tokens of one request, running / generated tokens per second."""
    histogram = p.histograms.get("itl")
    if histogram is not None:
        return histogram.total / histogram.count * 1000 if histogram.count else None
    if p.running and p.generation_tokens_per_s:
        return p.running / p.generation_tokens_per_s * 1000
    return None


def itl_rise(window: Sequence[Point]) -> tuple[float, float, float, float] | None:
    """The lightest third of the intervals against the busiest third: (running, ITL ms) each."""
    pairs = sorted(
        (p.running, itl) for p in window if p.running and (itl := _itl_ms(p)) is not None
    )
    if len(pairs) < 3:
        return None
    third = max(1, len(pairs) // 3)
    few, many = pairs[:third], pairs[-third:]
    return (
        sum(r for r, _ in few) / third,
        sum(i for _, i in few) / third,
        sum(r for r, _ in many) / third,
        sum(i for _, i in many) / third,
    )


def stalled_for(history: Sequence[Point]) -> float | None:
    """How long, up to the last point, requests sat in the engine with no token generated;
    None where the generated-tokens counter is unknown."""
    if not history or history[-1].generation_tokens_per_s is None:
        return None
    seconds = 0.0
    for p in reversed(history):
        busy = (p.running or 0) + (p.waiting or 0) > 0
        if not busy or p.generation_tokens_per_s is None or p.generation_tokens_per_s > 0:
            break
        seconds += p.dt
    return seconds


def signals(window: Sequence[Point], stalled_s: float | None = None) -> Signals:
    """The signals of a window of points (oldest first, at least one)."""
    last = window[-1]
    running = [p.running for p in window]
    waiting = [p.waiting for p in window]
    ttft, itl = _summed(window, "ttft"), _summed(window, "itl")
    return Signals(
        points=len(window),
        seconds=sum(p.dt for p in window),
        running=last.running,
        waiting=last.waiting,
        kv_cache_usage=last.kv_cache_usage,
        mean_running=_mean(running),
        peak_running=_peak(running),
        low_running=_low(running),
        mean_waiting=_mean(waiting),
        peak_waiting=_peak(waiting),
        peak_kv_cache_usage=_peak([p.kv_cache_usage for p in window]),
        mean_deferred=_mean([p.deferred for p in window]),
        preemptions_per_s=_weighted(window, "preemptions_per_s"),
        prompt_tokens_per_s=_weighted(window, "prompt_tokens_per_s"),
        generation_tokens_per_s=_weighted(window, "generation_tokens_per_s"),
        admission_rejections_per_s=_weighted(window, "admission_rejections_per_s"),
        ttft_p50_ms=_ms(ttft, 0.5),
        ttft_p99_ms=_ms(ttft, 0.99),
        itl_p50_ms=_ms(itl, 0.5),
        itl_p99_ms=_ms(itl, 0.99),
        queue_p99_ms=_ms(_summed(window, "queue"), 0.99),
        step_tokens_p99=_ms(_summed(window, "step_tokens"), 0.99, scale=1.0),
        itl_rise=itl_rise(window),
        stalled_s=stalled_s,
    )


def recent(history: Sequence[Point], window_s: float) -> list[Point]:
    """The points of the last `window_s` seconds (at least the last point)."""
    if not history:
        return []
    end = history[-1].t
    found = [p for p in history if p.t > end - window_s]
    return found or [history[-1]]
