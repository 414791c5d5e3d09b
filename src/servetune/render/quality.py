"""The terminal view of a `quality` result (the JSON view is `QualityResult.to_json`)."""

from __future__ import annotations

from collections import Counter

from servetune import texts
from servetune.quality.evaluate import QualityResult, SideSummary
from servetune.render.check import wrap
from servetune.texts import Language, Voice

DIFFERING_SHOWN = 10
REPLY_CHARS = 100


def _pct(value: float | None, say: Voice) -> str:
    return say("accuracy.none") if value is None else f"{100 * value:.1f}%"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f}"


def _side(name: str, side: SideSummary, n: int, say: Voice) -> list[str]:
    line = say(
        "side.line",
        accuracy=_pct(side.accuracy, say),
        correct=side.correct,
        answered=n - side.errors,
        errors=side.errors,
    )
    return [f"  {say(f'side.{name}')}  {side.model}", f"    {line}"]


def _short(reply: str | None) -> str:
    flat = " ".join((reply or "").split())
    return flat if len(flat) <= REPLY_CHARS else flat[: REPLY_CHARS - 3] + "..."


def _differing(result: QualityResult, say: Voice) -> list[str]:
    rows = result.differing
    if not rows:
        return []
    lines = ["", say("differing.header", count=len(rows))]
    for g in rows[:DIFFERING_SHOWN]:
        lines += wrap(g.question.prompt, "  ", "- ")
        lines.append("    " + say("differing.answer", answer=g.question.answer))
        lines.append("    " + say("differing.before", reply=_short(g.before.text)))
        lines.append("    " + say("differing.after", reply=_short(g.after.text)))
    if len(rows) > DIFFERING_SHOWN:
        lines.append("  " + say("differing.more", count=len(rows) - DIFFERING_SHOWN))
    return lines


def _verdict(result: QualityResult, say: Voice) -> list[str]:
    diff = result.difference
    tolerance = f"{result.tolerance_pct_points:g}"
    lines = wrap(say(f"verdict.{diff.verdict}", tolerance=tolerance), "")
    if diff.questions_to_settle is not None:
        lines += wrap(say("settle", count=diff.questions_to_settle), "")
    return lines


def quality_text(result: QualityResult, lang: Language = "en") -> str:
    """The summary a person reads: both scores, the difference, the verdict, the differences."""
    say = texts.Voice("quality", lang)
    n = len(result.graded)
    lines = [say("header", dataset=result.dataset, n=n), ""]
    lines += _side("before", result.before, n, say) + _side("after", result.after, n, say)
    lines.append("")
    diff = result.difference
    if diff.difference_pct_points is None:
        lines += wrap(say("difference.none"), "")
    else:
        agreement = _pct(result.table.agreement, say)
        text = say(
            "difference",
            difference=_points(diff.difference_pct_points),
            low=_points(diff.ci_low),
            high=_points(diff.ci_high),
            agreement=agreement,
        )
        lines += wrap(text, "")
    if result.failed:
        kinds = Counter(e for g in result.failed for e in (g.before.error, g.after.error) if e)
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items()))
        lines += wrap(say("failed", count=len(result.failed), kinds=listed), "")
    if result.interrupted:
        lines += wrap(say("interrupted"), "")
    for warning in result.warnings:
        lines += wrap(say(f"warning.{warning}"), "")
    lines += ["", *_verdict(result, say), *_differing(result, say)]
    return "\n".join(lines) + "\n"
