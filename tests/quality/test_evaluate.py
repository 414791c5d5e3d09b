"""`servetune quality` end to end on stand-in servers that answer a known share right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.errors import UsageError
from servetune.quality import ask, dataset
from servetune.quality.evaluate import QualityConfig, evaluate

from answer_server import AnswerBook, serve


def _book(
    questions: list[dataset.Question],
    *,
    wrong: set[str] | None = None,
    fail: set[str] | None = None,
    garbage: set[str] | None = None,
) -> AnswerBook:
    answers = {q.prompt: q.answer for q in questions}
    return AnswerBook(answers, wrong=wrong or set(), fail=fail or set(), garbage=garbage or set())


def _config(before: str, after: str, spec: str, **kw: object) -> QualityConfig:
    return QualityConfig(
        before=ask.Server(before, "fake/model"),
        after=ask.Server(after, "fake/model"),
        dataset=spec,
        **kw,  # type: ignore[arg-type]
    )


def test_builtin_sets_load_and_every_answer_grades_itself() -> None:
    names = dataset.builtin_names()
    assert {"math", "reasoning"} <= set(names)
    for name in names:
        questions = dataset.load(f"builtin:{name}")
        assert len(questions) >= 100
        assert len({q.prompt for q in questions}) == len(questions)
        for q in questions:
            assert q.answer.casefold() not in q.prompt.casefold() or q.kind == "number"


def test_a_known_loss_on_the_after_server_reads_worse_with_the_differing_questions() -> None:
    questions = dataset.load("builtin:math")[:120]
    wrong = {q.prompt for q in questions[:30]}  # after gets 30 of 120 wrong, before none
    with serve(_book(questions)) as before, serve(_book(questions, wrong=wrong)) as after:
        result = evaluate(_config(before, after, "builtin:math"), questions)
    doc = result.to_json()
    assert doc["before"] == {"model": "fake/model", "accuracy": 1.0, "correct": 120, "errors": 0}
    assert doc["after"]["correct"] == 90  # type: ignore[index]
    assert doc["difference_pct_points"] == pytest.approx(-25.0)
    assert doc["verdict"] == "worse"
    assert doc["agreement"] == pytest.approx(0.75)
    differing = doc["differing"]
    assert isinstance(differing, list)
    assert {d["prompt"] for d in differing} == wrong


def test_the_same_answers_on_both_sides_are_no_loss_given_enough_questions() -> None:
    questions = dataset.load("builtin:reasoning") + dataset.load("builtin:math")
    wrong = {q.prompt for q in questions[::10]}
    with (
        serve(_book(questions, wrong=wrong)) as before,
        serve(_book(questions, wrong=wrong)) as after,
    ):
        result = evaluate(_config(before, after, "mixed", concurrency=16), questions)
    assert result.difference.verdict == "no-detectable-loss"
    assert result.table.agreement == 1.0
    assert (result.before.errors, result.after.errors) == (0, 0)
    assert result.before.accuracy == pytest.approx(0.9)


def test_failed_requests_are_errors_not_wrong_answers_and_are_listed(tmp_path: Path) -> None:
    questions = dataset.load("builtin:math")[:20]
    fail = {questions[0].prompt}
    garbage = {questions[1].prompt}
    with (
        serve(_book(questions)) as before,
        serve(_book(questions, fail=fail, garbage=garbage)) as after,
    ):
        result = evaluate(_config(before, after, "builtin:math"), questions)
    doc = result.to_json()
    assert doc["after"] == {"model": "fake/model", "accuracy": 1.0, "correct": 18, "errors": 2}
    failed = doc["failed"]
    assert isinstance(failed, list)
    assert {(f["after"]) for f in failed} == {"http_500", "malformed"}
    assert doc["n"] == 20
    record = result.to_json(with_questions=True)
    assert len(record["questions"]) == 20  # type: ignore[arg-type]
    json.dumps(record)


def test_requests_are_greedy_and_carry_the_prompt_as_is() -> None:
    questions = dataset.load("builtin:reasoning")[:3]
    book = _book(questions)
    with serve(book) as url:
        config = QualityConfig(
            before=ask.Server(url, "fake/model", endpoint=ask.COMPLETIONS, max_tokens=64),
            after=ask.Server(url, "fake/model"),
            dataset="x",
        )
        evaluate(config, questions)
    completions = [p for p in book.received if "prompt" in p]
    chats = [p for p in book.received if "messages" in p]
    assert len(completions) == len(chats) == 3
    assert all(p["temperature"] == 0 for p in book.received)
    assert {p["prompt"] for p in completions} == {q.prompt for q in questions}
    assert all(p["max_tokens"] == 64 for p in completions)


def test_a_server_that_is_down_or_serves_another_model_is_a_usage_error() -> None:
    questions = dataset.load("builtin:math")[:2]
    with serve(_book(questions)) as url:
        config = _config(url, "http://127.0.0.1:9", "x")
        with pytest.raises(UsageError, match="cannot reach"):
            evaluate(config, questions)
        other = QualityConfig(ask.Server(url, "fake/modle"), ask.Server(url, "fake/model"), "x")
        with pytest.raises(UsageError, match="does not serve") as caught:
            evaluate(other, questions)
        assert "fake/model" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "line 1 is not JSON"),
        ('["a"]', "not a JSON object"),
        ('{"prompt": "q"}', "non-empty string"),
        ('{"prompt": "q", "answer": "x", "kind": "number"}', "not a number"),
        ('{"prompt": "q", "answer": "x", "kind": "essay"}', "kind must be"),
        ("\n\n", "holds no questions"),
    ],
)
def test_malformed_datasets_are_usage_errors_with_the_line(
    tmp_path: Path, text: str, match: str
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=match):
        dataset.load(str(path))


def test_unknown_builtin_and_missing_file_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="builtin:math"):
        dataset.load("builtin:nope")
    with pytest.raises(UsageError, match="cannot read"):
        dataset.load(str(tmp_path / "none.jsonl"))


def test_answers_kinds_and_seeded_samples() -> None:
    parsed = dataset.parse_lines(
        ['{"prompt": "p", "answer": 12}', '{"prompt": "q", "answer": "Paris"}'], "t"
    )
    assert [(q.answer, q.kind) for q in parsed] == [("12", "number"), ("Paris", "text")]
    questions = dataset.load("builtin:math")
    first = dataset.sample(questions, 10, seed=1)
    assert first == dataset.sample(questions, 10, seed=1)
    assert first != dataset.sample(questions, 10, seed=2)
    assert len(first) == 10 and dataset.sample(questions, None, 1) == questions
