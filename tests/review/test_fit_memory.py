"""The memory estimate on the corpus's fit records (tests/data/corpus/memory.json), by mechanism:
what ROCm reports as a card's total, V0's batch defaults, DeepSeek's MLA cached by release, and
a note on every estimate that lands far from what vLLM logged."""

from __future__ import annotations

from typing import Any

import pytest

from servetune.errors import ServetuneError
from servetune.review import startup_profile
from servetune.review.check import Report
from servetune.review.hardware import parse_gpus
from servetune.review.model import find_model
from servetune.review.startup_profile import device_total_gib

from corpus_records import MEMORY, memory_record, records, review

FAR_OFF = 2.0


def test_rocm_reports_the_total_vllm_logged() -> None:
    w7900 = memory_record("llmtracker-w7900-llama33-70b-gguf-q4km")
    mi300x = memory_record("llmtracker-mi300x-llama2-7b-tp1-v063")
    for record in (w7900, mi300x):
        spec = parse_gpus(record["gpus"]).spec
        assert spec is not None
        reported = device_total_gib(spec.memory_gib, spec)
        assert reported == pytest.approx(record["logged"]["total_gpu_gib"], abs=0.01)


def test_a_gguf_model_on_a_radeon_w7900_is_within_ten_percent() -> None:
    record = memory_record("llmtracker-w7900-llama33-70b-gguf-q4km")
    report = review(record["command"], record["gpus"], "0.6.4.post1")
    assert report.estimate is not None
    ours = report.estimate.kv_available_gib_per_gpu
    assert ours == pytest.approx(record["logged"]["kv_cache_gib"], rel=0.10)


def test_mi300x_blocks_at_the_v0_defaults() -> None:
    """The record ran benchmark_throughput (LLM class); the same engine settings as a serve
    command: 256 sequences, float16, 4096 tokens, the 16-token block."""
    record = memory_record("llmtracker-mi300x-llama2-7b-tp1-v063")
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
    record = memory_record("llmtracker-deepseek-v3-pp2-tp8-16xh100-v066")
    report = review(record["command"], record["gpus"], "0.6.6")
    assert report.estimate is not None
    assert report.estimate.kv_bytes_per_token_per_gpu == 31 * 2 * 16 * 256 * 2
    assert "mla-full-kv" in report.estimate.notes
    later = review(record["command"], record["gpus"], "0.7.3").estimate
    assert later is not None
    # 0.7.2 and 0.7.3 pad the 576-wide latent to 256 bytes (640 values)
    assert later.kv_bytes_per_token_per_gpu == 31 * 640 * 2
    assert "mla-full-kv" not in later.notes
    # from 0.8.0 unpadded, and the odd layer goes to the first stage (30 on the last)
    unpadded = review(record["command"], record["gpus"], "0.8.0").estimate
    assert unpadded is not None
    assert unpadded.kv_bytes_per_token_per_gpu == 30 * 576 * 2


def test_mla_is_disabled_for_awq_in_0_7_1_and_0_7_2() -> None:
    command = "vllm serve cognitivecomputations/DeepSeek-R1-AWQ --tensor-parallel-size 8"
    early = review(command, "8xH100-80GB", "0.7.2").estimate
    later = review(command, "8xH100-80GB", "0.7.3").estimate
    assert early is not None
    assert later is not None
    assert early.kv_bytes_per_token_per_gpu == 61 * 2 * 16 * 192 * 2
    assert later.kv_bytes_per_token_per_gpu == 61 * 640 * 2  # 576 padded to 256 bytes


_OWN_BLOCK_SIZE = ("gaudi", "hpu", "neuron", "tpu", "inferentia", "trainium")


def _logged(record: dict[str, Any]) -> tuple[str, float] | None:
    """As benchmarks/real_world.py scores it: V0's blocks at the block size logged, else at
    vLLM's default of 16 on GPUs."""
    logged = record["logged"]
    if logged.get("kv_tokens"):
        return "tokens", float(logged["kv_tokens"])
    gpus = str(record.get("gpus") or "").lower()
    block_size = logged.get("block_size") or (
        None if any(name in gpus for name in _OWN_BLOCK_SIZE) else 16
    )
    if logged.get("gpu_blocks") and block_size:
        return "tokens", float(logged["gpu_blocks"] * block_size)
    if logged.get("kv_cache_gib"):
        return "gib", float(logged["kv_cache_gib"])
    return None


def _fit_estimates() -> list[tuple[str, tuple[str, float], Report]]:
    out = []
    for record in records(MEMORY).values():
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
    record = memory_record("club3090-1086-qwen38-27b-fp8-2x5090")
    report = review(record["command"], record["gpus"], None)
    assert report.estimate is not None
    assert report.estimate.kv_available_gib_per_gpu is not None
    assert report.estimate.kv_available_gib_per_gpu < 0
    assert "no-kv-memory" in report.estimate.notes


# --- the dummy forward's peak, from what vLLM's layers allocate ---------------------------------


def test_llama_405b_at_tp8_with_a_whole_131k_prompt_profiled() -> None:
    """benchmark_throughput.py (0.6.3) passes enable_chunked_prefill=False: the profile runs
    one 131,072-token batch, whose hidden-size activations dominate at TP 8 (28.7 GiB reserve
    on MI300X: 3 x 16384 + 3 x 53248 / 8 values a token, as torch's cache holds them, plus
    RCCL's and the BLAS libraries' memory)."""
    record = memory_record("llmtracker-mi300x-llama31-405b-bf16-tp8-v063")
    command = "vllm serve meta-llama/Llama-3.1-405B-Instruct -tp 8 --enable-chunked-prefill=False"
    report = review(command, record["gpus"], "0.6.3")
    assert report.settings.max_num_batched_tokens == 131072
    assert report.estimate is not None
    logged_tokens = record["logged"]["gpu_blocks"] * 16
    assert report.estimate.kv_cache_tokens == pytest.approx(logged_tokens, rel=0.10)


def test_llama_7b_at_tp8_on_mi300x_keeps_rccl_out_of_the_kv_cache() -> None:
    record = memory_record("llmtracker-mi300x-llama2-7b-tp8-v063")
    report = review("vllm serve meta-llama/Llama-2-7b-chat-hf -tp 8", record["gpus"], "0.6.3")
    assert report.estimate is not None
    assert report.estimate.reserve_gib_per_gpu > 5.0  # 5.72 GiB left between budget and KV
    logged_tokens = record["logged"]["gpu_blocks"] * 16
    assert report.estimate.kv_cache_tokens == pytest.approx(logged_tokens, rel=0.03)


def test_forward_peak_per_token_is_three_hidden_and_three_mlp_widths() -> None:
    """Llama-3.1-8B: (3 x 4096 + 3 x 14336) x 2 B = 110.6 KB a token (vllm#10517 logged
    2.07 GiB at 20000 tokens in 0.6)."""
    model = find_model("meta-llama/Llama-3.1-8B-Instruct")
    assert model is not None
    report = review("vllm serve meta-llama/Llama-3.1-8B-Instruct", "1xH100-80GB", "0.6.4")
    peak = startup_profile.forward_peak_gib(model, report.settings, 20000, "0.6.4")
    assert peak == pytest.approx(20000 * 110592 / 1024**3, rel=0.001)
    assert peak == pytest.approx(2.07, rel=0.03)


def test_marlin_copies_its_input_before_0_8() -> None:
    model = find_model("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4")
    assert model is not None
    settings = review("vllm serve Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "1xA40", "0.6.4").settings
    before = startup_profile.forward_peak_gib(model, settings, 8192, "0.6.4", 86)
    after = startup_profile.forward_peak_gib(model, settings, 8192, "0.8.0", 86)
    turing = startup_profile.forward_peak_gib(model, settings, 8192, "0.6.4", 75)
    assert before - after == pytest.approx(8192 * 29568 * 2 / 1024**3)
    assert turing == after  # no Marlin below sm80


@pytest.mark.parametrize(
    ("version", "gpus", "chunked"),
    [("0.5.2", "1xH100-80GB", False), ("0.6.3", "1xH100-80GB", True), ("0.6.5", "1xMI300X", False)],
)
def test_v0_chunks_long_contexts_by_release(version: str, gpus: str, chunked: bool) -> None:
    """V0 turned chunked prefill on by itself above 32K from 0.5.3, and not on ROCm from 0.6.5."""
    settings = review("vllm serve meta-llama/Llama-3.1-8B-Instruct", gpus, version).settings
    assert settings.chunked_prefill is chunked
    assert settings.max_num_batched_tokens == (512 if chunked else 131072)


def test_two_t4s_without_a_release_are_noted_and_near_with_one() -> None:
    """deepseek-coder-6.7b on two T4s (vllm#5248, release not stated, 2024-06): its linear rope
    scaling makes 65,536 tokens, which V0 profiled whole; the newest defaults chunk it."""
    record = memory_record("vllm-5248-deepseek-coder-6.7b-2xT4")
    logged_tokens = record["logged"]["gpu_blocks"] * 16
    unknown = review(record["command"], record["gpus"], None).estimate
    assert unknown is not None
    assert "release-unknown-unchunked" in unknown.notes
    dated = review(record["command"], record["gpus"], "0.5.0").estimate
    assert dated is not None
    assert "release-unknown-unchunked" not in dated.notes
    assert dated.kv_cache_tokens is not None
    assert 1 / FAR_OFF < dated.kv_cache_tokens / logged_tokens < FAR_OFF


def test_an_unchunked_batch_is_never_below_2048_tokens() -> None:
    settings = review("vllm serve teknium/OpenHermes-2.5-Mistral-7B", "1xA6000", "0.4.1").settings
    assert not settings.chunked_prefill
    assert settings.max_num_batched_tokens is not None
    assert settings.max_num_batched_tokens >= 2048


def test_opt_125m_leaves_nearly_the_whole_budget_to_the_kv_cache() -> None:
    """vllm#4454 (0.4.1, V0, one A6000): LLM("facebook/opt-125m") logged 75,937 blocks of 16;
    12 layers x 2 x 768 x 2 bytes a token."""
    record = memory_record("vllm-pr4454-opt125m-a6000")
    report = review("vllm serve facebook/opt-125m", record["gpus"], "0.4.1")
    estimate = report.estimate
    assert estimate is not None and estimate.kv_cache_tokens is not None
    assert estimate.kv_bytes_per_token_per_gpu == 12 * 2 * 768 * 2
    logged = record["logged"]["gpu_blocks"] * 16
    assert abs(estimate.kv_cache_tokens / logged - 1) <= 0.10
