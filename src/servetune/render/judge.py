"""The judge's reports as text: `compare`'s table and `accept`'s five checks.

Their JSON documents are `Comparison.to_json` and `Acceptance.to_json`. The words these views
print are in the `judge` area of `servetune.texts`, in English and zh-TW. The sentences the
judge itself writes (compare's conclusion, warnings and next step, accept's evidence) are
`Sentence`s: the JSON documents carry them in English, these views say them in the chosen
language, and accept's check names too.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from servetune import texts
from servetune.judge.compare import CONFIDENCE, signed_pct
from servetune.render.check import display_width, wrap
from servetune.texts import Language, Voice

if TYPE_CHECKING:
    from servetune.judge.accept import Acceptance
    from servetune.judge.compare import Comparison, ConfigChange, MetricComparison

WIDTH = 80


def _columns(*cells: str) -> str:
    """One row of compare's table: metric, before, after, change, CI, verdict (wide characters
    count two columns)."""
    metric, before, after, change, ci, verdict = cells

    def pad(text: str, width: int, right: bool = False) -> str:
        space = " " * max(0, width - display_width(text))
        return space + text if right else text + space

    return (
        f"{pad(metric, 18)} {pad(before, 9, True)} {pad(after, 9, True)} "
        f"{pad(change, 8, True)}  {pad(ci, 15)} {verdict}"
    )


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3g}"


def _row_text(m: MetricComparison, say: Voice) -> str:
    change = signed_pct(m.change_pct) if m.change_pct is not None else "-"
    ci = "-"
    if m.ci_low_pct is not None and m.ci_high_pct is not None:
        ci = f"{m.ci_low_pct:+.1f}..{m.ci_high_pct:+.1f}%"
    verdict = say(f"verdict.{m.verdict}")
    return _columns(m.name, _number(m.before), _number(m.after), change, ci, verdict)


def _wrapped(text: str, indent: str = "  ") -> list[str]:
    if display_width(text) != len(text):  # wide (Chinese) characters: two columns, break anywhere
        return wrap(text, "", indent)
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def _change_text(ch: ConfigChange, say: Voice) -> str:
    unset, default = say("compare.unset"), say("compare.default")
    b = (ch.before or unset) + (default if ch.before_default and ch.before else "")
    a = (ch.after or unset) + (default if ch.after_default and ch.after else "")
    return f"{ch.flag}: {b} -> {a}"


def comparison_text(c: Comparison, language: Language = "en") -> str:
    """The human report: the conclusion in one sentence, then a table in 80 columns."""
    say = texts.Voice("judge", language)
    method = say(f"compare.method.{c.ci_method}")
    runs = say(
        "compare.runs",
        before=c.runs_before,
        after=c.runs_after,
        confidence=f"{CONFIDENCE:.0%}",
        method=method,
    )
    names = ("metric", "before", "after", "change", "ci", "verdict")
    header = _columns(*(say(f"compare.column.{name}") for name in names))
    lines = [
        *_wrapped(c.conclusion_in(language), ""),
        *_wrapped(runs, ""),
        "",
        header,
        *(_row_text(m, say) for m in c.metrics),
    ]
    if c.config_changes:
        lines += ["", say("compare.changed_flags")]
        for ch in c.config_changes:
            lines += _wrapped(_change_text(ch, say))
    if c.warnings:
        lines += ["", say("compare.warnings")]
        for w in c.warnings:
            lines += _wrapped(f"[{w.rule}] {w.text(language)}")
    if (step := c.next_step_in(language)) is not None:
        lines += ["", *_wrapped(say("compare.next_step", step=step), "")]
    return "\n".join(lines) + "\n"


def acceptance_text(result: Acceptance, language: Language = "en") -> str:
    """The verdict on the first line, then one line per check."""
    say = texts.Voice("judge", language)
    if result.accepted:
        head = say("accept.accepted")
    else:
        failed, unknown = result.count("fail"), result.count("unknown")
        head = say("accept.not_accepted", failed=failed, unknown=unknown)
    lines = [head]
    lines += [
        say(
            "accept.check",
            status=say(f"status.{c.status}"),
            name=say(f"check.{c.id}") if say.has(f"check.{c.id}") else c.name,
            evidence=c.evidence_in(language),
        )
        for c in result.checks
    ]
    return "\n".join(lines) + "\n"
