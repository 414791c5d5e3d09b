"""`servetune plan` on the command line: the JSON contract, the answer, exit codes, the plot."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from servetune.cli.main import main

SEED = ["--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
BASE = ["plan", "--vllm-version", "0.33.0", "--gpus", "1xA100-80GB", "--input-len", "1000",
        "--output-len", "200"]  # fmt: skip
PREDICTION_KEYS = {
    "output_throughput", "request_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
    "p99_tpot_ms", "mean_e2el_ms", "kv_cache_tokens", "max_concurrency_meeting_slo", "qps_per_gpu",
}  # fmt: skip


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main([*argv])
    return code, json.loads(capsys.readouterr().out)


def test_the_seed_question_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = _json(
        capsys, *BASE, "--concurrency", "50", "--slo", "ttft:2000", "--slo", "tpot:50",
        "--format", "json", *SEED,
    )  # fmt: skip
    assert code == 0
    assert set(doc) >= {"schema_version", "prediction", "verdict", "bound", "what_if", "batching",
                        "calibrated", "notes"}  # fmt: skip
    prediction = doc["prediction"]
    assert isinstance(prediction, dict) and set(prediction) == PREDICTION_KEYS
    assert doc["verdict"] in ("meets", "fails", "marginal")
    assert doc["bound"] in ("kv-cache", "max-num-seqs", "max-num-batched-tokens", "compute",
                            "memory-bandwidth", "interconnect")  # fmt: skip
    assert doc["calibrated"] is False
    what_if = doc["what_if"]
    assert isinstance(what_if, list)
    changes = {w["change"] for w in what_if}
    assert {"tp x2", "replica x2", "--kv-cache-dtype fp8"} <= changes
    assert any("awq" in c or "fp8" in c for c in changes)
    batching = doc["batching"]
    assert isinstance(batching, dict)
    assert batching["continuous"]["output_throughput"] > batching["static"]["output_throughput"]
    tp2 = next(w for w in what_if if w["change"] == "tp x2")
    assert "--tensor-parallel-size 2" in tp2["command"] and tp2["gpus"].startswith("2x")
    assert tp2["prediction"]["output_throughput"] > prediction["output_throughput"]


def test_without_targets_there_is_no_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = _json(capsys, *BASE, "--request-rate", "2", "--num-prompts", "200",
                      "--format", "json", *SEED)  # fmt: skip
    assert code == 0
    assert doc["verdict"] is None
    assert doc["prediction"]["max_concurrency_meeting_slo"] is None  # type: ignore[index]
    assert doc["prediction"]["request_throughput"] == pytest.approx(2, rel=0.25)  # type: ignore[index]


def test_text_answers_the_boss_in_english_and_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*BASE, "--concurrency", "50", "--slo", "ttft:2000", "--slo", "tpot:50"]
    assert main([*argv, "--lang", "en", *SEED]) == 0
    out = capsys.readouterr().out
    assert "Will 50 users lag?" in out and "QPS per GPU" in out and "buys the most" in out
    assert main([*argv, "--lang", "zh-TW", *SEED]) == 0
    zh = capsys.readouterr().out
    assert "50 人同時用會卡嗎" in zh and "最划算的改動" in zh


def test_a_command_check_knows_the_fix_for_is_planned_corrected(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tp3 = ["--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "3"]
    assert main([*BASE, "--concurrency", "8", *tp3]) == 0
    out = capsys.readouterr().out
    first, *_ = out.splitlines()
    assert first.startswith("Planned as corrected: the command as given would not run (")
    assert "tp-exceeds-gpus" in out.split("\n\n")[0]
    assert "  vllm serve Qwen/Qwen2.5-7B-Instruct \\\n    --tensor-parallel-size 1\n" in out
    assert "Will 8 users lag?" in out
    code, doc = _json(capsys, *BASE, "--concurrency", "8", "--format", "json", *tp3)
    assert code == 0
    assert doc["planned_command"] == (
        "vllm serve Qwen/Qwen2.5-7B-Instruct \\\n  --tensor-parallel-size 1"
    )
    corrections = doc["corrections"]
    assert isinstance(corrections, list)
    assert {c["rule"] for c in corrections} >= {"tp-exceeds-gpus"}
    assert all(c["title"] and c["fix"] for c in corrections)
    assert isinstance(doc["prediction"], dict) and doc["prediction"]["output_throughput"] > 0


def test_a_value_the_release_refuses_is_planned_without_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # vLLM 0.8.0's reasoning parsers do not include qwen3: the flag is dropped, and said so
    argv = ["plan", "--vllm-version", "0.8.0", "--gpus", "1xA100-80GB", "--input-len", "1000",
            "--output-len", "200", "--concurrency", "8", "--format", "json", "--", "vllm",
            "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192",
            "--enable-reasoning", "--reasoning-parser", "qwen3"]  # fmt: skip
    code, doc = _json(capsys, *argv)
    assert code == 0
    planned = doc["planned_command"]
    assert isinstance(planned, str) and "--reasoning-parser" not in planned
    assert "--max-model-len 8192" in planned
    corrections = doc["corrections"]
    assert isinstance(corrections, list)
    assert [c["rule"] for c in corrections] == ["invalid-value"]
    assert isinstance(doc["prediction"], dict) and doc["prediction"]["output_throughput"] > 0


def test_a_server_that_starts_holds_one_full_length_sequence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # check only warns that 40,960 tokens may not fit (central ~37k); a server that started
    # holds them (vLLM refuses to start otherwise), so a 39k request is served, not stuck
    argv = ["plan", "--vllm-version", "0.33.0", "--gpus", "1xH100", "--input-len", "38000",
            "--output-len", "1000", "--concurrency", "2", "--format", "json", "--", "vllm",
            "serve", "Qwen/Qwen3-32B"]  # fmt: skip
    code, doc = _json(capsys, *argv)
    assert code == 0
    prediction = doc["prediction"]
    assert isinstance(prediction, dict)
    assert prediction["kv_cache_tokens"] == 40960
    assert prediction["output_throughput"] > 0


def test_requests_longer_than_max_model_len_are_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*BASE[:-4], "--input-len", "8000", "--output-len", "500", "--concurrency", "2", *SEED]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "a request of 8500 tokens (8000 in + 500 out) is longer than --max-model-len 8192" in err
    assert "hint: raise --max-model-len to 8500 or more" in err


def test_a_command_as_given_has_no_corrections(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = _json(capsys, *BASE, "--concurrency", "4", "--format", "json", *SEED)
    assert code == 0 and doc["planned_command"] is None and doc["corrections"] == []


def test_a_command_with_no_known_fix_is_refused_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 70B in bf16 on one 24 GB card: check knows no flag that makes it fit
    code = main(["plan", "--vllm-version", "0.33.0", "--gpus", "1xL4", "--input-len", "100",
                 "--output-len", "10", "--concurrency", "1", "--", "vllm", "serve",
                 "meta-llama/Llama-3.1-70B-Instruct"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("This configuration cannot run; check finds:")
    assert "weights-dont-fit" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*BASE, *SEED], "exactly one of --concurrency"),
        (["plan", "--gpus", "1xA100-80GB", "--concurrency", "4", *SEED], "request lengths"),
        ([*BASE, "--concurrency", "4", "--slo", "ttfb:100", *SEED], "bad --slo"),
        (
            [*BASE, "--concurrency", "4", "--", "vllm", "serve", "acme/nothing-known"],
            "plan needs the model",
        ),
    ],
)
def test_bad_usage_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "batching.png"
    assert main([*BASE, "--concurrency", "16", "--plot", str(plot), *SEED]) == 0
    capsys.readouterr()
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrate_fits_a_measured_run_and_reproduces_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from result_files import Setup, ours

    setup = Setup(command="vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192", latency=2.0,
                  requests=120, input_len=1000, output_tokens=200, request_rate="inf",
                  max_concurrency=8)  # fmt: skip
    first = ours(setup, seed=1)
    # a consistent run: 8 users back to back last 120 x mean latency / 8 (Little's law)
    busy = 120 * sum(first["latencies"]) / len(first["latencies"]) / 8
    measured = ours(replace(setup, throughput=first["duration"] / busy), seed=1)
    result = tmp_path / "run.json"
    result.write_text(json.dumps(measured), encoding="utf-8")
    argv = [*BASE, "--concurrency", "8", "--num-prompts", "120", "--format", "json"]
    _, plain = _json(capsys, *argv, *SEED)
    code, doc = _json(capsys, *argv, "--calibrate", str(result), *SEED)
    assert code == 0 and doc["calibrated"] is True
    assert str(doc["notes"][0]).startswith("calibrated on 1 run(s)")  # type: ignore[index]
    got = doc["prediction"]["mean_tpot_ms"]  # type: ignore[index]
    assert got != plain["prediction"]["mean_tpot_ms"]  # type: ignore[index]
    assert got == pytest.approx(measured["mean_tpot_ms"], rel=0.15)
