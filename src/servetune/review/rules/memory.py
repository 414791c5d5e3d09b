"""Memory: weights, the KV cache, max-model-len and gpu-memory-utilization."""

from __future__ import annotations

from collections.abc import Iterator

from servetune.review.capacity import Estimate
from servetune.review.rules.base import Context, Edit, Fact, Hit, rule


@rule("model-len-exceeds-model", "error", "--max-model-len")
def model_len_exceeds_model(ctx: Context) -> Iterator[Hit]:
    asked = ctx.command.integer("--max-model-len")
    model = ctx.model
    if (
        asked is None
        or model is None
        or model.max_model_len is None
        or asked <= model.max_model_len
    ):
        return
    if ctx.command.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") == "1":
        return
    facts: dict[str, Fact] = {
        "asked": asked,
        "limit": model.max_model_len,
        "key": model.max_len_key or "max_position_embeddings",
        "model": model.model_id,
    }
    edits = (Edit("--max-model-len", str(model.max_model_len)),)
    yield Hit(facts, None, edits)


def _memory_facts(ctx: Context, est: Estimate) -> dict[str, Fact]:
    gpu = ctx.hardware.spec if ctx.hardware else None
    return {
        "weights": round(est.weights_gib_per_gpu, 1),
        "budget": round(est.budget_gib_per_gpu or 0.0, 1),
        "memory": gpu.memory_gib if gpu else 0,
        "util": ctx.settings.gpu_memory_utilization,
        "tp": ctx.settings.tensor_parallel_size,
        "machine": ctx.machine(),
        "model": ctx.model.model_id if ctx.model else "",
        "reserve": round(est.reserve_gib_per_gpu, 1),
    }


@rule("weights-dont-fit", "error", "--tensor-parallel-size")
def weights_dont_fit(ctx: Context) -> Iterator[Hit]:
    est = ctx.estimate
    if est is None or est.budget_gib_per_gpu is None:
        return
    if est.weights_gib_per_gpu <= est.budget_gib_per_gpu:
        return
    yield Hit(_memory_facts(ctx, est))


@rule("kv-cache-too-small", "error", "--max-model-len")
def kv_cache_too_small(ctx: Context) -> Iterator[Hit]:
    """One full-length sequence must fit in the KV cache. Where the central estimate says it
    does not but the optimistic end of the estimate's range says it does (the sampler's path,
    CUDA graph memory, non-torch memory and the card's reported total at their most
    favourable), the finding is a warning that says both figures."""
    est, s = ctx.estimate, ctx.settings
    if (
        est is None
        or est.kv_cache_tokens is None
        or s.max_model_len is None
        or s.max_model_len_auto
    ):
        return
    if est.budget_gib_per_gpu is not None and est.weights_gib_per_gpu > est.budget_gib_per_gpu:
        return  # weights-dont-fit already says it, louder
    fits = est.max_model_len_that_fits or 0
    if fits >= s.max_model_len:
        return
    facts = _memory_facts(ctx, est) | {
        "max_model_len": s.max_model_len,
        "fits": fits,
        "kv_gib": round(est.kv_cache_gib_per_gpu or 0.0, 2),
    }
    optimistic = est.max_model_len_that_fits_optimistic or 0
    if optimistic >= s.max_model_len and est.kv_available_gib_range is not None:
        facts |= {
            "fits_most": optimistic,
            "kv_gib_most": round(est.kv_available_gib_range[1], 2),
        }
        yield Hit(facts, "uncertain", severity="warning")  # it may well start: no edit
        return
    variant = "none" if fits < s.block_size else None
    edits = () if variant else (Edit("--max-model-len", str(fits)),)
    yield Hit(facts, variant, edits)


@rule("gpu-memory-utilization-range", "error", "--gpu-memory-utilization")
def gpu_memory_utilization_range(ctx: Context) -> Iterator[Hit]:
    util = ctx.command.number("--gpu-memory-utilization")
    if util is None or 0 < util <= 1:
        return
    facts: dict[str, Fact] = {"util": ctx.command.text("--gpu-memory-utilization") or str(util)}
    yield Hit(facts, None, (Edit("--gpu-memory-utilization", "0.9"),))


@rule("enforce-eager", "warning", "--enforce-eager")
def enforce_eager(ctx: Context) -> Iterator[Hit]:
    if ctx.settings.enforce_eager:
        yield Hit({}, None, (Edit("--enforce-eager", None),))
