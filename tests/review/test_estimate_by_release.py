"""The memory estimate follows what each vLLM release does at startup (its profiling pass), and
says where it is uncertain: the sampler warm-up by release and path, CUDA graphs by capture
size, pooling and encoder models, and the range `kv-cache-too-small` weighs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.render.check import report_text
from servetune.review.capacity import estimate
from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.model import model_facts
from servetune.review.settings import GIB
from servetune.review.startup_profile import cuda_graph_gib, sampler_copies, sampler_peak


def review(command: str, gpus: str, version: str | None = None) -> Report:
    return check_text(command, CheckOptions(gpus=gpus, vllm_version=version))


@pytest.mark.parametrize(
    ("version", "central", "low"),
    [
        ("0.6.4", 9.6, 9.0),  # V0: the sort-based top-k/top-p
        ("0.9.2", 9.6, 3.0),  # FlashInfer's sampler only where it is installed
        ("0.11.0", 9.6, 3.0),
        ("0.14.1", 9.6, 9.0),  # 0.11.1-0.16: PyTorch's sort by default
        ("0.17.0", 3.5, 3.0),  # Triton masks top-k/top-p in place
        ("0.33.0", 3.5, 3.0),  # FlashInfer, then the native path warmed up after it
    ],
)
def test_the_sampler_warm_up_follows_the_release(version: str, central: float, low: float) -> None:
    copies = sampler_copies(version)
    assert copies.central == central
    assert copies.low == low


def test_the_qwen3_32b_report_that_served_is_a_warning_not_an_error() -> None:
    """`vllm serve Qwen/Qwen3-32B` on one H100-80GB ran in a public benchmark; the estimate
    used to reserve 9.6 sampler copies (5.7 GiB) and say DO NOT LAUNCH (18.6k of 40,960)."""
    report = review("vllm serve Qwen/Qwen3-32B", "1xH100-80GB")
    (finding,) = [f for f in report.findings if f.rule == "kv-cache-too-small"]
    assert finding.severity == "warning"
    assert report.estimate is not None
    assert report.estimate.reserve_gib_per_gpu < 3.0
    assert report.estimate.max_model_len_that_fits_optimistic is not None
    assert report.estimate.max_model_len_that_fits_optimistic >= 40960
    assert "at best" in finding.title.text()
    assert "最樂觀" in finding.title.text("zh-TW")
    assert not [f for f in report.findings if f.severity == "error"]


def test_a_sequence_far_beyond_the_range_stays_an_error() -> None:
    report = review("vllm serve Qwen/Qwen3-32B --max-model-len 40960", "1xA100-80GB", "0.11.0")
    (finding,) = [f for f in report.findings if f.rule == "kv-cache-too-small"]
    assert finding.severity == "error"  # 0.11.0: ~18k central, ~35k at best


def test_cuda_graphs_grow_with_the_largest_capture_size() -> None:
    report_small = review("vllm serve Qwen/Qwen3-8B --max-num-seqs 2", "1xRTX3090", "0.27.1")
    report_big = review("vllm serve Qwen/Qwen3-8B --max-num-seqs 1024", "1xRTX3090", "0.27.1")
    graphs_small = cuda_graph_gib(report_small.settings, "0.27.1")
    graphs_big = cuda_graph_gib(report_big.settings, "0.27.1")
    # 0.1 + 0.4 x 4/512 GiB at max-num-seqs 2 (vLLM logged 0.14 GiB, club-3090#1139).
    assert graphs_small.central == pytest.approx(0.1 + 0.4 * 4 / 512)
    assert graphs_big.central == pytest.approx(0.5)
    assert cuda_graph_gib(report_big.settings, "0.20.2").central == 0.0  # outside the budget


def test_gpt_oss_20b_on_an_a100_at_0_19_matches_the_logged_kv_cache() -> None:
    """myoceane.fr: 36.56 GiB of KV cache at --gpu-memory-utilization 0.65 (vLLM 0.19.0); the
    sort-path sampler (9.6 copies at 256 sequences) made it 35.8."""
    report = review(
        "vllm serve openai/gpt-oss-20b --max-model-len 131072 --gpu-memory-utilization 0.65",
        "1xA100-80GB",
        "0.19.0",
    )
    assert report.estimate is not None and report.estimate.kv_available_gib_per_gpu is not None
    assert report.estimate.kv_available_gib_per_gpu == pytest.approx(36.56, rel=0.03)


BERT = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "hidden_size": 1024,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
    "max_position_embeddings": 512,
    "vocab_size": 21128,
    "torch_dtype": "float32",
}


def test_an_encoder_keeps_no_kv_cache_and_runs_no_sampler() -> None:
    model = model_facts(BERT, "BAAI/bge-large-zh-v1.5", "local")
    assert model.is_encoder and model.is_pooling
    report = review("vllm serve BAAI/bge-large-zh-v1.5", "1xA10")
    settings = report.settings
    assert sampler_peak(model, settings, "0.33.0").central == 0.0
    est = estimate(model, settings, 24.0, version="0.33.0")
    assert est is not None
    assert est.kv_bytes_per_token_per_gpu == 0
    assert est.kv_cache_tokens is None
    assert "encoder-no-kv" in est.notes


def test_an_encoder_s_own_limit_decides_the_model_length(tmp_path: Path) -> None:
    folder = tmp_path / "bge-large-zh-v1.5"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(BERT), encoding="utf-8")
    report = review(f"vllm serve {folder} --max-model-len 8192", "1xA10", "0.33.0")
    rules = {f.rule: f.severity for f in report.findings}
    assert rules.get("model-len-exceeds-model") == "error"
    assert "kv-cache-too-small" not in rules
    fine = review(f"vllm serve {folder}", "1xA10", "0.33.0")
    assert not [f for f in fine.findings if f.severity == "error"]
    assert fine.estimate is not None and "encoder-no-kv" in fine.estimate.notes
    assert "keeps no KV cache" in " ".join(report_text(fine, "en").split())


def test_a_decoder_reranker_runs_its_pooler_not_the_sampler() -> None:
    config = {
        "architectures": ["Qwen3ForSequenceClassification"],
        "model_type": "qwen3",
        "hidden_size": 4096,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 12288,
        "vocab_size": 151669,
        "max_position_embeddings": 40960,
    }
    model = model_facts(config, "Qwen/Qwen3-Reranker-8B", "local")
    assert model.is_pooling and not model.is_encoder
    settings = review("vllm serve Qwen/Qwen3-8B", "1xH100").settings
    assert sampler_peak(model, settings, "0.33.0").central == 0.0
    est = estimate(model, settings, 80.0, version="0.33.0")
    assert est is not None and est.kv_bytes_per_token_per_gpu > 0  # a decoder keeps its KV


def test_pooling_flags_drop_the_sampler() -> None:
    report = review("vllm serve Qwen/Qwen3-8B --runner pooling", "1xH100", "0.33.0")
    assert report.settings.pooling
    plain = review("vllm serve Qwen/Qwen3-8B", "1xH100", "0.33.0")
    assert report.estimate is not None and plain.estimate is not None
    assert report.estimate.reserve_gib_per_gpu < plain.estimate.reserve_gib_per_gpu - 1.0


def test_bitsandbytes_4bit_keeps_an_absmax_per_64_weights() -> None:
    """QwQ-32B bnb-4bit at PP 2 on two RTX 5090s: vLLM logged 14.52 GiB of KV (vllm#14452);
    at 4.0 bits per weight the estimate said 16.0."""
    report = review(
        "vllm serve /models/QwQ-32B-unsloth-bnb-4bit --pipeline-parallel-size 2 "
        "--gpu-memory-utilization 0.85 --max-model-len 50000",
        "2xRTX-5090-32GB",
        "0.8.5",
    )
    est = report.estimate
    assert est is not None and est.kv_available_gib_per_gpu is not None
    assert est.kv_available_gib_per_gpu == pytest.approx(14.52, rel=0.10)
    assert est.weight_bits > 4.5  # embeddings stay 16-bit


def test_the_range_brackets_the_central_value() -> None:
    report = review("vllm serve meta-llama/Llama-3.1-8B-Instruct", "1xH100", "0.33.0")
    est = report.estimate
    assert est is not None and est.kv_available_gib_range is not None
    least, most = est.kv_available_gib_range
    assert est.kv_available_gib_per_gpu is not None
    assert least < est.kv_available_gib_per_gpu < most
    assert most - least < 0.1 * est.kv_available_gib_per_gpu
    assert est.max_model_len_that_fits_optimistic is not None
    assert est.max_model_len_that_fits is not None
    assert est.max_model_len_that_fits_optimistic >= est.max_model_len_that_fits
    assert most * GIB > 0
