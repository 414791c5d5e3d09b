"""accept, the library call: five frozen checks, each pass, fail or unknown, with its evidence."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from servetune import CheckOptions, UsageError, accept, check_argv, texts
from servetune.judge.accept import NAMES, Acceptance, Check
from servetune.judge.sentence import Sentence
from servetune.render.judge import acceptance_text
from servetune.review.check import Report
from servetune.texts import Language

from result_files import Setup, write_runs

LOGS = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"
READY = LOGS / "cpu-0.32-ready-then-sigterm.log"
Q7 = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]


def _report(*flags: str, gpus: str | None = "1xA100-80GB") -> Report:
    options = CheckOptions(gpus=gpus, detect_hardware=gpus is not None)
    return check_argv([*Q7, *flags], options)


def _sides(tmp_path: Path, before: str | None, after: str | None) -> tuple[Path, Path]:
    b = write_runs(tmp_path / "b", Setup(command=before), range(3))
    a = write_runs(tmp_path / "a", Setup(command=after), range(3, 6))
    return b, a


def _never(_host: str, _port: int) -> bool:
    return False


def _statuses(result: Acceptance) -> dict[str, str]:
    return {c.id: c.status for c in result.checks}


def test_all_five_pass_and_the_result_is_frozen(tmp_path: Path) -> None:
    b, a = _sides(tmp_path, "vllm serve m --max-num-seqs 128", "vllm serve m --max-num-seqs 256")
    result = accept(_report(), log=READY, before=[b], after=[a], probe=_never)
    assert [c.id for c in result.checks] == [
        "hardware",
        "quantization",
        "started",
        "data",
        "one-knob",
    ]
    assert result.accepted and result.count("pass") == 5
    assert [c.name for c in result.checks] == list(NAMES.values())[:5]  # quality: only if given
    by_id = {c.id: c for c in result.checks}
    assert by_id["hardware"].evidence == (
        "1 GPU(s) (A100-80GB-SXM) from --gpus; TP 1 x PP 1 x DP 1 = 1"
    )
    assert by_id["started"].evidence == f"{READY}: Application startup complete"
    assert by_id["one-knob"].evidence == "--max-num-seqs 128 -> 256"
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.checks[0].status = "fail"  # type: ignore[misc]
    assert json.loads(json.dumps(result.to_json()))["accepted"] is True
    assert acceptance_text(result).splitlines()[0] == "ACCEPTED"


def test_the_probe_decides_started_without_a_log() -> None:
    report = _report("--port", "8123")
    asked: list[tuple[str, int]] = []

    def up(host: str, port: int) -> bool:
        asked.append((host, port))
        return True

    started = accept(report, probe=up).checks[2]
    assert asked == [("127.0.0.1", 8123)]
    assert (started.status, started.evidence) == (
        "pass",
        "GET http://127.0.0.1:8123/health answered 200",
    )
    assert accept(report, probe=_never).checks[2].status == "unknown"


def test_failures_and_unknowns_are_told_apart(tmp_path: Path) -> None:
    b, a = _sides(tmp_path, "vllm serve m", "vllm serve m")
    report = _report("--quantization", "awq", "-tp", "2", gpus="4xA100-80GB")
    result = accept(report, log=LOGS / "cpu-0.32-quant-awq.log", before=[b], after=[a])
    assert _statuses(result) == {
        "hardware": "fail",
        "quantization": "fail",
        "started": "fail",
        "data": "pass",
        "one-knob": "fail",
    }
    assert result.checks[4].evidence == "no serving flag changed between the runs"
    assert acceptance_text(result).splitlines()[0] == "NOT ACCEPTED (4 failed, 0 unknown)"
    assert "  [fail] hardware matches TP: 4 GPU(s)" in acceptance_text(result)


def test_no_gpus_and_no_recorded_command_are_unknown(tmp_path: Path) -> None:
    b, a = _sides(tmp_path, None, None)
    result = accept(_report(gpus=None), before=[b], after=[a], probe=_never)
    statuses = _statuses(result)
    assert statuses["hardware"] in ("unknown", "pass")  # NVML may find a GPU on this machine
    assert statuses["one-knob"] == "unknown"
    assert result.checks[4].evidence == "no server command recorded in the results"
    assert not result.accepted


def test_unreadable_results_fail_data_but_an_unreadable_log_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = accept(_report(), before=[empty], after=[empty], probe=_never)
    data, knob = result.checks[3:]
    assert data.status == "fail" and data.evidence
    assert (knob.status, knob.evidence) == ("unknown", "")
    missing = accept(_report(), probe=_never).checks[3]
    assert missing.evidence.startswith("no --before/--after results given")
    with pytest.raises(UsageError, match="cannot read"):
        accept(_report(), log=tmp_path / "nope.log")


def test_check_is_a_plain_value() -> None:
    check = Check("data", NAMES["data"], "unknown")
    assert check == Check(
        id="data", name="before/after numbers exist", status="unknown", sentence=None
    )
    assert (check.evidence, check.evidence_in("zh-TW")) == ("", "")
    assert Acceptance(checks=(check,)).to_json() == {
        "accepted": False,
        "checks": [
            {
                "id": "data",
                "name": "before/after numbers exist",
                "status": "unknown",
                "evidence": "",
            }
        ],
    }
    said = Check("data", NAMES["data"], "fail", Sentence("evidence.data.missing"))
    assert said.evidence.startswith("no --before/--after results given")
    assert said.evidence_in("zh-TW").startswith("沒有給 --before/--after 測試結果")
    assert Acceptance(checks=(said,)).to_json()["checks"] == [  # the JSON keeps the English
        {
            "id": "data",
            "name": "before/after numbers exist",
            "status": "fail",
            "evidence": said.evidence,
        },
    ]


def test_the_names_are_the_english_texts() -> None:
    assert {key: texts.get("judge", f"check.{key}") for key in NAMES} == NAMES
    assert all(texts.has("judge", f"check.{key}") for key in NAMES)


def _quality_file(tmp_path: Path, verdict: str) -> Path:
    path = tmp_path / f"quality-{verdict}.json"
    doc = {
        "schema_version": 1,
        "dataset": "builtin:math",
        "n": 200,
        "verdict": verdict,
        "difference_pct_points": -0.5,
        "ci_low": -1.4,
        "ci_high": 0.4,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("verdict", "status"),
    [
        ("no-detectable-loss", "pass"),
        ("better", "pass"),
        ("worse", "fail"),
        ("insufficient-data", "unknown"),
    ],
)
def test_a_quality_result_adds_a_sixth_check(tmp_path: Path, verdict: str, status: str) -> None:
    b, a = _sides(tmp_path, "vllm serve m --max-num-seqs 128", "vllm serve m --max-num-seqs 256")
    result = accept(
        _report(),
        log=READY,
        before=[b],
        after=[a],
        probe=_never,
        quality=_quality_file(tmp_path, verdict),
    )
    assert [c.id for c in result.checks][-1] == "quality"
    check = result.checks[-1]
    assert check.status == status
    assert "builtin:math, 200 questions" in check.evidence and "-0.5 points" in check.evidence
    assert result.accepted is (status == "pass")


def test_a_file_that_is_not_a_quality_result_fails_the_sixth_check(tmp_path: Path) -> None:
    bogus = tmp_path / "bench.json"
    bogus.write_text('{"completed": 3}', encoding="utf-8")
    check = accept(_report(), probe=_never, quality=bogus).checks[-1]
    assert (check.id, check.status) == ("quality", "fail")
    assert "not a servetune quality result" in check.evidence


# --- each check's evidence in zh-TW ------------------------------------------------------------

_CHINESE = re.compile(r"[\u4e00-\u9fff]")


def _evidence(result: Acceptance, language: Language) -> dict[str, str]:
    return {c.id: c.evidence_in(language) for c in result.checks}


def test_the_evidence_is_said_in_zh_tw_with_the_facts_kept(tmp_path: Path) -> None:
    b, a = _sides(tmp_path, "vllm serve m --max-num-seqs 128", "vllm serve m --max-num-seqs 256")
    result = accept(
        _report(),
        log=READY,
        before=[b],
        after=[a],
        probe=_never,
        quality=_quality_file(tmp_path, "no-detectable-loss"),
    )
    zh = _evidence(result, "zh-TW")
    assert zh == {
        "hardware": "--gpus 指定了 1 張 GPU（A100-80GB-SXM）；需要 1 張 GPU（TP 1 x PP 1 x DP 1）",
        "quantization": "checkpoint 沒有量化；--quantization 未指定（自動判斷）",
        "started": f"{READY}：日誌出現「Application startup complete」，伺服器已就緒",
        "data": "兩邊都有測試結果",
        "one-knob": "--max-num-seqs 128 -> 256",
        "quality": (
            "builtin:math，200 題：之後減之前 = -0.5 個百分點（95% 信賴區間 -1.4 到 +0.4），"
            "結論：沒有可偵測的品質損失"
        ),
    }
    assert result.checks[-1].evidence == (  # the English the JSON has always carried
        "builtin:math, 200 questions: after - before = -0.5 points (95% interval -1.4 to +0.4), "
        "no-detectable-loss"
    )
    chinese = acceptance_text(result, "zh-TW")
    assert chinese.splitlines()[0] == "驗收通過"
    assert "  [通過] 只改了一個參數：--max-num-seqs 128 -> 256" in chinese
    assert [name for name in NAMES.values() if name in chinese] == []
    assert [text for text in zh.values() if text not in chinese] == []


def test_failures_and_unknowns_in_zh_tw(tmp_path: Path) -> None:
    b, a = _sides(tmp_path, "vllm serve m", "vllm serve m")
    report = _report("--quantization", "awq", "-tp", "2", gpus="4xA100-80GB")
    failed = accept(report, log=LOGS / "cpu-0.32-quant-awq.log", before=[b], after=[a])
    zh = _evidence(failed, "zh-TW")
    assert zh["hardware"].startswith("--gpus 指定了 4 張 GPU（A100-80GB-SXM）；需要 2 張 GPU")
    # vLLM's log line is quoted as it is, inside a Chinese sentence
    cause = failed.checks[2].evidence
    assert cause and zh["started"] == f"啟動失敗，日誌裡的根本原因：{cause}"
    assert zh["one-knob"] == "兩邊的測試之間沒有改任何服務參數"
    b, a = _sides(tmp_path / "none", None, None)
    unknown = _evidence(accept(_report(gpus=None), before=[b], after=[a], probe=_never), "zh-TW")
    assert unknown["one-knob"] == "測試結果裡沒有記錄伺服器指令"
    assert unknown["started"] == "沒有給 --log，http://127.0.0.1:8000/health 也沒有回應"
    missing = _evidence(accept(_report(), probe=_never), "zh-TW")
    assert (
        missing["data"]
        == missing["one-knob"]
        == ("沒有給 --before/--after 測試結果：請先用 `servetune bench` 測量")
    )
    assert all(_CHINESE.search(text) for text in [*zh.values(), *unknown.values()])


def test_a_finding_title_is_quoted_in_the_language_asked_for() -> None:
    """check keeps the finding's title as a sentence; accept says it in either language."""
    report = _report("--quantization", "awq")
    title = next(f.title for f in report.findings if f.rule == "quant-on-unquantized")
    assert title.text() != title.text("zh-TW")
    check = accept(report, probe=_never).checks[1]
    said = (check.status, check.evidence, check.evidence_in("zh-TW"))
    assert said == ("fail", title.text(), title.text("zh-TW"))


def test_quoted_warnings_knobs_and_errors_in_zh_tw(tmp_path: Path) -> None:
    b = write_runs(tmp_path / "b", Setup(command="vllm serve m"), [1])
    after = "vllm serve m --max-num-seqs 100 --enable-prefix-caching"
    a = write_runs(tmp_path / "a", Setup(command=after), [2])
    result = accept(_report(), before=[b], after=[a], probe=_never)
    data, knob = result.checks[3:]
    assert data.evidence.startswith("results found on both sides (Both sides have one run:")
    # compare's single-run warning, said in zh-TW by compare's own text
    warning = texts.get("judge", "warning.single-run.both", "zh-TW").split("：")[0]
    assert data.evidence_in("zh-TW").startswith(f"兩邊都有測試結果（{warning}：")
    assert "unset -> true" in knob.evidence  # a flag set on one side only, as compare says it
    assert "、" in knob.evidence_in("zh-TW") and "未設定 -> true" in knob.evidence_in("zh-TW")
    assert knob.evidence_in("zh-TW").startswith("改了 2 個參數：")
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = accept(_report(), before=[empty], after=[empty], probe=_never).checks[3]
    # the error said in the same language as the evidence that quotes it (English in JSON)
    assert bad.evidence.endswith(f"{empty}: no *.json files in this folder")
    assert bad.evidence_in("zh-TW") == f"測試結果無法使用：{empty}：這個資料夾裡沒有 *.json 檔案"
    bogus = tmp_path / "bench.json"
    bogus.write_text('{"completed": 3}', encoding="utf-8")
    quality = accept(_report(), probe=_never, quality=bogus).checks[-1]
    assert quality.evidence.endswith(f"{bogus} is not a servetune quality result (no verdict)")
    assert quality.evidence_in("zh-TW") == (
        f"品質結果無法使用：{bogus} 不是 servetune 的品質檢查結果（沒有 verdict）"
    )


@pytest.mark.parametrize(
    ("verdict", "said"),
    [("better", "變好"), ("worse", "變差"), ("insufficient-data", "資料不足，無法判斷")],
)
def test_the_quality_verdict_in_zh_tw(tmp_path: Path, verdict: str, said: str) -> None:
    check = accept(_report(), probe=_never, quality=_quality_file(tmp_path, verdict)).checks[-1]
    assert check.evidence.endswith(f"), {verdict}")
    assert check.evidence_in("zh-TW").endswith(f"），結論：{said}")
