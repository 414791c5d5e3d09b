"""What could not be reviewed: unknown or inferred model, default model, unknown hardware."""

from __future__ import annotations

from collections.abc import Iterator

from servetune.review.rules.base import Context, Fact, Hit, rule
from servetune.review.sentence import Sentence


@rule("model-unknown", "info", None)
def model_unknown(ctx: Context) -> Iterator[Hit]:
    if ctx.model is None:
        yield Hit({"model": ctx.command.model or Sentence("fact.no-model")})


@rule("model-inferred", "info", None)
def model_inferred(ctx: Context) -> Iterator[Hit]:
    model = ctx.model
    if model is None or model.source != "inferred" or model.inferred_from is None:
        return
    facts: dict[str, Fact] = {"model": model.model_id, "taken": model.inferred_from}
    variant = None if model.max_model_len is None else "copy"
    yield Hit(facts, variant)


@rule("default-model", "info", "--model")
def default_model(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "default-model":
            yield Hit({"default": issue.detail or ""})


@rule("hardware-unknown", "info", None)
def hardware_unknown(ctx: Context) -> Iterator[Hit]:
    spec = ctx.hardware.spec if ctx.hardware else None
    if ctx.hardware is None:
        yield Hit()
    elif ctx.hardware.cpu:
        yield Hit({}, "cpu")
    elif spec is None:
        yield Hit({"count": ctx.hardware.count}, "count-only")
    elif spec.platform not in ("cuda", "rocm"):
        facts: dict[str, Fact] = {"gpu": spec.name, "platform": spec.platform.upper()}
        yield Hit(facts | {"memory": f"{spec.memory_gib:g}"}, "platform")
