"""Fit records the memory estimate and the rules on it read by mechanism: InternVL's vision tower
and projector as vLLM keeps them per tensor-parallel rank, Red Hat's `-INT4` checkpoints as
compressed-tensors W4A16, and V0's pipeline virtual engines each holding 1/PP of the KV blocks."""

from __future__ import annotations

import pytest

from servetune.review.encoder_profile import tower_rank_extra_bytes, tower_weight_bytes
from servetune.review.model import find_model
from servetune.review.model_names import quantization_in_name
from servetune.review.settings import v0_pipeline_engines
from servetune.review.vision_tower import vision_tower
from servetune.vllm.serve_command import parse_text

from corpus_records import memory_record, review, review_fit

# --- InternVL -----------------------------------------------------------------------------------


def test_internvl3_78b_loads_internvit_6b_and_its_projector() -> None:
    model = find_model("OpenGVLab/InternVL3-78B")
    assert model is not None and model.vision is not None
    tower = model.vision
    assert (tower.hidden, tower.layers, tower.heads, tower.intermediate) == (3200, 45, 25, 12800)
    assert tower.projector_in == 4 * 3200 and tower.out_hidden == 8192
    assert not tower.profiled
    # about 5.5B parameters in the tower and 0.17B in mlp1, kept in 16 bits
    assert tower_weight_bytes(model) / 2 == pytest.approx(5.7e9, rel=0.03)


def test_small_internvl_language_models_get_internvit_300m() -> None:
    model = find_model("OpenGVLab/InternVL2_5-8B")
    assert model is not None and model.vision is not None
    assert (model.vision.hidden, model.vision.layers, model.vision.heads) == (1024, 24, 16)


def test_a_config_s_own_vision_config_wins() -> None:
    config = {
        "model_type": "internvl_chat",
        "downsample_ratio": 0.5,
        "vision_config": {
            "hidden_size": 1024,
            "num_hidden_layers": 24,
            "intermediate_size": 4096,
            "num_attention_heads": 16,
            "patch_size": 14,
            "image_size": 448,
        },
        "llm_config": {"hidden_size": 8192, "num_hidden_layers": 80, "intermediate_size": 29568},
    }
    tower = vision_tower(config, 8192)
    assert tower is not None and tower.hidden == 1024 and tower.merge == 2


@pytest.mark.parametrize(("tp", "attention_whole"), [(4, True), (5, False)])
def test_internvit_attention_is_split_only_where_tp_divides_its_25_heads(
    tp: int, attention_whole: bool
) -> None:
    """intern_vit.py: the MLP is always split, attention only where TP divides the heads; the
    embeddings and mlp1 never are."""
    report = review(
        f"vllm serve OpenGVLab/InternVL3-78B --tensor-parallel-size {tp}",
        f"{tp}xA100-80GB",
        "0.8.4",
    )
    model = report.model
    assert model is not None and model.vision is not None
    extra = tower_rank_extra_bytes(model, report.settings)
    attention = 45 * 4 * 3200 * 3200 * 2 * (tp - 1) / tp
    assert (extra > attention) is attention_whole
    assert extra > 0  # the projector and the embeddings at least


def test_internvl3_78b_on_four_a100_40g_does_not_load() -> None:
    """vllm#16749 (fit): bfloat16 InternVL3-78B at TP 4 on 40 GB cards ran out of memory."""
    report = review_fit("gh16749-internvl3-78b-4xa100-40g")
    assert "weights-dont-fit" in {f.rule for f in report.errors}
    assert report.estimate is not None and report.estimate.weights_gib_per_gpu > 38.5


# --- Red Hat's INT4 names -----------------------------------------------------------------------


def test_an_int4_name_is_a_w4a16_group_of_128() -> None:
    config = quantization_in_name("RedHatAI/Qwen3.8-27B-INT4")
    weights = {"num_bits": 4, "type": "int", "symmetric": True, "group_size": 128}
    assert config == {
        "quant_method": "compressed-tensors",
        "config_groups": {"group_0": {"weights": weights}},
    }


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "gptq"),
        ("Intel/Seed-OSS-36B-Instruct-int4-AutoRound", "auto-round"),
        ("OPEA/Mistral-Small-3.1-24B-Instruct-2503-int4-AutoRound-awq-sym", "awq"),
    ],
)
def test_a_toolchain_that_names_itself_beside_int4_keeps_its_format(name: str, method: str) -> None:
    found = quantization_in_name(name)
    assert found is not None and found["quant_method"] == method


def test_qwen38_27b_int4_on_a_dgx_spark_is_within_ten_percent() -> None:
    record = memory_record("dgxspark-qwen38-27b-int4-mtp-gb10-v0251")
    report = review(record["command"], record["gpus"], record["vllm_version"])
    assert report.estimate is not None and report.estimate.kv_cache_tokens is not None
    assert report.estimate.kv_cache_tokens == pytest.approx(record["logged"]["kv_tokens"], rel=0.1)
    assert report.estimate.weights_gib_per_gpu == pytest.approx(
        record["logged"]["weights_gib"], rel=0.1
    )


# --- V0's pipeline virtual engines --------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "backend", "engines"),
    [
        ("0.7.3", "", 1),  # the check counted every block before 0.8.0
        ("0.8.2", "--distributed-executor-backend ray", 2),  # V1 ran no PP at all
        ("0.8.5", "", 2),  # V1 only on Ray
        ("0.8.5", "--distributed-executor-backend ray", 1),
        ("0.9.0", "", 1),  # V1 on mp too
    ],
)
def test_v0_runs_the_pipeline_by_release_and_backend(
    version: str, backend: str, engines: int
) -> None:
    command = parse_text(
        f"vllm serve Qwen/QwQ-32B --pipeline-parallel-size 2 {backend}", version=version
    )
    assert v0_pipeline_engines(command) == engines


def test_qwq_bnb_pp2_holds_one_engine_s_share_per_sequence() -> None:
    """vllm#14452 (fit, 0.8.5 dev, V0): max_seq_len = block_size x (blocks // PP), 58,384
    tokens logged; the estimate of one engine's share is within 10% of it."""
    report = review_fit("gh14452-2x5090-qwq-bnb-pp2-60000")
    est = report.estimate
    assert report.settings.kv_engines == 2
    assert est is not None and est.kv_cache_tokens and est.max_model_len_that_fits
    assert est.max_model_len_that_fits == pytest.approx(58384, rel=0.1)
    assert est.max_model_len_that_fits < est.kv_cache_tokens / 1.9
