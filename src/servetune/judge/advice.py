"""The next knob to try, from what the server's /metrics showed during a load test: the seed's
decision logic (a full KV cache that preempts, sequences pinned at --max-num-seqs with KV room
left, a token budget that starves the batch), with its thresholds. compare names one step from
it; tune's limit reading shares the thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from servetune.judge.runs import Side
from servetune.judge.sentence import Sentence
from servetune.measure.server_metrics import MetricsSummary
from servetune.review.settings import Settings

# The limits a server's own /metrics show, by the ids tune, watch and postmortem share (tune adds
# its trial outcomes, monitor/limits.py what a production server shows besides).
ServerLimit = Literal["kv-cache", "max-num-seqs", "max-num-batched-tokens", "compute"]

# Thresholds on the server's /metrics peaks (KV cache usage is a 0-1 fraction).
KV_FULL = 0.99  # sampled once a second, a full cache can read 99.x%
KV_ROOM = 0.90  # below this, more sequences still fit
KV_LOW = 0.50  # below this, the KV cache is not what limits the batch
RUNNING_LOW_SHARE = 0.5  # under half of the sequence ceiling running is "well below" it
SEQS_CEILING_SHARE = 0.95  # a once-a-second sample rarely catches the exact ceiling
WAITING_MIN = 1.0


def _peak(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def side_peaks(side: Side) -> MetricsSummary | None:
    """The highest of each /metrics peak over a side's runs; None when no run sampled any."""
    found = [r.server for r in side.runs if r.server is not None and r.server.samples]
    if not found:
        return None
    return MetricsSummary(
        samples=sum(s.samples for s in found),
        peak_running=_peak([s.peak_running for s in found]),
        peak_waiting=_peak([s.peak_waiting for s in found]),
        peak_kv_cache_usage=_peak([s.peak_kv_cache_usage for s in found]),
        preemptions=_peak([s.preemptions for s in found]),  # the most in one run
    )


def next_step(peaks: MetricsSummary, settings: Settings | None) -> Sentence | None:
    """The seed's decision logic: the first limit the /metrics peaks show, as one step; None
    when they show none (or the server's settings are unknown)."""
    kv, waiting, running = peaks.peak_kv_cache_usage, peaks.peak_waiting, peaks.peak_running
    if kv is not None and kv >= KV_FULL and (peaks.preemptions or 0) > 0:
        now = Sentence("next.from", seqs=settings.max_num_seqs) if settings else ""
        return Sentence("next.fewer-seqs", now=now, kv=kv, preemptions=peaks.preemptions or 0)
    if settings is None or kv is None or running is None or (waiting or 0) < WAITING_MIN:
        return None
    ceiling = settings.max_num_seqs * settings.data_parallel_size
    seqs, budget = settings.max_num_seqs, settings.max_num_batched_tokens
    if running >= SEQS_CEILING_SHARE * ceiling and kv < KV_ROOM:
        return Sentence(
            "next.more-seqs",
            seqs=seqs,
            twice=2 * seqs,
            waiting=waiting or 0,
            running=running,
            kv=kv,
        )
    if running < RUNNING_LOW_SHARE * ceiling and kv < KV_LOW and budget:
        return Sentence(
            "next.bigger-budget",
            budget=budget,
            twice=2 * budget,
            waiting=waiting or 0,
            running=running,
            ceiling=ceiling,
            kv=kv,
        )
    return None
