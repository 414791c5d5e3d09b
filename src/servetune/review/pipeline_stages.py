"""Pipeline parallel stages as vLLM lays them out: the decoder layers each stage holds, the
embedding on the first and the LM head on the last, the cards each stage's ranks run on, and
how the KV cache is sized from the stages' memory, release by release."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from servetune.review.encoder_profile import tower_rank_extra_bytes, tower_weight_bytes
from servetune.review.hardware import GpuSpec
from servetune.review.model import ModelFacts
from servetune.review.settings import DTYPE_BYTES, Settings
from servetune.review.weights import rank_extra_bytes
from servetune.vllm.flags import version_at_least

# vllm/distributed/utils.py `get_pp_indices`: from 0.8.0 the layers left over after an even
# split go one each to the stages before the last (the last holds the final norm and the LM
# head), before it the last stage took them all. VLLM_PP_LAYER_PARTITION overrides either.
_REMAINDER_BEFORE_LAST_FROM = "0.8.0"
# vllm/v1/core/kv_cache_utils.py `get_kv_cache_configs`: 0.14.0 to 0.16.x check the smallest
# stage's KV memory against one full-length sequence of every layer of the model (all stages'
# layers merged), not of that stage's own layers; before and after, each stage is checked
# against its own layers. Every release gives each stage the blocks of the smallest.
_MERGED_CHECK = ("0.14.0", "0.17.0")


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: its decoder layers, its weight bytes per GPU and its binding card."""

    index: int
    layers: int
    weight_bytes_per_gpu: float
    gpu: GpuSpec | None
    first: bool
    last: bool


def stage_layers(num_layers: int, settings: Settings, version: str | None) -> tuple[int, ...]:
    """Decoder layers on each stage: VLLM_PP_LAYER_PARTITION when it adds up, else vLLM's
    split for the release (no release: the newest)."""
    pp = settings.pipeline_parallel_size
    given = settings.pp_layer_partition
    if given is not None and len(given) == pp and sum(given) == num_layers:
        return given
    parts = [num_layers // pp] * pp
    remaining = num_layers % pp
    if version is not None and not version_at_least(version, _REMAINDER_BEFORE_LAST_FROM):
        parts[-1] += remaining
        return tuple(parts)
    for i in range(2, remaining + 2):
        parts[-i] += 1
    return tuple(parts)


def _vocab_matrix_bytes(model: ModelFacts, settings: Settings) -> int:
    """One vocab x hidden matrix (the embedding or the LM head), in the compute dtype."""
    width = DTYPE_BYTES.get(settings.dtype or "bfloat16", 2)
    return (model.vocab_size or 0) * (model.hidden_size or 0) * width


def stages(
    model: ModelFacts,
    settings: Settings,
    total_bytes: int,
    *,
    cards: Sequence[GpuSpec],
    gpu: GpuSpec | None,
    version: str | None,
) -> tuple[Stage, ...]:
    """The stages of a pipeline parallel instance. `total_bytes` are the model's weights
    (`weight_bytes`); the first stage holds the embedding and a vision tower, the last the LM
    head (its own copy where the embeddings are tied), the decoder layers their share of the
    rest. Ranks are laid out stage by stage (rank = stage x TP + TP rank) over the cards in
    the order given; a stage runs at its smallest card."""
    tp, pp = settings.tensor_parallel_size, settings.pipeline_parallel_size
    layers = model.num_layers or 0
    split = stage_layers(layers, settings, version)
    matrix = _vocab_matrix_bytes(model, settings)
    body = max(0, total_bytes - (matrix if model.tie_word_embeddings else 2 * matrix))
    laid_out = len(cards) >= tp * pp
    # what each rank holds beyond its 1/TP share, spread over the decoder layers (`weights`)
    extra = rank_extra_bytes(model, settings, version)
    found: list[Stage] = []
    for index, count in enumerate(split):
        first, last = index == 0, index == pp - 1
        share = count / layers if layers else 1 / pp
        own = body * share
        own += (matrix + tower_weight_bytes(model, settings) if first else 0) + (
            matrix if last else 0
        )
        ranks = cards[index * tp : (index + 1) * tp] if laid_out else ()
        card = min(ranks, key=lambda c: c.memory_gib) if ranks else gpu
        tower_extra = tower_rank_extra_bytes(model, settings) if first else 0
        found.append(Stage(index, count, own / tp + extra * share + tower_extra, card, first, last))
    return tuple(found)


def merged_check(version: str | None) -> bool:
    """Whether the release checks the smallest stage's KV memory against every layer's."""
    since, until = _MERGED_CHECK
    if version is None:
        return False
    return version_at_least(version, since) and not version_at_least(version, until)
