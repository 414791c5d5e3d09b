"""The judge's reports as text: `compare`'s table and `accept`'s five checks.

Their JSON documents are `Comparison.to_json` and `Acceptance.to_json`. The words these views
print are in `COMPARE_TEXT` and `ACCEPT_TEXT`, so a translation has one place to go.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from servetune.judge.compare import CONFIDENCE, signed_pct

if TYPE_CHECKING:
    from servetune.judge.accept import Acceptance
    from servetune.judge.compare import Comparison, ConfigChange, MetricComparison

WIDTH = 80

COMPARE_TEXT = {
    "runs": "before: {before} run(s), after: {after} run(s); "
    "{confidence:.0%} intervals by resampling {method}.",
    "method_runs": "runs",
    "method_requests": "requests within a run",
    "header": "{metric:<18} {before:>9} {after:>9} {change:>8}  {ci:<15} {verdict}",
    "metric": "metric",
    "before": "before",
    "after": "after",
    "change": "change",
    "ci": "CI",
    "verdict": "verdict",
    "insufficient": "insufficient",
    "changed_flags": "Changed flags (before -> after):",
    "unset": "unset",
    "default": " (default)",
    "warnings": "Warnings:",
    "next_step": "Next step: {step}",
}

ACCEPT_TEXT = {
    "accepted": "ACCEPTED",
    "not_accepted": "NOT ACCEPTED ({failed} failed, {unknown} unknown)",
    "check": "  [{status}] {name}: {evidence}",
}


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3g}"


def _row_text(m: MetricComparison) -> str:
    change = signed_pct(m.change_pct) if m.change_pct is not None else "-"
    ci = "-"
    if m.ci_low_pct is not None and m.ci_high_pct is not None:
        ci = f"{m.ci_low_pct:+.1f}..{m.ci_high_pct:+.1f}%"
    verdict = COMPARE_TEXT["insufficient"] if m.verdict == "insufficient-data" else m.verdict
    return COMPARE_TEXT["header"].format(
        metric=m.name,
        before=_number(m.before),
        after=_number(m.after),
        change=change,
        ci=ci,
        verdict=verdict,
    )


def _wrapped(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def _change_text(ch: ConfigChange) -> str:
    unset, default = COMPARE_TEXT["unset"], COMPARE_TEXT["default"]
    b = (ch.before or unset) + (default if ch.before_default and ch.before else "")
    a = (ch.after or unset) + (default if ch.after_default and ch.after else "")
    return f"{ch.flag}: {b} -> {a}"


def comparison_text(c: Comparison) -> str:
    """The human report: the conclusion in one sentence, then a table in 80 columns."""
    method = COMPARE_TEXT["method_runs" if c.ci_method == "runs" else "method_requests"]
    runs = COMPARE_TEXT["runs"].format(
        before=c.runs_before, after=c.runs_after, confidence=CONFIDENCE, method=method
    )
    header = COMPARE_TEXT["header"].format(
        **{key: COMPARE_TEXT[key] for key in ("metric", "before", "after", "change", "ci")},
        verdict=COMPARE_TEXT["verdict"],
    )
    lines = [
        *_wrapped(c.conclusion, ""),
        *_wrapped(runs, ""),
        "",
        header,
        *(_row_text(m) for m in c.metrics),
    ]
    if c.config_changes:
        lines += ["", COMPARE_TEXT["changed_flags"]]
        for ch in c.config_changes:
            lines += _wrapped(_change_text(ch))
    if c.warnings:
        lines += ["", COMPARE_TEXT["warnings"]]
        for w in c.warnings:
            lines += _wrapped(f"[{w.rule}] {w.message}")
    if c.next_step:
        lines += ["", *_wrapped(COMPARE_TEXT["next_step"].format(step=c.next_step), "")]
    return "\n".join(lines) + "\n"


def acceptance_text(result: Acceptance) -> str:
    """The verdict on the first line, then one line per check."""
    if result.accepted:
        head = ACCEPT_TEXT["accepted"]
    else:
        head = ACCEPT_TEXT["not_accepted"].format(
            failed=result.count("fail"), unknown=result.count("unknown")
        )
    lines = [head]
    lines += [
        ACCEPT_TEXT["check"].format(status=c.status, name=c.name, evidence=c.evidence)
        for c in result.checks
    ]
    return "\n".join(lines) + "\n"
