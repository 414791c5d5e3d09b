"""`servetune quality` as a library call: ask both servers the same questions, grade, compare.

The result keeps every question with both replies and grades (the `--output` record), and the
summary the command prints: accuracy per side, the paired difference with its interval, how often
the two agree, a verdict, and the questions where they differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from servetune.errors import UsageError
from servetune.quality import ask, stats
from servetune.quality.dataset import Question
from servetune.quality.grading import is_correct
from servetune.texts import ErrorText

SCHEMA_VERSION = 1
DEFAULT_TOLERANCE_PCT_POINTS = 2.0
LOW_ACCURACY = 0.10  # both sides at or below: the comparison measures noise


@dataclass(frozen=True)
class QualityConfig:
    """Everything one comparison needs."""

    before: ask.Server
    after: ask.Server
    dataset: str
    tolerance_pct_points: float = DEFAULT_TOLERANCE_PCT_POINTS
    concurrency: int = 8
    seed: int = 0
    num: int | None = None


@dataclass(frozen=True)
class Graded:
    """One question as both servers answered it. `*_correct` is None when that request failed."""

    question: Question
    before: ask.Reply
    after: ask.Reply
    before_correct: bool | None
    after_correct: bool | None


@dataclass(frozen=True)
class SideSummary:
    """One server's score; accuracy is over the questions it answered (None when none)."""

    model: str
    accuracy: float | None
    correct: int
    errors: int


@dataclass(frozen=True)
class QualityResult:
    """The comparison: summaries, the paired difference, agreement and every graded question."""

    dataset: str
    tolerance_pct_points: float
    before: SideSummary
    after: SideSummary
    table: stats.PairedTable
    difference: stats.PairedDifference
    graded: tuple[Graded, ...]
    interrupted: bool = False

    @property
    def differing(self) -> tuple[Graded, ...]:
        """Questions both answered where one is right and the other wrong."""
        return tuple(
            g
            for g in self.graded
            if g.before_correct is not None
            and g.after_correct is not None
            and g.before_correct != g.after_correct
        )

    @property
    def warnings(self) -> tuple[str, ...]:
        """`low-accuracy`: neither side gets more than LOW_ACCURACY right, so agreement and the
        difference say little about what a change costs (a toy model, or questions too hard)."""
        sides = (self.before.accuracy, self.after.accuracy)
        low = all(a is not None and a <= LOW_ACCURACY for a in sides)
        return ("low-accuracy",) if low else ()

    @property
    def failed(self) -> tuple[Graded, ...]:
        return tuple(g for g in self.graded if g.before.error or g.after.error)

    def to_json(self, *, with_questions: bool = False) -> dict[str, object]:
        """The `--format json` object of the contract (plus `tolerance_pct_points`,
        `questions_to_settle`, `failed` and `interrupted`); `with_questions`: the full `--output`
        record, every question with both replies and grades."""
        diff = self.difference
        doc: dict[str, object] = {
            "schema_version": SCHEMA_VERSION,
            "dataset": self.dataset,
            "n": len(self.graded),
            "before": _side_json(self.before),
            "after": _side_json(self.after),
            "difference_pct_points": diff.difference_pct_points,
            "ci_low": diff.ci_low,
            "ci_high": diff.ci_high,
            "agreement": self.table.agreement,
            "verdict": diff.verdict,
            "tolerance_pct_points": self.tolerance_pct_points,
            "questions_to_settle": diff.questions_to_settle,
            "differing": [
                {
                    "prompt": g.question.prompt,
                    "answer": g.question.answer,
                    "before": g.before.text,
                    "after": g.after.text,
                }
                for g in self.differing
            ],
            "failed": [
                {"prompt": g.question.prompt, "before": g.before.error, "after": g.after.error}
                for g in self.failed
            ],
            "interrupted": self.interrupted,
            "warnings": list(self.warnings),
        }
        if with_questions:
            doc["questions"] = [_graded_json(g) for g in self.graded]
        return doc


def _grade(reply: ask.Reply, question: Question) -> bool | None:
    if reply.text is None:
        return None
    return is_correct(reply.text, question.answer, question.kind)


def _summary(model: str, grades: list[bool | None]) -> SideSummary:
    answered = [g for g in grades if g is not None]
    correct = sum(answered)
    accuracy = correct / len(answered) if answered else None
    return SideSummary(model, accuracy, correct, len(grades) - len(answered))


def _table(graded: list[Graded]) -> stats.PairedTable:
    pairs = [
        (g.before_correct, g.after_correct)
        for g in graded
        if g.before_correct is not None and g.after_correct is not None
    ]
    return stats.PairedTable(
        both_right=sum(1 for b, a in pairs if b and a),
        only_before=sum(1 for b, a in pairs if b and not a),
        only_after=sum(1 for b, a in pairs if a and not b),
        both_wrong=sum(1 for b, a in pairs if not a and not b),
    )


def grade_all(
    config: QualityConfig,
    questions: list[Question],
    replies_before: list[ask.Reply],
    replies_after: list[ask.Reply],
    *,
    interrupted: bool = False,
) -> QualityResult:
    """Grade both sides' replies and compare them (pure: no I/O)."""
    graded = [
        Graded(q, b, a, _grade(b, q), _grade(a, q))
        for q, b, a in zip(questions, replies_before, replies_after, strict=True)
    ]
    table = _table(graded)
    return QualityResult(
        dataset=config.dataset,
        tolerance_pct_points=config.tolerance_pct_points,
        before=_summary(config.before.model, [g.before_correct for g in graded]),
        after=_summary(config.after.model, [g.after_correct for g in graded]),
        table=table,
        difference=stats.paired_difference(table, config.tolerance_pct_points),
        graded=tuple(graded),
        interrupted=interrupted,
    )


async def _ask_both(
    config: QualityConfig,
    questions: list[Question],
    on_reply: Callable[[int, ask.Reply], None] | None,
) -> tuple[list[ask.Reply], bool]:
    pairs = [(config.before, q.prompt) for q in questions] + [
        (config.after, q.prompt) for q in questions
    ]
    async with ask.Asker(config.concurrency) as asker:
        for server in (config.before, config.after):
            await asker.check_model(server)
        return await asker.ask_all(pairs, on_reply)


def evaluate(
    config: QualityConfig,
    questions: list[Question],
    on_reply: Callable[[int, ask.Reply], None] | None = None,
) -> QualityResult:
    """Check both servers serve their models, ask every question on both, grade and compare.
    Ctrl-C keeps what was answered (the result says `interrupted`). `on_reply(index, reply)`
    hears each reply as it comes (index: the question's, plus len(questions) on the after
    side)."""
    replies, interrupted = ask.run(_ask_both(config, questions, on_reply))
    n = len(questions)
    return grade_all(config, questions, replies[:n], replies[n:], interrupted=interrupted)


def _side_json(side: SideSummary) -> dict[str, object]:
    return {
        "model": side.model,
        "accuracy": side.accuracy,
        "correct": side.correct,
        "errors": side.errors,
    }


@dataclass(frozen=True)
class QualitySummary:
    """What a saved quality result says, as `accept --quality` reads it back."""

    dataset: str
    n: int
    difference_pct_points: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: stats.Verdict


_VERDICTS: dict[str, stats.Verdict] = {
    "no-detectable-loss": "no-detectable-loss",
    "worse": "worse",
    "better": "better",
    "insufficient-data": "insufficient-data",
}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def read_summary(path: Path) -> QualitySummary:
    """Read a result written by `quality --output FILE` (or its `--format json` output)."""
    hint = ErrorText("hint.quality-result")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(
            ErrorText("quality.cannot-read-result", path=path, reason=exc), hint
        ) from exc
    raw = doc.get("verdict") if isinstance(doc, dict) else None
    verdict = _VERDICTS.get(raw) if isinstance(raw, str) else None
    if not isinstance(doc, dict) or verdict is None:
        raise UsageError(ErrorText("quality.not-a-result", path=path), hint)
    return QualitySummary(
        dataset=str(doc.get("dataset", "")),
        n=int(_number(doc.get("n")) or 0),
        difference_pct_points=_number(doc.get("difference_pct_points")),
        ci_low=_number(doc.get("ci_low")),
        ci_high=_number(doc.get("ci_high")),
        verdict=verdict,
    )


def _graded_json(g: Graded) -> dict[str, object]:
    return {
        "prompt": g.question.prompt,
        "answer": g.question.answer,
        "kind": g.question.kind,
        "before": {"reply": g.before.text, "error": g.before.error, "correct": g.before_correct},
        "after": {"reply": g.after.text, "error": g.after.error, "correct": g.after_correct},
    }
