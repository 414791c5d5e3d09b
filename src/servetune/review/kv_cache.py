"""KV cache bytes: per token and layer, per sequence in whole blocks, and a hybrid model's
per-sequence linear-attention state pooled beside the attention KV."""

from __future__ import annotations

import math
from dataclasses import dataclass

from servetune.review.model import ModelFacts
from servetune.review.settings import DTYPE_BYTES, Settings
from servetune.vllm.flags import version_at_least


def kv_dtype_bytes(settings: Settings) -> int:
    """Bytes per cached value; NVFP4 packs below a byte (`_head_bytes`), counted as 1 here."""
    kv = settings.kv_cache_dtype.lower()
    if kv.startswith(("fp8", "int8", "nvfp4")):
        return 1
    if kv in DTYPE_BYTES:
        return DTYPE_BYTES[kv]
    return DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)


# DeepSeek's MLA by release (vllm/config.py `use_mla`, `get_head_size`): before 0.7.1 vLLM
# caches full K and V for every head, the 192-wide head padded to FlashAttention's 256; 0.7.1
# and 0.7.2 cache the latent only for fp8 and compressed-tensors checkpoints ("MLA is not
# supported with awq quantization. Disabling MLA.") and K and V of head size 192 otherwise;
# from 0.7.3 always the latent (kv_lora_rank + qk_rope_head_dim), replicated on every rank.
_MLA_FROM = "0.7.1"
_MLA_ANY_QUANT_FROM = "0.7.3"
_MLA_QUANT_BEFORE_ANY = ("fp8", "compressed-tensors")
_PRE_MLA_HEAD = 256


def mla_latent_cached(model: ModelFacts, settings: Settings, version: str | None = None) -> bool:
    """Whether vLLM `version` caches an MLA model's latent (else full K and V per head)."""
    if not model.is_mla or version is None or version_at_least(version, _MLA_ANY_QUANT_FROM):
        return model.is_mla
    if not version_at_least(version, _MLA_FROM):
        return False
    quant = settings.quantization or (model.quantization.method if model.quantization else None)
    return quant is None or quant in _MLA_QUANT_BEFORE_ANY


def kv_bytes_per_token_layer(
    model: ModelFacts, settings: Settings, version: str | None = None
) -> int:
    """Bytes one token occupies in one attention layer on one GPU.

    Standard attention: 2 (K and V) x max(1, kv_heads // TP) x head_dim x dtype bytes; KV heads
    are replicated, not split, once TP exceeds them. MLA: one latent of kv_lora_rank +
    qk_rope_head_dim values, replicated on every TP rank (before 0.7.3 not always: see
    `mla_latent_cached`).
    """
    if model.is_encoder:
        return 0  # encoder-only attention keeps no KV cache
    dtype_bytes = kv_dtype_bytes(settings)
    if mla_latent_cached(model, settings, version):
        return ((model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)) * dtype_bytes
    if model.is_mla:
        heads = max(1, (model.num_attention_heads or 1) // settings.tensor_parallel_size)
        qk_head = (model.qk_nope_head_dim or 0) + (model.qk_rope_head_dim or 0)
        head = qk_head if version_at_least(version or "0", _MLA_FROM) else _PRE_MLA_HEAD
        return 2 * heads * head * dtype_bytes
    kv_heads = model.num_kv_heads or 1
    per_rank = max(1, kv_heads // settings.tensor_parallel_size)
    return 2 * per_rank * _head_bytes(model.head_dim or 0, settings, dtype_bytes)


def _head_bytes(head_dim: int, settings: Settings, dtype_bytes: int) -> int:
    """One head's K (or V) of one token. NVFP4 (`--kv-cache-dtype nvfp4`, nvfp4_4over6) packs
    two 4-bit values a byte plus one FP8 scale per 16 values: head_dim / 2 + head_dim / 16
    bytes (vLLM 0.33 `nvfp4_kv_cache_full_dim`), 0.5625 bytes a value."""
    if settings.kv_cache_dtype.lower().startswith("nvfp4"):
        return head_dim // 2 + head_dim // 16
    return head_dim * dtype_bytes


def _layers_per_gpu(count: int, settings: Settings) -> int:
    return math.ceil(count / settings.pipeline_parallel_size)


def kv_layers(model: ModelFacts, settings: Settings) -> int:
    """Attention layers that keep a KV cache on one GPU: the model's (linear-attention layers
    keep none) plus, with `--speculative-config` method `mtp`, the checkpoint's MTP layers,
    which the drafter runs with a KV cache of their own (vLLM V1 gives every attention layer
    in the engine, the drafter's included, its spec)."""
    own = _layers_per_gpu(model.attention_layers, settings)
    drafter = settings.speculative_method or ""
    return own + (model.mtp_layers if "mtp" in drafter else 0)


def kv_bytes_per_sequence(
    model: ModelFacts, settings: Settings, length: int, version: str | None = None
) -> int:
    """KV bytes one sequence of `length` tokens needs on one GPU, in whole blocks.

    Full-attention layers hold every token; sliding-window layers hold at most
    min(window - 1 + max_num_batched_tokens, length) tokens plus one block (vLLM's
    SlidingWindowSpec); a hybrid model's linear-attention layers hold their state
    (`HybridPool`)."""
    pool = hybrid_pool(model, settings, version)
    if pool is not None:
        return pool.bytes_per_sequence(length)
    block = settings.block_size
    per_layer = kv_bytes_per_token_layer(model, settings, version)
    sliding = _layers_per_gpu(model.sliding_layers, settings) if model.sliding_layers else 0
    full = kv_layers(model, settings) - sliding
    full_bytes = full * per_layer * math.ceil(length / block) * block
    if not sliding or model.sliding_window is None:
        return full_bytes
    step = settings.max_num_batched_tokens or length
    held = min(model.sliding_window - 1 + step, length)
    return full_bytes + sliding * per_layer * (math.ceil(held / block) + 1) * block


# --- hybrid models: attention KV beside linear-attention state, in one block pool --------------
# vLLM's hybrid KV cache manager (V1) keeps Gated DeltaNet state (Qwen3-Next, Qwen3.5/3.6/3.8) in
# the same pool as the attention KV: one state per sequence, not per token. To share one page
# size it raises the attention block size until an attention page holds a layer's state
# (`Platform._align_hybrid_block_size`: block = 16 x ceil(state / (16 x bytes per token))) and
# pads the state to that page. Layers are grouped by type into groups of the smaller type's count
# (`_get_kv_cache_groups_uniform_page_size`); the pool is group_size tensors of num_blocks pages
# each. A sequence takes ceil(len / block) blocks in each attention group and, in each state
# group, 1 + speculative tokens blocks (2 + speculative with prefix caching, "align" mode).
_HYBRID_KERNEL_ALIGN = 16  # FlashAttention / FlashInfer kernel block sizes are multiples of 16
_PREFIX_CACHING_HYBRID_FROM = "0.17.0"  # mamba_cache_mode "align" by default with prefix caching
_CONCURRENCY_TOKENS_FROM = "0.21.0"  # "GPU KV cache size" = concurrency x max_model_len
_STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class HybridPool:
    """The page layout of a hybrid model's KV cache pool on one GPU."""

    page_bytes: int  # one block of one layer, attention and state alike
    attention_block: int  # tokens per attention block
    group_size: int  # layers per group = tensors in the pool
    attention_groups: int
    state_groups: int
    state_blocks: int  # blocks one sequence holds in each state group

    def blocks_per_sequence(self, length: int) -> int:
        attention = self.attention_groups * math.ceil(length / self.attention_block)
        return attention + self.state_groups * self.state_blocks

    def bytes_per_sequence(self, length: int) -> int:
        return self.blocks_per_sequence(length) * self.page_bytes * self.group_size

    def capacity(self, kv_bytes: int, length: int, version: str | None) -> tuple[int, float]:
        """(the "GPU KV cache size" vLLM logs, sequences of `length` that fit): from 0.21 the
        tokens are concurrency x max_model_len; before, blocks per group x the block size."""
        blocks = kv_bytes // self.page_bytes // self.group_size
        concurrency = blocks / self.blocks_per_sequence(length)
        if version is None or version_at_least(version, _CONCURRENCY_TOKENS_FROM):
            return int(concurrency * length), concurrency
        groups = self.attention_groups + self.state_groups
        return blocks // groups * self.attention_block, concurrency


def state_bytes(model: ModelFacts, settings: Settings) -> int:
    """One linear-attention layer's state per sequence on one GPU: the conv window
    (conv_dim / TP x (kernel - 1 + speculative tokens), model dtype) and the recurrent state
    (value heads / TP x value dim x key dim, in `mamba_ssm_dtype` when the config names it)
    (`MambaStateShapeCalculator.gated_delta_net_state_shape`)."""
    lin, tp = model.linear, settings.tensor_parallel_size
    if lin is None:
        return 0
    model_bytes = DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    ssm_bytes = _STATE_DTYPE_BYTES.get(lin.ssm_dtype or "", model_bytes)
    window = lin.conv_kernel - 1 + settings.speculative_tokens
    conv = lin.conv_dim // tp * window * model_bytes
    recurrent = lin.value_heads // tp * lin.value_head_dim * lin.key_head_dim * ssm_bytes
    return conv + recurrent


def _prefix_caching(settings: Settings, version: str | None) -> bool:
    if settings.prefix_caching is not None:
        return settings.prefix_caching
    return version is None or version_at_least(version, _PREFIX_CACHING_HYBRID_FROM)


def hybrid_pool(
    model: ModelFacts, settings: Settings, version: str | None = None
) -> HybridPool | None:
    """The pool layout of a hybrid model (None for any other model)."""
    if not model.is_hybrid or model.is_mla:
        return None
    per_token = kv_bytes_per_token_layer(model, settings)
    state = state_bytes(model, settings)
    attention = kv_layers(model, settings)
    linear = _layers_per_gpu(model.linear_layers, settings)
    if not per_token or not state or not attention or not linear:
        return None
    align = _HYBRID_KERNEL_ALIGN
    block = max(settings.block_size, align * math.ceil(state / (align * per_token)))
    smaller, larger = min(attention, linear), max(attention, linear)
    group = larger if larger < smaller * 1.5 else smaller
    extra = 2 if _prefix_caching(settings, version) else 1
    return HybridPool(
        page_bytes=block * per_token,
        attention_block=block,
        group_size=group,
        attention_groups=math.ceil(attention / group),
        state_groups=math.ceil(linear / group),
        state_blocks=extra + settings.speculative_tokens,
    )
