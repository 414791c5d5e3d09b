"""A vision encoder's shape, read from a multimodal checkpoint's `vision_config`: what vLLM's
startup profile runs through it (encoder_profile) and the weights it adds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


def _int(config: Mapping[str, object], *keys: str) -> int | None:
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


@dataclass(frozen=True)
class VisionTower:
    """A vision encoder's shape (`vision_config`), which fixes what vLLM's startup profile runs
    through it. `family` is the checkpoint's model_type (mllama, qwen2_vl, qwen2_5_vl, qwen3_5,
    qwen3_5_moe)."""

    family: str
    hidden: int
    layers: int  # every encoder layer (mllama: local and global)
    intermediate: int
    patch: int
    image_size: int  # a tile's side (mllama)
    tiles: int  # tiles per image (mllama's max_num_tiles); 1 elsewhere
    kept_layers: int  # layer outputs kept for the projector (mllama's intermediate layers)
    merge: int  # patches merged into one LLM token per side (Qwen's spatial_merge_size)
    out_hidden: int  # what the projector writes per token (the LLM's hidden size)
    projector_in: int  # what the projector reads per token
    gated_mlp: bool  # SwiGLU (three matrices) rather than fc1/act/fc2
    max_pixels: int = 0  # the processor's largest image, which the profile's dummy image takes
    position_table: int = 0  # learned position embeddings, interpolated onto every patch
    deepstack: int = 0  # extra mergers whose outputs join the final one (Qwen3-VL)
    heads: int = 0  # attention heads (InternViT: whether tensor parallelism can split them)

    @property
    def profiled(self) -> bool:
        """Whether the encoder's startup profile is modelled (encoder_profile); a tower that is
        not still counts its weights."""
        return self.family in PROFILED_FAMILIES


# Vision towers of the families whose profile is modelled, for configs that leave vision_config
# out (the catalog keeps text facts only). From real config.json files: Llama-3.2-11B-Vision's
# vision_config as quoted in danbev/learning-ai notes/llama.cpp/llama-3-2-vision.md (hidden 1280,
# 32 + 8 global layers, 16 heads, intermediate 5120, 560 px tiles of 14 px patches, 4 tiles,
# vision_output_dim 7680 = 1280 x (1 + 5 intermediate layers)); Qwen2.5-VL-7B-Instruct's (depth 32,
# hidden 1280, intermediate 3420, patch 14, spatial_merge_size 2), the same in every size but
# out_hidden_size, the LLM's hidden size (vLLM's tests/models/.../test_qwen2_5_vl rot_pos test);
# Qwen2-VL's (embed_dim 1280, depth 32, mlp_ratio 4, patch 14, spatial_merge_size 2).
_VISION_DEFAULTS: dict[str, dict[str, object]] = {
    "mllama": {
        "hidden_size": 1280,
        "num_hidden_layers": 32,
        "num_global_layers": 8,
        "intermediate_size": 5120,
        "image_size": 560,
        "patch_size": 14,
        "max_num_tiles": 4,
        "intermediate_layers_indices": [3, 7, 15, 23, 30],
    },
    "qwen2_5_vl": {
        "hidden_size": 1280,
        "depth": 32,
        "intermediate_size": 3420,
        "patch_size": 14,
        "spatial_merge_size": 2,
    },
    "qwen2_vl": {
        "embed_dim": 1280,
        "depth": 32,
        "mlp_ratio": 4,
        "patch_size": 14,
        "spatial_merge_size": 2,
    },
}


# InternVL (`InternVLChatModel`, vLLM's internvl.py + intern_vit.py): OpenGVLab pairs one of two
# InternViT towers with each language model, as its model cards' tables list them: InternViT-6B
# (InternVL2-26B/40B/76B, InternVL2.5-26B/38B/78B, InternVL3-38B/78B) with the language models of
# 20B parameters and more, InternViT-300M with the smaller ones (InternVL3-14B included). Shapes
# from real configs: InternVL-Chat-V1-5's vision_config (search index id 11130836921: hidden 3200,
# 45 layers, 25 heads, intermediate 12800, 448 px of 14 px patches, no qkv bias) and
# InternViT-300M's (hidden 1024, 24 layers, 16 heads, intermediate 4096; id 49265602798).
_INTERN_VIT_6B: dict[str, object] = {
    "hidden_size": 3200,
    "num_hidden_layers": 45,
    "num_attention_heads": 25,
    "intermediate_size": 12800,
    "image_size": 448,
    "patch_size": 14,
}
_INTERN_VIT_300M: dict[str, object] = {
    "hidden_size": 1024,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
    "image_size": 448,
    "patch_size": 14,
}
_INTERN_VIT_6B_FROM = 20e9  # language-model parameters (active ones for an MoE)
# Families whose encoder profile encoder_profile models; the others count their weights only.
PROFILED_FAMILIES = frozenset({"mllama", "qwen2_vl", "qwen2_5_vl", "qwen3_5", "qwen3_5_moe"})


def _language_params(config: Mapping[str, object]) -> float:
    """About how many parameters the language model has (active ones for an MoE): layers x
    (4 h^2 for attention + 3 h x the MLP's width)."""
    text = config.get("llm_config") or config.get("text_config") or {}
    if not isinstance(text, Mapping):
        return 0.0
    hidden = _int(text, "hidden_size") or 0
    layers = _int(text, "num_hidden_layers") or 0
    width = _int(text, "intermediate_size") or 0
    if _int(text, "num_experts_per_tok") and _int(text, "moe_intermediate_size"):
        width = (_int(text, "num_experts_per_tok") or 0) * (
            _int(text, "moe_intermediate_size") or 0
        )
    return float(layers * (4 * hidden * hidden + 3 * hidden * width))


def _internvl_vision(config: Mapping[str, object]) -> dict[str, object]:
    """An InternVL checkpoint's vision_config, or the tower its release pairs with its language
    model where the config leaves it out (the catalog keeps text facts only)."""
    given = config.get("vision_config")
    if isinstance(given, dict) and _int(given, "hidden_size"):
        return dict(given)
    big = _language_params(config) >= _INTERN_VIT_6B_FROM
    return dict(_INTERN_VIT_6B if big else _INTERN_VIT_300M)


# Qwen3-VL's vision transformer (vLLM `Qwen3_VisionTransformer`), which Qwen3.5 and Qwen3.6
# (Qwen3_5ForConditionalGeneration, Qwen3_5MoeForConditionalGeneration) load too: read only from
# a checkpoint's own vision_config (the catalog's entries of the family carry it), no defaults.
_VISION_FROM_CONFIG = frozenset({"qwen3_5", "qwen3_5_moe"})
# The image processor's max_pixels (preprocessor_config.json), which vLLM's profile sizes its
# dummy image with (`get_image_size_with_most_features`): Qwen2-VL and Qwen2.5-VL's `max_pixels`
# 12,845,056; Qwen3.5/3.6's `size.longest_edge` 16,777,216 (Qwen3.6-35B-A3B's published
# preprocessor_config, search index id 57034692230: patch 16, merge 2, shortest_edge 65,536).
_MAX_PIXELS = {
    "mllama": 0,
    "qwen2_vl": 12845056,
    "qwen2_5_vl": 12845056,
    "qwen3_5": 16777216,
    "qwen3_5_moe": 16777216,
    "internvl_chat": 0,
}


def _vision_config(config: Mapping[str, object], family: str) -> dict[str, object] | None:
    given = config.get("vision_config")
    if family == "internvl_chat":
        return _internvl_vision(config)
    if family in _VISION_FROM_CONFIG:
        return dict(given) if isinstance(given, dict) and given else None
    if family not in _VISION_DEFAULTS:
        return None
    return {**_VISION_DEFAULTS[family], **(given if isinstance(given, dict) else {})}


def vision_tower(config: Mapping[str, object], text_hidden: int | None) -> VisionTower | None:
    """The vision tower of a family whose profile is modelled, else None."""
    family = str(config.get("model_type") or "")
    vision = _vision_config(config, family)
    if vision is None:
        return None
    hidden = _int(vision, "embed_dim", "hidden_size") or 0
    layers = (_int(vision, "depth", "num_hidden_layers") or 0) + (
        _int(vision, "num_global_layers") or 0
    )
    ratio = vision.get("mlp_ratio")
    intermediate = _int(vision, "intermediate_size") or int(
        hidden * (ratio if isinstance(ratio, (int, float)) else 4)
    )
    kept = vision.get("intermediate_layers_indices")
    kept_layers = len(kept) if isinstance(kept, list) else 0
    merge = _int(vision, "spatial_merge_size") or _pixel_shuffle(config)
    out = _int(vision, "out_hidden_size") or text_hidden or hidden
    deepstack = vision.get("deepstack_visual_indexes")
    projector_in = hidden * (1 + kept_layers) if family == "mllama" else hidden * merge * merge
    return VisionTower(
        family=family,
        hidden=hidden,
        layers=layers,
        intermediate=intermediate,
        patch=_int(vision, "patch_size") or 14,
        image_size=_int(vision, "image_size") or 0,
        tiles=_int(vision, "max_num_tiles") or 1,
        kept_layers=kept_layers,
        merge=merge,
        out_hidden=out,
        projector_in=projector_in,
        gated_mlp=family == "qwen2_5_vl",
        max_pixels=_MAX_PIXELS[family],
        position_table=_int(vision, "num_position_embeddings") or 0,
        deepstack=len(deepstack) if isinstance(deepstack, list) else 0,
        heads=_int(vision, "num_attention_heads", "num_heads") or 0,
    )


def _pixel_shuffle(config: Mapping[str, object]) -> int:
    """Patches folded into one token per side by InternVL's pixel shuffle (`downsample_ratio`,
    0.5 in every release: 2), 1 elsewhere."""
    if config.get("model_type") != "internvl_chat":
        return 1
    ratio = config.get("downsample_ratio", 0.5)
    return round(1 / ratio) if isinstance(ratio, (int, float)) and ratio > 0 else 2
