"""Parallelism: TP x PP x DP against the GPUs, the model's attention heads and what the release
can split into pipeline stages."""

from __future__ import annotations

from collections.abc import Iterator

from servetune.review.model import ModelFacts
from servetune.review.rules.base import Context, Edit, Fact, Hit, rule
from servetune.vllm.flags import version_at_least
from servetune.vllm.model_support import pipeline_support


def _parallel_facts(ctx: Context) -> dict[str, Fact]:
    s = ctx.settings
    return {
        "tp": s.tensor_parallel_size,
        "pp": s.pipeline_parallel_size,
        "dp": s.data_parallel_size,
        "needed": s.gpus_needed,
        "gpus": ctx.visible_gpus or 0,
        "machine": ctx.machine(),
    }


@rule("tp-exceeds-gpus", "error", "--tensor-parallel-size")
def tp_exceeds_gpus(ctx: Context) -> Iterator[Hit]:
    gpus = ctx.visible_gpus
    if gpus is None or ctx.settings.gpus_needed <= gpus:
        return
    s = ctx.settings
    edits: tuple[Edit, ...] = ()
    if s.pipeline_parallel_size == 1 and s.data_parallel_size == 1:
        edits = (Edit("--tensor-parallel-size", str(_largest_valid_tp(ctx, gpus))),)
    yield Hit(_parallel_facts(ctx), None, edits)


@rule("tp-below-gpus", "warning", "--tensor-parallel-size")
def tp_below_gpus(ctx: Context) -> Iterator[Hit]:
    gpus = ctx.visible_gpus
    if gpus is None or ctx.settings.gpus_needed >= gpus:
        return
    facts = _parallel_facts(ctx) | {"idle": gpus - ctx.settings.gpus_needed}
    yield Hit(facts)


def _tp_fits_heads(model: ModelFacts | None, tp: int) -> bool:
    if model is None or model.num_attention_heads is None:
        return True
    if model.num_attention_heads % tp:
        return False
    kv = model.num_kv_heads
    return model.is_mla or kv is None or kv % tp == 0 or tp % kv == 0


def _largest_valid_tp(ctx: Context, limit: int) -> int:
    return max(t for t in range(1, max(limit, 1) + 1) if _tp_fits_heads(ctx.model, t))


@rule("tp-heads-indivisible", "error", "--tensor-parallel-size")
def tp_heads_indivisible(ctx: Context) -> Iterator[Hit]:
    model, tp = ctx.model, ctx.settings.tensor_parallel_size
    if model is None or model.num_attention_heads is None or _tp_fits_heads(model, tp):
        return
    limit = ctx.visible_gpus or tp
    valid = [t for t in (1, 2, 4, 8, 16) if t <= max(limit, 1) and _tp_fits_heads(model, t)]
    facts: dict[str, Fact] = {
        "tp": tp,
        "heads": model.num_attention_heads,
        "kv_heads": model.num_kv_heads or 0,
        "model": model.model_id,
        "valid": ", ".join(str(t) for t in valid) or "1",
        "suggested": max(valid) if valid else 1,
    }
    variant = "kv" if model.num_attention_heads % tp == 0 else None
    edits = (Edit("--tensor-parallel-size", str(facts["suggested"])),)
    yield Hit(facts, variant, edits)


# A command that names no release is reviewed as the newest; a model that lacked pipeline
# parallelism in a release still run today (the V1 engine's, 0.8 on) gets a warning.
_STILL_RUN_SINCE = "0.8.0"


@rule("pp-unsupported-model", "error", "--pipeline-parallel-size")
def pp_unsupported_model(ctx: Context) -> Iterator[Hit]:
    """Pipeline parallelism on an architecture the release cannot split into stages: vLLM stops
    while it builds the model ("Pipeline parallelism is not supported for this model")."""
    model, s = ctx.model, ctx.settings
    if s.pipeline_parallel_size <= 1 or model is None or model.architecture is None:
        return
    version = ctx.command.version
    support = pipeline_support(model.architecture, version)
    if support is None or not support.registered:
        return
    facts: dict[str, Fact] = {
        "architecture": model.architecture,
        "pp": s.pipeline_parallel_size,
        "tp_all": s.tensor_parallel_size * s.pipeline_parallel_size,
    }
    if not support.supported:
        variant = "later" if support.since else None
        facts["since"] = support.since or ""
        yield Hit(facts, variant, by_release=True)
        return
    older = support.lacking_since
    if ctx.command.release_known or older is None or not version_at_least(older, _STILL_RUN_SINCE):
        return
    then = pipeline_support(model.architecture, older)
    facts |= {"since": then.since if then and then.since else version, "older": older}
    yield Hit(facts, "older", severity="warning")
