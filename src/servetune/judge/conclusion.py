"""A comparison's conclusion in one sentence: which way it went, its largest changes (the first
with its interval) and which knobs changed. Kept as `Sentence`s so the terminal can say it in
any language; the JSON document carries the English (`Comparison.conclusion`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from servetune.judge.runs import metric_parts
from servetune.judge.sentence import Joined, Sentence

if TYPE_CHECKING:
    from servetune.judge.compare import Comparison, MetricComparison

__all__ = ["conclusion", "signed_pct"]

_NAMED = frozenset(
    {"request_throughput", "output_throughput", "total_token_throughput", "request_goodput"}
)


def signed_pct(pct: float) -> str:
    """A change in percent as reports print it: +12%, -3.4%."""
    return f"{pct:+.0f}%" if abs(pct) >= 10 else f"{pct:+.1f}%"


def _pretty(name: str) -> Sentence:
    parts = metric_parts(name)
    if parts is None:
        return Sentence(f"metric.{name}") if name in _NAMED else Sentence("metric.other", name=name)
    stat, family = parts
    if stat == "mean":
        return Sentence("metric.mean", family=family.upper())
    return Sentence("metric.percentile", stat=stat, family=family.upper())


def _highlights(rows: Sequence[MetricComparison], limit: int = 3) -> Joined:
    """The largest changes, the first with its interval."""
    ranked = sorted(rows, key=lambda m: -abs(m.change_pct or 0.0))[:limit]
    texts = [
        Sentence(
            "conclusion.change", metric=_pretty(m.name), change=signed_pct(m.change_pct or 0.0)
        )
        for m in ranked
    ]
    first = ranked[0]
    if first.ci_low_pct is not None and first.ci_high_pct is not None:
        ci = Sentence(
            "conclusion.ci", low=signed_pct(first.ci_low_pct), high=signed_pct(first.ci_high_pct)
        )
        texts[0] = Sentence("conclusion.with_ci", change=texts[0], ci=ci)
    return Joined(tuple(texts), "list.comma")


def _knob_clause(c: Comparison) -> Sentence:
    if not c.config_known:
        return Sentence("conclusion.config_unknown")
    n = len(c.config_changes)
    if n == 0:
        return Sentence("conclusion.no_knob")
    if n > 3:
        return Sentence("conclusion.knobs", n=n)
    unset = Sentence("compare.unset")
    spelled = Joined(
        tuple(
            Sentence(
                "conclusion.knob", flag=ch.flag, before=ch.before or unset, after=ch.after or unset
            )
            for ch in c.config_changes
        ),
        "list.comma",
    )
    return Sentence(
        "conclusion.knobs_spelled" if n > 1 else "conclusion.knob_spelled", n=n, changes=spelled
    )


def _head(c: Comparison) -> Sentence:
    better = [m for m in c.metrics if m.verdict == "better"]
    worse = [m for m in c.metrics if m.verdict == "worse"]
    single = [s for s, n in (("before", c.runs_before), ("after", c.runs_after)) if n == 1]
    if single:
        which = "both" if len(single) == 2 else single[0]
        suggest: Sentence | str = ""
        if better or worse:
            suggest = Sentence("conclusion.suggest", changes=_highlights([*better, *worse], 2))
        return Sentence(f"conclusion.single.{which}", suggest=suggest)
    if better and worse:
        return Sentence(
            "conclusion.trade_off", better=_highlights(better, 2), worse=_highlights(worse, 2)
        )
    if better or worse:
        verdict = "better" if better else "worse"
        return Sentence(f"conclusion.{verdict}", changes=_highlights(better or worse))
    if any(m.verdict == "no-change" for m in c.metrics):
        return Sentence("conclusion.no_change")
    return Sentence("conclusion.nothing")


def conclusion(c: Comparison) -> Sentence:
    """The conclusion: its head, then the knobs that changed."""
    return Sentence("conclusion", head=_head(c), knobs=_knob_clause(c))
