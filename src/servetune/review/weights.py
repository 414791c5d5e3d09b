"""The weights vLLM holds in GPU memory: parameters counted from the architecture, and the bits
each quantization method stores per weight as its kernels keep them."""

from __future__ import annotations

from servetune.review.kv_cache import mla_latent_cached
from servetune.review.model import ModelFacts, QuantFacts
from servetune.review.settings import DTYPE_BYTES, Settings
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


def _dsv4_attention_params(m: ModelFacts) -> int:
    """DeepSeek-V4's attention over all layers (vLLM's `DeepseekV4Attention`): fused_wqa_wkv
    (hidden -> q_lora_rank + head_dim), wq_b (q_lora_rank -> heads x head_dim), the grouped
    wo_a (heads x head_dim / groups -> groups x o_lora_rank) and wo_b (-> hidden); a compressing
    layer's compressor (hidden -> 2 x coff x head_dim, coff 2 at ratio 4); a ratio-4 layer's
    indexer (wq_b to index heads, weights_proj, its own compressor)."""
    hidden, heads, dim = m.hidden_size or 0, m.num_attention_heads or 0, m.head_dim or 0
    q_rank, o_rank, groups = m.q_lora_rank or 0, m.o_lora_rank or 0, m.o_groups or 1
    base = hidden * (q_rank + dim) + q_rank * heads * dim
    base += heads * dim // groups * groups * o_rank + groups * o_rank * hidden
    index_heads, index_dim = m.index_heads or 0, m.index_head_dim or 0
    total = 0
    for ratio in m.compress_ratios:
        total += base
        if ratio > 1:
            coff = 2 if ratio == 4 else 1
            total += hidden * 2 * coff * dim
        if ratio == 4:
            total += q_rank * index_heads * index_dim + hidden * index_heads
            total += hidden * 2 * 2 * index_dim
    return total


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
    in_proj_a and in_proj_b (hidden -> one value per value head), out_proj, the conv1d.
    One KDA layer (vLLM's `KimiDeltaAttention`): q, k and v (hidden -> heads x head_dim
    each), the gates' low-rank pairs f_a/f_b and g_a/g_b (hidden -> head_dim -> heads x
    head_dim), b_proj (hidden -> heads), o_proj and the three conv1d.
    One Mamba2 layer (vLLM's `MambaMixer2`): in_proj (hidden -> z, x, B, C and one dt per
    head: the value width plus the conv width plus heads), out_proj, the conv1d."""
    lin, hidden = m.linear, m.hidden_size or 0
    if lin is None or not m.is_hybrid:
        return 0
    value_dim = lin.value_heads * lin.value_head_dim
    if lin.kind == "mamba2":
        projections = hidden * (lin.conv_dim + value_dim + lin.value_heads) + value_dim * hidden
        return projections + lin.conv_dim * lin.conv_kernel
    if lin.kind == "kda":
        low_rank = 2 * (hidden * lin.value_head_dim + lin.value_head_dim * value_dim)
        projections = hidden * (lin.conv_dim + lin.value_heads) + low_rank + value_dim * hidden
        return projections + lin.conv_dim * lin.conv_kernel
    projections = hidden * (lin.conv_dim + value_dim + 2 * lin.value_heads) + value_dim * hidden
    return projections + lin.conv_dim * lin.conv_kernel


def _mlp_params(m: ModelFacts) -> tuple[int, int]:
    """(dense MLP params, expert MLP params) over the layers that have one (Nemotron-H: its -
    and E layers); gated MLPs have 3 matrices, Nemotron-H's relu2 MLPs 2."""
    hidden, inter = m.hidden_size or 0, m.intermediate_size or 0
    layers = (m.num_layers or 0) if m.ffn_layers is None else m.ffn_layers
    mats = 3 if m.gated_mlp else 2
    if not m.is_moe:
        return layers * mats * hidden * inter, 0
    expert_inter = m.moe_intermediate_size or inter
    moe_layers = layers - m.num_dense_layers
    dense = m.num_dense_layers * mats * hidden * (m.dense_intermediate_size or inter)
    experts = moe_layers * (m.num_experts or 0) * mats * hidden * expert_inter
    shared = moe_layers * (
        m.num_shared_experts * mats * hidden * expert_inter + hidden * (m.num_experts or 0)
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
    if model.compress_ratios:
        attention = _dsv4_attention_params(model)
    else:
        attention = model.attention_layers * _attention_params(model)
    attention += model.linear_layers * _linear_attention_params(model)
    mlp, experts = _mlp_params(model)
    params = vocab_params + attention + mlp + experts
    quant = model.quantization
    if quant is not None:
        bits = _quant_bits(quant)
        linear_bits = dense_bits if _experts_only(model, quant) else bits
        expert_bits = bits * (mxfp4_padding(model, settings) if quant.method == "mxfp4" else 1.0)
        if model.expert_dtype == "fp4":  # DeepSeek-V4: MXFP4 experts (`Mxfp4MoEMethod`)
            expert_bits = _MXFP4_BITS * mxfp4_padding(model, settings)
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


def expert_bytes(model: ModelFacts, settings: Settings) -> int:
    """Bytes of the routed experts alone (all MoE layers), at the experts' own bits with their
    scales: MXFP4 experts (gpt-oss) at 4.25 bits padded by the kernels, beside BF16 attention
    and embeddings that an average over the whole checkpoint would mix in."""
    experts = expert_params(model)
    quant = model.quantization
    if model.expert_dtype == "fp4":
        bits = _MXFP4_BITS * mxfp4_padding(model, settings)
    elif quant is not None:
        bits = _quant_bits(quant)
        bits *= mxfp4_padding(model, settings) if quant.method == "mxfp4" else 1.0
    elif settings.quantization in _ONLINE_8BIT:
        bits = 8.0
    else:
        bits = 8.0 * DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    return int(experts * bits / 8)


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


# --- what a tensor-parallel rank holds beyond its share -----------------------------------------
# `weight_bytes` is the whole model; an even split gives each rank 1/TP of it. Some layers are not
# split: vLLM replicates MLA's down-projections (`q_a_proj`, `kv_a_proj_with_mqa`: ReplicatedLinear
# in deepseek_v2.py, every release) and the MoE router (`gate`: ReplicatedLinear with no quant
# config, in the compute dtype). And MLA builds decode matrices from its weights after loading
# (`process_weights_after_loading`), kept beside them: 0.7.1 to 0.7.3 (V0, matrix absorption,
# vllm/attention/backends/mla/utils.py) the RoPE part of q_proj in the compute dtype (W_QR), the
# dequantized kv_b_proj (W_UK, W_UV), q_proj absorbed with W_UK (W_Q_UK) and W_UV absorbed into
# o_proj (W_UV_O), both requantized to fp8 for an fp8 checkpoint; from 0.8.0 only the dequantized
# kv_b_proj (W_UV, W_UK_T are views of it; mla/common.py, mla_attention.py). DeepSeek-R1 at TP 16
# on 0.7.3: 42.47 GiB of weights per rank logged (vllm#16766), 3.3 GiB above the even split.
_MLA_ABSORBED_FROM, _MLA_VIEWS_FROM = "0.7.1", "0.8.0"


def _body_bytes_per_param(model: ModelFacts, settings: Settings) -> float:
    """Bytes per weight of the decoder's attention projections as stored."""
    dense = float(DTYPE_BYTES.get(settings.dtype or "bfloat16", 2))
    quant = model.quantization
    if quant is None:
        return 1.0 if settings.quantization in _ONLINE_8BIT else dense
    return dense if _attention_unquantized(model, quant) else _quant_bits(quant) / 8


def replicated_bytes(model: ModelFacts, settings: Settings) -> int:
    """Bytes of the layers every tensor-parallel rank holds whole: MLA's q_a_proj and
    kv_a_proj_with_mqa, and the MoE router (compute dtype)."""
    hidden = model.hidden_size or 0
    total = 0.0
    if model.is_mla:
        down = hidden * ((model.q_lora_rank or 0) + (model.kv_lora_rank or 0))
        down += hidden * (model.qk_rope_head_dim or 0)
        total += model.attention_layers * down * _body_bytes_per_param(model, settings)
    if model.is_moe:
        moe_layers = (model.num_layers or 0) - model.num_dense_layers
        dense = DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
        total += moe_layers * hidden * (model.num_experts or 0) * dense
    return int(total)


def mla_decode_bytes(model: ModelFacts, settings: Settings, version: str | None = None) -> int:
    """Bytes per GPU of the decode matrices MLA builds after loading (see above); 0 where the
    release does not cache the latent (`mla_latent_cached`) or the model has no MLA."""
    if not model.is_mla or not mla_latent_cached(model, settings, version):
        return 0
    act = DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    heads = max(1, (model.num_attention_heads or 1) // settings.tensor_parallel_size)
    rank, rope = model.kv_lora_rank or 0, model.qk_rope_head_dim or 0
    nope, v_dim = model.qk_nope_head_dim or 0, model.v_head_dim or 0
    quant = model.quantization
    quantized = quant is not None or settings.quantization in _ONLINE_8BIT
    kv_b = rank * heads * (nope + v_dim) * act if quantized else 0
    if version is None or version_at_least(version, _MLA_VIEWS_FROM):
        return model.attention_layers * kv_b
    if not version_at_least(version, _MLA_ABSORBED_FROM):
        return 0
    q_in = model.q_lora_rank or model.hidden_size or 0
    fp8 = quant is not None and quant.method.startswith("fp8")
    stored = 1 if fp8 else act
    absorbed = q_in * heads * rank * stored + heads * rank * (model.hidden_size or 0) * stored
    return model.attention_layers * (q_in * heads * rope * act + kv_b + absorbed)


def rank_extra_bytes(model: ModelFacts, settings: Settings, version: str | None = None) -> int:
    """Bytes each tensor-parallel rank holds beyond 1/TP of `weight_bytes`, over all layers:
    the replicated layers' other (TP - 1)/TP and MLA's decode matrices."""
    tp = settings.tensor_parallel_size
    return int(replicated_bytes(model, settings) * (tp - 1) / tp) + mla_decode_bytes(
        model, settings, version
    )
