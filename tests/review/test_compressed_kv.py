"""DeepSeek-V4's compressed attention and MXFP4 experts against what vLLM logged (fit records).

vLLM's deepseek_v4 (0.20+) keeps, per layer, a 128-token window, one fp8_ds_mla entry (584 B)
per `compress_ratio` tokens and compressor states, packed into one pool; its experts are MXFP4
(`expert_dtype: fp4`) beside FP8 block-quantized layers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from servetune.review import kv_cache
from servetune.review.check import CheckOptions, check_text
from servetune.review.model import find_model
from servetune.review.settings import GIB

DATA = Path(__file__).resolve().parents[1] / "data" / "corpus"


def _fit(name: str, record_id: str) -> dict[str, Any]:
    records = json.loads((DATA / name).read_text(encoding="utf-8"))["records"]
    record = next(r for r in records if r["id"] == record_id)
    assert record["split"] == "fit", record_id  # tests hold only the fit part
    return dict(record)


def test_catalog_reads_compress_ratios_and_expert_dtype() -> None:
    facts = find_model("deepseek-ai/DeepSeek-V4-Flash")
    assert facts is not None
    assert len(facts.compress_ratios) == 43  # the 44th entry is the MTP layer's
    assert (facts.compress_ratios.count(4), facts.compress_ratios.count(128)) == (21, 20)
    assert facts.expert_dtype == "fp4"


def test_pool_layout_as_vllm_packs_it() -> None:
    """block 256, fp8: 21 slots of a 64 x 584 B page (37,440 B aligned to 576), 21 indexer pages
    of 64 x 132 B (8,640) and 20 C128 pages of 2 x 584 B (1,728); a 1M-token sequence holds 4,096
    compressed blocks, 3 window groups of 130 + 1 blocks, the C4 states' 2,050 + 1 and the C128
    states' 1,040 + 1."""
    report = check_text(
        "vllm serve deepseek-ai/DeepSeek-V4-Flash --block-size 256 --kv-cache-dtype fp8",
        CheckOptions(gpus="8xB200", vllm_version="0.25.0", detect_hardware=False),
    )
    assert report.model is not None
    pool = kv_cache.compressed_pool(report.model, report.settings)
    assert pool is not None
    assert pool.block_bytes == 21 * 37_440 + 21 * 8_640 + 20 * 1_728
    assert pool.blocks_per_sequence(1_048_576) == 4_096 + 3 * 131 + 2_051 + 1_041


def test_dp8_expert_parallel_record_within_ten_percent() -> None:
    """vllm#51454: DP 8 with expert parallelism on B200s, 1M context: the experts are spread
    over the 8 ranks, and the estimate's own KV memory gives the logged tokens within 10%."""
    record = _fit("memory.json", "vllm-51454-dsv4-flash-0731-8xb200-dp8")
    report = check_text(
        record["command"],
        CheckOptions(gpus=record["gpus"], vllm_version="0.25.0", detect_hardware=False),
    )
    est = report.estimate
    assert est is not None
    assert est.weights_gib_per_gpu < 30  # MXFP4 experts / 8 beside replicated FP8 layers
    assert est.kv_cache_tokens is not None
    assert abs(est.kv_cache_tokens / record["logged"]["kv_tokens"] - 1) <= 0.10


def test_fp4_experts_fit_two_rtx_pro_6000() -> None:
    """vllm#40821: DeepSeek-V4-Flash at TP 2 on two 96 GB cards loaded (it failed later, on the
    GPU architecture): MXFP4 experts make about 72 GiB a GPU, not the 136 of 8-bit experts."""
    record = _fit("commands.json", "vllm-40821-dsv4-flash-2xrtxpro6000-v0201")
    report = check_text(
        record["command"],
        CheckOptions(gpus=record["gpus"], vllm_version="0.20.1", detect_hardware=False),
    )
    assert "weights-dont-fit" not in {f.rule for f in report.findings}
    est = report.estimate
    assert est is not None
    assert 65 < est.weights_gib_per_gpu < 80
    assert est.kv_cache_gib_per_gpu is not None
    assert est.kv_cache_gib_per_gpu * GIB > 0
