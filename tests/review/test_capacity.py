"""Capacity estimates checked against arithmetic done by hand (shown in the comments)."""

from __future__ import annotations

import pytest

from servetune.review.capacity import estimate
from servetune.review.hardware import parse_gpus
from servetune.review.kv_cache import kv_bytes_per_sequence
from servetune.review.model import find_model
from servetune.review.settings import GIB, Settings, resolve
from servetune.vllm.serve_command import parse_text


def setup(command: str, gpus: str | None, version: str = "0.33.0") -> tuple[Settings, float | None]:
    cmd = parse_text(command, version=version)
    model = find_model(cmd.model)
    machine = parse_gpus(gpus) if gpus else None
    memory = machine.spec.memory_gib if machine and machine.spec else None
    return resolve(cmd, model, machine), memory


def test_llama_3_1_8b_on_one_h100() -> None:
    settings, memory = setup(
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192", "1xH100"
    )
    model = find_model("meta-llama/Llama-3.1-8B-Instruct")
    assert model is not None
    est = estimate(model, settings, memory)
    assert est is not None
    # Parameters: embed 128256*4096 = 525,336,576, untied lm_head the same;
    # per layer attention 4096*128*(32+2*8) + 32*128*4096 = 41,943,040, MLP 3*4096*14336 =
    # 176,160,768; 32 layers -> 6,979,321,856; plus 1,050,673,152 -> 8,029,995,008 (8.03B).
    assert est.params == 8_029_995_008
    # bf16: 2 bytes each = 16,059,990,016 B = 14.957 GiB.
    assert est.weights_gib_per_gpu == pytest.approx(16_059_990_016 / GIB)
    # KV per token: 32 layers * 2 (K,V) * 8 KV heads * 128 dims * 2 bytes = 131,072 B.
    assert est.kv_bytes_per_token_per_gpu == 131_072
    # Budget: CUDA reports 80 * (1 - 0.0047) - 0.42 = 79.204 GiB of an 80 GB H100, x 0.92.
    # Reserve: the sampler's profile at 1024 sequences (H100 default) dominates the forward
    # pass at 8192 tokens: 9.6 * 1024 * 128256 * 4 B = 4.697 GiB > 8192 * 3.8 * 14336 * 2 B
    # = 0.831 GiB; plus 0.15 GiB non-torch; no CUDA graph term without a release.
    sampler = 9.6 * 1024 * 128256 * 4 / GIB
    kv_gib = (80 * (1 - 0.0047) - 0.42) * 0.92 - 16_059_990_016 / GIB - sampler - 0.15
    assert est.reserve_gib_per_gpu == pytest.approx(sampler + 0.15)
    assert est.kv_cache_gib_per_gpu == pytest.approx(kv_gib)
    # 0.33: the sampler warm-up holds 3.5 logits-sized copies (FlashInfer, then the Triton
    # native path) plus Triton's cached buffer of 132 rows; CUDA graphs 0.1 + 0.4 GiB at the
    # largest capture size (min(2 x 1024, 512) = 512).
    logits = 1024 * 128256 * 4 / GIB
    sampler_033 = 3.5 * logits + 132 / 1024 * logits
    with_graphs = estimate(model, settings, memory, version="0.33.0")
    assert with_graphs is not None and with_graphs.kv_cache_gib_per_gpu is not None
    assert with_graphs.reserve_gib_per_gpu == pytest.approx(sampler_033 + 0.15 + 0.5)
    assert with_graphs.kv_cache_gib_per_gpu == pytest.approx(kv_gib + sampler - sampler_033 - 0.5)
    # Tokens: whole 16-token blocks of 131,072 B each token.
    tokens = int(kv_gib * GIB // (131_072 * 16)) * 16
    assert est.kv_cache_tokens == tokens
    assert est.max_concurrent_seqs_at_max_model_len == pytest.approx(tokens / 8192)


def test_qwen2_5_7b_awq_weights_keep_embeddings_in_16_bit() -> None:
    settings, memory = setup("vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --max-model-len 4096", "1xL4")
    model = find_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert model is not None
    est = estimate(model, settings, memory)
    assert est is not None
    # embed + lm_head: 2 * 152064 * 3584 = 1,089,994,752 params at 16 bits.
    # linear per layer: 3584*128*(28+2*4) + 28*128*3584 = 29,360,128 attention
    # + 3*3584*18944 = 203,685,888 MLP = 233,046,016; 28 layers = 6,525,288,448 params
    # at 4 + (16 + 4) / 128 = 4.15625 bits.
    expected_bits = 1_089_994_752 * 16 + 6_525_288_448 * 4.15625
    assert est.weights_gib_per_gpu == pytest.approx(int(expected_bits / 8) / GIB)
    # KV per token: 28 layers * 2 * 4 KV heads * 128 * 2 bytes (fp16) = 57,344 B.
    assert est.kv_bytes_per_token_per_gpu == 57_344


def test_deepseek_v3_mla_kv_is_one_latent_replicated_on_every_rank() -> None:
    settings, memory = setup(
        "vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --max-model-len 32768", "8xH200"
    )
    model = find_model("deepseek-ai/DeepSeek-V3")
    assert model is not None and model.is_mla
    est = estimate(model, settings, memory)
    assert est is not None
    # MLA: (kv_lora_rank 512 + qk_rope_head_dim 64) * 2 bytes * 61 layers = 70,272 B per token,
    # not divided by TP (vLLM replicates the latent on every rank).
    assert est.kv_bytes_per_token_per_gpu == 70_272
    # 671B parameters is the published size.
    assert est.params == pytest.approx(671e9, rel=0.01)


def test_kv_heads_are_replicated_when_tp_exceeds_them() -> None:
    # Llama-3.1-70B: 80 layers, 8 KV heads, 128 dims. At TP 8: 80*2*1*128*2 = 40,960 B per GPU;
    # at TP 16 still 40,960 (one KV head per GPU, replicated).
    model = find_model("meta-llama/Llama-3.1-70B-Instruct")
    assert model is not None
    for tp in (8, 16):
        settings, memory = setup(
            f"vllm serve meta-llama/Llama-3.1-70B-Instruct -tp {tp}", f"{tp}xH100"
        )
        est = estimate(model, settings, memory)
        assert est is not None
        assert est.kv_bytes_per_token_per_gpu == 40_960


def test_sliding_window_layers_hold_at_most_the_window() -> None:
    # Gemma-2-9B: 42 layers, 21 of them sliding (window 4096), 8 KV heads * 256 dims * 2 * 2 B
    # = 8,192 B per token per layer. One 8192-token sequence with 2048 batched tokens:
    # full layers 21 * 8192 B * 8192 tokens; sliding 21 * 8192 B * (ceil(min(4095+2048, 8192)/16)
    # + 1) * 16 = 21 * 8192 * 6160.
    settings, _ = setup("vllm serve google/gemma-2-9b-it --max-num-batched-tokens 2048", None)
    model = find_model("google/gemma-2-9b-it")
    assert model is not None
    expected = 21 * 8192 * 8192 + 21 * 8192 * 6160
    assert kv_bytes_per_sequence(model, settings, 8192) == expected


def test_fp8_kv_cache_halves_the_bytes() -> None:
    model = find_model("meta-llama/Llama-3.1-8B-Instruct")
    assert model is not None
    settings, memory = setup(
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8", "1xH100"
    )
    est = estimate(model, settings, memory)
    assert est is not None
    assert est.kv_bytes_per_token_per_gpu == 65_536


def test_kv_cache_memory_bytes_sets_the_budget_without_a_gpu() -> None:
    model = find_model("Qwen/Qwen2.5-0.5B-Instruct")
    assert model is not None
    settings, memory = setup(
        "vllm serve Qwen/Qwen2.5-0.5B-Instruct --kv-cache-memory-bytes 1G --max-model-len 4096",
        None,
    )
    est = estimate(model, settings, memory)
    assert est is not None
    # 24 layers * 2 * 2 KV heads * 64 dims * 2 bytes = 12,288 B per token; 1G = 1,073,741,824 B
    # -> 87,381 tokens, in whole 16-token blocks: 87,376.
    assert est.kv_bytes_per_token_per_gpu == 12_288
    assert est.kv_cache_tokens == 87_376
    assert est.budget_gib_per_gpu is None


def test_online_fp8_halves_linear_weights() -> None:
    model = find_model("meta-llama/Llama-3.1-8B-Instruct")
    assert model is not None
    plain, memory = setup("vllm serve meta-llama/Llama-3.1-8B-Instruct", "1xH100")
    fp8, _ = setup("vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization fp8", "1xH100")
    a, b = estimate(model, plain, memory), estimate(model, fp8, memory)
    assert a is not None and b is not None
    # Linear layers (6,979,321,856 params) go from 2 bytes to 1; embeddings stay at 2.
    assert (a.weights_gib_per_gpu - b.weights_gib_per_gpu) * GIB == pytest.approx(6_979_321_856)


def test_fp4_names_announce_their_checkpoint_format() -> None:
    from servetune.review.model_names import quantization_in_name

    nvfp4 = quantization_in_name("NVFP4/Qwen3-30B-A3B-Instruct-2507-FP4")
    assert nvfp4 == {"quant_method": "modelopt", "quant_algo": "NVFP4"}
    assert quantization_in_name("amd/Llama-3.1-405B-Instruct-MXFP4-Preview") == {
        "quant_method": "mxfp4"
    }


def test_a_dense_mxfp4_checkpoint_is_four_bit_throughout() -> None:
    """AMD's Llama-3.1-405B MXFP4 on one 288 GB MI355X ran (vllm-project/recipes, corpus record
    recipes-llama31-405b-mxfp4-mi355, fit): every linear layer is MXFP4, not only experts."""
    from servetune.review.check import CheckOptions, check_text

    report = check_text(
        "vllm serve amd/Llama-3.1-405B-Instruct-MXFP4-Preview --max-model-len 16384",
        CheckOptions(gpus="1xMI355X", vllm_version="0.11.0", detect_hardware=False),
    )
    assert report.estimate is not None
    assert 200 < report.estimate.weights_gib_per_gpu < 240  # 405B x ~4.3 bits + bf16 embeddings
    assert "weights-dont-fit" not in {f.rule for f in report.findings}
