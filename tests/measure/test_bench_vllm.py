"""`servetune bench` against the real vLLM (CPU build, tiny model), next to `vllm bench serve`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import vllm_cpu

pytestmark = [pytest.mark.vllm, pytest.mark.usefixtures("vllm_cpu")]

SERVETUNE = Path(sys.executable).parent / "servetune"
WORKLOAD = [
    "--dataset-name", "random", "--random-input-len", "64", "--random-output-len", "16",
    "--num-prompts", "24", "--request-rate", "8", "--ignore-eos", "--seed", "7",
]  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[vllm_cpu.RunningServer]:
    with vllm_cpu.start_server() as running:
        yield running


def servetune_bench(server: vllm_cpu.RunningServer, out: Path, *extra: str) -> dict[str, object]:
    argv = [str(SERVETUNE), "bench", "--base-url", server.base_url, "--model", "tiny",
            "--output", str(out), *extra]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    doc: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return doc


def test_bench_agrees_with_vllm_bench_serve(server: vllm_cpu.RunningServer, tmp_path: Path) -> None:
    ours = servetune_bench(server, tmp_path / "ours.json", *WORKLOAD)
    vllm_args = [
        str(vllm_cpu.VLLM_BIN), "bench", "serve", "--backend", "vllm",
        "--base-url", server.base_url, "--model", "tiny",
        "--tokenizer", str(vllm_cpu.TINY_MODEL_DIR), *WORKLOAD,
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,99",
        "--save-result", "--result-dir", str(tmp_path), "--result-filename", "vllm.json",
    ]  # fmt: skip
    done = subprocess.run(
        vllm_args, env=vllm_cpu.vllm_env(), capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, vllm_cpu.tail(done.stdout + done.stderr)
    theirs = json.loads((tmp_path / "vllm.json").read_text(encoding="utf-8"))
    # Counts agree exactly: both take output tokens from the server's usage.
    assert ours["completed"] == theirs["completed"] == 24
    assert ours["failed"] == theirs["failed"] == 0
    assert ours["total_output_tokens"] == theirs["total_output_tokens"] == 24 * 16
    # Our random prompts are cut with the server's tokenizer: exactly 64 tokens each.
    assert ours["total_input_tokens"] == 24 * 64
    assert abs(theirs["total_input_tokens"] - 24 * 64) <= 24 * 2
    # Every key vLLM writes is in our file.
    missing = set(theirs) - set(ours) - {"generated_texts"}
    assert not missing
    # Latencies: same server, same load, noisy 2-core machine: loose bounds only.
    for key in ("median_ttft_ms", "mean_e2el_ms", "median_tpot_ms"):
        a, b = float(ours[key]), float(theirs[key])  # type: ignore[arg-type]
        assert a > 0 and b > 0
        assert 0.2 < a / b < 5, (key, a, b)


def test_metrics_samples_and_chat_stream(server: vllm_cpu.RunningServer, tmp_path: Path) -> None:
    doc = servetune_bench(
        server, tmp_path / "chat.json",
        "--endpoint", "/v1/chat/completions", "--random-input-len", "32",
        "--random-output-len", "12", "--num-prompts", "30", "--request-rate", "10",
        "--ignore-eos", "--max-concurrency", "8",
    )  # fmt: skip
    assert doc["completed"] == 30
    assert doc["total_output_tokens"] == 30 * 12
    block = doc["servetune"]
    assert isinstance(block, dict)
    server_metrics = block["server_metrics"]
    assert server_metrics["available"] is True
    assert len(server_metrics["samples"]) >= 2
    assert server_metrics["summary"]["peak_running"] >= 1
    assert block["output_tokens_source"] == {"usage": 30}
    assert block["server_version"] == "0.32.0"
    assert all(r["error"] is None for r in block["requests"])
