"""Nemotron-H (Mamba2 beside attention, `hybrid_override_pattern`) as vLLM's nemotron_h.py
builds it: one block per pattern character (M Mamba2, * attention, - MLP, E experts), each
Mamba2 layer's conv window and SSM state held once per sequence in the hybrid pool."""

from __future__ import annotations

import pytest

from servetune.review import kv_cache, model, weights
from servetune.review.check import CheckOptions, check_text
from servetune.review.settings import Settings

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def _nano() -> model.ModelFacts:
    facts = model.find_model(NANO)
    assert facts is not None
    return facts


def test_the_pattern_sets_the_layers() -> None:
    nano = _nano()
    # 27 Mamba2, 4 attention and 25 MLP layers: only the four attention layers cache per token.
    assert (nano.num_layers, nano.linear_layers, nano.attention_layers) == (56, 27, 4)
    assert (nano.mixer_free_layers, nano.ffn_layers, nano.gated_mlp) == (25, 25, False)
    assert nano.is_hybrid and nano.linear is not None and nano.linear.kind == "mamba2"
    # conv channels: heads x head_dim (10,240) + 2 x 8 groups x 128 state = 12,288
    assert nano.linear.conv_dim == 12288


def test_layers_block_type_spells_the_same_pattern() -> None:
    # Newer Nemotron-H configs list the blocks by name (transformers' NemotronHConfig).
    config = {
        "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
        "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "layers_block_type": ["mamba", "moe", "attention", "moe"], "mamba_num_heads": 8,
        "mamba_head_dim": 16, "n_groups": 4, "ssm_state_size": 32, "conv_kernel": 4,
        "n_routed_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 48,
        "vocab_size": 1000,
    }  # fmt: skip
    facts = model.model_facts(config, "local/nemotron", "local")
    assert (facts.num_layers, facts.linear_layers, facts.attention_layers) == (4, 1, 1)
    assert (facts.ffn_layers, facts.num_dense_layers, facts.num_experts) == (2, 0, 16)


def test_parameters_add_up_to_the_published_count() -> None:
    # Nemotron-Nano-9B-v2: 8.89B parameters (embeddings and head untied, relu2 MLPs of two
    # matrices, Mamba2 in_proj to z, x, B, C and one dt per head).
    _, params = weights.weight_bytes(_nano(), _settings())
    assert params == pytest.approx(8.89e9, rel=0.01)


def _settings(extra: str = "", version: str = "0.33.0", gpus: str = "1xH100") -> Settings:
    report = check_text(
        f"vllm serve {NANO} {extra}",
        CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False),
    )
    assert report.settings is not None
    return report.settings


@pytest.mark.parametrize(
    ("version", "extra", "ssm_bytes"),
    [
        ("0.33.0", "", 4),  # DEFAULT_MAMBA_SSM_CACHE_DTYPE float32, 0.20 onwards
        ("0.19.0", "", 2),  # float16 from 0.13 to 0.19
        ("0.12.0", "", 2),  # the model's bfloat16 before 0.13
        ("0.19.0", "--mamba-ssm-cache-dtype float32", 4),
    ],
)
def test_state_per_sequence_by_release(version: str, extra: str, ssm_bytes: int) -> None:
    settings = _settings(extra, version)
    conv = 12288 * 3 * 2  # (kernel 4 - 1) steps of the conv channels, bfloat16
    ssm = 128 * 80 * 128 * ssm_bytes  # heads x head_dim x state
    assert kv_cache.state_bytes(_nano(), settings, version) == conv + ssm


def test_groups_replicate_where_tp_does_not_divide_them() -> None:
    # At TP 16, 8 groups become 16 so that each rank holds a whole one (extra_groups_for_head_
    # shards): conv channels 10,240 + 2 x 16 x 128, split 16 ways.
    settings = _settings("--tensor-parallel-size 16", gpus="16xH100")
    conv = (10240 + 2 * 16 * 128) // 16 * 3 * 2
    ssm = 128 // 16 * 80 * 128 * 4
    assert kv_cache.state_bytes(_nano(), settings, "0.33.0") == conv + ssm


def test_pool_groups_four_attention_layers_beside_the_mamba_layers() -> None:
    settings = _settings()
    pool = kv_cache.hybrid_pool(_nano(), settings, "0.33.0")
    assert pool is not None
    # group size 4 (the attention layers): 1 attention group, ceil(27 / 4) = 7 state groups
    assert (pool.group_size, pool.attention_groups, pool.state_groups) == (4, 1, 7)
    # the attention block grows until one page holds a layer's state (16-token multiples)
    per_token = 2 * 8 * 128 * 2
    state = kv_cache.state_bytes(_nano(), settings, "0.33.0")
    assert pool.page_bytes >= state and pool.page_bytes == pool.attention_block * per_token
