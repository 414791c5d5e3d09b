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
    if method in ("modelopt", "modelopt_fp4") and bits == 4:
        return _NVFP4_BITS
    if method == "gguf":  # k-quants: b-bit values plus per-block scales, about half a bit
        return (bits or 4) + 0.5
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
    attention = (model.num_layers or 0) * _attention_params(model)
    mlp, experts = _mlp_params(model)
    params = vocab_params + attention + mlp + experts
    quant = model.quantization
    if quant is not None:
        bits = _quant_bits(quant.method, quant.bits, quant.group_size)
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


# The profiling pass samples max_num_seqs dummy requests at once: logits of max_num_seqs x vocab
# in float32, plus the sampler's copies of them (probabilities, sorted values for top-k/top-p,
# log-probabilities). Fitted on vLLM's logged activation peaks, 0.7 to 0.11: 1.39 GiB for
# Qwen2.5-1.5B and 1.42 GiB for Qwen2.5-7B-AWQ at 256 sequences (vllm#12529, vllm#13882);
# 1.2 GiB for Llama-3.1-8B at 256; 4.76 (Llama-8B), 5.56 (Qwen3-0.6B) and 7.38 GiB
# (gpt-oss-20b) at 1024 on H100 (capacity-formulas.md 2.3). All are 9.4 to 9.7 such copies.
_SAMPLER_COPIES = 9.6
# The forward pass at the step's token budget keeps about four MLP-wide activations per token
# (gate and up projections, their product, the residual): Llama-3.1-8B at 20000 and 29000
# tokens logged 2.07 and 2.99 GiB in vLLM 0.6 (vllm#10517), 110 KB per token = 3.8 x 14336 x 2 B.
_FORWARD_WIDTHS = 3.8
# CUDA graphs are profiled into the budget since vLLM 0.21 (vllm-rules.md 5.2); llm-d measured
# -0.45 to +1.03 GiB of graph memory on H100.
_CUDA_GRAPH_GIB = 0.5
_CUDA_GRAPH_PROFILED_FROM = "0.21.0"


def _forward_peak_gib(model: ModelFacts, settings: Settings, tokens: int) -> float:
    dense = model.dense_intermediate_size or model.intermediate_size or 0
    routed = (model.experts_per_token or 0) * (model.moe_intermediate_size or 0)
    width = max(dense if not model.is_moe else 0, routed) / settings.tensor_parallel_size
    return tokens * _FORWARD_WIDTHS * width * 2 / GIB


def sampler_peak_gib(model: ModelFacts, settings: Settings) -> float:
    """The sampler's share of the profiling peak: max_num_seqs x vocab x 4 B x 9.6 copies."""
    return _SAMPLER_COPIES * settings.max_num_seqs * (model.vocab_size or 0) * 4 / GIB


def reserve_gib(model: ModelFacts, settings: Settings, version: str | None = None) -> float:
    """Memory vLLM's profiler keeps out of the KV cache besides the weights, per GPU.

    activation peak = max(forward at max_num_batched_tokens, sampler at max_num_seqs), see
    `_forward_peak_gib` and `sampler_peak_gib`; plus non-torch memory 0.15 GiB (TP = 1) or
    0.6 GiB (TP > 1, NCCL buffers); plus 0.5 GiB of CUDA graphs from vLLM 0.21 (not with
    --enforce-eager)."""
    tokens = settings.max_num_batched_tokens or max(settings.max_model_len or 0, 2048)
    activation = max(_forward_peak_gib(model, settings, tokens), sampler_peak_gib(model, settings))
    non_torch = 0.15 if settings.world_size == 1 else 0.6
    graphs = 0.0
    if version and version_at_least(version, _CUDA_GRAPH_PROFILED_FROM):
        graphs = 0.0 if settings.enforce_eager else _CUDA_GRAPH_GIB
    return activation + non_torch + graphs


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
    # CUDA graphs move the result by about a GiB: worth saying when the budget is near full.
    if version and not settings.enforce_eager and settings.gpu_memory_utilization >= 0.95:
        profiled = version_at_least(version, _CUDA_GRAPH_PROFILED_FROM)
        notes.append("cuda-graphs-estimated" if profiled else "cuda-graphs-outside")
    return tuple(notes)


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


def _kv_capacity(
    model: ModelFacts, settings: Settings, kv_bytes: float, per_token: int
) -> tuple[int, float | None, int | None]:
    """(KV tokens, sequences at max_model_len, longest sequence that fits) for a KV pool."""
    block, length = settings.block_size, settings.max_model_len
    per_seq = kv_bytes_per_sequence(model, settings, length) if length else None
    if per_seq and model.sliding_layers and length:
        concurrency: float | None = kv_bytes / per_seq
        tokens = int(kv_bytes / per_seq * length)
    else:
        tokens = int(kv_bytes // (per_token * block)) * block
        concurrency = tokens / length if length else None
    # vLLM's block pool holds one block back (the null block); its admission check plans
    # against the rest (vllm/v1/core/kv_cache_utils.py, 0.32: "Reserve the null block").
    usable = int(kv_bytes) - per_token * block
    fits = _longest_fitting(model, settings, usable) if length else None
    return tokens, concurrency, fits


def estimate(
    model: ModelFacts,
    settings: Settings,
    memory_gib: float | None,
    *,
    version: str | None = None,
) -> Estimate | None:
    """The per-GPU memory estimate, or None when the model's shape is not known well enough.

    `memory_gib` is the card's nominal memory (`device_total_gib` turns it into what CUDA
    reports); `version` (the vLLM release) decides whether CUDA graphs count against the
    budget."""
    if not (model.hidden_size and model.num_layers and model.head_dim):
        return None
    total_bytes, params = weight_bytes(model, settings)
    weights = total_bytes / (settings.tensor_parallel_size * settings.pipeline_parallel_size) / GIB
    per_token = _layers_per_gpu(model.num_layers, settings) * kv_bytes_per_token_layer(
        model, settings
    )
    reserve = reserve_gib(model, settings, version)
    length = settings.max_model_len
    budget = device_total_gib(memory_gib) * settings.gpu_memory_utilization if memory_gib else None
    available = None if budget is None else budget - weights - reserve
    if settings.kv_cache_memory_bytes is not None:
        kv_bytes: float | None = float(settings.kv_cache_memory_bytes)
    else:
        kv_bytes = None if available is None else max(0.0, available * GIB)
    tokens = concurrency = fits = None
    if kv_bytes is not None and per_token:
        tokens, concurrency, fits = _kv_capacity(model, settings, kv_bytes, per_token)
    return Estimate(
        params=params,
        weights_gib_per_gpu=weights,
        kv_bytes_per_token_per_gpu=per_token,
        kv_bytes_per_seq_per_gpu=kv_bytes_per_sequence(model, settings, length) if length else None,
        reserve_gib_per_gpu=reserve,
        budget_gib_per_gpu=budget,
        kv_cache_gib_per_gpu=None if kv_bytes is None else kv_bytes / GIB,
        kv_cache_tokens=tokens,
        max_concurrent_seqs_at_max_model_len=concurrency,
        max_model_len_that_fits=fits,
        weight_bits=8 * total_bytes / params if params else 0.0,
        notes=_notes(model, settings, version),
        kv_available_gib_per_gpu=available,
    )
