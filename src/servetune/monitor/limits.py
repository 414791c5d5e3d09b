"""Which limit binds a server over a window of its /metrics (or its log's stats lines).

The ids are tune's where they mean the same (`judge.advice.ServerLimit`), with the same
thresholds (`judge.advice`: KV_FULL, KV_ROOM, SEQS_CEILING_SHARE, WAITING_MIN); a production
server shows a few more. In order, the first that holds:
- `unknown`: no sample in the window;
- `stalled`: requests in the engine and no token generated for STALL_S seconds;
- `admission`: the server refuses requests (`admission_rejections_total` grows);
- `kv-cache`: preemptions, or requests waiting with the cache past KV_ROOM (no room for one more
  sequence's blocks: tune reads it the same way);
- `deferred`: most of the waiting requests wait for a reason of vLLM's own (`deferred`);
- with requests waiting (WAITING_MIN on average) and KV room left: `max-num-seqs` when running
  reaches the cap (SEQS_CEILING_SHARE of it), else `max-num-batched-tokens` (free slots, KV room:
  prefill is starved). Without a cap, a running count held flat while requests wait reads as
  `max-num-seqs` "cap unconfirmed", anything else as `unknown`;
- `compute`: no queue, but inter-token latency climbs (COMPUTE_ITL_RISE) with running requests;
- `none`: no queue, latency steady.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from servetune.judge.advice import KV_ROOM, SEQS_CEILING_SHARE, WAITING_MIN, ServerLimit
from servetune.monitor.caps import Caps
from servetune.monitor.window import Signals
from servetune.texts import Area, Sentence

Limit = Literal["none", ServerLimit, "admission", "deferred", "stalled", "unknown"]
LIMITS: tuple[Limit, ...] = (
    "none",
    "kv-cache",
    "max-num-seqs",
    "max-num-batched-tokens",
    "compute",
    "admission",
    "deferred",
    "stalled",
    "unknown",
)
STALL_S = 60.0
COMPUTE_ITL_RISE = 1.5  # ITL of the busiest third of the window over that of the lightest third
COMPUTE_RUNNING_RISE = 1.5  # ... while running grew at least this much between the two
DEFERRED_SHARE = 0.5
CAP_OVERSHOOT = 1.05  # running this far above the cap given: the cap is not the server's


class Said(Sentence):
    """A `monitor` text key with its facts (evidence, next steps, labels)."""

    __slots__ = ()
    area: ClassVar[Area] = "monitor"


@dataclass(frozen=True)
class Verdict:
    """The limit of one window, why, and the one knob to move (None: nothing to move)."""

    limit: Limit
    evidence: Said
    next_step: Said | None = None
    cap_confirmed: bool | None = None  # None: no cap decides this limit

    @property
    def binding(self) -> bool:
        return self.limit not in ("none", "unknown")


def _int(value: float | None) -> int:
    return round(value or 0.0)


def _kv(s: Signals) -> float:
    return s.peak_kv_cache_usage or 0.0


def _trouble(s: Signals) -> Verdict | None:
    """stalled, admission, kv-cache, deferred: what no cap setting explains."""
    if s.stalled_s is not None and s.stalled_s >= STALL_S:
        requests = _int((s.running or 0) + (s.waiting or 0))
        evidence = Said("evidence.stalled", requests=requests, seconds=s.stalled_s)
        return Verdict("stalled", evidence, Said("next.stalled"))
    if s.admission_rejections_per_s:
        evidence = Said("evidence.admission", rejections=s.admission_rejections_per_s)
        return Verdict("admission", evidence, Said("next.admission"))
    waiting = s.mean_waiting or 0.0
    if s.preemptions_per_s:
        evidence = Said("evidence.kv-cache:preempting", preemptions=s.preemptions_per_s, kv=_kv(s))
        return Verdict("kv-cache", evidence, Said("next.kv-cache"))
    if waiting >= WAITING_MIN and _kv(s) >= KV_ROOM:
        evidence = Said("evidence.kv-cache:full", kv=_kv(s), waiting=_int(waiting))
        return Verdict("kv-cache", evidence, Said("next.kv-cache"))
    deferred = s.mean_deferred or 0.0
    if deferred >= WAITING_MIN and deferred >= DEFERRED_SHARE * waiting:
        evidence = Said("evidence.deferred", deferred=_int(deferred), waiting=_int(waiting))
        return Verdict("deferred", evidence, Said("next.deferred"))
    return None


def _ceiling(s: Signals, caps: Caps) -> int | None:
    ceiling = caps.seqs_ceiling
    if ceiling is not None and (s.peak_running or 0) > CAP_OVERSHOOT * ceiling:
        return None  # more running than the cap allows: the command given is not this server's
    return ceiling


def _queue(s: Signals, caps: Caps) -> Verdict | None:
    """Requests wait with KV room left: one of the scheduler's caps holds them back."""
    waiting = s.mean_waiting or 0.0
    if waiting < WAITING_MIN:
        return None
    facts = {"running": _int(s.peak_running), "waiting": _int(waiting), "kv": _kv(s)}
    ceiling = _ceiling(s, caps)
    if ceiling is not None and (s.peak_running or 0) >= SEQS_CEILING_SHARE * ceiling:
        seqs = caps.max_num_seqs or ceiling
        step = Said("next.max-num-seqs", seqs=seqs, twice=2 * seqs)
        evidence = Said("evidence.max-num-seqs", cap=ceiling, **facts)
        return Verdict("max-num-seqs", evidence, step, True)
    budget = caps.max_num_batched_tokens
    if ceiling is not None and budget:
        free = max(0, ceiling - _int(s.peak_running))
        evidence = Said("evidence.max-num-batched-tokens", budget=budget, free=free, **facts)
        step = Said("next.max-num-batched-tokens", budget=budget, twice=2 * budget)
        return Verdict("max-num-batched-tokens", evidence, step, True)
    flat = s.points >= 2 and s.peak_running == s.low_running and (s.peak_running or 0) > 0
    if flat:
        evidence = Said("evidence.max-num-seqs:unconfirmed", **facts)
        step = Said("next.max-num-seqs:unconfirmed", running=facts["running"])
        return Verdict("max-num-seqs", evidence, step, False)
    return Verdict("unknown", Said("evidence.unknown:queue", **facts), None, False)


def _compute(s: Signals) -> Verdict | None:
    if s.itl_rise is None:
        return None
    few, low, many, high = s.itl_rise
    if many >= COMPUTE_RUNNING_RISE * few and high >= COMPUTE_ITL_RISE * low:
        evidence = Said("evidence.compute", few=_int(few), low=low, many=_int(many), high=high)
        return Verdict("compute", evidence, Said("next.compute"))
    return None


def diagnose(s: Signals, caps: Caps) -> Verdict:
    """The limit a window's signals show (the order of the module docstring)."""
    if s.points == 0 or (s.running is None and s.waiting is None):
        return Verdict("unknown", Said("evidence.unknown:no-data"))
    found = _trouble(s) or _queue(s, caps) or _compute(s)
    if found is not None:
        return found
    if not s.peak_running and not s.peak_waiting:
        return Verdict("none", Said("evidence.none:idle"))
    facts = {"running": _int(s.running), "waiting": _int(s.waiting), "kv": _kv(s)}
    return Verdict("none", Said("evidence.none", **facts))


def dominant(by_limit: Mapping[Limit, float]) -> Limit:
    """The binding limit that held longest; `none` when none bound (`unknown`: nothing seen)."""
    binding = [
        (seconds, limit)
        for limit, seconds in by_limit.items()
        if limit not in ("none", "unknown") and seconds > 0
    ]
    if binding:
        return max(binding, key=lambda pair: (pair[0], -LIMITS.index(pair[1])))[1]
    return "none" if by_limit.get("none", 0) > 0 else "unknown"
