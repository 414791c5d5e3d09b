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
# 0.7.2 and 0.7.3 (V0 vllm/worker/cache_engine.py, VLLM_CUDA_MEM_ALIGN_KV_CACHE on by default)
# pad each cached latent to a multiple of 256 bytes of the model dtype on CUDA (`_align_cache`,
# `align_to_256bytes`): DeepSeek's 576 values take 640. DeepSeek-R1 at TP 16 on 0.7.3: 24.10 GiB
# held 20,712 blocks of 16 (vllm#16766), 1,280 bytes a token and layer. Gone from 0.8.0.
_MLA_ALIGNED = ("0.7.2", "0.8.0")
_MLA_ALIGN_BYTES = 256


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
    compressed = compressed_pool(model, settings)
    if compressed is not None:  # DeepSeek-V4: one block's bytes over its tokens, all layers
        return compressed.block_bytes // compressed.block // max(1, len(model.compress_ratios))
    dtype_bytes = kv_dtype_bytes(settings)
    if mla_latent_cached(model, settings, version):
        return _latent_values(model, settings, version) * dtype_bytes
    if model.is_mla:
        heads = max(1, (model.num_attention_heads or 1) // settings.tensor_parallel_size)
        qk_head = (model.qk_nope_head_dim or 0) + (model.qk_rope_head_dim or 0)
        head = qk_head if version_at_least(version or "0", _MLA_FROM) else _PRE_MLA_HEAD
        return 2 * heads * head * dtype_bytes
    kv_heads = model.num_kv_heads or 1
    per_rank = max(1, kv_heads // settings.tensor_parallel_size)
    return 2 * per_rank * _head_bytes(model.head_dim or 0, settings, dtype_bytes)


def _latent_values(model: ModelFacts, settings: Settings, version: str | None) -> int:
    """Values one token's MLA latent takes in the cache: kv_lora_rank + qk_rope_head_dim, padded
    to 256 bytes of the model dtype in 0.7.2 and 0.7.3 (`_MLA_ALIGNED`; CUDA's layout, which
    the estimate takes for every platform)."""
    values = (model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)
    since, until = _MLA_ALIGNED
    if version is None or not version_at_least(version, since) or version_at_least(version, until):
        return values
    per_line = _MLA_ALIGN_BYTES // DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    return -(-values // per_line) * per_line


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
    compressed = compressed_pool(model, settings)
    if compressed is not None:
        return compressed.bytes_per_sequence(length)
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


def sliding_capacity(
    model: ModelFacts, settings: Settings, kv_bytes: float, length: int, version: str | None
) -> tuple[int, float]:
    """(the "GPU KV cache size" vLLM logs, sequences of `length` that fit) for a model with
    sliding-window layers. The hybrid manager groups layers by type into groups of the smaller
    type's count, one page per group in each of group_size tensors
    (`_get_kv_cache_config_uniform_page_size`); before 0.21 it logs num_blocks // groups x the
    block size, as if every layer held every token (gpt-oss at TP 4, 0.10.1.1: 45.32 GiB, 2.64M
    tokens), and from 0.21 concurrency x max_model_len, the window's saving counted."""
    concurrency = kv_bytes / kv_bytes_per_sequence(model, settings, length, version)
    if version is None or version_at_least(version, _CONCURRENCY_TOKENS_FROM):
        return int(concurrency * length), concurrency
    sliding = _layers_per_gpu(model.sliding_layers, settings)
    full = kv_layers(model, settings) - sliding
    group = min(full, sliding) or max(full, sliding, 1)
    groups = math.ceil(full / group) + math.ceil(sliding / group)
    block = settings.block_size
    page = block * kv_bytes_per_token_layer(model, settings, version)
    blocks = int(kv_bytes) // (page * group) if page else 0
    return blocks // groups * block, concurrency


# --- hybrid models: attention KV beside linear-attention state, in one block pool --------------
# vLLM's hybrid KV cache manager (V1) keeps Gated DeltaNet state (Qwen3-Next, Qwen3.5/3.6/3.8) in
# the same pool as the attention KV: one state per sequence, not per token. To share one page
# size it raises the attention block size until an attention page holds a layer's state
# (`Platform._align_hybrid_block_size`: block = 16 x ceil(state / (16 x bytes per token))) and
# pads the state to that page. Layers are grouped by type into groups of the smaller type's count
# (`_get_kv_cache_groups_uniform_page_size`); the pool is group_size tensors of num_blocks pages
# each. A sequence takes ceil(len / block) blocks in each attention group and, in each state
# group, 1 + speculative tokens blocks (2 + speculative with prefix caching, "align" mode).
# An MLA model's attention layers (Kimi-Linear) are aligned to 64 instead: the MLA backends'
# kernel block (128 with CUTLASS_MLA when the user picks it), and their page is the latent's.
# Before 0.17 vLLM turns prefix caching off for a hybrid model that does not support it for its
# Mamba layers ("Hybrid or mamba-based model detected without support for prefix caching:
# disabling."), as no Gated DeltaNet or KDA model does; from 0.17 "align" mode serves them all.
_HYBRID_KERNEL_ALIGN = 16  # FlashAttention / FlashInfer kernel block sizes are multiples of 16
_HYBRID_MLA_ALIGN = 64
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


# Nemotron-H's recurrent state dtype when neither `--mamba-ssm-cache-dtype` nor the config says
# (vllm/model_executor/models/config.py `NemotronHForCausalLMConfig`): the model's before 0.13,
# float16 from 0.13, float32 from 0.20 (`DEFAULT_MAMBA_SSM_CACHE_DTYPE`).
_NEMOTRON_SSM_DTYPES = (("0.20.0", "float32"), ("0.13.0", "float16"))


def _ssm_dtype(model: ModelFacts, settings: Settings, version: str | None) -> str | None:
    """The recurrent state's dtype: the flag, else the config's, else Nemotron-H's release
    default; None: the model's dtype."""
    lin = model.linear
    if settings.mamba_ssm_cache_dtype != "auto":
        return settings.mamba_ssm_cache_dtype
    if lin is None or lin.ssm_dtype is not None or model.model_type != "nemotron_h":
        return None if lin is None else lin.ssm_dtype
    for since, dtype in _NEMOTRON_SSM_DTYPES:
        if version is None or version_at_least(version, since):
            return dtype
    return None


def _conv_dim(model: ModelFacts, tp: int) -> int:
    """The conv window's channels on one GPU. Mamba2 replicates B and C groups so that every
    rank holds whole groups: n_groups becomes TP where TP does not divide it
    (`MambaStateShapeCalculator.extra_groups_for_head_shards`)."""
    lin = model.linear
    if lin is None:
        return 0
    if lin.kind != "mamba2" or lin.key_heads % tp == 0:
        return lin.conv_dim // tp
    return (lin.value_heads * lin.value_head_dim + 2 * tp * lin.key_head_dim) // tp


def state_bytes(model: ModelFacts, settings: Settings, version: str | None = None) -> int:
    """One linear-attention layer's state per sequence on one GPU: the conv window
    (conv_dim / TP x (kernel - 1 + speculative tokens), model dtype) and the recurrent state
    (value heads / TP x value dim x key dim, in `mamba_ssm_dtype` when the config names it)
    (`MambaStateShapeCalculator.gated_delta_net_state_shape`; for Mamba2, `mamba2_state_shape`:
    heads / TP x head_dim x ssm_state_size, in `_ssm_dtype`)."""
    lin, tp = model.linear, settings.tensor_parallel_size
    if lin is None:
        return 0
    model_bytes = DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    ssm_bytes = _STATE_DTYPE_BYTES.get(_ssm_dtype(model, settings, version) or "", model_bytes)
    window = lin.conv_kernel - 1 + settings.speculative_tokens
    conv = _conv_dim(model, tp) * window * model_bytes
    recurrent = lin.value_heads // tp * lin.value_head_dim * lin.key_head_dim * ssm_bytes
    return conv + recurrent


def _prefix_caching(settings: Settings, version: str | None) -> bool:
    if version is not None and not version_at_least(version, _PREFIX_CACHING_HYBRID_FROM):
        return False
    return settings.prefix_caching is not False


def hybrid_pool(
    model: ModelFacts, settings: Settings, version: str | None = None
) -> HybridPool | None:
    """The pool layout of a hybrid model (None for any other model)."""
    if not model.is_hybrid:
        return None
    per_token = kv_bytes_per_token_layer(model, settings)
    state = state_bytes(model, settings, version)
    attention = kv_layers(model, settings)
    linear = _layers_per_gpu(model.linear_layers, settings)
    if not per_token or not state or not attention or not linear:
        return None
    align = _HYBRID_MLA_ALIGN if mla_latent_cached(model, settings) else _HYBRID_KERNEL_ALIGN
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


# --- DeepSeek-V4: compressed KV beside window caches, packed in one block pool -----------------
# vLLM's deepseek_v4 (0.20+, vllm/models/deepseek_v4): every layer keeps its last
# `sliding_window` tokens (DeepseekV4SWACache, blocks of 64 tokens); a layer with compress
# ratio r > 1 also keeps one entry per r tokens of the whole sequence (MLAAttentionSpec,
# block_size / r entries a block) and a compressor state over the last r x coff tokens (float32,
# blocks of 4 tokens at r 4, 8 at r 128); a ratio-4 layer also an indexer key per 4 tokens
# (index_head_dim fp8 + a float32 scale per 128). fp8 entries are DeepSeek's fp8_ds_mla (448 B
# NoPE, 128 B RoPE, 8 B scales = 584 B), pages aligned to 576 B (512 otherwise). The pool packs
# one page per layer slot into each block: `tuples` slots (the most layers of one ratio) of the
# C4 main page, into which the window and state pages are padded, and one C4 indexer and C128
# page per layer of that ratio
# (`_get_kv_cache_groups_uniform_groups`, `_get_kv_cache_config_packed`). A sequence holds
# ceil(len / block) blocks of compressed KV and, in each window or state group, the blocks of
# min(window - 1 + max_num_batched_tokens, len) tokens plus one (`SlidingWindowSpec`).
_DSV4_FP8_ENTRY = 584
_DSV4_FP8_ALIGN, _DSV4_ALIGN = 576, 512
_DSV4_SWA_BLOCK = 64
_DSV4_STATE_BLOCKS = {4: 4, 128: 8}  # compressor state block size by ratio
_DSV4_INDEX_SCALE_BLOCK = 128


@dataclass(frozen=True)
class CompressedPool:
    """DeepSeek-V4's packed KV pool on one GPU."""

    block: int  # tokens per block of the compressed (full) group
    block_bytes: int  # one block across every layer slot
    window_groups: tuple[tuple[int, int, int], ...]  # (block tokens, window, groups)
    step: int  # max_num_batched_tokens

    def blocks_per_sequence(self, length: int) -> int:
        blocks = math.ceil(length / self.block)
        for tokens, window, groups in self.window_groups:
            held = min(window - 1 + self.step, length)
            blocks += groups * (math.ceil(held / tokens) + 1)
        return blocks

    def bytes_per_sequence(self, length: int) -> int:
        return self.blocks_per_sequence(length) * self.block_bytes

    def capacity(self, kv_bytes: int, length: int) -> tuple[int, float]:
        """("GPU KV cache size": concurrency x max_model_len, sequences of `length`)."""
        concurrency = kv_bytes // self.block_bytes / self.blocks_per_sequence(length)
        return int(concurrency * length), concurrency


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def compressed_pool(model: ModelFacts, settings: Settings) -> CompressedPool | None:
    """The pool layout of a DeepSeek-V4 model (None for any other model)."""
    ratios = model.compress_ratios
    c4, c128 = ratios.count(4), ratios.count(128)
    tuples = max(c4, c128)
    if not ratios or not tuples:
        return None
    fp8 = settings.kv_cache_dtype.lower().startswith("fp8")
    dim = model.head_dim or 0
    entry = _DSV4_FP8_ENTRY if fp8 else dim * 2
    align = _DSV4_FP8_ALIGN if fp8 else _DSV4_ALIGN
    block = settings.block_size
    index_dim = model.index_head_dim or 0
    index_entry = index_dim + index_dim // _DSV4_INDEX_SCALE_BLOCK * 4
    # Slots by page: the C4 main page's take the window and state pages padded up to it.
    block_bytes = tuples * _round_up(block // 4 * entry, align)
    block_bytes += c4 * _round_up(block // 4 * index_entry, align)
    block_bytes += c128 * _round_up(max(1, block // 128) * entry, align)
    window = model.sliding_window or 0
    groups = [(_DSV4_SWA_BLOCK, window, math.ceil(len(ratios) / tuples))]
    for ratio, count in ((4, c4), (128, c128)):
        if count:
            coff = 2 if ratio == 4 else 1
            groups.append((_DSV4_STATE_BLOCKS[ratio], coff * ratio, math.ceil(count / tuples)))
    step = settings.max_num_batched_tokens or settings.max_model_len or 0
    return CompressedPool(block, block_bytes, tuple(groups), step)
