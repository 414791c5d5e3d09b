"""What one tensor-parallel rank holds and profiles, by mechanism, on fit records of
tests/data/corpus/memory.json: the layers vLLM replicates on every rank, the decode matrices MLA
builds after loading (0.7.1 to 0.7.3 absorbed, from 0.8.0 the dequantized kv_b_proj), the latent
padded to 256 bytes in 0.7.2 and 0.7.3, and the offline benchmark scripts of 0.6.3 and before,
which pass chunked prefill off."""

from __future__ import annotations

import pytest

from servetune.review.check import Report
from servetune.review.model import find_model
from servetune.review.settings import GIB
from servetune.review.weights import mla_decode_bytes, rank_extra_bytes, replicated_bytes

from corpus_records import memory_record, review

TOLERANCE = 0.10


def _r1_tp16(version: str) -> Report:
    return review(
        "vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 16", "16xH800", version
    )


def test_mla_decode_matrices_by_release() -> None:
    """DeepSeek-R1 (FP8) at TP 16, 8 heads a rank, 61 MLA layers."""
    report = _r1_tp16("0.7.3")
    model, settings = report.model, report.settings
    assert model is not None
    w_qr = 1536 * 8 * 64 * 2  # q_proj's RoPE part, bf16
    kv_b = 512 * 8 * (128 + 128) * 2  # kv_b_proj dequantized, bf16
    absorbed = 1536 * 8 * 512 + 8 * 512 * 7168  # W_Q_UK and W_UV_O requantized to fp8
    assert mla_decode_bytes(model, settings, "0.7.3") == 61 * (w_qr + kv_b + absorbed)
    assert mla_decode_bytes(model, settings, "0.8.0") == 61 * kv_b  # W_UV, W_UK_T: views
    assert mla_decode_bytes(model, settings, "0.6.6") == 0  # full K and V, no latent


def test_an_unquantized_mla_model_keeps_no_dequantized_copy() -> None:
    model = find_model("deepseek-ai/DeepSeek-V2-Lite-Chat")
    assert model is not None
    settings = review("vllm serve deepseek-ai/DeepSeek-V2-Lite-Chat", "1xH100", "0.10.0").settings
    assert mla_decode_bytes(model, settings, "0.10.0") == 0


def test_replicated_layers_are_held_whole_on_every_rank() -> None:
    """q_a_proj and kv_a_proj_with_mqa (fp8 here), and the MoE router in bf16."""
    report = _r1_tp16("0.8.0")
    model, settings = report.model, report.settings
    assert model is not None
    down = 61 * 7168 * (1536 + 512 + 64)
    router = 58 * 7168 * 256 * 2
    assert replicated_bytes(model, settings) == down + router
    extra = rank_extra_bytes(model, settings, "0.8.0")
    assert extra == (down + router) * 15 // 16 + mla_decode_bytes(model, settings, "0.8.0")


def test_deepseek_r1_at_tp16_on_0_7_3_holds_the_weights_and_blocks_vllm_logged() -> None:
    """vllm#16766: 42.47 GiB of weights per rank, 20,712 blocks of 16 tokens."""
    record = memory_record("vllm-16766-deepseek-r1-tp16-2x8xh800-v073")
    command = record["command"].replace("$MODELPATH", "deepseek-ai/DeepSeek-R1")
    estimate = review(command, record["gpus"], "0.7.3").estimate
    assert estimate is not None and estimate.kv_cache_tokens is not None
    assert estimate.weights_gib_per_gpu == pytest.approx(record["logged"]["weights_gib"], rel=0.01)
    assert estimate.kv_bytes_per_token_per_gpu == 61 * 640 * 2  # 576 padded to 256 bytes
    logged = record["logged"]["gpu_blocks"] * 16
    assert abs(estimate.kv_cache_tokens / logged - 1) <= TOLERANCE


def test_a_single_gpu_holds_no_replicated_extra() -> None:
    report = review("vllm serve Qwen/Qwen3-30B-A3B", "1xH100", "0.10.0")
    assert report.model is not None
    assert rank_extra_bytes(report.model, report.settings, "0.10.0") == 0


def test_benchmark_throughput_of_0_6_3_runs_without_chunked_prefill() -> None:
    """The 0.6.3 script passes `enable_chunked_prefill=args.enable_chunked_prefill` (store_true):
    Llama-3.1-405B's 131072 tokens are profiled in one forward pass, as its log warned."""
    record = memory_record("llmtracker-mi300x-llama31-405b-bf16-tp8-v063")
    report = review(record["command"], record["gpus"], "0.6.3")
    assert not report.settings.chunked_prefill
    assert report.settings.max_num_batched_tokens == 131072
    assert report.estimate is not None and report.estimate.kv_cache_tokens is not None
    logged = record["logged"]["gpu_blocks"] * 16
    assert abs(report.estimate.kv_cache_tokens / logged - 1) <= TOLERANCE
    # `vllm serve` of the same release turns it on by itself above 32K tokens
    served = review("vllm serve meta-llama/Llama-3.1-405B-Instruct -tp 8", record["gpus"], "0.6.3")
    assert served.settings.chunked_prefill


def test_benchmark_throughput_from_0_6_4_takes_the_engine_defaults() -> None:
    command = (
        "python benchmarks/benchmark_throughput.py --input-len 512 --output-len 128 "
        "-tp 8 --model meta-llama/Llama-3.1-405B-Instruct"
    )
    assert review(command, "8xMI300X", "0.6.4").settings.chunked_prefill


def test_weights_gib_sum_the_share_and_the_extra() -> None:
    report = _r1_tp16("0.7.3")
    assert report.estimate is not None and report.model is not None
    extra = rank_extra_bytes(report.model, report.settings, "0.7.3") / GIB
    assert extra == pytest.approx(3.2, abs=0.1)  # 42.47 logged against 39.2 of an even split
