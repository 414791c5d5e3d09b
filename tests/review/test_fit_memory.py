"""The memory estimate on the corpus's fit records (tests/data/corpus/memory.json), by mechanism:
what ROCm reports as a card's total, V0's batch defaults, DeepSeek's MLA cached by release, and
a note on every estimate that lands far from what vLLM logged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servetune.errors import ServetuneError
from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.hardware import parse_gpus
from servetune.review.startup_profile import device_total_gib

CORPUS = Path(__file__).parents[1] / "data" / "corpus" / "memory.json"
FAR_OFF = 2.0


def fit_record(record_id: str) -> dict[str, Any]:
    records: list[dict[str, Any]] = json.loads(CORPUS.read_text())["records"]
    found = next(r for r in records if r["id"] == record_id)
    assert found["split"] == "fit"
    return found


def review(command: str, gpus: str, version: str | None) -> Report:
    options = CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    return check_text(command, options)


def test_rocm_reports_the_total_vllm_logged() -> None:
    w7900 = fit_record("llmtracker-w7900-llama33-70b-gguf-q4km")
    mi300x = fit_record("llmtracker-mi300x-llama2-7b-tp1-v063")
    for record in (w7900, mi300x):
        spec = parse_gpus(record["gpus"]).spec
        assert spec is not None
        reported = device_total_gib(spec.memory_gib, spec)
        assert reported == pytest.approx(record["logged"]["total_gpu_gib"], abs=0.01)


def test_a_gguf_model_on_a_radeon_w7900_is_within_ten_percent() -> None:
    record = fit_record("llmtracker-w7900-llama33-70b-gguf-q4km")
    report = review(record["command"], record["gpus"], "0.6.4.post1")
    assert report.estimate is not None
    ours = report.estimate.kv_available_gib_per_gpu
    assert ours == pytest.approx(record["logged"]["kv_cache_gib"], rel=0.10)


def test_mi300x_blocks_at_the_v0_defaults() -> None:
    """The record ran benchmark_throughput (LLM class); the same engine settings as a serve
    command: 256 sequences, float16, 4096 tokens, the 16-token block."""
    record = fit_record("llmtracker-mi300x-llama2-7b-tp1-v063")
    report = review("vllm serve meta-llama/Llama-2-7b-chat-hf", record["gpus"], "0.6.3")
    assert report.settings.max_num_seqs == 256
    assert report.estimate is not None
    logged_tokens = record["logged"]["gpu_blocks"] * 16
    assert report.estimate.kv_cache_tokens == pytest.approx(logged_tokens, rel=0.03)


@pytest.mark.parametrize(("version", "tokens"), [("0.6.3", 512), ("0.6.6", 2048), ("0.8.0", 8192)])
def test_v0_batch_defaults_are_the_same_on_every_gpu(version: str, tokens: int) -> None:
    command = "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-chunked-prefill"
    settings = review(command, "1xH100-80GB", version).settings
    assert settings.max_num_batched_tokens == tokens
    assert settings.max_num_seqs == (1024 if version == "0.8.0" else 256)


def test_deepseek_before_mla_caches_k_and_v_per_head() -> None:
    """0.6.6 caches K and V for each of the 16 heads on a rank (head size 192 padded to 256),
    not the 576-wide latent: 31 layers on a pipeline stage x 2 x 16 x 256 x 2 bytes."""
    record = fit_record("llmtracker-deepseek-v3-pp2-tp8-16xh100-v066")
    report = review(record["command"], record["gpus"], "0.6.6")
    assert report.estimate is not None
    assert report.estimate.kv_bytes_per_token_per_gpu == 31 * 2 * 16 * 256 * 2
    assert "mla-full-kv" in report.estimate.notes
    later = review(record["command"], record["gpus"], "0.7.3").estimate
    assert later is not None
    assert later.kv_bytes_per_token_per_gpu == 31 * 576 * 2
    assert "mla-full-kv" not in later.notes


def test_mla_is_disabled_for_awq_in_0_7_1_and_0_7_2() -> None:
    command = "vllm serve cognitivecomputations/DeepSeek-R1-AWQ --tensor-parallel-size 8"
    early = review(command, "8xH100-80GB", "0.7.2").estimate
    later = review(command, "8xH100-80GB", "0.7.3").estimate
    assert early is not None
    assert later is not None
    assert early.kv_bytes_per_token_per_gpu == 61 * 2 * 16 * 192 * 2
    assert later.kv_bytes_per_token_per_gpu == 61 * 576 * 2


def _logged(record: dict[str, Any]) -> tuple[str, float] | None:
    logged = record["logged"]
    if logged.get("kv_tokens"):
        return "tokens", float(logged["kv_tokens"])
    if logged.get("gpu_blocks") and logged.get("block_size"):
        return "tokens", float(logged["gpu_blocks"] * logged["block_size"])
    if logged.get("kv_cache_gib"):
        return "gib", float(logged["kv_cache_gib"])
    return None


def _fit_estimates() -> list[tuple[str, tuple[str, float], Report]]:
    out = []
    for record in json.loads(CORPUS.read_text())["records"]:
        figure = _logged(record)
        if record["split"] != "fit" or figure is None or not record.get("gpus"):
            continue
        version = record.get("vllm_version")
        try:
            report = review(record["command"], record["gpus"], version)
        except ServetuneError:  # a command the parser refuses is the parsing tests' case
            continue
        if report.estimate is not None:
            out.append((record["id"], figure, report))
    return out


def test_every_fit_estimate_far_off_carries_a_note() -> None:
    far = []
    for record_id, (kind, theirs), report in _fit_estimates():
        est = report.estimate
        assert est is not None
        ours = est.kv_cache_tokens if kind == "tokens" else est.kv_available_gib_per_gpu
        if ours is None or not theirs:
            continue
        ratio = ours / theirs
        if not (1 / FAR_OFF <= ratio <= FAR_OFF):
            far.append(record_id)
            assert est.notes, record_id
    assert far  # the cut args lines (club-3090#642, #1085, #1086) and the vision models


def test_weights_and_reserve_over_the_budget_are_noted() -> None:
    record = fit_record("club3090-1086-qwen38-27b-fp8-2x5090")
    report = review(record["command"], record["gpus"], None)
    assert report.estimate is not None
    assert report.estimate.kv_available_gib_per_gpu is not None
    assert report.estimate.kv_available_gib_per_gpu < 0
    assert "no-kv-memory" in report.estimate.notes
