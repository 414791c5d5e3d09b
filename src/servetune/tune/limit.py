"""Which limit held a configuration back, read from the server's /metrics at the failing load.

The order is the seed's decision logic, the one `compare` uses for its next step (and its
thresholds): a full KV cache with preemptions first, then a sequence cap pinned while requests
wait, then a step token budget that starves prefills while slots and KV room are free; with none
of those the step time itself (compute) missed the targets, unless our own client fell behind
its schedule by a good share of the tightest target: then the client, not the server's step,
is what the probe measured. (A queue or a full cache on the server's own /metrics is evidence
a slow client cannot fake, so those are named first.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from servetune.judge.advice import KV_FULL, KV_ROOM, SEQS_CEILING_SHARE, ServerLimit
from servetune.measure.server_metrics import MetricsSample

# The server's limits (judge.advice.ServerLimit, shared with watch and postmortem), then a trial's.
Limit = Literal[ServerLimit, "client", "failed-start", "slo-unreachable"]
LIMITS: tuple[Limit, ...] = (
    "kv-cache",
    "max-num-seqs",
    "max-num-batched-tokens",
    "compute",
    "client",
    "failed-start",
    "slo-unreachable",
)
# The client's send lag (p99) above this share of the tightest latency target is what the
# probe measured, more than the server: 25% of a 50 ms TPOT target is 12.5 ms of our own delay.
CLIENT_LAG_SHARE = 0.25
CLIENT_LAG_FLOOR_S = 0.005
# Requests waiting on average over the probe, as a share of the users, that count as a queue
# (a once-in-a-while waiting request is a new arrival caught between two steps).
WAITING_SHARE = 0.10


@dataclass(frozen=True)
class LoadSignals:
    """The server's /metrics over one probe; None where the server does not export it."""

    samples: int
    peak_running: float | None
    mean_running: float | None
    peak_waiting: float | None
    mean_waiting: float | None
    peak_kv_cache_usage: float | None
    preemptions: float | None


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _peak(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def signals(samples: Sequence[MetricsSample]) -> LoadSignals:
    counters = [s.preemptions_total for s in samples if s.preemptions_total is not None]
    running = [s.running for s in samples]
    waiting = [s.waiting for s in samples]
    return LoadSignals(
        samples=len(samples),
        peak_running=_peak(running),
        mean_running=_mean(running),
        peak_waiting=_peak(waiting),
        mean_waiting=_mean(waiting),
        peak_kv_cache_usage=_peak([s.kv_cache_usage for s in samples]),
        preemptions=counters[-1] - counters[0] if counters else None,
    )


def diagnose(
    load: LoadSignals | None,
    *,
    users: int,
    max_num_seqs: int,
    client_lag_p99_s: float | None,
    tightest_slo_s: float,
) -> Limit:
    """The limit a failing probe at `users` closed-loop users points to."""
    lag_limit = max(CLIENT_LAG_FLOOR_S, CLIENT_LAG_SHARE * tightest_slo_s)
    client = client_lag_p99_s is not None and client_lag_p99_s > lag_limit
    # More users than sequence slots: in a closed loop the rest must wait, whatever the
    # once-a-second gauges caught (short requests can come and go between two scrapes).
    over_cap = users > max_num_seqs
    if load is None or load.samples == 0 or not load.peak_running:
        if over_cap:
            return "max-num-seqs"
        return "client" if client else "compute"
    kv = load.peak_kv_cache_usage or 0.0
    queue = (load.mean_waiting or 0.0) >= max(1.0, WAITING_SHARE * users)
    running = load.peak_running or 0.0
    if (load.preemptions or 0) > 0 or (kv >= KV_FULL and queue):
        return "kv-cache"
    pinned = running >= SEQS_CEILING_SHARE * max_num_seqs
    if (queue or over_cap) and pinned and kv < KV_ROOM:
        return "max-num-seqs"
    if queue:  # waiting with free sequence slots: the KV cache or the step token budget
        return "max-num-batched-tokens" if kv < KV_ROOM else "kv-cache"
    return "client" if client else "compute"
