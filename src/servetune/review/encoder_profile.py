"""The vision encoder's share of vLLM's startup profile, release by release.

Before sizing the KV cache vLLM runs its dummy batch through the vision encoder too, with every
item at its largest (most tiles, most pixels):
- mllama (Llama 3.2 Vision) runs on V0's encoder-decoder runner (`enc_dec_model_runner.
  profile_run`, 0.6.2 to its removal): max_num_seqs dummy sequences, each with
  `--limit-mm-per-prompt` images (1 by default) of max_num_tiles 560 px tiles, all through the
  encoder at once, whatever --max-model-len says. Its attention (`MllamaVisionSdpaAttention`)
  takes a dense aspect-ratio mask of (tiles x padded patches)^2 per image
  (`_prepare_aspect_ratio_attention_mask`), and the projector's cross-attention states stay
  alive through the decoder's pass.
- Qwen2-VL / Qwen2.5-VL: V0 (`model_runner.profile_run`) caps the dummy sequences at
  max_num_batched_tokens // the item's tokens (at least 1), each with its images; V1
  (`gpu_model_runner.profile_run`, 0.8+) runs min(ceil(budget / tokens per item),
  max_num_seqs x images per prompt) items, budget = max(max_num_batched_tokens, tokens per item)
  (`compute_encoder_budget`), and keeps their embeddings (the encoder cache) through the
  decoder's pass. An item is an image at the processor's max_pixels (12,845,056: 65,536 patches
  of 14 px, 16,384 LLM tokens after the 2 x 2 merge); vision attention runs on FlashAttention.
- Qwen3.5 / Qwen3.6 load Qwen3-VL's vision transformer (`Qwen3_VisionTransformer`) and are
  profiled as Qwen2.5-VL on V1: an image at 16,777,216 pixels is 65,536 patches of 16 px, 16,384
  tokens; its MLP has two matrices (fc1, GELU, fc2) and its interpolated position embeddings stay
  alive through the layers. `--limit-mm-per-prompt` 0 for every modality, or
  `--language-model-only`, leaves the tower out (`_mark_tower_model`).
The pass's peak is counted per position from what the layers hold (below); the tower's weights
are counted too (the text arithmetic leaves them out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from servetune.review.model import ModelFacts
from servetune.review.settings import GIB, Settings
from servetune.review.vision_tower import VisionTower
from servetune.vllm.flags import version_at_least

_V1_FROM = "0.8.0"
_QWEN_GATHER_UNTIL = "0.12.0"  # Qwen2.5-VL's vision attention all-gathers q, k, v before it
_V0_MAX_NUM_SEQS = 256  # EngineArgs.max_num_seqs on V0
_QWEN_TEMPORAL_PATCH = 2  # frames per patch (an image is padded to two)
_CHANNELS = 3
# Pixel values arrive as float32 and are cast to the model's dtype: 6 bytes, 3 two-byte values.
_PIXEL_VALUES = 3
# mllama pads each tile's patches (+1 class token) to a multiple of 8, and its gated positional
# embedding holds one table per aspect-ratio id (9: ids 0 to 8).
_MLLAMA_PAD = 8
_MLLAMA_ASPECT_RATIOS = 9
# The counted mllama peak (mask + kept layer outputs + a layer's 3 hidden and 2 MLP widths) is
# 1.12 x what vLLM logged for Llama-3.2-11B-Vision at 128 images (36.63 GiB, vllm#12126, fit):
# the source does not say which of the counted tensors torch has already freed at the peak, so
# this factor is fitted there. Qwen's count is taken as it is (vllm#16570: 2.05 GiB counted,
# 2.51 GiB logged with the decoder's pass).
_MLLAMA_FITTED = 0.89
ENCODER_SPREAD = (0.8, 1.2)


@dataclass(frozen=True)
class EncoderPeak:
    """The encoder's pass at startup, per GPU: its peak (GiB), the embeddings it keeps through
    the decoder's pass (GiB), and how many items (images) it ran at once."""

    pass_gib: float
    kept_gib: float
    items: int


def llm_tokens_per_item(tower: VisionTower) -> int:
    """What one largest image costs in the language model (mllama: encoder tokens)."""
    if tower.family == "mllama":
        return tower.tiles * _tile_patches(tower)
    return _qwen_patches(tower) // (tower.merge * tower.merge)


def _tile_patches(tower: VisionTower) -> int:
    side = tower.image_size // tower.patch if tower.patch else 0
    return side * side + 1  # + the class token


def _qwen_patches(tower: VisionTower) -> int:
    """Patches of the largest image at the processor's max_pixels (VisionTower.max_pixels)."""
    side = math.isqrt(tower.max_pixels) // (tower.patch * tower.merge) * tower.merge
    return side * side


def positions_per_item(tower: VisionTower) -> int:
    """Positions one image takes inside the encoder."""
    if tower.family == "mllama":
        padded = math.ceil(_tile_patches(tower) / _MLLAMA_PAD) * _MLLAMA_PAD
        return tower.tiles * padded
    return _qwen_patches(tower)


def profiled_items(tower: VisionTower, settings: Settings, version: str | None) -> int:
    """How many images the profile runs through the encoder at once."""
    limit = settings.images_per_prompt
    if limit <= 0:
        return 0
    if tower.family == "mllama":  # V0's encoder-decoder runner, every release that served it
        return _v0_max_num_seqs(settings, version) * limit
    per_item = llm_tokens_per_item(tower)
    budget = settings.max_num_batched_tokens or per_item
    if version is None or version_at_least(version, _V1_FROM):
        return min(math.ceil(max(budget, per_item) / per_item), settings.max_num_seqs * limit)
    sequences = max(1, min(settings.max_num_seqs, budget // (per_item * limit)))
    return sequences * limit


def _v0_max_num_seqs(settings: Settings, version: str | None) -> int:
    """max_num_seqs as V0 ran it: the command's, else V0's 256 (the larger defaults of 0.8+ that
    `settings` may have taken are V1's, and mllama never ran on V1)."""
    if "--max-num-seqs" in settings.user_set:
        return settings.max_num_seqs
    if version is None or version_at_least(version, _V1_FROM):
        return _V0_MAX_NUM_SEQS
    return settings.max_num_seqs


def _values_per_position(tower: VisionTower, tp: int, version: str | None) -> float:
    """Two-byte values alive per encoder position at the pass's peak."""
    d, inner = tower.hidden, tower.intermediate / tp
    if tower.family == "mllama":
        # the mask's row, the kept layer outputs, a layer's input, residual and norm, fc1 + act
        mask = positions_per_item(tower)
        return (mask + (tower.kept_layers + 3) * d + 2 * inner) * _MLLAMA_FITTED
    # Qwen: before 0.12 attention gathers q, k, v over the TP ranks (`all_gather_interleave`,
    # then a copy per rank); from 0.12 each rank keeps its own heads.
    gathered = tp > 1 and (version is None or not version_at_least(version, _QWEN_GATHER_UNTIL))
    attention = 2 * d + 3 * d / tp + (6 * d if gathered else 0)
    mlp = 3 * d + (3 if tower.gated_mlp else 2) * inner
    pixels = _CHANNELS * _QWEN_TEMPORAL_PATCH * tower.patch * tower.patch * _PIXEL_VALUES
    # Qwen3's learned position embeddings, interpolated onto every patch, stay in the encoder
    # metadata through every layer (`prepare_encoder_metadata`, "pos_embeds").
    positions = d if tower.position_table else 0
    return max(attention, mlp) + pixels + positions


def encoder_peak(model: ModelFacts, settings: Settings, version: str | None) -> EncoderPeak | None:
    """The encoder's pass at startup, or None for a model whose tower is not modelled."""
    tower = model.vision
    if tower is None or not tower.profiled:
        return None
    items = profiled_items(tower, settings, version)
    tp = settings.tensor_parallel_size
    positions = items * positions_per_item(tower)
    peak = positions * _values_per_position(tower, tp, version) * 2 / GIB
    # What the encoder cache keeps: the merger's output, with Qwen3-VL's deepstack mergers'
    # concatenated to it (out_hidden x (1 + deepstack) per token).
    width = tower.out_hidden * (1 + tower.deepstack)
    kept = items * llm_tokens_per_item(tower) * width * 2 / GIB
    return EncoderPeak(peak, kept, items)


def tower_weight_bytes(model: ModelFacts, settings: Settings | None = None) -> int:
    """The vision tower's and projector's weights (16-bit, as checkpoints keep them: quantized
    checkpoints leave the tower unquantized); none when `settings` serve no image, which leaves
    the tower unloaded."""
    tower = model.vision
    if tower is None or (settings is not None and settings.images_per_prompt <= 0):
        return 0
    d = tower.hidden
    layer = 4 * d * d + (3 if tower.gated_mlp else 2) * d * tower.intermediate
    params = tower.layers * layer
    if tower.family == "mllama":
        params += tower.projector_in * tower.out_hidden + _CHANNELS * tower.patch**2 * d
        params += (_MLLAMA_ASPECT_RATIOS * tower.tiles + 1) * _tile_patches(tower) * d
    elif tower.family == "internvl_chat":
        params += _internvl_unsplit_params(tower)
    else:
        mergers = 1 + tower.deepstack
        params += mergers * tower.projector_in * (tower.projector_in + tower.out_hidden)
        params += _CHANNELS * _QWEN_TEMPORAL_PATCH * tower.patch**2 * d
        params += tower.position_table * d
    return params * 2


def _internvl_unsplit_params(tower: VisionTower) -> int:
    """InternViT's embeddings (a plain Conv2d patch embedding, the class token and a position per
    patch) and InternVL's projector `mlp1` (LayerNorm, Linear(4 d, h), GELU, Linear(h, h): plain
    nn.Linear in internvl.py, every release): layers no tensor-parallel rank splits."""
    d, side = tower.hidden, tower.image_size // tower.patch if tower.patch else 0
    embeddings = _CHANNELS * tower.patch**2 * d + (1 + side * side + 1) * d
    projector = tower.projector_in * (2 + tower.out_hidden) + tower.out_hidden**2
    return embeddings + projector


def tower_rank_extra_bytes(model: ModelFacts, settings: Settings) -> int:
    """Bytes each tensor-parallel rank holds beyond 1/TP of `tower_weight_bytes`: the tower's
    layers vLLM keeps whole on every rank, their other (TP - 1)/TP.

    InternVL (intern_vit.py, 0.6 to 0.33): the MLP is split (ColumnParallelLinear /
    RowParallelLinear), attention only where TP divides the heads; otherwise every rank keeps it
    whole (0.6-0.10: `InternSdpaAttention`, plain nn.Linear; from 0.11: `use_data_parallel`,
    `disable_tp`). InternViT-6B's 25 heads split at no TP above 1 but 5 and 25. The
    embeddings and the projector are never split. Other towers are taken as split evenly."""
    tower, tp = model.vision, settings.tensor_parallel_size
    if tower is None or tp <= 1 or tower.family != "internvl_chat":
        return 0
    if tower_weight_bytes(model, settings) == 0:
        return 0
    whole = _internvl_unsplit_params(tower)
    if tower.heads and tower.heads % tp:
        whole += tower.layers * 4 * tower.hidden * tower.hidden
    return int(whole * 2 * (tp - 1) / tp)
