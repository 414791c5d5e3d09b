"""accept, the library call: five frozen checks, each pass, fail or unknown, with its evidence."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from servetune import CheckOptions, UsageError, accept, check_argv
from servetune.judge.accept import NAMES, Acceptance, Check
from servetune.render.judge import acceptance_text
from servetune.review.check import Report

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
    assert [c.id for c in result.checks] == ["hardware", "quantization", "started", "data",
                                             "one-knob"]  # fmt: skip
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
        "pass", "GET http://127.0.0.1:8123/health answered 200",
    )  # fmt: skip
    assert accept(report, probe=_never).checks[2].status == "unknown"


def test_failures_and_unknowns_are_told_apart(tmp_path: Path) -> None:
    b, a = _sides(tmp_path, "vllm serve m", "vllm serve m")
    report = _report("--quantization", "awq", "-tp", "2", gpus="4xA100-80GB")
    result = accept(report, log=LOGS / "cpu-0.32-quant-awq.log", before=[b], after=[a])
    assert _statuses(result) == {
        "hardware": "fail", "quantization": "fail", "started": "fail", "data": "pass",
        "one-knob": "fail",
    }  # fmt: skip
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
    check = Check("data", NAMES["data"], "unknown", "")
    assert check == Check(id="data", name="before/after numbers exist", status="unknown",
                          evidence="")  # fmt: skip
    assert Acceptance(checks=(check,)).to_json() == {
        "accepted": False,
        "checks": [{"id": "data", "name": "before/after numbers exist", "status": "unknown",
                    "evidence": ""}],
    }  # fmt: skip


def _quality_file(tmp_path: Path, verdict: str) -> Path:
    path = tmp_path / f"quality-{verdict}.json"
    doc = {"schema_version": 1, "dataset": "builtin:math", "n": 200, "verdict": verdict,
           "difference_pct_points": -0.5, "ci_low": -1.4, "ci_high": 0.4}  # fmt: skip
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
        _report(), log=READY, before=[b], after=[a], probe=_never,
        quality=_quality_file(tmp_path, verdict),
    )  # fmt: skip
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
