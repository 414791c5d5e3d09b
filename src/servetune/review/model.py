"""What servetune knows about a checkpoint, read from its `config.json`.

`find_model` looks in order at: an explicit `--model-config` path or a local model directory
(source `local`), the local Hugging Face cache (`hf-cache`), the built-in catalog (`catalog`),
(only when asked) the Hugging Face Hub (`hub`), and last the name itself: a local copy or a
fine-tune of a catalog checkpoint takes that checkpoint's architecture (`inferred`).
`model_facts` turns a config mapping into `ModelFacts`; anything it cannot find is None.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal

from servetune import _data
from servetune.errors import ModelConfigError
from servetune.review import model_names
from servetune.review.vision_tower import VisionTower, vision_tower
from servetune.texts import ErrorText

ModelSource = Literal["local", "hf-cache", "catalog", "inferred", "hub"]

# Model types whose transformers config ties lm_head to the embeddings unless it says otherwise
# (Gemma2Config / Gemma3TextConfig default tie_word_embeddings=True; most others default False).
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text"})

# vLLM refuses float16 for these model types (numerical instability), 0.11 onwards.
FLOAT16_REFUSED = frozenset({"gemma2", "gemma3", "gemma3_text", "plamo2", "glm4"})

# Keys vLLM reads to find a model's maximum length (`_get_and_verify_max_len`).
_MAX_LEN_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
# RoPE scalings whose max_position_embeddings already is the extended length.
_ROPE_NOT_MULTIPLIED = frozenset({"su", "longrope", "llama3", "yarn", "deepseek_yarn", "mrope"})

# Transformers' defaults for config keys that multimodal Gemma 3 files leave out of text_config.
_TEXT_DEFAULTS: dict[str, dict[str, object]] = {
    "gemma3_text": {
        "head_dim": 256,
        "vocab_size": 262208,
        "max_position_embeddings": 131072,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
        "tie_word_embeddings": True,
    },
}
# Encoder-only families (bidirectional attention, no KV cache, a pooler instead of a sampler):
# vLLM serves them as embedding, reranking or classification models.
ENCODER_MODEL_TYPES = frozenset(
    {
        "bert", "roberta", "xlm-roberta", "camembert", "distilbert", "electra", "deberta",
        "deberta-v2", "mpnet", "nomic_bert", "modernbert", "new", "gte", "jina_bert",
        "xlm-roberta-xl", "ernie", "megatron-bert",
    }
)  # fmt: skip
# Architecture name endings vLLM serves with a pooler (`--runner pooling`), decoders included
# (Qwen3ForSequenceClassification rerankers, Qwen2ForRewardModel).
_POOLING_SUFFIXES = (
    "ForSequenceClassification",
    "ForTokenClassification",
    "ForRewardModel",
    "ForProcessRewardModel",
    "ForEmbedding",
    "EmbeddingModel",
)
# Nemotron-H's `layers_block_type` names, as `hybrid_override_pattern` characters
_BLOCK_CHARS = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}
_DTYPE_NAMES = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}


@dataclass(frozen=True)
class QuantFacts:
    """The checkpoint's own quantization (`quantization_config`)."""

    method: str  # as written: awq, gptq, fp8, compressed-tensors, mxfp4, bitsandbytes...
    bits: int | None
    group_size: int | None
    fmt: str | None  # e.g. "e4m3" for fp8
    excluded_modules: tuple[str, ...] = ()  # modules_to_not_convert
    # compressed-tensors / llm-compressor: the scheme its config_groups spell (`compressed_scheme`)
    scheme: str | None = None
    symmetric: bool | None = None  # weights quantized without zero points
    double_quant: bool = False  # bitsandbytes: absmax scales themselves quantized


@dataclass(frozen=True)
class LinearAttention:
    """A linear-attention layer's shape, which fixes its state per sequence: a causal-conv
    window over q, k and v and one value x key matrix per value head. Gated DeltaNet
    (Qwen3-Next, Qwen3.5/3.6/3.8: `linear_*` config keys) or Kimi Delta Attention (Kimi-Linear:
    `linear_attn_config`, as many key heads as value heads of one `head_dim`)."""

    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int
    ssm_dtype: str | None  # `mamba_ssm_dtype` (float32 in Qwen3.5's configs); None: the model's
    kind: Literal["gated-deltanet", "kda", "mamba2"] = "gated-deltanet"

    @property
    def conv_dim(self) -> int:
        return 2 * self.key_heads * self.key_head_dim + self.value_heads * self.value_head_dim


@dataclass(frozen=True)
class ModelFacts:
    """Architecture facts that matter for serving. None means "the config does not say"."""

    model_id: str
    source: ModelSource
    location: str | None  # the path or URL the config came from
    architecture: str | None
    model_type: str | None
    hidden_size: int | None
    num_layers: int | None
    num_attention_heads: int | None
    num_kv_heads: int | None
    head_dim: int | None
    vocab_size: int | None
    intermediate_size: int | None
    tie_word_embeddings: bool
    max_model_len: int | None  # the derived limit vLLM enforces
    max_len_key: str | None
    dtype: str | None  # the checkpoint's dtype: bfloat16, float16, float32
    quantization: QuantFacts | None
    # Mixture of experts
    num_experts: int | None = None
    experts_per_token: int | None = None
    moe_intermediate_size: int | None = None
    num_shared_experts: int = 0
    num_dense_layers: int = 0  # leading dense layers in an MoE model (DeepSeek first_k_dense)
    # Multi-head latent attention (DeepSeek V2/V3/R1)
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    # Sliding-window attention
    sliding_window: int | None = None
    sliding_layers: int = 0  # how many of num_layers use the window
    dense_intermediate_size: int | None = None  # dense layers of an MoE model, when it differs
    # Hybrid linear attention (Gated DeltaNet: Qwen3-Next, Qwen3.5/3.6/3.8): layers that keep a
    # fixed recurrent state per sequence instead of a KV cache per token, and that state's shape
    linear_layers: int = 0
    linear: LinearAttention | None = None
    mtp_layers: int = 0  # multi-token-prediction layers (one full-attention layer each)
    attn_output_gate: bool = False  # Qwen3.5-style gated attention: q_proj twice as wide
    # Nemotron-H (`hybrid_override_pattern`): a layer is one block, Mamba2 (M), attention (*),
    # MLP (-) or experts (E); the MLP and expert layers mix no tokens and keep no cache
    mixer_free_layers: int = 0
    ffn_layers: int | None = None  # layers with an MLP or experts; None: every layer
    gated_mlp: bool = True  # gate, up and down; Nemotron-H's relu2 MLP has up and down only
    # DeepSeek-V4: one latent KV head of head_dim (no kv_lora_rank), q and output low-rank,
    # per-layer KV compression (0: window only; 4 with an indexer; 128) and the experts' own
    # dtype (`expert_dtype` "fp4": MXFP4 experts beside FP8 block-quantized layers)
    o_lora_rank: int | None = None
    o_groups: int | None = None
    compress_ratios: tuple[int, ...] = ()
    index_heads: int | None = None
    index_head_dim: int | None = None
    expert_dtype: str | None = None
    vision: VisionTower | None = None  # the vision encoder, for families whose profile is modelled
    # source "inferred": the catalog checkpoint whose architecture the name was taken to have
    inferred_from: str | None = None

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts)

    @property
    def is_hybrid(self) -> bool:
        """Linear-attention layers (a recurrent state per sequence) beside attention layers."""
        return bool(self.linear_layers) and self.linear is not None

    @property
    def attention_layers(self) -> int:
        """Layers that keep a KV cache per token (all of them but linear attention and
        Nemotron-H's MLP and expert layers)."""
        linear = self.linear_layers if self.is_hybrid else 0
        return (self.num_layers or 0) - linear - self.mixer_free_layers

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def is_encoder(self) -> bool:
        """An encoder-only model (BERT, XLM-RoBERTa...): no KV cache, no causal decoding."""
        return self.model_type in ENCODER_MODEL_TYPES

    @property
    def is_pooling(self) -> bool:
        """Served with a pooler (embeddings, scores, classes), not a sampler."""
        arch = self.architecture or ""
        return self.is_encoder or arch.endswith(_POOLING_SUFFIXES)

    def to_json(self) -> dict[str, object]:
        """The facts as `check --format json` spells them (its `model` object)."""
        quant = self.quantization
        return {
            "id": self.model_id,
            "source": self.source,
            "architecture": self.architecture,
            "model_type": self.model_type,
            "num_attention_heads": self.num_attention_heads,
            "num_kv_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "vocab_size": self.vocab_size,
            "max_model_len": self.max_model_len,
            "dtype": self.dtype,
            "quantization": None
            if quant is None
            else {"method": quant.method, "bits": quant.bits, "group_size": quant.group_size},
            "num_experts": self.num_experts,
            "experts_per_token": self.experts_per_token,
            "mla": self.is_mla,
            "sliding_window": self.sliding_window,
            "sliding_layers": self.sliding_layers,
        }


def _int(config: Mapping[str, object], *keys: str) -> int | None:
    for key in keys:
        value = config.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    return None


def _text_config(config: Mapping[str, object]) -> dict[str, object]:
    """Multimodal configs keep the language model under text_config (or llm_config)."""
    merged = dict(config)
    for key in ("text_config", "llm_config", "language_config"):
        inner = config.get(key)
        if isinstance(inner, dict):
            defaults = _TEXT_DEFAULTS.get(str(inner.get("model_type")), {})
            merged = {**merged, **defaults, **inner}
            break
    return merged


def _group_args(raw: Mapping[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    """compressed-tensors: the first config group's `weights` and `input_activations`."""
    groups = raw.get("config_groups")
    if not isinstance(groups, dict):
        return {}, {}
    for group in groups.values():
        if isinstance(group, dict) and isinstance(group.get("weights"), dict):
            inputs = group.get("input_activations")
            return dict(group["weights"]), dict(inputs) if isinstance(inputs, dict) else {}
    return {}, {}


def compressed_scheme(weights: Mapping[str, object], inputs: Mapping[str, object]) -> str | None:
    """The compressed-tensors scheme a config group spells, as vLLM's
    `CompressedTensorsConfig._get_scheme_from_parts` tells them apart: NVFP4 (4-bit float
    weights in groups of 16), MXFP4 (4-bit float), W8A8-FP8 / W8A16-FP8 (8-bit float weights with
    or without float activations), W8A8-INT8, W4A8-INT, W4A8-FP8, WnA16 (integer weights alone;
    `-asym` with zero points)."""
    bits, kind = _int(weights, "num_bits"), str(weights.get("type") or "int")
    in_bits, in_kind = _int(inputs, "num_bits"), str(inputs.get("type") or "int")
    if bits is None:
        return None
    if kind == "float" and bits == 4:
        return "NVFP4" if _int(weights, "group_size") == 16 else "MXFP4"
    if kind == "float":
        return "W8A8-FP8" if in_bits == 8 and in_kind == "float" else "W8A16-FP8"
    if in_bits == 8:
        if in_kind == "float":
            return "W4A8-FP8"
        return "W8A8-INT8" if bits == 8 else "W4A8-INT"
    asym = "-asym" if weights.get("symmetric") is False else ""
    return f"W{bits}A16{asym}"


def _quant(config: Mapping[str, object]) -> QuantFacts | None:
    raw = config.get("quantization_config") or config.get("compression_config")
    if not isinstance(raw, dict):
        return None
    method = str(raw.get("quant_method") or raw.get("format") or "unknown").lower()
    bits = _int(raw, "bits", "w_bit", "num_bits")
    weights, inputs = _group_args(raw)
    if bits is None and weights:  # compressed-tensors
        bits = _int(weights, "num_bits")
    if bits is None and raw.get("load_in_4bit"):
        bits = 4
    elif bits is None and raw.get("load_in_8bit"):
        bits = 8
    if bits is None and method == "modelopt" and "FP4" in str(raw.get("quant_algo", "")).upper():
        bits = 4  # NVIDIA's NVFP4 checkpoints: quant_method modelopt, quant_algo NVFP4
    if bits is None and method in ("fp8", "fbgemm_fp8", "modelopt"):
        bits = 8
    if bits is None and method in ("mxfp4", "modelopt_fp4"):
        bits = 4
    excluded = raw.get("modules_to_not_convert") or raw.get("ignore") or []
    symmetric = weights.get("symmetric", raw.get("sym"))
    return QuantFacts(
        method=method,
        bits=bits,
        group_size=_int(raw, "group_size", "q_group_size") or _int(weights, "group_size"),
        fmt=str(raw["fmt"]) if "fmt" in raw else None,
        excluded_modules=tuple(str(m) for m in excluded) if isinstance(excluded, list) else (),
        scheme=compressed_scheme(weights, inputs) if weights else None,
        symmetric=symmetric if isinstance(symmetric, bool) else None,
        double_quant=raw.get("bnb_4bit_use_double_quant") is True,
    )


def _max_len(config: Mapping[str, object]) -> tuple[int | None, str | None]:
    found = [(v, k) for k in _MAX_LEN_KEYS if (v := _int(config, k)) is not None]
    if not found:
        return None, None
    length, key = min(found)
    rope = config.get("rope_scaling")
    if isinstance(rope, dict) and not str(config.get("model_type", "")).startswith("gemma3"):
        kind = str(rope.get("rope_type") or rope.get("type") or "")
        factor = rope.get("factor")
        if kind not in _ROPE_NOT_MULTIPLIED and isinstance(factor, (int, float)):
            length = int(length * factor)
    return length, key


def _sliding(config: Mapping[str, object], layers: int | None) -> tuple[int | None, int]:
    """(window, number of sliding layers), following how each family lays its layers out."""
    window = _int(config, "sliding_window")
    if window is None or layers is None or config.get("use_sliding_window") is False:
        return None, 0
    layer_types = config.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        return window, sum(1 for t in layer_types if t == "sliding_attention")
    model_type = str(config.get("model_type", ""))
    if model_type == "gemma2":
        return window, (layers + 1) // 2  # even layers are local
    pattern = _int(config, "sliding_window_pattern")
    if model_type.startswith("gemma3") or pattern:
        pattern = pattern or 6
        return window, layers - layers // pattern  # every pattern-th layer is global
    return window, layers


def _dtype(config: Mapping[str, object]) -> str | None:
    raw = config.get("torch_dtype") or config.get("dtype")
    return _DTYPE_NAMES.get(str(raw).lower().removeprefix("torch.")) if raw else None


def model_facts(
    config: Mapping[str, object], model_id: str, source: ModelSource, location: str | None = None
) -> ModelFacts:
    """Read a config.json mapping into `ModelFacts`."""
    text = _text_config(config)
    heads = _int(text, "num_attention_heads", "n_head", "num_heads")
    hidden = _int(text, "hidden_size", "n_embd", "d_model", "dim")
    layers = _int(text, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    pattern = _block_pattern(text)
    if pattern:
        layers = len(pattern)  # vLLM builds one layer per entry (`NemotronHModel`)
    head_dim = _int(text, "head_dim")
    if head_dim is None and hidden and heads:
        head_dim = hidden // heads
    # Step-3/3.5 (step3p5) spell the KV heads num_attention_groups (transformers maps it)
    kv_heads = _int(
        text, "num_key_value_heads", "n_kv_heads", "multi_query_group_num", "num_attention_groups"
    )
    if kv_heads is None and text.get("multi_query") is True:
        kv_heads = 1
    window, sliding_layers = _sliding(text, layers)
    max_len, max_key = _max_len(text)
    if window is not None and max_len is not None and window >= max_len:
        window, sliding_layers = None, 0  # a window as long as the context slides nothing
    architectures = config.get("architectures") or text.get("architectures")
    experts = _int(text, "num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
    shared, dense_layers = _moe_layout(text, layers)
    if pattern and experts:
        dense_layers = pattern.count("-")
    return ModelFacts(
        model_id=model_id,
        source=source,
        location=location,
        architecture=str(architectures[0]) if isinstance(architectures, list) else None,
        model_type=str(text["model_type"]) if "model_type" in text else None,
        hidden_size=hidden,
        num_layers=layers,
        num_attention_heads=heads,
        num_kv_heads=kv_heads if kv_heads is not None else heads,
        head_dim=head_dim,
        vocab_size=_int(text, "vocab_size", "padded_vocab_size"),
        intermediate_size=_int(text, "intermediate_size", "ffn_hidden_size", "n_inner"),
        tie_word_embeddings=bool(
            text.get("tie_word_embeddings", text.get("model_type") in _TIED_BY_DEFAULT)
        ),
        max_model_len=max_len,
        max_len_key=max_key,
        dtype=_dtype(text) or _dtype(config),
        quantization=_quant(config) or _quant(text),
        num_experts=experts if experts else None,
        experts_per_token=_int(
            text, "num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_top_k"
        ),
        moe_intermediate_size=_int(text, "moe_intermediate_size"),
        num_shared_experts=shared,
        num_dense_layers=dense_layers,
        kv_lora_rank=_int(text, "kv_lora_rank"),
        q_lora_rank=_int(text, "q_lora_rank"),
        qk_rope_head_dim=_int(text, "qk_rope_head_dim"),
        qk_nope_head_dim=_int(text, "qk_nope_head_dim"),
        v_head_dim=_int(text, "v_head_dim"),
        sliding_window=window,
        sliding_layers=sliding_layers,
        dense_intermediate_size=_int(text, "intermediate_size_mlp"),
        linear_layers=_linear_layers(text, layers),
        linear=_linear_attention(text),
        mtp_layers=_int(text, "mtp_num_hidden_layers", "num_nextn_predict_layers") or 0,
        attn_output_gate=text.get("attn_output_gate") is True,
        mixer_free_layers=pattern.count("-") + pattern.count("E"),
        ffn_layers=pattern.count("-") + pattern.count("E") if pattern else None,
        gated_mlp=not pattern,
        o_lora_rank=_int(text, "o_lora_rank"),
        o_groups=_int(text, "o_groups"),
        compress_ratios=_compress_ratios(text, layers),
        index_heads=_int(text, "index_n_heads"),
        index_head_dim=_int(text, "index_head_dim"),
        expert_dtype=str(text["expert_dtype"]) if "expert_dtype" in text else None,
        vision=vision_tower(config, hidden),
    )


def _compress_ratios(text: Mapping[str, object], layers: int | None) -> tuple[int, ...]:
    """DeepSeek-V4's `compress_ratios`, one per layer (the list's extra entry is the MTP
    layer's, as vLLM's `DeepseekV4Attention` reads `compress_ratios[layer_id]`)."""
    ratios = text.get("compress_ratios")
    if not isinstance(ratios, list) or not layers:
        return ()
    return tuple(int(r) if isinstance(r, int) else 0 for r in ratios[:layers])


def _kda_config(text: Mapping[str, object]) -> Mapping[str, object] | None:
    """Kimi-Linear's `linear_attn_config`, when it lists KDA layers (vLLM's
    `KimiLinearConfig.is_kda_layer`: the 1-based `kda_layers`; the others, `full_attn_layers`,
    are MLA)."""
    config = text.get("linear_attn_config")
    if not isinstance(config, dict) or not isinstance(config.get("kda_layers"), list):
        return None
    return config


def _block_pattern(text: Mapping[str, object]) -> str:
    """Nemotron-H's `hybrid_override_pattern`, one character per layer: M Mamba2, * attention,
    - MLP, E experts (vLLM's nemotron_h.py `ALL_DECODER_LAYER_TYPES`), or its newer spelling
    `layers_block_type` (mamba, attention, mlp, moe: transformers' NemotronHConfig); "" for
    other models."""
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str):
        return pattern
    blocks = text.get("layers_block_type")
    if text.get("model_type") != "nemotron_h" or not isinstance(blocks, list):
        return ""
    return "".join(_BLOCK_CHARS.get(str(block), "?") for block in blocks)


def _linear_layers(text: Mapping[str, object], layers: int | None) -> int:
    """Layers of linear attention: Nemotron-H's Mamba2 (M) entries, Kimi-Linear's
    `kda_layers`, `layer_types` entries (Qwen3.5/3.6/3.8), else every layer but each
    `full_attention_interval`-th (Qwen3-Next writes only the interval)."""
    if pattern := _block_pattern(text):
        return pattern.count("M")
    kda = _kda_config(text)
    if kda is not None:
        listed = kda.get("kda_layers")
        return len(listed) if isinstance(listed, list) and layers else 0
    if _int(text, "linear_num_value_heads") is None or not layers:
        return 0
    layer_types = text.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        return sum(1 for t in layer_types if t == "linear_attention")
    interval = _int(text, "full_attention_interval")
    return layers - layers // interval if interval else 0


def _kda_attention(config: Mapping[str, object]) -> LinearAttention | None:
    """A KDA layer's state (vLLM's `kda_state_shape` and `kda_state_dtype`, 0.11.1 onwards):
    conv windows over q, k and v of num_heads x head_dim each in the model's dtype, and one
    head_dim x head_dim recurrent state per head, always float32."""
    heads, dim = _int(config, "num_heads"), _int(config, "head_dim")
    kernel = _int(config, "short_conv_kernel_size")
    if heads is None or dim is None or kernel is None:
        return None
    return LinearAttention(heads, heads, dim, dim, kernel, "float32", kind="kda")


def _mamba2_attention(text: Mapping[str, object]) -> LinearAttention | None:
    """A Nemotron-H Mamba2 layer's state (vLLM's `NemotronHForCausalLM
    .get_mamba_state_shape_from_config`): conv over heads x head_dim + 2 x n_groups x
    ssm_state_size channels, one head_dim x ssm_state_size state per head; the recurrent
    state's dtype is the config's `mamba_ssm_cache_dtype` where it names one."""
    shape = [
        _int(text, key)
        for key in ("n_groups", "mamba_num_heads", "ssm_state_size", "mamba_head_dim")
    ]
    kernel = _int(text, "conv_kernel")
    if any(value is None for value in shape) or kernel is None:
        return None
    groups, heads, state, head_dim = (int(v or 0) for v in shape)
    ssm = _DTYPE_NAMES.get(str(text.get("mamba_ssm_cache_dtype")).lower())
    return LinearAttention(groups, heads, state, head_dim, kernel, ssm, kind="mamba2")


def _linear_attention(text: Mapping[str, object]) -> LinearAttention | None:
    if _block_pattern(text):
        return _mamba2_attention(text)
    kda = _kda_config(text)
    if kda is not None:
        return _kda_attention(kda)
    shape = [
        _int(text, key)
        for key in (
            "linear_num_key_heads",
            "linear_num_value_heads",
            "linear_key_head_dim",
            "linear_value_head_dim",
            "linear_conv_kernel_dim",
        )
    ]
    if any(value is None for value in shape):
        return None
    key_heads, value_heads, key_dim, value_dim, kernel = (int(v or 0) for v in shape)
    ssm = text.get("mamba_ssm_dtype")
    return LinearAttention(
        key_heads, value_heads, key_dim, value_dim, kernel, _DTYPE_NAMES.get(str(ssm).lower())
    )


def _moe_layout(text: Mapping[str, object], layers: int | None) -> tuple[int, int]:
    """(shared experts per MoE layer, dense layers), as each MoE family writes them.

    DeepSeek: n_shared_experts and first_k_dense_replace (Kimi-Linear: num_shared_experts).
    Qwen2-MoE: one shared expert of shared_expert_intermediate_size, counted here in
    moe_intermediate_size units. Llama 4: one shared expert per MoE layer, and every
    interleave_moe_layer_step-th layer is MoE."""
    shared = _int(text, "n_shared_experts", "num_shared_experts") or 0
    shared_size, expert_size = (
        _int(text, "shared_expert_intermediate_size"),
        _int(text, "moe_intermediate_size"),
    )
    if not shared and shared_size and expert_size:
        shared = max(1, shared_size // expert_size)
    dense = _int(text, "first_k_dense_replace") or 0
    if str(text.get("model_type", "")).startswith("llama4"):
        shared = shared or 1
        step = _int(text, "interleave_moe_layer_step") or 1
        dense = (layers or 0) - (layers or 0) // step
    return shared, dense


# --- where configs come from --------------------------------------------------------------------


def read_config_file(path: Path) -> dict[str, object]:
    """Load a config.json, turning every way it can be broken into a `ModelConfigError`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        reason = exc.strerror or exc
        raise ModelConfigError(ErrorText("model.cannot-read", path=path, reason=reason)) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelConfigError(ErrorText("model.not-json", path=path, reason=exc)) from exc
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ModelConfigError(ErrorText("model.not-object", path=path, kind=kind))
    return data


def _config_in(path: Path) -> Path:
    return path / "config.json" if path.is_dir() else path


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache, as huggingface_hub finds it."""
    if cache := os.environ.get("HF_HUB_CACHE"):
        return Path(cache)
    home = os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")
    return Path(home) / "hub"


def _from_hf_cache(model_id: str) -> Path | None:
    repo = hf_cache_dir() / ("models--" + model_id.replace("/", "--"))
    ref = repo / "refs" / "main"
    snapshots = repo / "snapshots"
    if ref.is_file():
        candidate = snapshots / ref.read_text(encoding="utf-8").strip() / "config.json"
        if candidate.is_file():
            return candidate
    if snapshots.is_dir():
        found = sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime)
        if found:
            return found[-1]
    return None


def catalog() -> dict[str, dict[str, object]]:
    """The built-in catalog: Hugging Face id -> config.json."""
    models: dict[str, dict[str, object]] = _data.load("catalog.json")["models"]
    return models


def catalog_sources() -> dict[str, str]:
    """Where each catalog entry's config.json came from (a URL or the reference file)."""
    sources: dict[str, str] = _data.load("catalog.json").get("sources", {})
    return sources


def catalog_id(model_id: str) -> str | None:
    """The catalog's spelling of `model_id` (case-insensitive, known aliases), or None."""
    aliases: dict[str, str] = _data.load("catalog.json")["aliases"]
    wanted = model_id.strip().rstrip("/").lower()
    for name, target in aliases.items():
        if name.lower() == wanted:
            return target
    return next((name for name in catalog() if name.lower() == wanted), None)


def _from_hub(model_id: str, timeout_s: float = 10.0) -> dict[str, object]:
    import urllib.error
    import urllib.request

    url = f"https://huggingface.co/{model_id}/resolve/main/config.json"
    request = urllib.request.Request(url)
    if token := os.environ.get("HF_TOKEN"):
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            data = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        gated = exc.code in (401, 403)
        hint = ErrorText("hint.gated-model") if gated else ErrorText("hint.model-id")
        status = ErrorText("model.hub-status", status=exc.code, url=url)
        raise ModelConfigError(status, hint) from exc
    except (urllib.error.URLError, TimeoutError, ValueError) as exc:
        raise ModelConfigError(ErrorText("model.cannot-fetch", url=url, reason=exc)) from exc
    if not isinstance(data, dict):
        raise ModelConfigError(ErrorText("model.url-not-object", url=url))
    return data


def infer_model(model_id: str) -> ModelFacts | None:
    """Facts for a name the catalog lacks, from the catalog checkpoint it is a copy or a
    fine-tune of (`/models/gemma-3-4b-it`, `org/Llama-3-8B-Instruct-Gradient-1048k`).

    The family fixes the architecture (layers, heads, KV heads, sizes, experts, dtype). A
    quantization the name announces (`-AWQ`, `-GPTQ-Int8`, `-FP8`) replaces the checkpoint's.
    The context length is kept only for a copy under the checkpoint's own name: fine-tunes
    often stretch it (`-1048k`), so for them it is unknown."""
    found = model_names.match_name(model_id, catalog())
    if found is None:
        return None
    config = dict(catalog()[found.checkpoint])
    announced = model_names.quantization_in_name(model_id)
    if announced is not None and not found.exact:
        config["quantization_config"] = announced
    facts = model_facts(config, model_id, "inferred", None)
    return replace(
        facts,
        inferred_from=found.checkpoint,
        max_model_len=facts.max_model_len if found.exact else None,
        max_len_key=facts.max_len_key if found.exact else None,
    )


def _local(model_id: str, model_config: Path | None) -> ModelFacts | None:
    if model_config is not None:
        path = _config_in(model_config)
        return model_facts(
            read_config_file(path), model_id or str(model_config), "local", str(path)
        )
    local = Path(model_id).expanduser()
    if (local / "config.json").is_file():
        path = local / "config.json"
        return model_facts(read_config_file(path), model_id, "local", str(path))
    cached = _from_hf_cache(model_id)
    if cached is not None:
        return model_facts(read_config_file(cached), model_id, "hf-cache", str(cached))
    return None


def find_model(
    model_id: str | None, *, model_config: Path | None = None, online: bool = False
) -> ModelFacts | None:
    """Find and read the model's config; None when no source knows it (an unknown model)."""
    if model_config is None and model_id is None:
        return None
    found = _local(model_id or "", model_config)
    if found is not None or model_id is None:
        return found
    name = catalog_id(model_id)
    if name is not None:
        return model_facts(catalog()[name], name, "catalog", None)
    if online and "/" in model_id and not Path(model_id).expanduser().exists():
        return model_facts(_from_hub(model_id), model_id, "hub", model_id)
    return infer_model(model_id)


@dataclass(frozen=True)
class NamedArchitecture:
    """The architecture a model's name says where no config is at hand: that of the checkpoints
    of its family (`Olmo-3-32B-Think-Q8_0.gguf` beside the catalog's `allenai/Olmo-3-1125-32B`,
    `/home/me/MiniCPM-V-2` beside the `openbmb/MiniCPM-V-2_6` vLLM's tests run as MiniCPMV)."""

    architecture: str
    model_type: str | None  # where the checkpoint it is taken from is the catalog's
    taken_from: str  # the checkpoint whose config (or vLLM test entry) says it


@cache
def _catalog_labels() -> tuple[tuple[str, str], ...]:
    """(checkpoint, architecture) of every catalog config."""
    return tuple(
        (name, str(facts.architecture))
        for name, config in catalog().items()
        if (facts := model_facts(config, name, "catalog")).architecture is not None
    )


@cache
def _example_labels() -> tuple[tuple[str, str], ...]:
    """(checkpoint, architecture) of the checkpoints vLLM's tests run each architecture with
    (data/vllm_example_models.json, scripts/build_example_models.py)."""
    table: dict[str, list[str]] = _data.load("vllm_example_models.json")["architectures"]
    return tuple((name, arch) for arch, names in table.items() for name in names)


@cache
def infer_architecture(model_id: str) -> NamedArchitecture | None:
    """The architecture (and model type) of the family a name belongs to, from the catalog's
    configs first, else from vLLM's test checkpoints; None where its family is not pinned down
    or its checkpoints disagree. For names `infer_model` cannot match to one checkpoint."""
    found = model_names.sibling_label(model_id, _catalog_labels())
    if found is None:
        found = model_names.sibling_label(model_id, _example_labels())
    if found is None:
        return None
    architecture, name = found
    config = catalog().get(name)
    model_type = None if config is None else model_facts(config, name, "catalog").model_type
    return NamedArchitecture(architecture, model_type, name)
