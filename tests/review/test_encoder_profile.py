"""The vision encoder's share of vLLM's startup profile, held to fit records (tests/data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.encoder_profile import (
    llm_tokens_per_item,
    positions_per_item,
    profiled_items,
    tower_weight_bytes,
)
from servetune.review.model import find_model
from servetune.review.settings import GIB

DATA = Path(__file__).parents[1] / "data"


def _record(name: str, part: str) -> dict[str, Any]:
    records = json.loads((DATA / "corpus" / f"{part}.json").read_text(encoding="utf-8"))
    found: dict[str, Any] = next(r for r in records["records"] if r["id"] == name)
    assert found["split"] == "fit"
    return found


def _review(command: str, gpus: str, version: str | None) -> Report:
    return check_text(command, CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False))


def test_the_towers_read_from_real_configs() -> None:
    mllama = find_model("meta-llama/Llama-3.2-11B-Vision-Instruct")
    qwen = find_model("Qwen/Qwen2.5-VL-72B-Instruct")
    assert mllama is not None and mllama.vision is not None
    assert qwen is not None and qwen.vision is not None
    # 4 tiles of (560/14)^2 + 1 = 1601 patches, padded to 1608 inside the encoder
    assert llm_tokens_per_item(mllama.vision) == 6404
    assert positions_per_item(mllama.vision) == 6432
    # 12,845,056 pixels: 256 x 256 patches, 16,384 tokens after the 2 x 2 merge
    assert positions_per_item(qwen.vision) == 65536
    assert llm_tokens_per_item(qwen.vision) == 16384
    assert qwen.vision.out_hidden == 8192  # the LLM's hidden size
    # vLLM logged 19.86 GiB for the whole checkpoint; the text layers alone are 18.2 GiB
    assert tower_weight_bytes(mllama) / GIB == pytest.approx(1.66, abs=0.02)


def test_mllama_profile_matches_vllm_12126() -> None:
    """Llama-3.2-11B-Vision at 128 sequences, 65,536 tokens, H100-80GB: vLLM logged 19.86 GiB
    of weights, a 36.63 GiB activation peak and 14.65 GiB of KV cache (the fit record)."""
    record = _record("vllm-pr12126-llama32-11b-vision-h100", "memory")
    est = _review(record["command"], record["gpus"], "0.6.6").estimate
    assert est is not None and est.kv_available_gib_per_gpu is not None
    assert est.encoder_items == 128
    assert est.weights_gib_per_gpu == pytest.approx(19.86, abs=0.1)
    assert est.encoder_gib_per_gpu == pytest.approx(36.63, rel=0.05)
    assert est.kv_available_gib_per_gpu == pytest.approx(14.65, rel=0.1)
    assert "encoder-profile" in est.notes and "multimodal-encoder" not in est.notes


def test_mllama_profile_at_vllms_default_sequences_leaves_no_room() -> None:
    """vllm#9630: --max-model-len 32 still ran out of memory in the profile run (256 dummy
    images); --max-num-seqs 128 started. The rule names the cause and the fix."""
    failed = _record("vllm-9630-llama32-11b-vision-h100-96g-len32", "commands")
    report = _review(failed["command"], failed["gpus"], failed["vllm_version"])
    rules = {f.rule for f in report.findings}
    assert "profile-activation-oom" in rules and "kv-cache-too-small" not in rules
    finding = next(f for f in report.findings if f.rule == "profile-activation-oom")
    assert finding.severity == "error"
    title, fix = finding.title.text(), finding.fix.text()
    assert "on 256 images at once" in title
    seqs = int(fix.split("--max-num-seqs to ")[1].split(" ")[0])
    assert 128 <= seqs < 256

    ran = _record("vllm-9630-llama32-11b-vision-h100-96g-seqs128", "commands")
    report = _review(ran["command"], ran["gpus"], ran["vllm_version"])
    assert not {f.rule for f in report.findings if f.severity == "error"}


def test_qwen_vl_profile_on_vllm_16570() -> None:
    """Qwen2.5-VL-72B at TP 4 on A100-40GB, 0.8.3: vLLM logged 34.43 GiB of weights and
    2.51 GiB of activations (one 65,536-patch image through the tower); 0.04 GiB was left."""
    report = _review(
        "vllm serve Qwen/Qwen2.5-VL-72B-Instruct --tensor-parallel-size 4 "
        "--gpu-memory-utilization 0.95",
        "4xA100-40GB",
        "0.8.3",
    )
    est = report.estimate
    assert est is not None and est.encoder_gib_per_gpu is not None
    assert est.encoder_items == 1
    assert est.weights_gib_per_gpu == pytest.approx(34.43, rel=0.01)
    assert 1.5 <= est.encoder_gib_per_gpu <= 2.51
    assert est.kv_available_gib_per_gpu is not None and est.kv_available_gib_per_gpu < 1.0


@pytest.mark.parametrize(
    ("flags", "version", "items"),
    [
        ("", "0.8.3", 1),  # V1: the budget holds one largest image
        ("--max-num-batched-tokens 65536", "0.8.3", 4),
        ("--max-num-batched-tokens 65536 --max-num-seqs 2", "0.8.3", 2),
        ("--max-num-batched-tokens 65536 --limit-mm-per-prompt image=0", "0.8.3", 0),
        # V0 caps its dummy sequences at max_num_batched_tokens // the item's tokens
        ("--max-num-batched-tokens 65536", "0.7.3", 4),
        ('--max-num-batched-tokens 65536 --limit-mm-per-prompt {"image":3}', "0.7.3", 3),
    ],
)
def test_qwen_items_by_release(flags: str, version: str, items: int) -> None:
    report = _review(f"vllm serve Qwen/Qwen2.5-VL-7B-Instruct {flags}", "1xH100", version)
    model = find_model("Qwen/Qwen2.5-VL-7B-Instruct")
    assert model is not None and model.vision is not None
    assert profiled_items(model.vision, report.settings, version) == items


def test_mllama_items_follow_v0_sequences() -> None:
    """mllama only ran on V0: without --max-num-seqs its 256, not V1's larger defaults."""
    model = find_model("meta-llama/Llama-3.2-11B-Vision-Instruct")
    assert model is not None and model.vision is not None
    newest = _review("vllm serve meta-llama/Llama-3.2-11B-Vision-Instruct", "1xH100", None)
    assert profiled_items(model.vision, newest.settings, None) == 256
    two = _review(
        "vllm serve meta-llama/Llama-3.2-11B-Vision-Instruct --max-num-seqs 8 "
        "--limit-mm-per-prompt image=2",
        "1xH100",
        "0.6.6",
    )
    assert profiled_items(model.vision, two.settings, "0.6.6") == 16


def test_the_qwen3_5_tower_is_read_from_the_catalogs_vision_config() -> None:
    """Qwen3.6-35B-A3B's vision_config (depth 27, hidden 1152, intermediate 4304, patch 16, 2304
    position embeddings): 16,777,216 pixels are 256 x 256 patches of 16 px, 16,384 tokens."""
    moe = find_model("Qwen/Qwen3.6-35B-A3B")
    dense = find_model("Qwen/Qwen3.5-27B")
    wide = find_model("Qwen/Qwen3.5-397B-A17B")
    assert moe is not None and moe.vision is not None
    assert dense is not None and dense.vision is not None
    assert wide is not None and wide.vision is not None
    assert (moe.vision.layers, moe.vision.hidden, moe.vision.patch) == (27, 1152, 16)
    assert not moe.vision.gated_mlp and moe.vision.deepstack == 0
    assert positions_per_item(moe.vision) == 65536
    assert llm_tokens_per_item(moe.vision) == 16384
    # the projector writes each model's own hidden size
    assert (moe.vision.out_hidden, dense.vision.out_hidden, wide.vision.out_hidden) == (
        2048,
        5120,
        4096,
    )
    # 27 blocks, the merger, the patch embedding and the 2304-entry position table, 16-bit
    assert tower_weight_bytes(moe) / GIB == pytest.approx(0.83, abs=0.01)


def test_qwen3_6_35b_nvfp4_on_a_5090_profiles_its_tower() -> None:
    """club-3090#652: NVFP4 Qwen3.6-35B-A3B on one RTX 5090, 0.24.0, two images a prompt: vLLM
    logged 6.01 GiB of KV cache; without the tower's weights and its pass at one 16,384-token
    image the estimate was 2.6 GiB above it."""
    record = _record("club3090-652-qwen36-35b-a3b-nvfp4-5090", "memory")
    est = _review(record["command"], record["gpus"], record["vllm_version"]).estimate
    assert est is not None and est.kv_available_gib_per_gpu is not None
    assert est.encoder_items == 1
    assert est.kv_available_gib_per_gpu == pytest.approx(record["logged"]["kv_cache_gib"], rel=0.1)
    assert "encoder-profile" in est.notes


def test_language_model_only_leaves_the_tower_out() -> None:
    base = "vllm serve Qwen/Qwen3.6-35B-A3B --max-model-len 32768"
    with_tower = _review(base, "1xH100-80GB", "0.24.0").estimate
    without = _review(f"{base} --language-model-only", "1xH100-80GB", "0.24.0").estimate
    assert with_tower is not None and without is not None
    assert with_tower.encoder_items == 1 and not without.encoder_items
    tower = with_tower.weights_gib_per_gpu - without.weights_gib_per_gpu
    assert tower == pytest.approx(0.83, abs=0.01)


def test_qwen_vision_attention_gathers_over_tp_only_before_0_12() -> None:
    """Qwen2.5-VL's vision attention all-gathered q, k, v over the TP ranks until 0.11
    (`all_gather_interleave`); from 0.12 each rank keeps its heads."""
    command = "vllm serve Qwen/Qwen2.5-VL-72B-Instruct --tensor-parallel-size 4"
    old = _review(command, "4xH100-80GB", "0.11.0").estimate
    new = _review(command, "4xH100-80GB", "0.12.0").estimate
    assert old is not None and new is not None
    assert old.encoder_gib_per_gpu is not None and new.encoder_gib_per_gpu is not None
    assert new.encoder_gib_per_gpu < old.encoder_gib_per_gpu
