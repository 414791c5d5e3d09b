"""`servetune quality` on the command line: the JSON contract, exit codes, --output, zh-TW."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from servetune.cli.main import main
from servetune.quality import dataset

from answer_server import AnswerBook, serve, serve_not_http

KEYS = {
    "schema_version",
    "dataset",
    "n",
    "before",
    "after",
    "difference_pct_points",
    "ci_low",
    "ci_high",
    "agreement",
    "verdict",
    "differing",
}


def _book(questions: list[dataset.Question], wrong: set[str] | None = None) -> AnswerBook:
    return AnswerBook({q.prompt: q.answer for q in questions}, wrong=wrong or set())


def _run(before: str, after: str, *extra: str) -> list[str]:
    return ["quality", "--before", before, "--after", after, "--model", "fake/model", *extra]


def test_json_holds_the_contract_and_a_loss_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = dataset.load("builtin:math")
    wrong = {q.prompt for q in questions[:40]}
    record = tmp_path / "q.json"
    with serve(_book(questions)) as before, serve(_book(questions, wrong)) as after:
        code = main(_run(before, after, "--format", "json", "--output", str(record)))
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert set(doc) >= KEYS
    assert doc["verdict"] == "worse" and doc["n"] == 200
    assert doc["before"]["accuracy"] == 1.0 and doc["after"]["correct"] == 160
    assert doc["difference_pct_points"] == pytest.approx(-20.0)
    assert len(doc["differing"]) == 40
    full = json.loads(record.read_text(encoding="utf-8"))
    assert len(full["questions"]) == 200
    assert full["questions"][0]["after"]["correct"] is False


def test_no_loss_on_a_sample_exits_0_and_says_so_in_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    questions = dataset.load("builtin:reasoning") + dataset.load("builtin:math")
    with serve(_book(questions)) as before, serve(_book(questions)) as after:
        code = main(_run(before, after, "--dataset", "builtin:reasoning", "--lang", "en"))
    out = capsys.readouterr().out
    assert code == 0, out
    assert "VERDICT no-detectable-loss" in out
    assert "100.0% right" in out


def test_a_small_sample_is_insufficient_and_exits_1_in_zh_tw(
    capsys: pytest.CaptureFixture[str],
) -> None:
    questions = dataset.load("builtin:math")
    with serve(_book(questions)) as before, serve(_book(questions)) as after:
        code = main(_run(before, after, "--num", "10", "--seed", "3", "--lang", "zh-TW"))
    out = capsys.readouterr().out
    assert code == 1
    assert "insufficient-data" in out and "才能下定論" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--dataset", "builtin:nope"], "no built-in dataset"),
        (["--num", "0"], "must be a positive integer"),
        (["--tolerance", "-1"], "percentage points"),
    ],
)
def test_bad_usage_exits_2_without_a_traceback(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = dataset.load("builtin:math")[:3]
    with serve(_book(questions)) as url:
        code = main(_run(url, url, *extra))
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_an_unreachable_server_or_a_bad_url_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run("http://127.0.0.1:9", "http://127.0.0.1:9")) == 2
    assert "cannot reach" in capsys.readouterr().err
    assert main(_run("127.0.0.1:8000", "http://127.0.0.1:9")) == 2
    assert "not a server URL" in capsys.readouterr().err


def test_ctrl_c_exits_130_and_the_record_keeps_the_answers_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = dataset.load("builtin:math")
    book = AnswerBook({q.prompt: q.answer for q in questions}, hang={questions[30].prompt})

    def ctrl_c_once_a_request_hangs() -> None:
        if book.hung.wait(30):
            os.kill(os.getpid(), signal.SIGINT)

    record = tmp_path / "q.json"
    watcher = threading.Thread(target=ctrl_c_once_a_request_hangs)
    with serve(book) as url:
        watcher.start()
        code = main(
            _run(url, url, "--concurrency", "1", "--format", "json", "--output", str(record))
        )
    watcher.join()
    captured = capsys.readouterr()
    assert code == 130 and "Traceback" not in captured.err
    doc = json.loads(captured.out)
    assert doc["interrupted"] is True
    full = json.loads(record.read_text(encoding="utf-8"))
    before = [q["before"] for q in full["questions"]]
    assert all(b["correct"] is True for b in before[:30])  # asked one at a time, in order
    assert {b["error"] for b in before[30:]} == {"cancelled"}
    assert {q["after"]["error"] for q in full["questions"]} == {"cancelled"}


def test_a_dropped_connection_is_a_listed_failure_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    questions = dataset.load("builtin:math")
    asked = dataset.sample(questions, 20, seed=0)  # what --num 20 asks (seed 0 by default)
    answers = {q.prompt: q.answer for q in questions}
    dropping = AnswerBook(answers, drop={asked[0].prompt}, garbage={asked[1].prompt})
    with serve(AnswerBook(answers)) as before, serve(dropping) as after:
        code = main(_run(before, after, "--num", "20", "--format", "json"))
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert code == 1 and "Traceback" not in captured.err
    assert doc["after"]["errors"] == 2
    assert sorted(f["after"] for f in doc["failed"]) == ["malformed", "stream_cut"]


def test_a_port_that_does_not_speak_http_exits_2_with_what_it_said(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_not_http(b"SSH-2.0-OpenSSH_9.6\r\n\r\n") as url:
        code = main(_run(url, url))
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "cannot reach the server" in err and "SSH-2.0" in err
