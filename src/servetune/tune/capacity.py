"""Capacity of one configuration: the most closed-loop users whose latencies meet every SLO.

A *probe* runs the load at one concurrency (users each sending their next request when the last
one ends) and says whether the asked percentile of every latency met its target. The search
grows the concurrency (doubling from a starting guess) until a probe fails, then bisects between
the last level that passed and the first that failed, down to `RESOLUTION` of the passing level.
All probes of a configuration run on one server start.

How sure: each probe's verdict comes with a binomial confidence. If the true share of requests
over a target sat exactly at the boundary (1 - percentile), the chance of seeing as few misses as
a passing probe saw (or as many as a failing probe saw) is a binomial tail; one minus it is how
sure that probe's verdict is. The capacity is as sure as the weaker of its two bracketing probes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from servetune.tune.limit import LoadSignals

SLO_KEYS = ("ttft", "tpot", "itl", "e2el")
# Requests beyond the percentile a probe must expect to see: p99 needs 500 requests, p90 50.
# Fewer would let one unlucky request decide the verdict.
TAIL_REQUESTS = 5
RESOLUTION = 0.05  # stop bisecting when the bracket is within 5% of the passing level
MOST_USERS = 1024  # never probe beyond this many users


def requests_needed(percentile: float) -> int:
    """Measured requests a probe needs for `percentile`: TAIL_REQUESTS / (1 - p/100)."""
    return math.ceil(TAIL_REQUESTS / (1 - percentile / 100) - 1e-9)


@dataclass(frozen=True)
class Probe:
    """One load level of one configuration, measured."""

    concurrency: int
    repeat: int  # 0 for the search's probe, 1.. for repeats at the capacity level
    measured: int  # requests counted (the first wave of `concurrency` requests is left out)
    failed: int  # requests that failed outright (they count as misses)
    latency_ms: Mapping[str, float | None]  # SLO key -> the asked percentile
    misses: Mapping[str, tuple[int, int]]  # SLO key -> (values over its target, values)
    output_throughput: float | None
    request_throughput: float | None
    duration_s: float
    result_file: str | None
    passed: bool
    sure: float  # confidence in `passed`, 0-1
    load: LoadSignals | None = None  # the server's /metrics over the probe
    client_lag_p99_s: float | None = None


@dataclass(frozen=True)
class Capacity:
    """The search's answer. `max_concurrency` 0 means not even one user met the targets."""

    max_concurrency: int
    first_failing: int | None  # the lowest level that failed (None: none failed up to the cap)
    output_throughput: float | None
    request_throughput: float | None
    sure: float | None  # the weaker of the two bracketing probes' confidence


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    total = 0.0
    for i in range(k + 1):
        total += math.comb(n, i) * p**i * (1 - p) ** (n - i)
    return min(1.0, total)


def verdict(
    misses: Mapping[str, tuple[int, int]], failed: int, percentile: float
) -> tuple[bool, float]:
    """(passed, how sure) for a probe. Per SLO, `misses` holds (values over the target, values);
    it passes when no SLO has more misses than its percentile allows (its rank, as numpy
    computes it). Failed requests miss every target."""
    tail = 1 - percentile / 100
    if not misses or any(n + failed == 0 for _, n in misses.values()):
        return False, 0.0
    worst_passing, worst_failing = 1.0, 0.0
    passed = True
    for over, n in misses.values():
        total, bad = n + failed, over + failed
        allowed = math.floor(tail * (total - 1) + 1e-9)
        if bad <= allowed:
            worst_passing = min(worst_passing, 1 - binomial_cdf(bad, total, tail))
        else:
            passed = False
            worst_failing = max(worst_failing, binomial_cdf(bad - 1, total, tail))
    sure = worst_passing if passed else worst_failing
    return passed, max(0.0, min(1.0, sure))


@dataclass
class Search:
    """Grow, then bisect. `probe(users)` measures one level (on the running server)."""

    probe: Callable[[int], Probe]
    start: int = 8
    most: int = MOST_USERS
    resolution: float = RESOLUTION

    def run(self) -> tuple[Capacity, list[Probe]]:
        probes: list[Probe] = []
        passed: dict[int, Probe] = {}
        failed: dict[int, Probe] = {}

        def measure(users: int) -> bool:
            result = self.probe(users)
            probes.append(result)
            (passed if result.passed else failed)[users] = result
            return result.passed

        users = max(1, min(self.start, self.most))
        while measure(users) and users < self.most:
            users = min(users * 2, self.most)
        low = max(passed, default=0)
        high = min(failed, default=None)
        while high is not None and high - low > max(1.0, self.resolution * low):
            middle = (low + high) // 2
            if measure(middle):
                low = middle
            else:
                high = middle
        return _capacity(low, high, passed, failed), probes


def _capacity(
    low: int, high: int | None, passed: Mapping[int, Probe], failed: Mapping[int, Probe]
) -> Capacity:
    at = passed.get(low)
    above = failed.get(high) if high is not None else None
    sures = [p.sure for p in (at, above) if p is not None]
    return Capacity(
        max_concurrency=low,
        first_failing=high,
        output_throughput=at.output_throughput if at else None,
        request_throughput=at.request_throughput if at else None,
        sure=min(sures) if sures else None,
    )
