"""When each request is sent: arrival times computed up front from a seeded generator."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from itertools import count


def _gaps(rate: float, burstiness: float, rng: random.Random) -> Iterator[float]:
    """Gaps between arrivals: gamma(shape=burstiness, scale=1/(rate x burstiness)).

    burstiness 1 is a Poisson process, below 1 burstier, `inf` evenly spaced (1/rate);
    rate `inf` sends everything at once (the concurrency cap, if any, paces it).
    """
    if math.isinf(rate):
        while True:
            yield 0.0
    if math.isinf(burstiness):
        while True:
            yield 1.0 / rate
    scale = 1.0 / (rate * burstiness)
    while True:
        yield rng.gammavariate(burstiness, scale)


def arrival_times(n: int, rate: float, burstiness: float, rng: random.Random) -> list[float]:
    """Offsets (s) from the start for `n` requests.

    As `vllm bench serve` does, a finite-rate schedule is rescaled so the last arrival lands at
    exactly n / rate: the achieved mean rate then equals the requested one.
    """
    if n <= 0:
        return []
    times: list[float] = []
    total = 0.0
    for gap, _ in zip(_gaps(rate, burstiness, rng), range(n), strict=False):
        total += gap
        times.append(total)
    if not math.isinf(rate) and total > 0:
        factor = (n / rate) / total
        times = [t * factor for t in times]
    return times


def arrivals_until(
    duration_s: float, rate: float, burstiness: float, rng: random.Random
) -> Iterator[float]:
    """Arrival offsets for a timed run: every arrival before `duration_s` (not rescaled)."""
    total = 0.0
    gaps = _gaps(rate, burstiness, rng)
    for _ in count():
        total += next(gaps)
        if total >= duration_s and not math.isinf(rate):
            return
        yield total
