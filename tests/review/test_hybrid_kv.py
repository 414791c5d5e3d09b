"""Hybrid models (Gated DeltaNet beside full attention: Qwen3.5/3.6/3.8) against what vLLM logged.

vLLM's hybrid KV cache manager keeps each linear-attention layer's state, one per sequence, in the
same block pool as the attention KV; "GPU KV cache size: N tokens" is then the concurrency at
max_model_len times max_model_len (0.21+). Given the KV memory vLLM logged, the pool arithmetic
must give back the tokens and the concurrency it logged on the fit records of
tests/data/corpus/memory.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servetune.review import kv_cache
from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.model import find_model

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "memory.json"
RECORDS: dict[str, dict[str, Any]] = {
    r["id"]: r for r in json.loads(CORPUS.read_text(encoding="utf-8"))["records"]
}
GIB = 1024**3


def _fit(record_id: str) -> dict[str, Any]:
    record = RECORDS[record_id]
    assert record["split"] == "fit", record_id  # tests hold only the fit part
    return record


def _review(record: dict[str, Any], extra: str = "", version: str | None = None) -> Report:
    options = CheckOptions(
        gpus=record["gpus"],
        vllm_version=version or record.get("vllm_version"),
        detect_hardware=False,
    )
    return check_text(record["command"] + extra, options)


def _with_logged_kv(record: dict[str, Any], gib: float, version: str | None = None) -> Report:
    """The record's command with vLLM's logged KV memory given as `--kv-cache-memory-bytes`, so
    that only the pool layout is under test."""
    text = record["command"]
    record = {**record, "command": text}
    if text.rstrip().endswith("}"):  # a "non-default args" line: add the key to its dict
        record["command"] = text.rstrip()[:-1] + f", 'kv_cache_memory_bytes': {int(gib * GIB)}}}"
        return _review(record, version=version)
    return _review(record, f" --kv-cache-memory-bytes {int(gib * GIB)}", version)


@pytest.mark.parametrize(
    ("record_id", "gib", "tokens", "concurrency"),
    [
        # 0.24.0, TP 1, fp8 KV, prefix caching: 300 blocks of 10 layers, 63 + 3 x 2 a sequence
        ("club3090-652-qwen36-35b-a3b-nvfp4-5090", 6.01, 569_878, 4.35),
        ("club3090-612-qwen36-35b-a3b-nvfp4-5090", 5.98, 567_978, 4.33),
    ],
)
def test_pool_gives_back_the_logged_tokens(
    record_id: str, gib: float, tokens: int, concurrency: float
) -> None:
    est = _with_logged_kv(_fit(record_id), gib).estimate
    assert est is not None
    assert est.kv_cache_tokens is not None
    assert est.max_concurrent_seqs_at_max_model_len is not None
    assert abs(est.kv_cache_tokens - tokens) <= 0.005 * tokens, est.kv_cache_tokens
    assert round(est.max_concurrent_seqs_at_max_model_len, 2) == pytest.approx(
        concurrency, abs=0.01
    )


def test_mtp_drafter_and_state_blocks_at_tp2() -> None:
    """club-3090#294 and #642 (the same dual-3090 setup): TP 2, fp8_e5m2 KV, MTP with 3 tokens.
    The MTP layer is a 17th attention layer, the state holds 3 more conv steps and 3 more
    blocks a sequence; with #642's 11.05 GiB that is 425-426 blocks of 17 layers, 164 + 15 a
    sequence: 622,408 tokens (#294 logged exactly this) to 623,873 (#642)."""
    est = _with_logged_kv(_fit("club3090-294-qwen36-27b-autoround-2x3090-tp2"), 11.05).estimate
    assert est is not None
    assert est.kv_cache_tokens is not None
    assert 622_408 * 0.995 <= est.kv_cache_tokens <= 623_873 * 1.005, est.kv_cache_tokens
    assert est.kv_bytes_per_token_per_gpu == 17 * 2 * 2 * 256  # 16 layers + MTP, 2 KV heads


def test_state_and_block_size_as_vllm_aligns_them() -> None:
    report = _review(_fit("club3090-294-qwen36-27b-autoround-2x3090-tp2"))
    assert report.model is not None
    pool = kv_cache.hybrid_pool(report.model, report.settings)
    assert pool is not None
    # conv 5120 x 6 x 2 B + 24 x 128 x 128 x 4 B (mamba_ssm_dtype float32)
    assert kv_cache.state_bytes(report.model, report.settings) == 1_634_304
    assert pool.attention_block == 1600  # "Setting attention block size to 1600 tokens"
    assert (pool.group_size, pool.attention_groups, pool.state_groups) == (17, 1, 3)
    assert pool.state_blocks == 2 + 3  # prefix caching ("align") + 3 speculative tokens


def test_tokens_depend_on_max_model_len_for_hybrid_models() -> None:
    """The same pool logs more tokens at a longer max_model_len (club-3090#1085/#1086 logged
    214,135 and 451,603 tokens from one 11.15 GiB): tokens are concurrency x max_model_len, and a
    sequence's state blocks do not grow with it (63 + 6 blocks at 131,072, 126 + 6 at 262,144)."""
    record = _fit("club3090-652-qwen36-35b-a3b-nvfp4-5090")
    short = _with_logged_kv(record, 6.01).estimate
    longer = {**record, "command": record["command"].replace("131072", "262144")}
    long = _with_logged_kv(longer, 6.01).estimate
    assert short is not None and long is not None
    assert short.kv_cache_tokens is not None and long.kv_cache_tokens is not None
    assert short.kv_cache_tokens == int(300 / 69 * 131072)
    assert long.kv_cache_tokens == int(300 / 132 * 262144)


def test_before_021_tokens_are_blocks_per_group_times_the_block() -> None:
    record = _fit("club3090-652-qwen36-35b-a3b-nvfp4-5090")
    est = _with_logged_kv(record, 6.01, version="0.20.0").estimate
    assert est is not None
    assert est.kv_cache_tokens == 300 // 4 * 2096  # 300 blocks, 4 groups, 2,096-token blocks


def test_catalog_reads_the_hybrid_layout() -> None:
    facts = find_model("Qwen/Qwen3.6-27B")
    assert facts is not None
    assert (facts.attention_layers, facts.linear_layers, facts.mtp_layers) == (16, 48, 1)
    assert facts.linear is not None
    assert facts.linear.conv_dim == 2 * 16 * 128 + 48 * 128
    moe = find_model("Qwen/Qwen3.6-35B-A3B")
    assert moe is not None
    assert (moe.attention_layers, moe.linear_layers, moe.num_experts) == (10, 30, 256)
    dense = find_model("Qwen/Qwen3-32B")
    assert dense is not None
    assert not dense.is_hybrid
    assert dense.attention_layers == dense.num_layers


def test_hybrid_fit_record_within_ten_percent() -> None:
    """club-3090#294, the hybrid fit record whose whole command is logged: the estimate's own
    KV memory (not vLLM's) lands within 10% of the tokens vLLM logged."""
    record = _fit("club3090-294-qwen36-27b-autoround-2x3090-tp2")
    est = _review(record).estimate
    assert est is not None
    assert est.kv_cache_tokens is not None
    assert abs(est.kv_cache_tokens / record["logged"]["kv_tokens"] - 1) <= 0.10


@pytest.mark.parametrize(
    ("record_id", "block"),
    [
        ("vllm-pr46329-qwen38-27b-nvfp4-kvfp8-rtxpro6000-nightly", 1600),
        ("vllm-pr46329-qwen38-27b-nvfp4-kvnvfp4-rtxpro6000", 2848),
    ],
)
def test_nvfp4_kv_packs_a_head_in_under_half_its_bytes(record_id: str, block: int) -> None:
    """vllm#46329 logged the hybrid attention block each KV dtype aligns to, with MTP's 3
    tokens (the comment's "MTP k=3", spelled out here): one state of 10240 x 6 x 2 B + 48 x 128
    x 128 x 4 B per page is 100 blocks of 16 fp8 tokens (4 KV heads x 256 x 2 B a token), and
    178 of 16 NVFP4 tokens (4 x 2 x (128 + 16) B: 4-bit values and an FP8 scale per 16)."""
    record = _fit(record_id)
    command = record["command"].split(" (")[0]
    spec = ' --speculative-config \'{"method": "mtp", "num_speculative_tokens": 3}\''
    report = _review({**record, "command": command}, spec, version="0.28.1")
    assert report.model is not None
    pool = kv_cache.hybrid_pool(report.model, report.settings, "0.28.1")
    assert pool is not None
    assert pool.attention_block == block
    nvfp4 = report.settings.kv_cache_dtype == "nvfp4"
    per_layer = kv_cache.kv_bytes_per_token_layer(report.model, report.settings)
    assert per_layer == (2 * 4 * (128 + 16) if nvfp4 else 2 * 4 * 256)


def test_kimi_linear_keeps_kda_state_beside_its_mla_layers() -> None:
    """vllm#28228 (Kimi-Linear-48B-A3B AWQ, TP 2, 0.11): only the 7 `full_attn_layers` are MLA;
    the 20 KDA layers keep a state of 3 x 3 x 2048 conv values (bf16) and 16 x 128 x 128 float32
    a sequence. An MLA page aligns to 64 tokens: 64 x ceil(1,085,440 / (64 x 1,152)) = 960; 7
    layers a group make 1 attention and 3 state groups ("Add 1 padding layers"). Prefix caching
    is off before 0.17 for such a model. The logged 2.30 GiB is 319 blocks: 79 x 960 = 75,840
    tokens, the figure vLLM logged."""
    record = _fit("vllm-28228-kimi-linear-48b-awq-2x3090")
    report = _review(record)
    model = report.model
    assert model is not None
    assert (model.attention_layers, model.linear_layers) == (7, 20)
    assert model.linear is not None
    assert model.linear.kind == "kda"
    assert kv_cache.state_bytes(model, report.settings) == 1_085_440
    pool = kv_cache.hybrid_pool(model, report.settings, "0.11.1")
    assert pool is not None
    assert pool.attention_block == 960
    assert (pool.group_size, pool.attention_groups, pool.state_groups) == (7, 1, 3)
    assert pool.state_blocks == 1
    est = _with_logged_kv(record, 2.30, version="0.11.1").estimate
    assert est is not None
    assert est.kv_cache_tokens == 75_840
