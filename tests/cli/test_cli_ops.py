"""doctor, compare and accept through the CLI, in-process: exit codes and output contracts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.cli.main import main

from result_files import Setup, write_runs

LOGS = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"
Q7 = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_doctor_failed_log_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["doctor", str(LOGS / "cpu-0.32-quant-awq.log"), "--format", "json"], capsys)
    assert code == 1
    doc = json.loads(out)
    assert set(doc) == {"status", "root_cause", "diagnoses", "reported"}
    assert doc["status"] == "failed"
    assert doc["diagnoses"][0]["id"] == "quant-on-unquantized"
    assert set(doc["diagnoses"][0]) == {"id", "title", "why", "fix", "evidence"}
    assert set(doc["reported"]) == {"kv_cache_tokens", "max_concurrency", "vllm_version"}


def test_doctor_ready_log_text_and_zh_tw(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["doctor", str(LOGS / "cpu-0.32-ready-then-sigterm.log")], capsys)
    assert code == 0
    assert out.startswith("status: ready")
    assert "KV cache 524,288 tokens" in out
    code, out, _ = run(["doctor", str(LOGS / "cpu-0.32-tp-heads.log"), "--lang", "zh-TW"], capsys)
    assert code == 1
    assert "[tp-heads-indivisible]" in out
    assert any("\u4e00" <= ch <= "\u9fff" for ch in out)  # Chinese text


def test_doctor_unreadable_log_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["doctor", "/nonexistent/vllm.log"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error: cannot read")


def test_doctor_unknown_language_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["doctor", str(LOGS / "cpu-0.32-tp-heads.log"), "--lang", "fr"], capsys)
    assert (code, out) == (2, "")
    assert "choose from en, zh-TW" in err and "Traceback" not in err


def test_compare_cli_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = write_runs(tmp_path / "b", Setup(), range(1, 6))
    after = write_runs(
        tmp_path / "a",
        Setup(latency=1.3, command="vllm serve my/model --max-num-seqs 256"),
        range(101, 106),
    )
    code, out, _ = run(["compare", str(before), str(after), "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert list(doc)[:3] == ["metrics", "config_changes", "warnings"]
    by_name = {m["name"]: m for m in doc["metrics"]}
    assert by_name["mean_ttft_ms"]["verdict"] == "worse"
    assert doc["config_changes"] == [{"flag": "--max-num-seqs", "before": "128", "after": "256"}]
    code, out, _ = run(["compare", str(before), str(after), "--metric", "mean_ttft_ms"], capsys)
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 80
    code, _, err = run(["compare", str(before), str(after), "--metric", "p99_ttf_ms"], capsys)
    assert code == 2 and "did you mean p99_ttft_ms" in err
    code, _, err = run(["compare", str(before)], capsys)
    assert code == 2 and "needs a BEFORE and an AFTER" in err


def test_accept_all_five_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = write_runs(tmp_path / "b", Setup(command="vllm serve m --max-num-seqs 128"), range(3))
    after = write_runs(
        tmp_path / "a", Setup(command="vllm serve m --max-num-seqs 256"), range(3, 6)
    )
    code, out, _ = run(
        [
            "accept",
            "--gpus",
            "1xA100-80GB",
            "--log",
            str(LOGS / "cpu-0.32-ready-then-sigterm.log"),
            "--before",
            str(before),
            "--after",
            str(after),
            "--format",
            "json",
            "--",
            *Q7,
        ],
        capsys,
    )
    doc = json.loads(out)
    assert [c["status"] for c in doc["checks"]] == ["pass"] * 5, doc
    assert doc["accepted"] is True and code == 0
    assert [c["id"] for c in doc["checks"]] == [
        "hardware",
        "quantization",
        "started",
        "data",
        "one-knob",
    ]


def test_accept_reports_each_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = write_runs(tmp_path / "b", Setup(command="vllm serve m --max-num-seqs 128"), range(3))
    after = write_runs(
        tmp_path / "a",
        Setup(command="vllm serve m --max-num-seqs 256 --enforce-eager"),
        range(3, 6),
    )
    code, out, _ = run(
        [
            "accept",
            "--gpus",
            "4xA100-80GB",
            "--log",
            str(LOGS / "cpu-0.32-quant-awq.log"),
            "--before",
            str(before),
            "--after",
            str(after),
            "--lang",
            "en",
            "--",
            *Q7,
            "--quantization",
            "awq",
            "-tp",
            "2",
        ],
        capsys,
    )
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("NOT ACCEPTED")
    assert "[fail] hardware matches TP: 4 GPU(s)" in out
    assert "[fail] quantization matches the checkpoint" in out
    assert "[fail] the server started: Cannot find the config file for awq" in out
    assert "[pass] before/after numbers exist" in out
    assert "[fail] only one knob changed: 2 knobs changed" in out


def test_accept_without_data_or_log(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["accept", "--format", "json", "--", *Q7, "--port", "9"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["accepted"] is False
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert statuses == {
        "hardware": "unknown",
        "quantization": "pass",
        "started": "unknown",
        "data": "fail",
        "one-knob": "unknown",
    }


def _record_gpus(folder: Path, spec: str) -> None:
    for path in folder.glob("*.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["servetune"]["server_command"]["gpus"] = spec
        path.write_text(json.dumps(doc), encoding="utf-8")


def test_compare_uses_the_recorded_gpus_for_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # On an H100 vLLM's default --max-num-seqs is 1024: spelling it out changes nothing.
    before = write_runs(tmp_path / "b", Setup(command="vllm serve m"), range(3))
    after = write_runs(
        tmp_path / "a", Setup(command="vllm serve m --max-num-seqs 1024"), range(3, 6)
    )
    code, out, _ = run(["compare", str(before), str(after), "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["config_changes"] == [
        {"flag": "--max-num-seqs", "before": "256", "after": "1024"}  # GPU unknown: 256
    ]
    _record_gpus(before, "1xH100")
    _record_gpus(after, "1xH100")
    code, out, _ = run(["compare", str(before), str(after), "--format", "json"], capsys)
    assert json.loads(out)["config_changes"] == []
