"""The terminal view of a `quality` result (the JSON view is `quality.evaluate.result_json`)."""

from __future__ import annotations

from collections import Counter

from servetune import texts
from servetune.quality.evaluate import QualityResult, SideSummary
from servetune.render.check import wrap
from servetune.texts import Language

DIFFERING_SHOWN = 10
REPLY_CHARS = 100


def _t(key: str, lang: Language, **facts: object) -> str:
    return texts.format("quality", key, lang, **facts)


def _pct(value: float | None, lang: Language) -> str:
    return _t("accuracy.none", lang) if value is None else f"{100 * value:.1f}%"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f}"


def _side(name: str, side: SideSummary, n: int, lang: Language) -> list[str]:
    line = _t(
        "side.line",
        lang,
        accuracy=_pct(side.accuracy, lang),
        correct=side.correct,
        answered=n - side.errors,
        errors=side.errors,
    )
    return [f"  {_t(f'side.{name}', lang)}  {side.model}", f"    {line}"]


def _short(reply: str | None) -> str:
    flat = " ".join((reply or "").split())
    return flat if len(flat) <= REPLY_CHARS else flat[: REPLY_CHARS - 3] + "..."


def _differing(result: QualityResult, lang: Language) -> list[str]:
    rows = result.differing
    if not rows:
        return []
    lines = ["", _t("differing.header", lang, count=len(rows))]
    for g in rows[:DIFFERING_SHOWN]:
        lines += wrap(g.question.prompt, "  ", "- ")
        lines.append("    " + _t("differing.answer", lang, answer=g.question.answer))
        lines.append("    " + _t("differing.before", lang, reply=_short(g.before.text)))
        lines.append("    " + _t("differing.after", lang, reply=_short(g.after.text)))
    if len(rows) > DIFFERING_SHOWN:
        lines.append("  " + _t("differing.more", lang, count=len(rows) - DIFFERING_SHOWN))
    return lines


def _verdict(result: QualityResult, lang: Language) -> list[str]:
    diff = result.difference
    tolerance = f"{result.tolerance_pct_points:g}"
    lines = wrap(_t(f"verdict.{diff.verdict}", lang, tolerance=tolerance), "")
    if diff.questions_to_settle is not None:
        lines += wrap(_t("settle", lang, count=diff.questions_to_settle), "")
    return lines


def quality_text(result: QualityResult, lang: Language = "en") -> str:
    """The summary a person reads: both scores, the difference, the verdict, the differences."""
    n = len(result.graded)
    lines = [_t("header", lang, dataset=result.dataset, n=n), ""]
    lines += _side("before", result.before, n, lang) + _side("after", result.after, n, lang)
    lines.append("")
    diff = result.difference
    if diff.difference_pct_points is None:
        lines += wrap(_t("difference.none", lang), "")
    else:
        agreement = _pct(result.table.agreement, lang)
        text = _t(
            "difference",
            lang,
            difference=_points(diff.difference_pct_points),
            low=_points(diff.ci_low),
            high=_points(diff.ci_high),
            agreement=agreement,
        )
        lines += wrap(text, "")
    if result.failed:
        kinds = Counter(e for g in result.failed for e in (g.before.error, g.after.error) if e)
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items()))
        lines += wrap(_t("failed", lang, count=len(result.failed), kinds=listed), "")
    if result.interrupted:
        lines += wrap(_t("interrupted", lang), "")
    for warning in result.warnings:
        lines += wrap(_t(f"warning.{warning}", lang), "")
    lines += ["", *_verdict(result, lang), *_differing(result, lang)]
    return "\n".join(lines) + "\n"
