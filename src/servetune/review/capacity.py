"""Memory arithmetic: weights, KV cache bytes per token, and how many sequences fit.

Every formula servetune uses for capacity lives here (the later `plan` command reuses them).
Sources: vLLM's KV cache specs and memory profiler (../shared/reference/vllm-rules.md section 5)
and the measured reserves in ../shared/reference/capacity-formulas.md section 2.3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from servetune.review.model import ModelFacts, QuantFacts
from servetune.review.settings import DTYPE_BYTES, GIB, Settings
from servetune.vllm.flags import version_at_least

# Bits per stored weight of one quantized linear layer, for group quantization (AWQ/GPTQ):
# b bits per weight, plus a 16-bit scale and a b-bit zero point per group of G weights.
_ONLINE_8BIT = ("fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "mxfp8", "int8")
_MXFP4_BITS = 4.25  # 4-bit values plus one 8-bit shared exponent per 32
_NVFP4_BITS = 4.5  # 4-bit values plus one FP8 scale per 16
_BNB_4BIT_BITS = 4.5  # 4-bit values plus one float32 absmax per 64
_BNB_DOUBLE_QUANT_BITS = 4.127  # absmax in 8 bits per 64, a float32 per 256 of those
_AWQ_METHODS = ("awq", "awq_marlin", "auto_awq")
_GROUP_METHODS = (*_AWQ_METHODS, "gptq", "gptq_marlin", "auto_gptq", "auto-round", "auto_round")


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
    # Where this estimate is known to be rough, as ids (texts: review table "estimate-note.<id>")
    notes: tuple[str, ...] = ()
    # budget - weights - reserve before clamping at 0: negative when nothing is left for KV
    kv_available_gib_per_gpu: float | None = None
    # The same with every uncertain term at the end of its range (`Spread`): (the least, the
    # most) KV memory the evidence allows, and the longest sequence the most would hold.
    kv_available_gib_range: tuple[float, float] | None = None
    max_model_len_that_fits_optimistic: int | None = None

    def to_json(self) -> dict[str, object]:
        """The estimate as `check --format json` spells it (its `estimate` object)."""
        return {
            "weights_gib_per_gpu": _round(self.weights_gib_per_gpu),
            "kv_bytes_per_token_per_gpu": self.kv_bytes_per_token_per_gpu,
            "kv_cache_gib_per_gpu": _round(self.kv_cache_gib_per_gpu),
            "kv_cache_tokens": self.kv_cache_tokens,
            "max_concurrent_seqs_at_max_model_len": _round(
                self.max_concurrent_seqs_at_max_model_len
            ),
            "reserve_gib_per_gpu": _round(self.reserve_gib_per_gpu),
            "budget_gib_per_gpu": _round(self.budget_gib_per_gpu),
            "params": self.params,
            "notes": list(self.notes),  # ids; texts under "estimate-note.<id>" in review texts
        }


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


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
    q_heads = 2 * heads if m.attn_output_gate else heads  # the gate doubles q_proj
    return hidden * head_dim * (q_heads + 2 * kv_heads) + heads * head_dim * hidden


def _linear_attention_params(m: ModelFacts) -> int:
    """One Gated DeltaNet layer: in_proj_qkv and in_proj_z (hidden -> conv and value widths),
    in_proj_a and in_proj_b (hidden -> one value per value head), out_proj, the conv1d."""
    lin, hidden = m.linear, m.hidden_size or 0
    if lin is None or not m.is_hybrid:
        return 0
    value_dim = lin.value_heads * lin.value_head_dim
    projections = hidden * (lin.conv_dim + value_dim + 2 * lin.value_heads) + value_dim * hidden
    return projections + lin.conv_dim * lin.conv_kernel


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


def _group_bits(quant: QuantFacts) -> float | None:
    """Group quantization (AWQ, GPTQ, compressed-tensors WnA16): b bits per weight plus a
    16-bit scale per group of G, and a b-bit zero point per group where the weights are
    asymmetric (AWQ always; GPTQ and compressed-tensors when `sym` is false). None for other
    methods."""
    method, group = quant.method, quant.group_size
    if method not in _GROUP_METHODS and not (method == "compressed-tensors" and group):
        return None
    b = quant.bits or 4
    if not group or group <= 0:
        return float(b)
    zero = 0 if quant.symmetric and method not in _AWQ_METHODS else b
    return b + (16 + zero) / group


def _quant_bits(quant: QuantFacts) -> float:
    """Average bits per stored weight of one quantized linear layer. bitsandbytes 4-bit keeps
    one float32 absmax per block of 64 (4.5 bits; 4.127 with double quantization)."""
    method, bits = quant.method, quant.bits
    grouped = _group_bits(quant)
    nvfp4 = (method in ("modelopt", "modelopt_fp4") and bits == 4) or quant.scheme == "NVFP4"
    bnb = _BNB_DOUBLE_QUANT_BITS if quant.double_quant else _BNB_4BIT_BITS
    if grouped is not None:
        return grouped
    if method == "mxfp4" or nvfp4:
        return _MXFP4_BITS if method == "mxfp4" else _NVFP4_BITS
    if method == "gguf":  # k-quants: b-bit values plus per-block scales, about half a bit
        return (bits or 4) + 0.5
    if method == "bitsandbytes" and (bits or 4) == 4:
        return bnb
    if method in _ONLINE_8BIT or method.startswith("fp8"):
        return 8.0
    return float(bits) if bits else 16.0


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def mxfp4_padding(model: ModelFacts, settings: Settings) -> float:
    """How much larger MXFP4 experts are in GPU memory than in the checkpoint.

    vLLM's MXFP4 MoE kernels (Marlin, Triton) want each rank's expert width rounded up to 128
    and the hidden size to 256: gpt-oss's 2880 becomes 2944 x 3072, +9%. Measured on one H100:
    65.97 GiB (0.10.1, Marlin) and 64.38 GiB (0.14.1, Triton) for gpt-oss-120b against
    60.7 GiB of checkpoint (vllm#23278, vllm#33155)."""
    hidden = model.hidden_size or 0
    inter = model.moe_intermediate_size or model.intermediate_size or 0
    if not hidden or not inter:
        return 1.0
    per_rank = max(1, inter // settings.tensor_parallel_size)
    padded = _round_up(per_rank, 128) * settings.tensor_parallel_size
    return padded * _round_up(hidden, 256) / (inter * hidden)


def _experts_only(model: ModelFacts, quant: QuantFacts) -> bool:
    """MXFP4 in a mixture of experts (gpt-oss) quantizes the experts alone; a dense MXFP4
    checkpoint (AMD's Quark releases of Llama) quantizes every linear layer."""
    return quant.method == "mxfp4" and model.is_moe


def _attention_unquantized(model: ModelFacts, quant: QuantFacts) -> bool:
    """Checkpoints that quantize only the MLPs: MXFP4 experts and Meta's own FP8 releases
    (fbgemm_fp8, attention listed in modules_to_not_convert)."""
    if _experts_only(model, quant) or quant.method == "fbgemm_fp8":
        return True
    return any("attn" in module for module in quant.excluded_modules)


def weight_bytes(model: ModelFacts, settings: Settings) -> tuple[int, int]:
    """(total weight bytes in GPU memory, parameter count). Embeddings and lm_head stay in the
    compute dtype for every quantization method vLLM ships; MXFP4 (gpt-oss) quantizes only the
    experts, which the kernels pad (`mxfp4_padding`)."""
    dense_bits = 8.0 * DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    embed = (model.vocab_size or 0) * (model.hidden_size or 0)
    vocab_params = embed if model.tie_word_embeddings else 2 * embed
    attention = model.attention_layers * _attention_params(model)
    attention += model.linear_layers * _linear_attention_params(model)
    mlp, experts = _mlp_params(model)
    params = vocab_params + attention + mlp + experts
    quant = model.quantization
    if quant is not None:
        bits = _quant_bits(quant)
        linear_bits = dense_bits if _experts_only(model, quant) else bits
        expert_bits = bits * (mxfp4_padding(model, settings) if quant.method == "mxfp4" else 1.0)
        attention_bits = dense_bits if _attention_unquantized(model, quant) else linear_bits
        total_bits = (
            vocab_params * dense_bits
            + attention * attention_bits
            + mlp * linear_bits
            + experts * expert_bits
        )
    elif settings.quantization in _ONLINE_8BIT:
        total_bits = vocab_params * dense_bits + (attention + mlp + experts) * 8.0
    else:
        total_bits = params * dense_bits
    body = params - vocab_params
    if body > 0:
        total_bits += _mtp_params(model, settings) * (total_bits - vocab_params * dense_bits) / body
    return int(total_bits / 8), params


def _mtp_params(model: ModelFacts, settings: Settings) -> int:
    """Parameters vLLM loads for an `mtp` drafter: per MTP layer one full-attention layer, one
    layer's MLP or experts, and the projection joining embedding and hidden state (2h x h); kept
    at the body's average bits (the checkpoints quantize them with it)."""
    drafter = settings.speculative_method or ""
    layers = model.num_layers or 0
    if "mtp" not in drafter or not model.mtp_layers or not layers:
        return 0
    mlp, experts = _mlp_params(model)
    hidden = model.hidden_size or 0
    per_layer = _attention_params(model) + (mlp + experts) // layers + 2 * hidden * hidden
    return model.mtp_layers * per_layer


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
    if model.is_encoder:
        return 0  # encoder-only attention keeps no KV cache
    dtype_bytes = kv_dtype_bytes(settings)
    if model.is_mla:
        return ((model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)) * dtype_bytes
    kv_heads = model.num_kv_heads or 1
    per_rank = max(1, kv_heads // settings.tensor_parallel_size)
    return 2 * per_rank * (model.head_dim or 0) * dtype_bytes


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
    per_layer = kv_bytes_per_token_layer(model, settings)
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


# --- what vLLM's profiler keeps out of the KV cache ----------------------------------------------
# vLLM sizes the KV cache at startup (V0 `worker.determine_num_available_blocks`, V1
# `gpu_worker.determine_available_memory`, every release): budget = total memory x
# --gpu-memory-utilization (the card's total, not what is free: memory other processes hold
# comes out of vLLM's share, and from 0.9 a start with less free than the budget is refused),
# minus the weights, the torch peak of one profiling pass, the memory that is not torch's
# (CUDA context, cuBLAS, NCCL) and, from 0.21, an estimate of CUDA graph memory. The profiling
# pass is a dummy forward at the step's token budget followed by a sampler warm-up at
# max_num_seqs dummy requests (`profile_run`, `_dummy_sampler_run`); a pooling model runs its
# pooler instead of the sampler. Each term below is a `Spread`: the central value the estimate
# uses and the range the evidence allows, which `kv-cache-too-small` weighs.


@dataclass(frozen=True)
class Spread:
    """One term of the estimate in GiB: the central value and the plausible range around it."""

    low: float
    central: float
    high: float

    def scaled(self, factor: float) -> Spread:
        return Spread(self.low * factor, self.central * factor, self.high * factor)


# The sampler warm-up, counted in logits-sized float32 copies (max_num_seqs x vocab x 4 B):
# - the sort-based top-k/top-p (V0, and V1's PyTorch path up to 0.16): bf16 logits 0.5 + float32
#   logits 1 + sorted values 1 + int64 indices 2 + the input index 2 + the radix sort's double
#   buffers 3 = 9.5; vLLM logged 9.4 to 9.7 such copies, 0.7 to 0.11 (1.39 GiB Qwen2.5-1.5B and
#   1.42 GiB Qwen2.5-7B-AWQ at 256 sequences, vllm#12529, vllm#13882; 4.76 Llama-8B, 5.56
#   Qwen3-0.6B, 5.64 Qwen3-32B and 7.38 GiB gpt-oss-20b at 1024 on H100, capacity-formulas 2.3).
# - from 0.17 the PyTorch path masks top-k/top-p in place with Triton (a cached buffer of one
#   row per SM) and from 0.21 FlashInfer's sampler is the default with the native path warmed up
#   after it ("Also warm forward_native"): bf16 logits 0.5 + float32 logits 1 + probabilities 1 +
#   the exponential noise 1 = 3.5 copies either way, plus the Triton buffer.
# - 0.8.0 to 0.11.0 use FlashInfer's sampler when FlashInfer is installed (vLLM's Docker image;
#   pip installs did not pull it in): 3.5 copies there, 9.6 without. 9.6 is taken (vllm#27508,
#   gpt-oss-120b on 0.11.0, matched it), 3.5 is the low end.
_SORT_COPIES = Spread(9.0, 9.6, 9.8)
_FUSED_COPIES = Spread(3.0, 3.5, 4.0)
_TRITON_SAMPLER_FROM = "0.17.0"
_FLASHINFER_OPTIONAL = ("0.8.0", "0.11.1")  # [from, until): FlashInfer's sampler if installed
_TRITON_BUFFER_ROWS = 132  # one row per SM (H100: 132), cached across calls
# The forward pass at the step's token budget keeps about four MLP-wide activations per token
# (gate and up projections, their product, the residual): Llama-3.1-8B at 20000 and 29000
# tokens logged 2.07 and 2.99 GiB in vLLM 0.6 (vllm#10517), 110 KB per token = 3.8 x 14336 x 2 B.
_FORWARD_WIDTHS = 3.8
_FORWARD_SPREAD = (0.8, 1.2)
# Non-torch memory: 0.13-0.14 GiB at TP 1 and 0.55 GiB at TP 2 on H100 (llm-d), 0.16 GiB on an
# H100 in 0.6.6 (vllm#12126), 0.33 GiB per rank at PP 2 (vllm#14452).
_NON_TORCH_TP1 = Spread(0.1, 0.15, 0.3)
_NON_TORCH_MULTI = Spread(0.3, 0.6, 0.9)
# CUDA graphs are profiled into the budget since vLLM 0.21 (`profile_cudagraph_memory`, logged
# "Estimated CUDA graph memory"). Graphs are captured for batch sizes up to
# min(2 x max_num_seqs x (1 + speculative tokens), 512) (config/vllm.py) and share one memory
# pool, which grows with the largest: 0.14 GiB at max-num-seqs 2 (club-3090#1139, 0.27.1) and
# 0.17 GiB (club-3090#127); llm-d measured -0.45 to +1.03 GiB after capture at 1024 sequences.
_CUDA_GRAPH_PROFILED_FROM = "0.21.0"
_CUDA_GRAPH_BASE_GIB = 0.1
_CUDA_GRAPH_LARGEST_GIB = 0.4  # added at a largest capture size of 512
_CUDA_GRAPH_MAX_CAPTURE = 512
_CUDA_GRAPH_SPREAD = (0.0, 2.0)  # llm-d's -0.45 GiB: capture can even free memory
# What CUDA reports as a card's total varies by a tenth of a GiB around `device_total_gib`
# (79.11 to 79.33 GiB for 80 GB A100/H100 cards).
_DEVICE_TOTAL_SPREAD_GIB = 0.12


def _forward_peak_gib(model: ModelFacts, settings: Settings, tokens: int) -> float:
    dense = model.dense_intermediate_size or model.intermediate_size or 0
    routed = (model.experts_per_token or 0) * (model.moe_intermediate_size or 0)
    width = max(dense if not model.is_moe else 0, routed) / settings.tensor_parallel_size
    if model.is_encoder:  # BERT-style MLPs have two matrices, not three (no gate)
        width = (model.intermediate_size or 0) / settings.tensor_parallel_size
    return tokens * _FORWARD_WIDTHS * width * 2 / GIB


def sampler_copies(version: str | None) -> Spread:
    """Logits-sized float32 copies the sampler warm-up holds at its peak, in this release (no
    release: the sort-based sampler of releases before 0.17)."""
    if version is None or not version_at_least(version, _TRITON_SAMPLER_FROM):
        since, until = _FLASHINFER_OPTIONAL
        if version and version_at_least(version, since) and not version_at_least(version, until):
            return Spread(_FUSED_COPIES.low, _SORT_COPIES.central, _SORT_COPIES.high)
        return _SORT_COPIES
    return _FUSED_COPIES


def sampler_peak(model: ModelFacts, settings: Settings, version: str | None = None) -> Spread:
    """The sampler's share of the profiling peak (GiB): max_num_seqs x vocab x 4 B x the copies
    of `sampler_copies`, plus Triton's cached buffer from 0.17; none for a pooling model."""
    if is_pooling(model, settings):
        return Spread(0.0, 0.0, 0.0)
    logits = settings.max_num_seqs * (model.vocab_size or 0) * 4 / GIB
    peak = sampler_copies(version).scaled(logits)
    if version and version_at_least(version, _TRITON_SAMPLER_FROM):
        rows = min(settings.max_num_seqs, _TRITON_BUFFER_ROWS) / settings.max_num_seqs
        buffer = rows * logits
        return Spread(peak.low, peak.central + buffer, peak.high + buffer)
    return peak


def sampler_peak_gib(model: ModelFacts, settings: Settings, version: str | None = None) -> float:
    """The central value of `sampler_peak`."""
    return sampler_peak(model, settings, version).central


def cuda_graph_capture_max(settings: Settings) -> int:
    """The largest batch vLLM captures a CUDA graph for (0.11+: min(2 x max_num_seqs, 512))."""
    return min(2 * settings.max_num_seqs, _CUDA_GRAPH_MAX_CAPTURE)


def cuda_graph_gib(settings: Settings, version: str | None) -> Spread:
    """CUDA graph memory counted against the budget: none before 0.21 (captured after the KV
    cache is sized) or with --enforce-eager; else a base plus a part growing with the largest
    capture size."""
    if settings.enforce_eager or not version:
        return Spread(0.0, 0.0, 0.0)
    if not version_at_least(version, _CUDA_GRAPH_PROFILED_FROM):
        return Spread(0.0, 0.0, 0.0)
    share = cuda_graph_capture_max(settings) / _CUDA_GRAPH_MAX_CAPTURE
    central = _CUDA_GRAPH_BASE_GIB + _CUDA_GRAPH_LARGEST_GIB * share
    low, high = _CUDA_GRAPH_SPREAD
    return Spread(central * low, central, central * high)


def reserve_terms(
    model: ModelFacts, settings: Settings, version: str | None = None
) -> dict[str, Spread]:
    """The memory vLLM's profiler keeps out of the KV cache besides the weights, per GPU, term
    by term: `activation` (the larger of the forward pass at max_num_batched_tokens and the
    sampler warm-up at max_num_seqs), `non_torch` and `cuda_graphs`."""
    tokens = settings.max_num_batched_tokens or max(settings.max_model_len or 0, 2048)
    forward = _forward_peak_gib(model, settings, tokens)
    low, high = _FORWARD_SPREAD
    sampler = sampler_peak(model, settings, version)
    activation = Spread(
        max(forward * low, sampler.low),
        max(forward, sampler.central),
        max(forward * high, sampler.high),
    )
    non_torch = _NON_TORCH_TP1 if settings.world_size == 1 else _NON_TORCH_MULTI
    graphs = cuda_graph_gib(settings, version)
    return {"activation": activation, "non_torch": non_torch, "cuda_graphs": graphs}


def reserve_gib(model: ModelFacts, settings: Settings, version: str | None = None) -> float:
    """The central reserve per GPU: the sum of `reserve_terms`."""
    return sum(term.central for term in reserve_terms(model, settings, version).values())


def device_total_gib(nominal_gib: float) -> float:
    """The memory CUDA reports for a card (what gpu_memory_utilization multiplies): a little
    under its nominal size. Fitted on vLLM's logged `total_gpu_memory`: 79.11 to 79.33 GiB for
    80 GB A100/H100 cards, 23.58 GiB for an RTX 3090 (vllm#10517)."""
    return nominal_gib * (1 - 0.0047) - 0.42


def _multimodal(model: ModelFacts) -> bool:
    """Vision-language checkpoints: vLLM also profiles their encoder, which the text-only
    arithmetic here leaves out."""
    arch = model.architecture or ""
    return arch.endswith("ForConditionalGeneration") or arch == "InternVLChatModel"


def is_pooling(model: ModelFacts, settings: Settings) -> bool:
    """Served with a pooler: an embedding, reranking or classification architecture, or any
    model run with `--runner pooling` / `--task embed|score|classify`."""
    return model.is_pooling or settings.pooling


# Multimodal encoders' profile is not modelled: vLLM's KV cache came out 1.5 GiB per GPU below
# the text-only estimate for Qwen2.5-VL-72B at TP 4 (vllm#16570).
_MULTIMODAL_ENCODER_GIB = 2.0
# MoE profiling peaks above the dense arithmetic: 2 GiB per GPU for Qwen3-235B-A22B-FP8 at TP 4
# and 8192 tokens (vllm#21348); none seen for gpt-oss (vllm#23278, vllm#27508).
_MOE_EXTRA_GIB = 2.5


def _pessimistic_extra(model: ModelFacts) -> float:
    """What the known misses can take beyond the central reserve (GiB per GPU)."""
    extra = _MOE_EXTRA_GIB if model.is_moe else 0.0
    return extra + (_MULTIMODAL_ENCODER_GIB if _multimodal(model) else 0.0)


def _notes(model: ModelFacts, settings: Settings, version: str | None) -> tuple[str, ...]:
    notes: list[str] = []
    quant = model.quantization
    if quant is not None and quant.method == "mxfp4":
        notes.append("mxfp4-padding")
    if quant is not None and quant.method in ("awq", "gptq", "compressed-tensors", "gguf"):
        notes.append("group-quant-layout")
    if model.is_moe:
        notes.append("moe-activation")
    if _multimodal(model):
        notes.append("multimodal-encoder")
    if model.is_encoder:
        notes.append("encoder-no-kv")
    elif not is_pooling(model, settings):
        copies = sampler_copies(version)
        if copies.central - copies.low > 1.0:
            notes.append("sampler-flashinfer")
    # CUDA graphs move the result by about a GiB: worth saying when the budget is near full.
    if version and not settings.enforce_eager and settings.gpu_memory_utilization >= 0.95:
        profiled = version_at_least(version, _CUDA_GRAPH_PROFILED_FROM)
        notes.append("cuda-graphs-estimated" if profiled else "cuda-graphs-outside")
    return tuple(notes)


def _longest_fitting(
    model: ModelFacts, settings: Settings, budget: int, version: str | None = None
) -> int:
    """The longest sequence whose KV fits in `budget` bytes (binary search over lengths)."""
    low, high = 0, max(settings.max_model_len or 0, 1) * 4
    while low < high:
        mid = (low + high + 1) // 2
        if kv_bytes_per_sequence(model, settings, mid, version) <= budget:
            low = mid
        else:
            high = mid - 1
    block = settings.block_size
    return low // block * block if low >= block else low


def _kv_capacity(
    model: ModelFacts,
    settings: Settings,
    kv_bytes: float,
    per_token: int,
    version: str | None = None,
) -> tuple[int, float | None, int | None]:
    """(KV tokens, sequences at max_model_len, longest sequence that fits) for a KV pool."""
    block, length = settings.block_size, settings.max_model_len
    per_seq = kv_bytes_per_sequence(model, settings, length, version) if length else None
    pool = hybrid_pool(model, settings, version)
    concurrency: float | None
    if pool is not None and length:
        tokens, concurrency = pool.capacity(int(kv_bytes), length, version)
    elif per_seq and model.sliding_layers and length:
        concurrency = kv_bytes / per_seq
        tokens = int(kv_bytes / per_seq * length)
    else:
        tokens = int(kv_bytes // (per_token * block)) * block
        concurrency = tokens / length if length else None
    # vLLM's block pool holds one block back (the null block); its admission check plans
    # against the rest (vllm/v1/core/kv_cache_utils.py, 0.32: "Reserve the null block").
    usable = int(kv_bytes) - per_token * block
    fits = _longest_fitting(model, settings, usable, version) if length else None
    return tokens, concurrency, fits


@dataclass(frozen=True)
class _Memory:
    """The per-GPU memory sums one estimate is made of (GiB)."""

    weights: float
    reserve: float
    budget: float | None
    available: float | None
    available_range: tuple[float, float] | None


def _memory(
    model: ModelFacts,
    settings: Settings,
    memory_gib: float | None,
    version: str | None,
    total_bytes: int,
) -> _Memory:
    """Weights, reserve and budget, and what is left for the KV cache: its central value and
    its range with every uncertain term at one end (group-quant layouts +-3% of the weights)."""
    weights = total_bytes / (settings.tensor_parallel_size * settings.pipeline_parallel_size) / GIB
    terms = reserve_terms(model, settings, version).values()
    reserve = sum(t.central for t in terms)
    if not memory_gib:
        return _Memory(weights, reserve, None, None, None)
    total = device_total_gib(memory_gib)
    util = settings.gpu_memory_utilization
    budget = total * util
    quant = model.quantization
    layout = 0.03 if quant is not None and quant.method not in _EXACT_LAYOUTS else 0.0
    most = (total + _DEVICE_TOTAL_SPREAD_GIB) * util - weights * (1 - layout)
    most -= sum(t.low for t in terms)
    least = (total - _DEVICE_TOTAL_SPREAD_GIB) * util - weights * (1 + layout)
    least -= sum(t.high for t in terms) + _pessimistic_extra(model)
    return _Memory(weights, reserve, budget, budget - weights - reserve, (least, most))


_EXACT_LAYOUTS = ("fp8", "fbgemm_fp8", "mxfp4")  # stored bytes known to the byte


def estimate(
    model: ModelFacts,
    settings: Settings,
    memory_gib: float | None,
    *,
    version: str | None = None,
) -> Estimate | None:
    """The per-GPU memory estimate, or None when the model's shape is not known well enough.

    `memory_gib` is the card's nominal memory (`device_total_gib` turns it into what CUDA
    reports); `version` (the vLLM release) decides the sampler's warm-up and whether CUDA graphs
    count against the budget."""
    if not (model.hidden_size and model.num_layers and model.head_dim):
        return None
    total_bytes, params = weight_bytes(model, settings)
    per_token = kv_layers(model, settings) * kv_bytes_per_token_layer(model, settings)
    mem = _memory(model, settings, memory_gib, version, total_bytes)
    length = settings.max_model_len
    if settings.kv_cache_memory_bytes is not None:
        kv_bytes: float | None = float(settings.kv_cache_memory_bytes)
    else:
        kv_bytes = None if mem.available is None else max(0.0, mem.available * GIB)
    tokens = concurrency = fits = optimistic = None
    if kv_bytes is not None and per_token:
        tokens, concurrency, fits = _kv_capacity(model, settings, kv_bytes, per_token, version)
        if mem.available_range is not None and settings.kv_cache_memory_bytes is None:
            most = max(0.0, mem.available_range[1] * GIB)
            optimistic = _kv_capacity(model, settings, most, per_token, version)[2]
    per_seq = (
        kv_bytes_per_sequence(model, settings, length, version) if length and per_token else None
    )
    return Estimate(
        params=params,
        weights_gib_per_gpu=mem.weights,
        kv_bytes_per_token_per_gpu=per_token,
        kv_bytes_per_seq_per_gpu=per_seq,
        reserve_gib_per_gpu=mem.reserve,
        budget_gib_per_gpu=mem.budget,
        kv_cache_gib_per_gpu=None if kv_bytes is None or not per_token else kv_bytes / GIB,
        kv_cache_tokens=tokens,
        max_concurrent_seqs_at_max_model_len=concurrency,
        max_model_len_that_fits=fits,
        weight_bits=8 * total_bytes / params if params else 0.0,
        notes=_notes(model, settings, version),
        kv_available_gib_per_gpu=mem.available,
        kv_available_gib_range=mem.available_range,
        max_model_len_that_fits_optimistic=optimistic,
    )
