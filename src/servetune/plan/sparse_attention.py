"""DeepSeek-V3.2's sparse attention (DSA) as vLLM runs it: which earlier tokens a query attends
and what that costs one GPU, for the step-time model.

Sources (vLLM 0.11-0.33):
- the lightning indexer (vllm/model_executor/models/deepseek_v2.py, `Indexer` and
  `sparse_attn_indexer`): every token scores every earlier token with `index_n_heads` (64)
  heads of `index_head_dim` (128) in FP8 (DeepGEMM's fp8_mqa_logits for prompt chunks,
  fp8_paged_mqa_logits for decodes) and keeps the top `index_topk` (2048). Its projections are
  `ReplicatedLinear`: every TP rank scores every pair, 2 x 64 x 128 FLOPs per pair and layer,
  and a decode reads the indexer's K cache of its whole context (128 FP8 bytes and one 4-byte
  scale per 128 per token and layer).
- the attention (vllm/v1/attention/backends/mla/flashmla_sparse.py): "the sparse FlashMLA
  kernels ... use MQA 576/512 approach for both prefill and decode": each query attends at
  most `index_topk` tokens through the latent, 2 x heads x ((kv_lora_rank + rope) +
  kv_lora_rank) FLOPs per pair and layer, and reads only those tokens' latent KV.
- head padding: the BF16 kernel (`flash_mla_sparse_prefill`) "requires num_local_head to be a
  multiple of 64 on hopper and 128 on blackwell": at TP 8 the 128 heads are 16 per GPU, run as
  64 (4x the FLOPs; 0.14's own note: the mixed FP8 batch "avoids the BF16 prefill kernel which
  has head padding overhead when num_heads is small (high TP case)"). A BF16 KV cache
  (`--kv-cache-dtype auto` from 0.11.1; 0.11.0 turned auto into the FP8 "fp8_ds_mla",
  vllm/model_executor/models/config.py DeepseekV32ForCausalLM) sends every token, prompt or
  decode, through that kernel. With the FP8 cache decodes run `flash_mla_with_kvcache` (no
  padding), and from 0.14 fewer than 32 heads per GPU (MIN_HEADS_FOR_BF16_PREFILL) run the
  prompt tokens in that mixed FP8 batch too. ROCm runs its own kernels
  (vllm/attention/ops/rocm_aiter_mla_sparse.py): no padding is taken there.
What the fit records say (gpustack, 8 H200, vLLM 0.13, BF16 KV, the same commands and loads
as DeepSeek-R1's there): V3.2 takes ~39 us more per prompt token than R1 at both 4k and 32k
prompts (the padded top-2048 attention, plus the indexer's pairs at 32k); this module's FLOPs
give ~33 us at 4k and ~41 us at 32k, with no constant of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from servetune.review.model import ModelFacts
from servetune.vllm.flags import version_at_least

# `index_topk` of each family's config.json (DeepSeek-V3.2: 2048); ModelFacts does not keep it
TOPK = {"deepseek_v32": 2048}
DEFAULT_TOPK = 2048
INDEX_QUANT_BLOCK = 128  # the indexer's K cache: one float32 scale per 128 FP8 values
PADDING_HOPPER, PADDING_BLACKWELL = 64, 128
AUTO_IS_FP8_IN = "0.11.0"  # the one release whose `auto` KV cache is fp8_ds_mla
MIXED_FP8_FROM = "0.14.0"
MIN_HEADS_FOR_BF16_PREFILL = 32


@dataclass(frozen=True)
class Sparse:
    """One GPU's sparse-attention costs for one configuration (per layer summed over layers)."""

    topk: int  # most earlier tokens one query attends
    prefill_flops_per_pair: float  # attention, per (prompt token, attended token)
    decode_flops_per_pair: float  # attention, per (decode token, attended token)
    indexer_flops_per_pair: float  # FP8 scores, per (token, earlier token), every TP rank
    index_bytes_per_token: float  # the indexer's K cache a decode reads per context token


def topk(model: ModelFacts) -> int:
    """The tokens one query attends (0: the model attends densely)."""
    if not (model.is_mla and model.index_heads and model.index_head_dim):
        return 0
    return TOPK.get(model.model_type or "", DEFAULT_TOPK)


def _fp8_cache(kv_cache_dtype: str, version: str | None) -> bool:
    auto_fp8 = kv_cache_dtype == "auto" and version == AUTO_IS_FP8_IN
    return kv_cache_dtype.startswith("fp8") or auto_fp8


def padding(
    model: ModelFacts,
    tp: int,
    kv_cache_dtype: str,
    version: str | None,
    capability: int | None,
) -> tuple[int, int]:
    """(prompt, decode) multiple the heads per GPU are padded to (1: none), by release, KV
    cache dtype and GPU (capability None: not CUDA, vLLM's ROCm kernels pad nothing)."""
    if capability is None:
        return 1, 1
    pad = PADDING_BLACKWELL if 100 <= capability < 110 else PADDING_HOPPER
    if not _fp8_cache(kv_cache_dtype, version):
        return pad, pad
    heads = (model.num_attention_heads or 0) // max(tp, 1)
    mixed = version is not None and version_at_least(version, MIXED_FP8_FROM)
    prompt = 1 if mixed and heads < MIN_HEADS_FOR_BF16_PREFILL else pad
    return prompt, 1


def _padded(heads: float, multiple: int) -> float:
    if multiple <= 1:
        return heads
    return -(-heads // multiple) * multiple


def costs(model: ModelFacts, tp: int, pads: tuple[int, int]) -> Sparse | None:
    """The sparse-attention costs of `model` at `tp` with `pads` (`padding`); None when the
    model attends densely."""
    window = topk(model)
    if not window:
        return None
    layers = model.num_layers or 0
    heads = (model.num_attention_heads or 0) / max(tp, 1)
    latent, rope = model.kv_lora_rank or 0, model.qk_rope_head_dim or 0
    per_head = 2.0 * layers * ((latent + rope) + latent)
    index_dim, index_heads = model.index_head_dim or 0, model.index_heads or 0
    return Sparse(
        topk=window,
        prefill_flops_per_pair=per_head * _padded(heads, pads[0]),
        decode_flops_per_pair=per_head * _padded(heads, pads[1]),
        indexer_flops_per_pair=2.0 * layers * index_heads * index_dim,
        index_bytes_per_token=layers * (index_dim + 4 * index_dim / INDEX_QUANT_BLOCK),
    )
