"""What the release can load: the model's architecture in its registry, a GGUF checkpoint's
type in its GGUF loader, a pre-quantized bitsandbytes checkpoint in its bitsandbytes loader
(each read from the release's source: vllm/model_support.py)."""

from __future__ import annotations

from collections.abc import Iterator

from servetune.review.model import ModelFacts, infer_architecture
from servetune.review.rules.base import Context, Edit, Fact, Hit, Severity, rule
from servetune.vllm.flags import is_dev_build, known_versions, version_at_least
from servetune.vllm.model_support import (
    bnb_fact,
    bnb_since,
    gguf_config_reading,
    gguf_file_architecture,
    gguf_support,
    registration,
    transformers_fallback_since,
)

# Releases still run today (the V1 engine's, 0.8 on): where the command names no release, a
# refusal that only these older ones make is a warning (as pp-unsupported-model's `older`).
_STILL_RUN_SINCE = "0.8.0"


def _registered_as(ctx: Context, architecture: str, model: ModelFacts | None) -> str:
    """The architecture vLLM looks up in its registry. `--config-format mistral` reads the
    checkpoint's `params.json`, not `config.json`, and `load_params_config` (0.6.1-0.33) names
    the architecture itself: `PixtralForConditionalGeneration` where it has a `vision_encoder`,
    `MixtralForCausalLM` where it has `moe`, else `MistralForCausalLM`."""
    if (ctx.command.text("--config-format") or "").lower() != "mistral":
        return architecture
    vision = model is not None and model.vision is not None
    if vision or architecture.endswith("ForConditionalGeneration"):
        return "PixtralForConditionalGeneration"
    return "MixtralForCausalLM" if model is not None and model.is_moe else "MistralForCausalLM"


def _named(ctx: Context) -> tuple[str | None, str | None, bool]:
    """(architecture, model_type, inferred): the model's own where its facts are known, else
    what its name says of its family (model.infer_architecture)."""
    model = ctx.model
    if model is not None and model.architecture is not None:
        return model.architecture, model.model_type, model.source == "inferred"
    named = infer_architecture(ctx.command.model_on_host or "") if model is None else None
    if named is None:
        return None, model.model_type if model else None, True
    return named.architecture, named.model_type, True


def _registry_unread(ctx: Context) -> bool:
    """Whether the release's registry is not known: the oldest flag table stands in for any
    older version string, a source build's `0.1.dev1+g6997a25ac` among them (of any commit),
    but a release older than every read one (`0.4.0.post1`) lacks what the oldest read lacks."""
    version, given = ctx.command.version, ctx.command.given_version
    if version != known_versions()[0]:
        return False
    return given is None or is_dev_build(given)


@rule("arch-unsupported-in-release", "error", None)
def arch_unsupported_in_release(ctx: Context) -> Iterator[Hit]:
    """An architecture the release's model registry lacks: vLLM stops at startup ("Model
    architectures ['MiniCPMV'] are not supported for now"). From the release that brought the
    Transformers backend on, vLLM tries that instead, which runs only where the installed
    transformers implements the model: a warning there, and for an architecture inferred from
    the model's name (a local path's last folder, `/home/me/MiniCPM-V-2`, read as its family)."""
    named, _model_type, inferred = _named(ctx)
    version = ctx.command.version
    if named is None or _registry_unread(ctx):
        return
    architecture = _registered_as(ctx, named, ctx.model)
    found = registration(architecture, version)
    if found is None or found.registered is not False:
        return
    later = not version_at_least(version, found.first)
    facts: dict[str, Fact] = {
        "architecture": architecture,
        "since": found.first if later else found.last,
    }
    fallback = transformers_fallback_since()
    # A name's inferred architecture may not be the checkpoint's own (a text-only export of a
    # multimodal model): a warning, as where the Transformers backend may still run it.
    severity: Severity | None = None
    if inferred or (fallback and version_at_least(version, fallback)):
        severity = "warning"
    yield Hit(facts, None if later else "removed", by_release=True, severity=severity)


def _is_gguf(ctx: Context, model: ModelFacts | None) -> bool:
    quant = model.quantization if model is not None else None
    return (quant is not None and quant.method == "gguf") or _gguf_file(ctx)


def _gguf_file(ctx: Context) -> bool:
    """A `.gguf` file (local, or `repo/file.gguf`), whose config vLLM has transformers read
    from the file's metadata (a `repo:quant_type` reads the repository's config.json)."""
    return (ctx.command.model or "").lower().endswith(".gguf")


@rule("gguf-arch-unsupported", "error", "--model")
def gguf_arch_unsupported(ctx: Context) -> Iterator[Hit]:
    """A GGUF checkpoint the release cannot read. Before 0.5.5 vLLM has no GGUF loader. From
    0.5.5 on (and through the vllm-gguf-plugin from 0.24) a `.gguf` file's config is read by
    transformers (`gguf_file=`), which stops on an architecture it has no table for ("GGUF model
    with architecture olmo2 is not supported yet", an OLMo 3 file): which transformers a release
    runs is only bounded by its requirements, so where only some of the accepted ones read it,
    a warning. Then the in-tree loader (to 0.23) must map the model type to its GGUF name:
    `gemma3_text` as `gemma3`, `minimax_m2` as `minimax-m2` need the rename a given release
    brought ("Unknown gguf model_type"). `--hf-config-path` gives the config instead."""
    named, model_type, inferred = _named(ctx)
    if model_type is None or not _is_gguf(ctx, ctx.model):
        return
    version = ctx.command.version
    support = gguf_support(model_type, version)
    if support.loader is False:
        yield Hit({"since": support.since or ""}, "no-loader", by_release=True)
        return
    if _gguf_file(ctx) and not ctx.command.has("--hf-config-path"):
        found = _transformers_reading(ctx, model_type, inferred=inferred or named is None)
        if found is not None:
            yield found
            return
    if support.loader is None or support.readable:
        return
    facts: dict[str, Fact] = {"model_type": model_type, "since": support.since or ""}
    yield Hit(facts, None, by_release=True)


def _transformers_reading(ctx: Context, model_type: str, *, inferred: bool) -> Hit | None:
    architecture = gguf_file_architecture(model_type)
    reading = gguf_config_reading(architecture, ctx.command.version)
    if reading.always:
        return None
    facts: dict[str, Fact] = {
        "architecture": architecture,
        "requirement": reading.requirement,
        "newest": reading.accepted[-1] if reading.accepted else "",
    }
    if reading.never:
        severity: Severity | None = "warning" if inferred else None
        return Hit(facts, "transformers", by_release=True, severity=severity)
    facts["first"] = reading.first or ""
    return Hit(facts, "transformers-depends", severity="warning")


def _prequantized_bnb(model: ModelFacts | None) -> bool:
    return (
        model is not None
        and model.quantization is not None
        and (model.quantization.method == "bitsandbytes")
    )


@rule("bnb-prequant-tp-unsupported", "error", "--tensor-parallel-size")
def bnb_prequant_tp_unsupported(ctx: Context) -> Iterator[Hit]:
    """A pre-quantized bitsandbytes checkpoint split by tensor parallelism: its quant states
    cannot be split, so the loader stops ("Prequant BitsAndBytes models with tensor parallelism
    is not supported. Please try with pipeline parallelism."), 0.6.2 to 0.27."""
    tp = ctx.settings.tensor_parallel_size
    if tp <= 1 or not _prequantized_bnb(ctx.model):
        return
    if not bnb_fact("prequant_tp_refused", ctx.command.version):
        return
    pp = ctx.settings.pipeline_parallel_size
    facts: dict[str, Fact] = {"tp": tp, "pp_all": tp * pp}
    edits = (Edit("--tensor-parallel-size", "1"), Edit("--pipeline-parallel-size", str(tp * pp)))
    yield Hit(facts, None, edits, by_release=True)


def _bnb_loader_named(ctx: Context, flag_picks: bool) -> bool:
    load_format = (ctx.command.text("--load-format") or "").lower()
    quantization = (ctx.settings.quantization or "").lower()
    return load_format == "bitsandbytes" or (flag_picks and quantization == "bitsandbytes")


def _since() -> str:
    return bnb_since("load_format_from_checkpoint")


_BNB_EDITS = (Edit("--quantization", "bitsandbytes"), Edit("--load-format", "bitsandbytes"))


@rule("bnb-load-format-missing", "error", "--load-format")
def bnb_load_format_missing(ctx: Context) -> Iterator[Hit]:
    """A pre-quantized bitsandbytes checkpoint loaded by the default loader, which meets the
    quant-state tensors it does not expect (`KeyError: '...weight.absmax'`): before 0.8.4 the
    engine arguments do not pick the bitsandbytes loader from the checkpoint (0.8.2 and 0.8.3
    pick it for `--quantization bitsandbytes`)."""
    if not _prequantized_bnb(ctx.model):
        return
    version = ctx.command.version
    from_checkpoint = bnb_fact("load_format_from_checkpoint", version)
    if from_checkpoint is False:
        flag_picks = bool(bnb_fact("load_format_from_flag", version))
        if not _bnb_loader_named(ctx, flag_picks):
            yield Hit({"since": _since()}, None, _BNB_EDITS, by_release=True)
        return
    if ctx.command.release_known or _bnb_loader_named(ctx, flag_picks=False):
        return
    # The newest is assumed: say what releases still run today (0.8 on) do without the flags.
    if not bnb_fact("load_format_from_checkpoint", _STILL_RUN_SINCE):
        yield Hit({"since": _since()}, "older", _BNB_EDITS, severity="warning")
