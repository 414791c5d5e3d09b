"""Memory arithmetic: weights, KV cache bytes per token, and how many sequences fit.

Every formula servetune uses for capacity lives here (the later `plan` command reuses them).
Sources: vLLM's KV cache specs and memory profiler (../shared/reference/vllm-rules.md section 5)
and the measured reserves in ../shared/reference/capacity-formulas.md section 2.3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from servetune.review.model import ModelFacts
from servetune.review.settings import DTYPE_BYTES, GIB, Settings

# Bits per stored weight of one quantized linear layer, for group quantization (AWQ/GPTQ):
# b bits per weight, plus a 16-bit scale and a b-bit zero point per group of G weights.
_ONLINE_8BIT = ("fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "mxfp8", "int8")
_MXFP4_BITS = 4.25  # 4-bit values plus one 8-bit shared exponent per 32


@dataclass(frozen=True)
class Estimate:
    """Per-GPU memory picture of one vLLM instance. None marks what cannot be known (for
    example the KV cache without a GPU or `--kv-cache-memory-bytes`)."""

    params: int
    weights_gib_per_gpu: float
    kv_bytes_per_token_per_gpu: int  # one token of context across all attention layers
    kv_bytes_per_seq_per_gpu: int | None  # one sequence of max_model_len tokens
    reserve_gib_per_gpu: float  # activation peak + runtime overhead held back from the KV cache
    budget_gib_per_gpu: float | None  # memory x gpu_memory_utilization
    kv_cache_gib_per_gpu: float | None
    kv_cache_tokens: int | None
    max_concurrent_seqs_at_max_model_len: float | None
    max_model_len_that_fits: int | None  # longest context one sequence could have
    weight_bits: float  # average bits per weight as stored


def _attention_params(m: ModelFacts) -> int:
    hidden, heads = m.hidden_size or 0, m.num_attention_heads or 0
    if m.is_mla:
        rope, nope = m.qk_rope_head_dim or 0, m.qk_nope_head_dim or 0
        v_dim, kv_rank = m.v_head_dim or 0, m.kv_lora_rank or 0
        q_dim = heads * (nope + rope)
        q = hidden * m.q_lora_rank + m.q_lora_rank * q_dim if m.q_lora_rank else hidden * q_dim
        kv = hidden * (kv_rank + rope) + kv_rank * heads * (nope + v_dim)
        return q + kv + heads * v_dim * hidden
    head_dim, kv_heads = m.head_dim or 0, m.num_kv_heads or heads
    return hidden * head_dim * (heads + 2 * kv_heads) + heads * head_dim * hidden


def _mlp_params(m: ModelFacts) -> tuple[int, int]:
    """(dense MLP params, expert MLP params) over all layers; gated MLPs have 3 matrices."""
    hidden, layers = m.hidden_size or 0, m.num_layers or 0
    inter = m.intermediate_size or 0
    if not m.is_moe:
        return layers * 3 * hidden * inter, 0
    expert_inter = m.moe_intermediate_size or inter
    moe_layers = layers - m.num_dense_layers
    dense = m.num_dense_layers * 3 * hidden * (m.dense_intermediate_size or inter)
    experts = moe_layers * (m.num_experts or 0) * 3 * hidden * expert_inter
    shared = moe_layers * (
        m.num_shared_experts * 3 * hidden * expert_inter + hidden * (m.num_experts or 0)
    )
    return dense + shared, experts


def expert_params(model: ModelFacts) -> int:
    """Parameters in routed experts (all MoE layers); 0 for a dense model. `plan` reads only
    the experts a step's tokens are routed to."""
    return _mlp_params(model)[1]


def _quant_bits(method: str, bits: int | None, group: int | None) -> float:
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin", "auto_awq", "auto_gptq"):
        b = bits or 4
        return b + (16 + b) / group if group and group > 0 else float(b)
    if method == "mxfp4":
        return _MXFP4_BITS
    if method in _ONLINE_8BIT or method.startswith("fp8"):
        return 8.0
    return float(bits) if bits else 16.0


def weight_bytes(model: ModelFacts, settings: Settings) -> tuple[int, int]:
    """(total weight bytes as stored, parameter count). Embeddings and lm_head stay in the
    compute dtype for every quantization method vLLM ships; MXFP4 (gpt-oss) quantizes only the
    experts."""
    dense_bits = 8.0 * DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    embed = (model.vocab_size or 0) * (model.hidden_size or 0)
    vocab_params = embed if model.tie_word_embeddings else 2 * embed
    attention = (model.num_layers or 0) * _attention_params(model)
    mlp, experts = _mlp_params(model)
    params = vocab_params + attention + mlp + experts
    quant = model.quantization
    if quant is not None:
        bits = _quant_bits(quant.method, quant.bits, quant.group_size)
        linear_bits = dense_bits if quant.method == "mxfp4" else bits
        total_bits = vocab_params * dense_bits + (attention + mlp) * linear_bits + experts * bits
    elif settings.quantization in _ONLINE_8BIT:
        total_bits = vocab_params * dense_bits + (attention + mlp + experts) * 8.0
    else:
        total_bits = params * dense_bits
    return int(total_bits / 8), params


def kv_dtype_bytes(settings: Settings) -> int:
    kv = settings.kv_cache_dtype.lower()
    if kv.startswith(("fp8", "int8")):
        return 1
    if kv in DTYPE_BYTES:
        return DTYPE_BYTES[kv]
    return DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)


def kv_bytes_per_token_layer(model: ModelFacts, settings: Settings) -> int:
    """Bytes one token occupies in one attention layer on one GPU.

    Standard attention: 2 (K and V) x max(1, kv_heads // TP) x head_dim x dtype bytes; KV heads
    are replicated, not split, once TP exceeds them. MLA: one latent of kv_lora_rank +
    qk_rope_head_dim values, replicated on every TP rank.
    """
    dtype_bytes = kv_dtype_bytes(settings)
    if model.is_mla:
        return ((model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)) * dtype_bytes
    kv_heads = model.num_kv_heads or 1
    per_rank = max(1, kv_heads // settings.tensor_parallel_size)
    return 2 * per_rank * (model.head_dim or 0) * dtype_bytes


def _layers_per_gpu(count: int, settings: Settings) -> int:
    return math.ceil(count / settings.pipeline_parallel_size)


def kv_bytes_per_sequence(model: ModelFacts, settings: Settings, length: int) -> int:
    """KV bytes one sequence of `length` tokens needs on one GPU, in whole blocks.

    Full-attention layers hold every token; sliding-window layers hold at most
    min(window - 1 + max_num_batched_tokens, length) tokens plus one block (vLLM's
    SlidingWindowSpec)."""
    block = settings.block_size
    per_layer = kv_bytes_per_token_layer(model, settings)
    layers = model.num_layers or 0
    full = _layers_per_gpu(layers - model.sliding_layers, settings)
    sliding = _layers_per_gpu(model.sliding_layers, settings) if model.sliding_layers else 0
    full_bytes = full * per_layer * math.ceil(length / block) * block
    if not sliding or model.sliding_window is None:
        return full_bytes
    step = settings.max_num_batched_tokens or length
    held = min(model.sliding_window - 1 + step, length)
    return full_bytes + sliding * per_layer * (math.ceil(held / block) + 1) * block


def reserve_gib(model: ModelFacts, settings: Settings) -> float:
    """Memory vLLM's profiler keeps out of the KV cache besides the weights, per GPU.

    activation peak = 2.0 GiB + 3.5 GiB x (max_num_batched_tokens / 8192) for dense models,
    2.0 + 6.0 x (...) for MoE (llm-d's H100 measurements at 8192 tokens: 4.8-5.6 GiB dense,
    7.4 GiB gpt-oss-20b; the profiling pass runs at the step token budget, so it scales with it);
    plus non-torch memory 0.15 GiB (TP = 1) or 0.6 GiB (TP > 1, NCCL buffers).
    """
    tokens = settings.max_num_batched_tokens or 8192
    per_step = (6.0 if model.is_moe else 3.5) * tokens / 8192
    non_torch = 0.15 if settings.world_size == 1 else 0.6
    return 2.0 + per_step + non_torch


def _longest_fitting(model: ModelFacts, settings: Settings, budget: int) -> int:
    """The longest sequence whose KV fits in `budget` bytes (binary search over lengths)."""
    low, high = 0, max(settings.max_model_len or 0, 1) * 4
    while low < high:
        mid = (low + high + 1) // 2
        if kv_bytes_per_sequence(model, settings, mid) <= budget:
            low = mid
        else:
            high = mid - 1
    block = settings.block_size
    return low // block * block if low >= block else low


def estimate(model: ModelFacts, settings: Settings, memory_gib: float | None) -> Estimate | None:
    """The per-GPU memory estimate, or None when the model's shape is not known well enough."""
    if not (model.hidden_size and model.num_layers and model.head_dim):
        return None
    total_bytes, params = weight_bytes(model, settings)
    shards = settings.tensor_parallel_size * settings.pipeline_parallel_size
    weights = total_bytes / shards / GIB
    per_token = _layers_per_gpu(model.num_layers, settings) * kv_bytes_per_token_layer(
        model, settings
    )
    reserve = reserve_gib(model, settings)
    length = settings.max_model_len
    per_seq = kv_bytes_per_sequence(model, settings, length) if length else None
    budget = memory_gib * settings.gpu_memory_utilization if memory_gib else None
    if settings.kv_cache_memory_bytes is not None:
        kv_bytes: float | None = float(settings.kv_cache_memory_bytes)
    elif budget is not None:
        kv_bytes = max(0.0, (budget - weights - reserve) * GIB)
    else:
        kv_bytes = None
    tokens = concurrency = fits = None
    if kv_bytes is not None and per_token:
        block = settings.block_size
        if per_seq and model.sliding_layers and length:
            concurrency = kv_bytes / per_seq
            tokens = int(concurrency * length)
        else:
            tokens = int(kv_bytes // (per_token * block)) * block
            concurrency = tokens / length if length else None
        # vLLM's block pool holds one block back (the null block); its admission check plans
        # against the rest (vllm/v1/core/kv_cache_utils.py, 0.32: "Reserve the null block").
        usable = int(kv_bytes) - per_token * block
        fits = _longest_fitting(model, settings, usable) if length else None
    return Estimate(
        params=params,
        weights_gib_per_gpu=weights,
        kv_bytes_per_token_per_gpu=per_token,
        kv_bytes_per_seq_per_gpu=per_seq,
        reserve_gib_per_gpu=reserve,
        budget_gib_per_gpu=budget,
        kv_cache_gib_per_gpu=None if kv_bytes is None else kv_bytes / GIB,
        kv_cache_tokens=tokens,
        max_concurrent_seqs_at_max_model_len=concurrency,
        max_model_len_that_fits=fits,
        weight_bits=8 * total_bytes / params if params else 0.0,
    )
