"""`servetune report`'s pages built from recorded results: every section and figure present, the
terminal views' words in both languages, where the numbers came from, and nothing fetched from
the network (no script, no link, no URL in a src or href: images are inline)."""

from __future__ import annotations

import html
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from servetune.errors import MissingExtra, UsageError
from servetune.judge.compare import compare
from servetune.judge.runs import load_side
from servetune.render.report import ReportRequest, build
from servetune.texts import Language, Voice

if TYPE_CHECKING:
    from tests.report.conftest import Page

BENCH_FIGURES = [
    "cdf-ttft",
    "cdf-tpot",
    "cdf-itl",
    "cdf-e2el",
    "latency-by-send",
    "output-tokens",
    "in-flight",
    "server-requests",
    "server-kv",
    "server-preemptions",
    "send-lag",
]
COMPARE_FIGURES = ["forest", "cdf-ttft", "cdf-tpot", "cdf-itl", "cdf-e2el"]
PLAN_FIGURES = [
    "what-if-throughput",
    "what-if-users",
    "batching-output_throughput",
    "batching-mean_ttft_ms",
]
LANGUAGES: list[Language] = ["en", "zh-TW"]
Read = Callable[[str], "Page"]


def offline(text: str, page: Page) -> None:
    """Nothing on the page reaches for the network or another file."""
    assert page.fetched == [] and page.scripts == 0
    assert "url(" not in text and "@import" not in text
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", text, re.IGNORECASE)
    assert all(src.startswith("data:image/") for src in page.images)


def _page(read: Read, request: ReportRequest, language: Language = "en") -> tuple[str, Page]:
    """The page built, checked offline, and its text with HTML's escapes read back."""
    text = build(request, language)
    page = read(text)
    offline(text, page)
    assert page.lang == ("zh-Hant-TW" if language == "zh-TW" else "en")
    return html.unescape(text), page


# --- bench --------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_bench_page_has_its_table_distributions_timeline_server_and_client(
    data: Path, read_page: Read, language: Language
) -> None:
    path = data / "before" / "run-1.json"
    text, page = _page(read_page, ReportRequest(paths=(path,)), language)
    assert page.sections == ["bench"] and page.about == ["bench"]
    assert page.figures == BENCH_FIGURES
    bench, words = Voice("bench", language), Voice("report", language)
    for key in ("row.completed", "row.output_throughput", "latency.ttft", "latency.e2el"):
        assert bench(key) in text  # the words of bench's own table
    assert bench("latency.percentile", metric="TTFT", p=99) in text
    assert words("bench.distributions") in text and words("fig.kv") in text
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert f"{doc['p99_ttft_ms']:.2f}" in text  # the number as the file states it
    stamp = doc["date"]
    assert f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}" in text
    block = doc["servetune"]
    assert block["tool_version"] in text and block["server_version"] in text
    assert "1xA100-80GB" in text
    assert "servetune bench --base-url http://127.0.0.1:" in text  # the command line, rebuilt
    assert "vllm serve sim --gpu-memory-utilization 0.6 --max-num-seqs 64" in text
    assert 'class="banner"' not in text  # this client kept up


def test_a_saturated_client_gets_a_banner_in_bench_words(
    data: Path, tmp_path: Path, read_page: Read
) -> None:
    doc = json.loads((data / "before" / "run-1.json").read_text(encoding="utf-8"))
    doc["servetune"]["client"]["saturated"] = True
    doc["servetune"]["partial"] = True
    path = tmp_path / "saturated.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    text, _ = _page(read_page, ReportRequest(paths=(path,)), "zh-TW")
    bench = Voice("bench", "zh-TW")
    assert text.count('class="banner"') == 2
    assert bench("note.saturated", limit_ms="5") in text and bench("partial") in text


def test_vllm_files_show_what_they_record_and_say_what_they_do_not(
    data: Path, read_page: Read
) -> None:
    detailed, plain = data / "vllm-detailed-0.32.0.json", data / "vllm-plain-0.32.0.json"
    text, page = _page(read_page, ReportRequest(paths=(detailed, plain)))
    assert page.sections == ["bench", "bench"]
    words = Voice("report", "en")
    # detailed: every distribution and the run over time; plain: E2EL only (from `latencies`)
    assert page.figures == [*BENCH_FIGURES[:7], "cdf-e2el"]
    assert words("bench.no_server") in text and words("bench.no_lag") in text
    assert words("bench.no_times") in text
    assert "vllm bench serve --model tiny --num-prompts 50" in text
    assert "--save-detailed" in text and "2026-11-30 06:35:55" in text
    assert words("about.unknown") in text  # no servetune or vLLM version in vLLM's files


# --- compare ------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_comparison_page_has_the_forest_verdicts_knobs_warnings_and_distributions(
    data: Path, read_page: Read, language: Language
) -> None:
    before, after = data / "before", data / "after"
    request = ReportRequest(before=(before,), after=(after,))
    text, page = _page(read_page, request, language)
    assert page.sections == ["compare"] and page.about == ["compare"]
    assert page.figures == COMPARE_FIGURES
    result = compare(load_side([before]), load_side([after]))
    judge, words = Voice("judge", language), Voice("report", language)
    assert result.conclusion_in(language) in text
    assert "--gpu-memory-utilization: 0.6 -> 0.92" in text
    for m in result.metrics:
        assert f"<td>{m.name}</td>" in text and m.name in text
    verdicts = {judge(f"verdict.{m.verdict}") for m in result.metrics}
    assert all(v in text for v in verdicts)
    assert words("compare.warnings") in text and words("compare.distributions") in text
    assert words("fig.forest", confidence="99%") in text
    assert "servetune compare --before" in text and text.count("run-") >= 4  # every run's source


def test_warnings_and_the_single_run_caveat_are_in_compare_words(
    data: Path, read_page: Read
) -> None:
    before, after = data / "before" / "run-1.json", data / "after" / "run-3.json"
    text, _ = _page(read_page, ReportRequest(before=(before,), after=(after,)), "zh-TW")
    result = compare(load_side([before]), load_side([after]))
    assert [w.rule for w in result.warnings] == ["single-run"]
    assert f"[single-run] {result.warnings[0].text('zh-TW')}" in text


# --- tune ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_tune_directory_is_tunes_own_report_in_the_page(
    tune_dir: Path, read_page: Read, language: Language
) -> None:
    pytest.importorskip("matplotlib")
    text, page = _page(read_page, ReportRequest(paths=(tune_dir,)), language)
    assert page.sections == ["tune"] and page.about == ["tune"]
    assert len(page.images) == 3  # tune's plots: ttft, tpot, throughput
    assert all(src.startswith("data:image/svg+xml;base64,") for src in page.images)
    tune = Voice("tune", language)
    assert tune("report.title") in text
    assert "- --max-num-batched-tokens 256" in text and "+ --max-num-batched-tokens 512" in text
    assert "1xA100-80GB" in text and "vllm serve sim" in text  # the probes' result files


def test_a_tune_page_without_matplotlib_names_the_extra(
    tune_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails
    with pytest.raises(MissingExtra, match="report"):
        build(ReportRequest(paths=(tune_dir,)))


# --- plan ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_plan_page_has_the_answer_what_ifs_and_batching(
    data: Path, read_page: Read, language: Language
) -> None:
    text, page = _page(read_page, ReportRequest(paths=(data / "plan.json",)), language)
    assert page.sections == ["plan"] and page.figures == PLAN_FIGURES
    plan, words = Voice("plan", language), Voice("report", language)
    doc = json.loads((data / "plan.json").read_text(encoding="utf-8"))
    assert plan("bound", bound=plan("bound.compute"), kv="1,060,576") in text
    assert plan("capacity", users=16, qps="3.62") in text
    assert plan("batching.header").rstrip(":：") in text and words("plan.predicted") in text
    for w in doc["what_if"]:
        assert f"<td>{w['change']}</td>" in text
    assert words("plan.no_intervals") in text


def test_plan_intervals_are_drawn_where_the_file_gives_them(
    data: Path, tmp_path: Path, read_page: Read
) -> None:
    doc = json.loads((data / "plan.json").read_text(encoding="utf-8"))
    for w in doc["what_if"]:
        out = w["prediction"]["output_throughput"]
        w["prediction"]["intervals"] = {"output_throughput": [0.8 * out, 1.25 * out]}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    text, _ = _page(read_page, ReportRequest(paths=(path,)))
    assert Voice("report", "en")("plan.no_intervals") not in text
    assert text.count('class="whisker"') >= 3 * len(doc["what_if"])


def test_a_refused_plan_lists_checks_findings(tmp_path: Path, read_page: Read) -> None:
    path = tmp_path / "refused.json"
    doc = {
        "schema_version": 1,
        "error": "cannot-run",
        "errors": [{"rule": "tp-heads", "title": "TP 3 does not divide 28 heads"}],
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    text, page = _page(read_page, ReportRequest(paths=(path,)))
    assert page.sections == ["plan"] and page.figures == []
    assert Voice("plan", "en")("refused") in text and "[tp-heads] TP 3 does not divide" in text


# --- postmortem ---------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_postmortem_page_has_the_timeline_with_incidents(
    data: Path, read_page: Read, language: Language
) -> None:
    text, page = _page(read_page, ReportRequest(paths=(data / "postmortem.json",)), language)
    assert page.sections == ["postmortem"] and page.figures == ["timeline", "incidents"]
    monitor = Voice("monitor", language)
    doc = json.loads((data / "postmortem.json").read_text(encoding="utf-8"))
    name = monitor(f"limit.{doc['dominant']}")
    assert monitor("pm.dominant", dominant=doc["dominant"], name=name) in text
    assert monitor("limit.none") in text  # a lane of the timeline
    assert text.count('class="span"') == len(doc["incidents"])  # each incident shaded
    for interval in doc["intervals"]:
        assert interval["evidence"] in text  # quoted from the file, in English


def test_vllm_stamps_read_as_times(data: Path, read_page: Read) -> None:
    text, page = _page(read_page, ReportRequest(paths=(data / "postmortem-log.json",)))
    assert page.figures == ["timeline", "incidents"]
    assert "seconds from 05-19 10:13:01" in text and "05-19 10:13:01 - 05-19 10:13:51" in text


# --- one page from several inputs, and what cannot be reported ----------------------------------


def test_several_inputs_make_one_page_with_a_list_of_its_sections(
    data: Path, read_page: Read
) -> None:
    request = ReportRequest(
        paths=(data / "plan.json", data / "after" / "run-3.json", data / "postmortem.json"),
        before=(data / "before",),
        after=(data / "after",),
        title="Will 50 users lag?",
    )
    text, page = _page(read_page, request)
    assert page.sections == ["compare", "plan", "bench", "postmortem"]
    assert "<h1>Will 50 users lag?</h1>" in text and "<title>Will 50 users lag?</title>" in text
    assert text.count('<a href="#section-') == 4


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ReportRequest(), "nothing to report"),
        (ReportRequest(before=(Path("a.json"),)), "both --before and --after"),
        (ReportRequest(paths=(Path("/nonexistent/run.json"),)), "no such file or folder"),
    ],
)
def test_what_cannot_be_reported_is_a_usage_error(request_: ReportRequest, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build(request_)


def test_a_file_that_is_no_result_says_so(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(UsageError, match="not a bench result"):
        build(ReportRequest(paths=(path,)))
