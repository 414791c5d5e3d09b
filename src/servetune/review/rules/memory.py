"""Memory: weights, the KV cache, max-model-len and gpu-memory-utilization."""

from __future__ import annotations

from collections.abc import Iterator

from servetune.review.capacity import Estimate
from servetune.review.encoder_profile import ENCODER_SPREAD
from servetune.review.rules.base import Context, Edit, Fact, Hit, rule
from servetune.review.settings import GIB, Settings


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
    if _encoder_seqs_that_fit(est, s) is not None:
        return  # profile-activation-oom names the cause: the vision encoder's dummy batch
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


def _encoder_seqs_that_fit(est: Estimate, s: Settings) -> int | None:
    """When the vision encoder's pass at startup is what leaves too little for one sequence's
    KV cache (without it there would be enough): the most dummy sequences, at the command's
    images per prompt, whose pass would leave enough (0 when not even one). Else None.

    The pass grows with its images (encoder_profile); with a share f of them it takes f x its
    peak, and the reserve is the larger of that and the rest of the profile."""
    enc, items = est.encoder_gib_per_gpu, est.encoder_items
    now, without = est.kv_available_gib_per_gpu, est.kv_available_without_encoder_gib
    if enc is None or not items or now is None or without is None or s.max_model_len is None:
        return None
    if s.kv_cache_memory_bytes is not None or s.max_model_len_auto:
        return None
    need = (est.kv_bytes_per_seq_per_gpu or 0) / GIB
    if not now < need <= without:
        return None
    rest = enc - (without - now)  # the activation the profile would hold without the encoder
    # sized for the pass at the high end of its range, so the advice holds
    share = (without - need + rest) / (enc * ENCODER_SPREAD[1])
    return int(items * share) // max(s.images_per_prompt, 1)


@rule("profile-activation-oom", "error", "--max-num-seqs")
def profile_activation_oom(ctx: Context) -> Iterator[Hit]:
    """vLLM's startup profile runs the vision encoder on its largest dummy images (mllama: one
    per --max-num-seqs sequence, all at once, whatever --max-model-len says) and vLLM either
    runs out of memory there or finds no room for the KV cache."""
    est, s = ctx.estimate, ctx.settings
    if est is None:
        return
    if est.budget_gib_per_gpu is not None and est.weights_gib_per_gpu > est.budget_gib_per_gpu:
        return  # weights-dont-fit already says it
    seqs = _encoder_seqs_that_fit(est, s)
    if seqs is None:
        return
    facts = _memory_facts(ctx, est) | {
        "encoder": round(est.encoder_gib_per_gpu or 0.0, 1),
        "images": est.encoder_items or 0,
        "per_prompt": s.images_per_prompt,
        "seqs": seqs,
    }
    edits = (Edit("--max-num-seqs", str(seqs)),) if seqs >= 1 else ()
    yield Hit(facts, None if seqs >= 1 else "none", edits)


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
