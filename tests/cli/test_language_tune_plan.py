"""tune, plan, quality and serve in both languages, on recorded results and stub servers: the
JSON is byte-identical whatever `--lang` says, and the zh-TW text view leaves no English
sentence (`english.english_runs`: what is left once quotes, flags, ids and numbers are out)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from english import english_runs

from servetune.cli.main import main
from servetune.launch.doctor import diagnose
from servetune.plan.note import Note
from servetune.plan.planner import PlanConfig, PlanResult, run_plan
from servetune.plan.predict import Slo
from servetune.plan.simulate import Load
from servetune.plan.what_if import WhatIf
from servetune.quality import dataset
from servetune.render import serve as render_serve
from servetune.render.plan import plan_text
from servetune.review.check import CheckOptions, check_argv
from servetune.texts import LANGUAGES, Language

import vllm_sim
from answer_server import AnswerBook, serve
from result_files import Setup, write_runs

LOGS = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def _both(
    argv: list[str], capsys: pytest.CaptureFixture[str], at: int = 1
) -> dict[tuple[Language, str], tuple[int, str]]:
    """The command's output in each language and format (`--lang` and `--format` go at `at`)."""
    return {
        (lang, fmt): _run([*argv[:at], "--lang", lang, "--format", fmt, *argv[at:]], capsys)
        for lang in LANGUAGES
        for fmt in ("text", "json")
    }


def _assert_one_json_and_chinese_text(
    out: dict[tuple[Language, str], tuple[int, str]], verbatim: Sequence[str] = ()
) -> None:
    (code_en, json_en), (code_zh, json_zh) = out["en", "json"], out["zh-TW", "json"]
    assert json_en == json_zh  # byte for byte
    json.loads(json_en)
    assert code_en == code_zh == out["en", "text"][0] == out["zh-TW", "text"][0]
    chinese, english = out["zh-TW", "text"][1], out["en", "text"][1]
    assert english_runs(english, verbatim)  # the criterion sees English where there is some
    assert english_runs(chinese, verbatim) == [], chinese


# --- tune ----------------------------------------------------------------------------------------

TUNE_START = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-num-batched-tokens", "256"]


def _tune_argv(vllm: Path | str, output: Path, *extra: str) -> list[str]:
    return [
        "tune",
        "--vllm",
        str(vllm),
        "--gpus",
        "1xA100-80GB",
        "--slo",
        "ttft:800",
        "--slo",
        "tpot:50",
        "--slo-percentile",
        "80",
        "--random-input-len",
        "512",
        "--random-output-len",
        "16",
        "--output",
        str(output),
        *extra,
        "--",
        *TUNE_START,
    ]


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tune run against the scheduler stand-in, recorded in its --output (trial.json and
    the probes' result files): every later run with the same --output reuses them all."""
    folder = tmp_path_factory.mktemp("tune")
    exe = vllm_sim.write_executable(folder / "bin")
    output = folder / "run"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SIM_TIME_SCALE", "2")
        argv = _tune_argv(
            exe,
            output,
            "--max-starts",
            "2",
            "--repeats",
            "1",
            "--knob",
            "max-num-batched-tokens=256,2048",
        )
        assert main([*argv[:1], "--format", "json", *argv[1:]]) == 0
    return exe, output


def test_tune_on_recorded_trials(
    tuned: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    exe, output = tuned
    capsys.readouterr()
    argv = _tune_argv(
        exe,
        output,
        "--max-starts",
        "2",
        "--repeats",
        "1",
        "--knob",
        "max-num-batched-tokens=256,2048",
    )
    out = _both(argv, capsys)
    doc = json.loads(out["en", "json"][1])
    assert [t["status"] for t in doc["trials"]] == ["ok", "ok"]  # measured, reused since
    assert doc["next_step"] in " ".join(out["en", "text"][1].split())
    commands = [" ".join(TUNE_START), *([doc["best"]["command"]] if doc["best"] else [])]
    _assert_one_json_and_chinese_text(out, commands)
    assert "下一步：" in out["zh-TW", "text"][1]


def test_tune_when_no_start_succeeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`/bin/true` exits at once: a failed start, the doctor's root cause, no best."""
    out = _both(_tune_argv("/bin/true", tmp_path / "run", "--max-starts", "1"), capsys)
    doc = json.loads(out["en", "json"][1])
    assert doc["best"] is None and doc["trials"][0]["status"] == "failed-start"
    _assert_one_json_and_chinese_text(out, [" ".join(TUNE_START)])


# --- plan ----------------------------------------------------------------------------------------

PLAN = [
    "plan",
    "--vllm-version",
    "0.33.0",
    "--gpus",
    "1xA100-80GB",
    "--input-len",
    "1000",
    "--output-len",
    "200",
]
QWEN = ["--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
PLAN_SCENARIOS = {
    "targets": ["--concurrency", "50", "--slo", "ttft:2000", "--slo", "tpot:50", *QWEN],
    "tight targets": ["--concurrency", "200", "--slo", "ttft:100", "--slo", "tpot:10", *QWEN],
    "open loop, no targets": ["--request-rate", "2", "--num-prompts", "200", *QWEN],
    "a command check refuses": [
        "--concurrency",
        "8",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen2.5-7B-Instruct",
        "--tensor-parallel-size",
        "3",
    ],
}


@pytest.mark.parametrize("scenario", PLAN_SCENARIOS)
def test_plan(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = _both([*PLAN, *PLAN_SCENARIOS[scenario]], capsys)
    _assert_one_json_and_chinese_text(out)


def test_plan_calibrated_on_recorded_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"
    setup = Setup(
        command=command,
        requests=120,
        input_len=1000,
        output_tokens=200,
        request_rate="inf",
        max_concurrency=8,
    )
    runs = write_runs(tmp_path / "runs", setup, [1, 2])
    argv = [*PLAN, "--concurrency", "8", "--calibrate", *map(str, sorted(runs.iterdir())), *QWEN]
    out = _both(argv, capsys)
    assert json.loads(out["en", "json"][1])["calibrated"] is True
    _assert_one_json_and_chinese_text(out)


def _plan_result() -> PlanResult:
    options = CheckOptions(gpus="1xA100-80GB", vllm_version="0.33.0")
    report = check_argv(QWEN[1:], options)
    load = Load(input_len=1000, output_len=200, num_prompts=200, concurrency=20)
    return run_plan(report, PlanConfig(load=load, slo=Slo(ttft_ms=2000, tpot_ms=50)), options)


def test_a_what_if_left_out_says_why_in_the_language() -> None:
    result = _plan_result()
    refused = (
        WhatIf(
            "tp x2",
            "vllm serve m -tp 2",
            "2xA100-80GB",
            None,
            Note("what_if.refused.rules", rules="tp-heads-indivisible"),
        ),
        WhatIf(
            "awq checkpoint",
            "vllm serve m-AWQ",
            "1xA100-80GB",
            None,
            Note("what_if.refused.error", error="unknown model m-AWQ"),
        ),
    )
    result = replace(result, what_ifs=refused)
    english, chinese = plan_text(result, "en"), plan_text(result, "zh-TW")
    assert "left out: vLLM would refuse it: tp-heads-indivisible" in english
    assert "略過：vLLM 會拒絕這個設定：tp-heads-indivisible" in chinese
    assert english_runs(chinese, ["unknown model m-AWQ"]) == []
    doc = result.to_json()
    notes = doc["what_if"]
    assert isinstance(notes, list)
    assert [w["note"] for w in notes] == [
        "vLLM would refuse it: tp-heads-indivisible",
        "unknown model m-AWQ",
    ]


# --- quality -------------------------------------------------------------------------------------


def test_quality(capsys: pytest.CaptureFixture[str]) -> None:
    questions = dataset.load("builtin:math")
    answers = {q.prompt: q.answer for q in questions}
    wrong = {q.prompt for q in questions[:15]}
    failing = {q.prompt for q in questions[20:23]}
    with (
        serve(AnswerBook(answers)) as before,
        serve(AnswerBook(answers, wrong=wrong, fail=failing)) as after,
    ):
        argv = [
            "quality",
            "--before",
            before,
            "--after",
            after,
            "--model",
            "fake/model",
            "--num",
            "60",
            "--seed",
            "1",
        ]
        out = _both(argv, capsys)
    doc = json.loads(out["en", "json"][1])
    assert doc["verdict"] in ("worse", "insufficient-data") and doc["differing"]
    # The questions and both servers' replies are quoted as they are (in English).
    quoted = [q.prompt for q in questions] + [str(q.answer) for q in questions]
    for row in doc["differing"]:
        quoted += [row["before"] or "", row["after"] or ""]
        quoted += [" ".join((row[side] or "").split())[:97] for side in ("before", "after")]
    _assert_one_json_and_chinese_text(out, quoted)


# --- serve's lines -------------------------------------------------------------------------------


def test_serve_lines_in_both_languages(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    doctor = diagnose((LOGS / "cpu-0.32-kv-cache-too-small.log").read_text(encoding="utf-8"))
    known = render_serve.Capacity(524288, 16.0)
    unknown = render_serve.Capacity(None, None)

    def said(language: Language) -> list[render_serve.Status]:
        return [
            render_serve.starting(1234, log, language),
            render_serve.ready(
                "http://127.0.0.1:8000", 1234, log, known, unknown, language=language
            ),
            render_serve.stopped_early(language),
            render_serve.stopping(language),
            render_serve.stopped(0, language),
            *(
                render_serve.failed(render_serve.Why(key, seconds="60"), log, doctor, language)
                for key in ("why.exited", "why.fatal", "why.timeout", "why.died")
            ),
        ]

    english, chinese = said("en"), said("zh-TW")
    assert [s.doc for s in english] == [s.doc for s in chinese]  # the JSON events
    assert english[0].text == f"starting vLLM (pid 1234); log: {log}"
    assert english[1].text.endswith("check estimated unknown tokens, unknownx)")
    serve_lines = [s.text.split("\n")[:2] for s in chinese]  # the doctor's report after them
    assert [line for lines in serve_lines for line in lines if english_runs(line)] == []
    assert english_runs(render_serve.refused_error("zh-TW")) == []
