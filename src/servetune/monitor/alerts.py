"""`alerts`: the limits of `limits` as Prometheus rules, in one rule group that Prometheus
evaluates in order:

1. recording rules (`servetune:vllm_*`): the signals `limits.diagnose` reads, per server
   (`job`, `instance`, `model_name`): running and waiting summed over the engines, the fullest
   engine's KV cache, preemptions and rejections per second, tokens generated over STALL_S,
   inter-token latency now and over the last hour;
2. one recording rule per limit (`servetune:vllm_limit:<id>`): its condition, with the shared
   thresholds (`judge.advice`, `monitor.limits`) and the caps of the serve command;
3. one alert per limit, in `diagnose`'s order (stalled, admission, kv-cache, deferred,
   max-num-seqs, max-num-batched-tokens, compute): its condition `unless` one before it holds,
   so that one limit is named at a time, as `watch` names it.

Every metric name is the one the release exports (`names.pick` over `scrape`'s tables); a limit
whose metric the release lacks, or whose cap nobody gave, is left out with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from servetune.judge.advice import KV_ROOM, SEQS_CEILING_SHARE, WAITING_MIN
from servetune.monitor import names
from servetune.monitor.caps import Caps
from servetune.monitor.limits import (
    COMPUTE_ITL_RISE,
    COMPUTE_RUNNING_RISE,
    DEFERRED_SHARE,
    STALL_S,
    Limit,
    Said,
)
from servetune.monitor.scrape import COUNTERS, GAUGES, HISTOGRAMS, WAITING_BY_REASON

SCHEMA_VERSION = 1
GROUP = "servetune-vllm-limits"
BY = ("job", "instance", "model_name")  # one server: V0 and V1 both label model_name
RATE = "2m"  # the window of rates (a few scrapes at Prometheus' default 15-60 s)
FOR = "1m"  # how long a condition holds before its alert fires
FLAT = "5m"  # running held flat this long while requests wait: a cap holds it (unconfirmed)
BASELINE = "1h"  # inter-token latency and running now against this past
PREFIX = "servetune:vllm"
Severity = Literal["warning", "critical"]

# The limits in `diagnose`'s order; each alert's knob is the text `alerts.knob.<limit>` (the
# seed's five knobs, plus replicas and the front door).
ORDER: tuple[Limit, ...] = (
    "stalled",
    "admission",
    "kv-cache",
    "deferred",
    "max-num-seqs",
    "max-num-batched-tokens",
    "compute",
)


def _by() -> str:
    return ", ".join(BY)


def _duration(seconds: float) -> str:
    return f"{round(seconds / 60)}m" if seconds % 60 == 0 else f"{round(seconds)}s"


def _number(value: float) -> str:
    return f"{value:g}"


def record_name(limit: Limit) -> str:
    return f"{PREFIX}_limit:{limit.replace('-', '_')}"


def alert_name(limit: Limit) -> str:
    return "VllmLimit" + "".join(part.capitalize() for part in limit.split("-"))


@dataclass(frozen=True)
class Metrics:
    """The metric names one release exports for the signals (None: it exports none)."""

    running: str | None
    waiting: str | None
    kv_cache_usage: str | None
    preemptions: str | None
    generation_tokens: str | None
    prompt_tokens: str | None
    admission_rejections: str | None
    deferred: str | None
    itl: str | None
    ttft: str | None
    queue: str | None
    step_tokens: str | None

    @classmethod
    def of(cls, where: names.Release) -> Metrics:
        def pick(names_: tuple[str, ...]) -> str | None:
            return names.pick(names_, where)

        return cls(
            running=pick(GAUGES["running"]),
            waiting=pick(GAUGES["waiting"]),
            kv_cache_usage=pick(GAUGES["kv_cache_usage"]),
            preemptions=pick(COUNTERS["preemptions"]),
            generation_tokens=pick(COUNTERS["generation_tokens"]),
            prompt_tokens=pick(COUNTERS["prompt_tokens"]),
            admission_rejections=pick(COUNTERS["admission_rejections"]),
            deferred=pick((WAITING_BY_REASON,)),
            itl=pick(HISTOGRAMS["itl"]),
            ttft=pick(HISTOGRAMS["ttft"]),
            queue=pick(HISTOGRAMS["queue"]),
            step_tokens=pick(HISTOGRAMS["step_tokens"]),
        )


@dataclass(frozen=True)
class Rule:
    """A recording rule."""

    record: str
    expr: str


@dataclass(frozen=True)
class Alert:
    """The alert of one limit: its condition (recorded), the query that shows its evidence,
    the knob, why it fires and the next step (sentences)."""

    limit: Limit
    condition: str
    unless: tuple[Limit, ...]  # the limits named before it
    evidence_query: str
    severity: Severity
    why: Said
    next_step: Said
    cap_confirmed: bool | None = None

    @property
    def name(self) -> str:
        return alert_name(self.limit)

    @property
    def knob(self) -> Said:
        return Said(f"alerts.knob.{self.limit}")

    @property
    def expr(self) -> str:
        if not self.unless:
            return record_name(self.limit)
        before = " or ".join(record_name(limit) for limit in self.unless)
        return f"{record_name(self.limit)}\nunless on ({_by()})\n({before})"


@dataclass(frozen=True)
class Skipped:
    limit: Limit
    reason: Said


@dataclass(frozen=True)
class Ruleset:
    """The rules for one release and one server's caps."""

    release: names.Release
    caps: Caps
    metrics: Metrics
    signals: tuple[Rule, ...]
    alerts: tuple[Alert, ...]
    skipped: tuple[Skipped, ...]

    def conditions(self) -> tuple[Rule, ...]:
        return tuple(Rule(record_name(a.limit), a.condition) for a in self.alerts)

    def to_json(self) -> dict[str, object]:
        """What `alerts --format json` prints besides the files (English)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "vllm_version": self.release.asked,
            "names_of": self.release.table,
            "engine": self.release.engine,
            "caps": {
                "max_num_seqs": self.caps.max_num_seqs,
                "max_num_batched_tokens": self.caps.max_num_batched_tokens,
                "data_parallel_size": self.caps.data_parallel_size,
                "source": self.caps.source,
            },
            "alerts": [
                {
                    "alert": a.name,
                    "limit": a.limit,
                    "expr": a.expr,
                    "condition": a.condition,
                    "for": FOR,
                    "severity": a.severity,
                    "evidence_query": a.evidence_query,
                    "knob": a.knob.text(),
                    "why": a.why.text(),
                    "next_step": a.next_step.text(),
                    "cap_confirmed": a.cap_confirmed,
                }
                for a in self.alerts
            ],
            "skipped": [{"limit": s.limit, "reason": s.reason.text()} for s in self.skipped],
        }


def _sum(metric: str, selector: str = "") -> str:
    return f"sum by ({_by()}) ({metric}{selector})"


def _rate(metric: str, window: str = RATE, fn: str = "rate") -> str:
    return f"sum by ({_by()}) ({fn}({metric}[{window}]))"


def _mean_itl(metric: str, window: str) -> str:
    return f"{_rate(metric + '_sum', window)}\n/\n{_rate(metric + '_count', window)}"


def _signals(m: Metrics) -> list[Rule]:
    """The recorded signals the conditions read (those the release has)."""
    found: list[Rule] = []
    if m.running:
        found.append(Rule(f"{PREFIX}_running:sum", _sum(m.running)))
    if m.waiting:
        found.append(Rule(f"{PREFIX}_waiting:sum", _sum(m.waiting)))
    if m.kv_cache_usage:
        found.append(Rule(f"{PREFIX}_kv_cache_usage:max", f"max by ({_by()}) ({m.kv_cache_usage})"))
    if m.preemptions:
        found.append(Rule(f"{PREFIX}_preemptions:rate{RATE}", _rate(m.preemptions)))
    if m.generation_tokens:
        stall = _duration(STALL_S)
        expr = _rate(m.generation_tokens, stall, "increase")
        found.append(Rule(f"{PREFIX}_generation_tokens:increase{stall}", expr))
    if m.admission_rejections:
        found.append(
            Rule(f"{PREFIX}_admission_rejections:rate{RATE}", _rate(m.admission_rejections))
        )
    if m.deferred:
        found.append(Rule(f"{PREFIX}_deferred:sum", _sum(m.deferred, '{reason="deferred"}')))
    if m.itl and m.running:
        found.append(Rule(f"{PREFIX}_itl_seconds:mean5m", _mean_itl(m.itl, "5m")))
        found.append(Rule(f"{PREFIX}_itl_seconds:mean{BASELINE}", _mean_itl(m.itl, BASELINE)))
        baseline = f"avg_over_time({PREFIX}_running:sum[{BASELINE}])"
        found.append(Rule(f"{PREFIX}_running:avg{BASELINE}", baseline))
    return found


RUNNING = f"{PREFIX}_running:sum"
WAITING = f"{PREFIX}_waiting:sum"
KV = f"{PREFIX}_kv_cache_usage:max"


def _stalled(m: Metrics, _caps: Caps) -> Alert | Skipped:
    if not (m.generation_tokens and m.running and m.waiting):
        return Skipped("stalled", Said("alerts.skip.metric", metric="vllm:generation_tokens_total"))
    stall = _duration(STALL_S)
    condition = f"({RUNNING} + {WAITING}) > 0\nand {PREFIX}_generation_tokens:increase{stall} == 0"
    return Alert(
        "stalled",
        condition,
        (),
        _rate(m.generation_tokens, stall, "increase"),
        "critical",
        Said("alerts.why.stalled", seconds=STALL_S),
        Said("next.stalled"),
    )


def _admission(m: Metrics, _caps: Caps) -> Alert | Skipped:
    if not m.admission_rejections:
        metric = COUNTERS["admission_rejections"][0]
        return Skipped("admission", Said("alerts.skip.metric", metric=metric))
    return Alert(
        "admission",
        f"{PREFIX}_admission_rejections:rate{RATE} > 0",
        (),
        _rate(m.admission_rejections),
        "warning",
        Said("alerts.why.admission"),
        Said("next.admission"),
    )


def _kv_cache(m: Metrics, _caps: Caps) -> Alert | Skipped:
    if not (m.preemptions and m.kv_cache_usage and m.waiting):
        return Skipped("kv-cache", Said("alerts.skip.metric", metric="vllm:kv_cache_usage_perc"))
    condition = (
        f"{PREFIX}_preemptions:rate{RATE} > 0\n"
        f"or ({WAITING} >= {_number(WAITING_MIN)} and {KV} >= {_number(KV_ROOM)})"
    )
    return Alert(
        "kv-cache",
        condition,
        (),
        f"max by ({_by()}) ({m.kv_cache_usage})",
        "warning",
        Said("alerts.why.kv-cache", kv=KV_ROOM, preemptions=m.preemptions),
        Said("next.kv-cache"),
    )


def _deferred(m: Metrics, _caps: Caps) -> Alert | Skipped:
    if not (m.deferred and m.waiting):
        return Skipped("deferred", Said("alerts.skip.metric", metric=WAITING_BY_REASON))
    deferred = f"{PREFIX}_deferred:sum"
    condition = (
        f"{deferred} >= {_number(WAITING_MIN)}\n"
        f"and {deferred} >= {_number(DEFERRED_SHARE)} * {WAITING}"
    )
    return Alert(
        "deferred",
        condition,
        (),
        _sum(m.deferred, '{reason="deferred"}'),
        "warning",
        Said("alerts.why.deferred", share=DEFERRED_SHARE),
        Said("next.deferred"),
    )


def _at_cap(ceiling: int) -> int:
    """Running at the cap: SEQS_CEILING_SHARE of it, as a whole number of sequences."""
    return math.ceil(SEQS_CEILING_SHARE * ceiling - 1e-9)


def _max_num_seqs(m: Metrics, caps: Caps) -> Alert | Skipped:
    if not (m.running and m.waiting and m.kv_cache_usage):
        return Skipped(
            "max-num-seqs", Said("alerts.skip.metric", metric="vllm:num_requests_running")
        )
    queue = f"{WAITING} >= {_number(WAITING_MIN)}\nand {KV} < {_number(KV_ROOM)}"
    ceiling = caps.seqs_ceiling
    if ceiling is None:
        flat = f"max_over_time({RUNNING}[{FLAT}]) == min_over_time({RUNNING}[{FLAT}])"
        return Alert(
            "max-num-seqs",
            f"{queue}\nand {RUNNING} > 0\nand ({flat})",
            (),
            _sum(m.running),
            "warning",
            Said("alerts.why.max-num-seqs:unconfirmed", window=FLAT),
            Said("alerts.next.max-num-seqs:unconfirmed"),
            cap_confirmed=False,
        )
    seqs = caps.max_num_seqs or ceiling
    return Alert(
        "max-num-seqs",
        f"{queue}\nand {RUNNING} >= {_at_cap(ceiling)}",
        (),
        _sum(m.running),
        "warning",
        Said("alerts.why.max-num-seqs", cap=ceiling, at=_at_cap(ceiling)),
        Said("next.max-num-seqs", seqs=seqs, twice=2 * seqs),
        cap_confirmed=True,
    )


def _budget(m: Metrics, caps: Caps) -> Alert | Skipped:
    ceiling, budget = caps.seqs_ceiling, caps.max_num_batched_tokens
    if ceiling is None or not budget:
        return Skipped("max-num-batched-tokens", Said("alerts.skip.caps"))
    if not (m.running and m.waiting and m.kv_cache_usage):
        metric = "vllm:num_requests_running"
        return Skipped("max-num-batched-tokens", Said("alerts.skip.metric", metric=metric))
    condition = (
        f"{WAITING} >= {_number(WAITING_MIN)}\nand {KV} < {_number(KV_ROOM)}\n"
        f"and {RUNNING} < {_at_cap(ceiling)}"
    )
    evidence = (
        f"histogram_quantile(0.99, sum by (le, {_by()}) (rate({m.step_tokens}_bucket[{RATE}])))"
        if m.step_tokens
        else _sum(m.waiting)
    )
    return Alert(
        "max-num-batched-tokens",
        condition,
        (),
        evidence,
        "warning",
        Said("alerts.why.max-num-batched-tokens", budget=budget, at=_at_cap(ceiling)),
        Said("next.max-num-batched-tokens", budget=budget, twice=2 * budget),
        cap_confirmed=True,
    )


def _compute(m: Metrics, _caps: Caps) -> Alert | Skipped:
    if not (m.itl and m.running and m.waiting):
        return Skipped("compute", Said("alerts.skip.metric", metric=HISTOGRAMS["itl"][0]))
    condition = (
        f"{WAITING} < {_number(WAITING_MIN)}\n"
        f"and {PREFIX}_itl_seconds:mean5m >= {_number(COMPUTE_ITL_RISE)} * "
        f"{PREFIX}_itl_seconds:mean{BASELINE}\n"
        f"and {RUNNING} >= {_number(COMPUTE_RUNNING_RISE)} * {PREFIX}_running:avg{BASELINE}"
    )
    return Alert(
        "compute",
        condition,
        (),
        _mean_itl(m.itl, "5m"),
        "warning",
        Said("alerts.why.compute", itl=COMPUTE_ITL_RISE, running=COMPUTE_RUNNING_RISE),
        Said("next.compute"),
    )


_BUILDERS = {
    "stalled": _stalled,
    "admission": _admission,
    "kv-cache": _kv_cache,
    "deferred": _deferred,
    "max-num-seqs": _max_num_seqs,
    "max-num-batched-tokens": _budget,
    "compute": _compute,
}


def ruleset(caps: Caps, vllm_version: str | None) -> Ruleset:
    """The rules of every limit `vllm_version` can show (None: the newest release known)."""
    where = names.release(vllm_version)
    metrics = Metrics.of(where)
    alerts: list[Alert] = []
    skipped: list[Skipped] = []
    for limit in ORDER:
        built = _BUILDERS[limit](metrics, caps)
        if isinstance(built, Skipped):
            skipped.append(built)
            continue
        before = tuple(a.limit for a in alerts)
        alerts.append(replace(built, unless=before))  # the limits diagnose tries first
    return Ruleset(where, caps, metrics, tuple(_signals(metrics)), tuple(alerts), tuple(skipped))
