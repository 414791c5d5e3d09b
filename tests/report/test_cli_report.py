"""`servetune report`, `bench --html` and `compare --html` through the command line: exact
output, exit codes, and the page each one writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.cli.main import main
from servetune.judge.compare import compare
from servetune.judge.runs import load_side
from servetune.render.judge import comparison_text

from stub_server import StubBehaviour, ThreadedStub


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("lang", "line"), [("en", "Report written to {path}\n"), ("zh-TW", "報告已寫入 {path}\n")]
)
def test_report_writes_the_page_and_says_where(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str, line: str
) -> None:
    page = tmp_path / "out" / "report.html"
    argv = [
        "report",
        str(data / "before" / "run-1.json"),
        str(data / "plan.json"),
        "--output",
        str(page),
        "--title",
        "Q3 capacity",
        "--lang",
        lang,
    ]
    assert _run(argv, capsys) == (0, line.format(path=page), "")
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<h1>Q3 capacity</h1>" in text
    assert 'data-section="bench"' in text and 'data-section="plan"' in text


def test_report_compares_before_and_after(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "compare.html"
    argv = [
        "report",
        "--before",
        str(data / "before"),
        "--after",
        str(data / "after"),
        "--output",
        str(page),
        "--lang",
        "en",
    ]
    assert _run(argv, capsys)[0] == 0
    assert 'data-section="compare"' in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["report", "--output", "x.html"], "error: nothing to report\n"),
        (
            ["report", "--before", "a.json", "--output", "x.html"],
            "error: a comparison needs both --before and --after\n",
        ),
        (
            ["report", "missing.json", "--output", "x.html"],
            "error: missing.json: no such file or folder\n",
        ),
        (["report", "a.json"], "error: the following arguments are required: --output\n"),
    ],
)
def test_report_usage_errors_exit_2(
    argv: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(argv, capsys)
    assert (code, out) == (2, "") and err.startswith(message)
    assert not (tmp_path / "x.html").exists()


def test_an_unwritable_output_is_a_usage_error(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    argv = ["report", str(data / "plan.json"), "--output", str(blocker / "report.html")]
    code, out, err = _run(argv, capsys)
    assert (code, out) == (2, "") and err.startswith(f"error: cannot write {blocker}")
    assert "hint: choose another --output" in err


def test_compare_html_adds_one_line_and_writes_the_same_page(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = data / "before" / "run-1.json", data / "after" / "run-3.json"
    page = tmp_path / "c.html"
    argv = ["compare", str(before), str(after), "--html", str(page), "--lang", "en"]
    code, out, _ = _run(argv, capsys)
    expected = comparison_text(compare(load_side([before]), load_side([after])), "en")
    assert (code, out) == (0, expected + f"Report written to {page}\n")
    assert 'data-section="compare"' in page.read_text(encoding="utf-8")
    code, out, _ = _run([*argv[:-2], "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["metrics"]  # JSON only: no line about the page


def test_bench_html_writes_the_runs_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, page = tmp_path / "run.json", tmp_path / "run.html"
    with ThreadedStub(StubBehaviour(ttft_ms=20, itl_ms=5)) as stub:
        url = stub.base_url
        argv = [
            "bench",
            "--base-url",
            stub.base_url,
            "--model",
            "stub",
            "--num-prompts",
            "8",
            "--random-input-len",
            "16",
            "--random-output-len",
            "8",
            "--max-concurrency",
            "4",
            "--output",
            str(result),
            "--html",
            str(page),
            "--lang",
            "en",
        ]
        code, out, _ = _run(argv, capsys)
    assert code == 0
    assert out.endswith(f"Result written to {result}\nReport written to {page}\n")
    text = page.read_text(encoding="utf-8")
    assert 'data-section="bench"' in text and 'data-figure="latency-by-send"' in text
    assert f"--base-url {url}" in text  # where the numbers came from
