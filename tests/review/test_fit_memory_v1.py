"""The memory estimate on V1 fit records (tests/data/corpus/memory.json) by mechanism: the batch
defaults on an A100 from 0.9, and the token count vLLM logs for a sliding-window model before
0.21."""

from __future__ import annotations

from typing import Any

import pytest

from servetune.review.check import CheckOptions, Report, check_text

from corpus_records import memory_record


def review(record: dict[str, Any]) -> Report:
    options = CheckOptions(
        gpus=record["gpus"], vllm_version=record["vllm_version"], detect_hardware=False
    )
    return check_text(record["command"], options)


@pytest.mark.parametrize(
    ("version", "tokens", "seqs"),
    [("0.8.5", 8192, 1024), ("0.9.0", 2048, 256), ("0.10.1.1", 2048, 256), ("0.11.0", 2048, 256)],
)
def test_an_a100_keeps_the_small_defaults_from_0_9(version: str, tokens: int, seqs: int) -> None:
    """arg_utils from 0.9: `device_memory >= 70 GiB and "a100" not in device_name` (vllm#17885);
    the dennislee logs say 'max_num_batched_tokens=2048' on an A100-80GB in 0.10.1.1."""
    options = CheckOptions(gpus="1xA100-80GB", vllm_version=version, detect_hardware=False)
    settings = check_text("vllm serve Qwen/Qwen2-7B-Instruct", options).settings
    assert (settings.max_num_batched_tokens, settings.max_num_seqs) == (tokens, seqs)


@pytest.mark.parametrize(
    "record_id",
    [
        "dennislee-log-qwen2-7b-1xa100-80g-gmu05",
        "dennislee-log-qwen2-7b-2xa100-80g-tp2-samenode-gmu05",
    ],
)
def test_qwen2_7b_on_a100_at_half_the_memory_is_within_ten_percent(record_id: str) -> None:
    record = memory_record(record_id)
    est = review(record).estimate
    assert est is not None and est.kv_cache_tokens is not None
    assert est.kv_cache_tokens == pytest.approx(record["logged"]["kv_tokens"], rel=0.1)


def test_a_quarter_of_an_a100_leaves_a_kv_cache() -> None:
    """At --gpu-memory-utilization 0.25 vLLM logged 5.01 GiB (93,872 tokens); the FlashInfer
    sampler it ran (its log says so) keeps the reserve below the sort-based one counted."""
    record = memory_record("dennislee-log-qwen2-7b-1xa100-80g-gmu025")
    est = review(record).estimate
    assert est is not None and est.kv_available_gib_per_gpu is not None
    assert 0.75 * 5.01 < est.kv_available_gib_per_gpu <= 5.01 * 1.1


def test_gpt_oss_tokens_before_0_21_count_every_layer() -> None:
    """gpt-oss-120b at TP 4, 0.10.1.1: 45.32 GiB logged as 2,640,144 tokens, num_blocks // 2
    groups x 16 (the sliding window's saving is not in the logged figure before 0.21)."""
    record = memory_record("dennislee-log-gpt-oss-120b-4xa100-80g-tp4-ray")
    est = review(record).estimate
    assert est is not None and est.kv_cache_tokens is not None
    assert est.kv_cache_tokens == pytest.approx(record["logged"]["kv_tokens"], rel=0.1)
    # 0.21 logs concurrency x max_model_len, with the window's saving
    newer = check_text(
        record["command"],
        CheckOptions(gpus=record["gpus"], vllm_version="0.21.0", detect_hardware=False),
    ).estimate
    assert newer is not None and newer.kv_cache_tokens is not None
    assert newer.kv_cache_tokens > 1.5 * est.kv_cache_tokens
