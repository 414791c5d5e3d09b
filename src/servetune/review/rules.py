"""The review rules. Each is a small function from the review context to zero or more hits.

A rule knows facts, not words: it returns `Hit`s carrying the numbers and names its message
needs; `servetune.texts` (area `review`) holds the texts per language. Severity and the flag a rule
concerns are part of its registration, so they are stable across languages and releases.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from servetune.review import capacity
from servetune.review.capacity import Estimate
from servetune.review.hardware import Hardware
from servetune.review.model import FLOAT16_REFUSED, ModelFacts
from servetune.review.settings import Settings, batch_defaults
from servetune.vllm.flags import version_at_least
from servetune.vllm.serve_command import ArgValue, ServeCommand

Severity = Literal["error", "warning", "info"]
Fact = str | int | float


@dataclass(frozen=True)
class Edit:
    """A change to the command that the fix implies: set `flag` to `value` (None removes it)."""

    flag: str
    value: ArgValue | None


@dataclass(frozen=True)
class Hit:
    """One occurrence of a rule: which message variant, with which facts, and the edit."""

    rule: str
    flag: str | None
    facts: Mapping[str, Fact] = field(default_factory=dict)
    variant: str | None = None
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Context:
    """Everything a rule may look at."""

    command: ServeCommand
    settings: Settings
    model: ModelFacts | None
    hardware: Hardware | None
    estimate: Estimate | None

    @property
    def visible_gpus(self) -> int | None:
        """GPUs vLLM can see: the machine's, narrowed by CUDA_VISIBLE_DEVICES in the command."""
        if self.hardware is None:
            return None
        visible = self.command.env.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            ids = [v for v in visible.split(",") if v.strip()]
            return min(len(ids), self.hardware.count)
        return self.hardware.count

    def machine(self) -> str:
        if self.hardware is None:
            return "an unknown number of GPUs"
        name = self.hardware.name or "GPU"
        return f"{self.hardware.count}x {name}"


RuleFn = Callable[[Context], Iterator[Hit]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    flag: str | None
    check: RuleFn


RULES: list[Rule] = []


def rule(rule_id: str, severity: Severity, flag: str | None) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        RULES.append(Rule(rule_id, severity, flag, fn))
        return fn

    return register


def rule_by_id(rule_id: str) -> Rule:
    return next(r for r in RULES if r.id == rule_id)


# --- the command line itself ----------------------------------------------------------------


@rule("dash-typo", "error", None)
def dash_typo(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "dash-typo":
            yield Hit("dash-typo", issue.flag, {"token": issue.token, "fixed": issue.detail or ""})


@rule("unknown-flag", "error", None)
def unknown_flag(ctx: Context) -> Iterator[Hit]:
    version = ctx.command.version
    for issue in ctx.command.issues:
        facts: dict[str, Fact] = {"token": issue.token, "version": version}
        if issue.kind == "flag-too-new" and issue.removal and issue.removal.first_seen:
            facts["first_seen"] = issue.removal.first_seen
            yield Hit("unknown-flag", issue.flag, facts, "too-new", (Edit(issue.flag or "", None),))
        elif issue.kind == "unknown-flag" and issue.flag is None:
            entrypoint = issue.detail == "image entrypoint"
            yield Hit("unknown-flag", None, facts, "entrypoint" if entrypoint else "stray")
        elif issue.kind == "unknown-flag" and issue.detail:
            facts["suggestion"] = issue.detail
            value = ctx.command.args.get(issue.flag or "", True)
            edits = (Edit(issue.flag or "", None), Edit(issue.detail, value))
            yield Hit("unknown-flag", issue.flag, facts, "did-you-mean", edits)
        elif issue.kind == "unknown-flag":
            yield Hit("unknown-flag", issue.flag, facts, None, (Edit(issue.flag or "", None),))
        elif issue.kind == "ambiguous-flag":
            facts["candidates"] = issue.detail or ""
            yield Hit("unknown-flag", issue.flag, facts, "ambiguous")


@rule("model-required", "error", "--model")
def model_required(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "model-required":
            facts: dict[str, Fact] = {"given": issue.detail or ""}
            variant = {"--model": "flag", "--served-model-name": "served-name"}.get(issue.token)
            yield Hit(
                "model-required", "--model", facts, variant or (None if issue.detail else "none")
            )


@rule("removed-flag", "error", None)
def removed_flag(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind != "removed-flag" or issue.removal is None:
            continue
        removal = issue.removal
        facts: dict[str, Fact] = {
            "token": issue.token,
            "version": ctx.command.version,
            "last_seen": removal.last_seen or "an older release",
            "gone_in": removal.first_missing or "a later release",
        }
        if removal.replacement:
            facts["replacement"] = removal.replacement
        variant = "replaced" if removal.replacement else None
        yield Hit("removed-flag", issue.flag, facts, variant, (Edit(issue.flag or "", None),))


@rule("bool-flag-value", "error", None)
def bool_flag_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "bool-flag-value" and issue.flag:
            on = ctx.command.switch(issue.flag) is not False
            fixed = issue.flag if on else "--no-" + issue.flag.removeprefix("--")
            yield Hit("bool-flag-value", issue.flag, {"token": issue.token, "fixed": fixed})


@rule("missing-value", "error", None)
def missing_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "missing-value":
            yield Hit("missing-value", issue.token, {"token": issue.token})


@rule("invalid-value", "error", None)
def invalid_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "invalid-value":
            yield Hit(
                "invalid-value", issue.flag, {"token": issue.token, "value": issue.detail or ""}
            )


@rule("config-unreadable", "warning", "--config")
def config_unreadable(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "config-unreadable":
            yield Hit(
                "config-unreadable", "--config", {"path": issue.token, "reason": issue.detail or ""}
            )


# --- parallelism ----------------------------------------------------------------------------


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
    yield Hit("tp-exceeds-gpus", "--tensor-parallel-size", _parallel_facts(ctx), None, edits)


@rule("tp-below-gpus", "warning", "--tensor-parallel-size")
def tp_below_gpus(ctx: Context) -> Iterator[Hit]:
    gpus = ctx.visible_gpus
    if gpus is None or ctx.settings.gpus_needed >= gpus:
        return
    facts = _parallel_facts(ctx) | {"idle": gpus - ctx.settings.gpus_needed}
    yield Hit("tp-below-gpus", "--tensor-parallel-size", facts)


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
    yield Hit("tp-heads-indivisible", "--tensor-parallel-size", facts, variant, edits)


# --- quantization ---------------------------------------------------------------------------

# Methods that read a quantized checkpoint's own files; pointed at plain weights they fail.
_CHECKPOINT_METHODS = {
    "awq": "awq", "awq_marlin": "awq", "auto_awq": "awq",
    "gptq": "gptq", "gptq_marlin": "gptq", "auto_gptq": "gptq", "gptq_marlin_24": "gptq",
    "marlin": "marlin", "gguf": "gguf", "compressed-tensors": "compressed-tensors",
    "modelopt": "modelopt", "modelopt_fp4": "modelopt", "modelopt_mxfp8": "modelopt",
    "mxfp4": "mxfp4", "gpt_oss_mxfp4": "mxfp4", "quark": "quark", "moe_wna16": "moe_wna16",
    "aqlm": "aqlm", "hqq": "hqq", "bitblas": "bitblas", "gptq_bitblas": "gptq",
    "fbgemm_fp8": "fbgemm_fp8",
}  # fmt: skip
# Methods that quantize plain weights while loading (online); fine on any checkpoint dtype.
_ONLINE_METHODS = frozenset(
    {
        "fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "mxfp8", "online",
        "int8_per_channel_weight_only", "nvfp4_per_token", "bitsandbytes", "experts_int8",
        "torchao", "inc",
    }
)  # fmt: skip
# Minimum compute capability per method: {method: [(first release, capability)]}, newest last.
_MIN_CAPABILITY: dict[str, list[tuple[str, int]]] = {
    "awq": [("0.0.0", 75)],
    "awq_marlin": [("0.0.0", 80), ("0.15.0", 75)],
    "auto_awq": [("0.0.0", 75)],
    "gptq": [("0.0.0", 60)],
    "gptq_marlin": [("0.0.0", 80), ("0.15.0", 75), ("0.27.0", 60)],
    "auto_gptq": [("0.0.0", 60)],
    "fp8": [("0.0.0", 80), ("0.15.0", 75)],
    "fbgemm_fp8": [("0.0.0", 80)],
    "compressed-tensors": [("0.0.0", 70)],
    "bitsandbytes": [("0.0.0", 70)],
    "gguf": [("0.0.0", 60)],
    "modelopt": [("0.0.0", 89), ("0.33.0", 80)],
    "modelopt_fp4": [("0.0.0", 100), ("0.11.0", 80), ("0.15.0", 75)],
    "mxfp4": [("0.0.0", 80)],
    "gpt_oss_mxfp4": [("0.0.0", 80)],
    "experts_int8": [("0.0.0", 80)],
    "moe_wna16": [("0.0.0", 70)],
    "torchao": [("0.0.0", 75)],
    "quark": [("0.0.0", 70)],
    "fp_quant": [("0.0.0", 100)],
}


def _family(method: str) -> str:
    return _CHECKPOINT_METHODS.get(method, method)


def _effective_method(ctx: Context) -> str | None:
    """The method vLLM will run: the flag, else the checkpoint's own."""
    if ctx.settings.quantization:
        return ctx.settings.quantization
    quant = ctx.model.quantization if ctx.model else None
    return quant.method if quant else None


def min_capability(method: str, version: str) -> int | None:
    table = _MIN_CAPABILITY.get(method)
    if table is None and method.startswith("fp8"):
        table = _MIN_CAPABILITY["fp8"]
    if table is None:
        return None
    return [cap for since, cap in table if version_at_least(version, since)][-1]


def _quant_facts(ctx: Context) -> dict[str, Fact]:
    quant = ctx.model.quantization if ctx.model else None
    return {
        "flag_method": ctx.settings.quantization or "",
        "checkpoint_method": quant.method if quant else "none",
        "model": ctx.model.model_id if ctx.model else "",
        "machine": ctx.machine(),
    }


@rule("quant-on-unquantized", "error", "--quantization")
def quant_on_unquantized(ctx: Context) -> Iterator[Hit]:
    method = ctx.settings.quantization
    model = ctx.model
    if method is None or model is None or model.quantization is not None:
        return
    if method not in _CHECKPOINT_METHODS or method in _ONLINE_METHODS:
        return
    facts = _quant_facts(ctx) | {"family": _family(method).upper()}
    yield Hit(
        "quant-on-unquantized", "--quantization", facts, None, (Edit("--quantization", None),)
    )


@rule("quant-method-mismatch", "error", "--quantization")
def quant_method_mismatch(ctx: Context) -> Iterator[Hit]:
    method = ctx.settings.quantization
    quant = ctx.model.quantization if ctx.model else None
    if method is None or quant is None:
        return
    if _family(method) == _family(quant.method) or method == "marlin":
        return
    yield Hit(
        "quant-method-mismatch", "--quantization", _quant_facts(ctx), None,
        (Edit("--quantization", None),),
    )  # fmt: skip


@rule("quant-unsupported-gpu", "error", "--quantization")
def quant_unsupported_gpu(ctx: Context) -> Iterator[Hit]:
    method = _effective_method(ctx)
    gpu = ctx.hardware.spec if ctx.hardware else None
    if method is None or gpu is None or gpu.capability is None:
        return
    needed = min_capability(method, ctx.command.version)
    if needed is None or gpu.capability >= needed:
        return
    facts = _quant_facts(ctx) | {
        "method": method,
        "needed": f"{needed // 10}.{needed % 10}",
        "have": gpu.compute_capability or "",
        "gpu": gpu.name,
        "version": ctx.command.version,
    }
    yield Hit("quant-unsupported-gpu", "--quantization", facts)


@rule("fp8-weight-only", "warning", "--quantization")
def fp8_weight_only(ctx: Context) -> Iterator[Hit]:
    method = _effective_method(ctx)
    gpu = ctx.hardware.spec if ctx.hardware else None
    if method is None or not method.startswith("fp8") or gpu is None or gpu.capability is None:
        return
    needed = min_capability(method, ctx.command.version) or 0
    if gpu.capability >= 89 or gpu.capability < needed:
        return
    yield Hit("fp8-weight-only", "--quantization", _quant_facts(ctx) | {"gpu": gpu.name})


@rule("quant-slow-kernel", "warning", "--quantization")
def quant_slow_kernel(ctx: Context) -> Iterator[Hit]:
    method = ctx.settings.quantization
    quant = ctx.model.quantization if ctx.model else None
    gpu = ctx.hardware.spec if ctx.hardware else None
    version = ctx.command.version
    if method not in ("awq", "gptq") or quant is None or _family(quant.method) != method:
        return
    if version_at_least(version, "0.27.0") or gpu is None or gpu.capability is None:
        return
    marlin_from = 75 if version_at_least(version, "0.15.0") else 80
    bits_ok = quant.bits in ((4, 8) if method == "gptq" else (4,))
    if gpu.capability < marlin_from or not bits_ok:
        return
    facts = _quant_facts(ctx) | {"marlin": f"{method}_marlin", "gpu": gpu.name, "version": version}
    yield Hit("quant-slow-kernel", "--quantization", facts, None, (Edit("--quantization", None),))


# --- dtype ----------------------------------------------------------------------------------


@rule("dtype-unsupported-gpu", "error", "--dtype")
def dtype_unsupported_gpu(ctx: Context) -> Iterator[Hit]:
    gpu = ctx.hardware.spec if ctx.hardware else None
    if gpu is None or gpu.capability is None or gpu.capability >= 80:
        return
    explicit = ctx.settings.dtype_flag.lower() == "bfloat16"
    old_auto = (
        ctx.settings.dtype_flag == "auto"
        and ctx.settings.dtype == "bfloat16"
        and not version_at_least(ctx.command.version, "0.11.0")
    )
    if not (explicit or old_auto):
        return
    refused = ctx.model is not None and ctx.model.model_type in FLOAT16_REFUSED
    fix_dtype = "float32" if refused else "half"
    facts: dict[str, Fact] = {
        "gpu": gpu.name,
        "have": gpu.compute_capability or "",
        "fix_dtype": fix_dtype,
    }
    yield Hit("dtype-unsupported-gpu", "--dtype", facts, None, (Edit("--dtype", fix_dtype),))


@rule("dtype-unsupported-model", "error", "--dtype")
def dtype_unsupported_model(ctx: Context) -> Iterator[Hit]:
    model = ctx.model
    if model is None or ctx.settings.dtype_flag.lower() not in ("float16", "half"):
        return
    if model.model_type not in FLOAT16_REFUSED or not version_at_least(
        ctx.command.version, "0.11.0"
    ):
        return
    gpu = ctx.hardware.spec if ctx.hardware else None
    fix = "bfloat16" if gpu is None or (gpu.capability or 0) >= 80 else "float32"
    facts: dict[str, Fact] = {
        "model_type": model.model_type or "",
        "model": model.model_id,
        "fix_dtype": fix,
    }
    yield Hit("dtype-unsupported-model", "--dtype", facts, None, (Edit("--dtype", fix),))


# --- scheduler limits -----------------------------------------------------------------------


@rule("batched-tokens-too-small", "warning", "--max-num-batched-tokens")
def batched_tokens_too_small(ctx: Context) -> Iterator[Hit]:
    mbt = ctx.command.integer("--max-num-batched-tokens")
    if mbt is None:
        return
    gpu = ctx.hardware.spec if ctx.hardware else None
    default, _, _ = batch_defaults(ctx.command.version, gpu)
    floor = min(2048, default)
    if mbt >= floor:
        return
    prompt = 4096
    facts: dict[str, Fact] = {
        "mbt": mbt,
        "default": default,
        "prompt": prompt,
        "steps": -(-prompt // mbt),
        "machine": ctx.machine(),
    }
    yield Hit(
        "batched-tokens-too-small", "--max-num-batched-tokens", facts, None,
        (Edit("--max-num-batched-tokens", str(default)),),
    )  # fmt: skip


@rule("batched-tokens-below-model-len", "error", "--max-num-batched-tokens")
def batched_tokens_below_model_len(ctx: Context) -> Iterator[Hit]:
    s = ctx.settings
    if s.chunked_prefill or s.max_num_batched_tokens is None or s.max_model_len is None:
        return
    if s.max_num_batched_tokens >= s.max_model_len:
        return
    facts: dict[str, Fact] = {"mbt": s.max_num_batched_tokens, "max_model_len": s.max_model_len}
    edits = (Edit("--max-num-batched-tokens", str(s.max_model_len)),)
    yield Hit("batched-tokens-below-model-len", "--max-num-batched-tokens", facts, None, edits)


@rule("batched-tokens-below-num-seqs", "error", "--max-num-batched-tokens")
def batched_tokens_below_num_seqs(ctx: Context) -> Iterator[Hit]:
    s = ctx.settings
    if s.max_num_batched_tokens is None or s.max_num_batched_tokens >= s.max_num_seqs:
        return
    facts: dict[str, Fact] = {"mbt": s.max_num_batched_tokens, "seqs": s.max_num_seqs}
    edits = (Edit("--max-num-batched-tokens", str(max(s.max_num_seqs, 2048))),)
    yield Hit("batched-tokens-below-num-seqs", "--max-num-batched-tokens", facts, None, edits)


_TYPICAL_CONVERSATION = 2048  # tokens of prompt + answer assumed for quant-memory-unused


@rule("quant-memory-unused", "warning", "--max-num-seqs")
def quant_memory_unused(ctx: Context) -> Iterator[Hit]:
    """Memory freed by quantization that the sequence cap never turns into concurrency.

    Fires when the KV cache holds at least twice --max-num-seqs typical conversations, so
    that most of it can never be in use: on the default cap, and also on a cap set on purpose
    (an AWQ 7B on an 80 GB GPU with --max-num-seqs 32 has room for ~300 sequences at 4k)."""
    est, s, model = ctx.estimate, ctx.settings, ctx.model
    quantized = (
        model is not None and model.quantization is not None
    ) or s.quantization in _ONLINE_METHODS
    if est is None or est.kv_cache_tokens is None or not quantized:
        return
    typical = min(_TYPICAL_CONVERSATION, s.max_model_len or _TYPICAL_CONVERSATION)
    fit = est.kv_cache_tokens // typical
    if fit < 2 * s.max_num_seqs:
        return
    suggested = max(s.max_num_seqs, min(fit, 1024) // 32 * 32)
    facts: dict[str, Fact] = {
        "seqs": s.max_num_seqs,
        "fit": fit,
        "typical": typical,
        "kv_tokens": est.kv_cache_tokens,
        "suggested": suggested,
        "machine": ctx.machine(),
        "idle_pct": round(100 * (1 - s.max_num_seqs * typical / est.kv_cache_tokens)),
    }
    variant = "explicit" if "--max-num-seqs" in s.user_set else None
    edits = (Edit("--max-num-seqs", str(suggested)),)
    yield Hit("quant-memory-unused", "--max-num-seqs", facts, variant, edits)


_NATIVE_FP8_CAPABILITY = 89  # Ada and Hopper and newer run FP8 GEMMs: there FP8 is for speed


def _original_estimate(ctx: Context) -> Estimate | None:
    """The estimate for the same serve flags on the original (unquantized) checkpoint."""
    model, hw = ctx.model, ctx.hardware
    if model is None or hw is None or hw.spec is None:
        return None
    plain_model = replace(model, quantization=None)
    dtype = ctx.settings.dtype or "bfloat16"
    plain_settings = replace(ctx.settings, quantization=None, dtype=dtype)
    return capacity.estimate(plain_model, plain_settings, hw.spec.memory_gib)


@rule("quant-unneeded", "warning", "--quantization")
def quant_unneeded(ctx: Context) -> Iterator[Hit]:
    """Quantized although the original checkpoint would fit with room for every sequence the
    server runs at once (--max-num-seqs at a typical conversation): the seed's "don't quantize
    just to save". Not when the original does not fit, and not for FP8 on GPUs with native FP8
    GEMMs (compute capability >= 8.9), where the speed-up is the point."""
    model, s, hw = ctx.model, ctx.settings, ctx.hardware
    method = _effective_method(ctx)
    if model is None or method is None or method == "mxfp4" or hw is None or hw.spec is None:
        return  # gpt-oss ships MXFP4 only: there is no original to fall back to
    if model.quantization is None and s.quantization not in _ONLINE_METHODS:
        return  # AWQ/GPTQ asked of a plain checkpoint: quant-on-unquantized says what is wrong
    native_fp8 = (hw.spec.capability or 0) >= _NATIVE_FP8_CAPABILITY
    if _family(method) == "fp8" and native_fp8:
        return
    original = _original_estimate(ctx)
    if original is None or not original.kv_cache_tokens or original.kv_cache_tokens <= 0:
        return
    typical = min(_TYPICAL_CONVERSATION, s.max_model_len or _TYPICAL_CONVERSATION)
    needed = s.max_num_seqs * typical
    if original.kv_cache_tokens < needed:
        return
    facts: dict[str, Fact] = {
        "method": method,
        "weights": round(original.weights_gib_per_gpu, 1),
        "kv_tokens": original.kv_cache_tokens,
        "seqs": s.max_num_seqs,
        "typical": typical,
        "machine": ctx.machine(),
    }
    yield Hit("quant-unneeded", "--quantization", facts)


# --- memory ---------------------------------------------------------------------------------


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
    yield Hit("model-len-exceeds-model", "--max-model-len", facts, None, edits)


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
    yield Hit("weights-dont-fit", "--tensor-parallel-size", _memory_facts(ctx, est))


@rule("kv-cache-too-small", "error", "--max-model-len")
def kv_cache_too_small(ctx: Context) -> Iterator[Hit]:
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
    variant = "none" if fits < s.block_size else None
    edits = () if variant else (Edit("--max-model-len", str(fits)),)
    yield Hit("kv-cache-too-small", "--max-model-len", facts, variant, edits)


@rule("gpu-memory-utilization-range", "error", "--gpu-memory-utilization")
def gpu_memory_utilization_range(ctx: Context) -> Iterator[Hit]:
    util = ctx.command.number("--gpu-memory-utilization")
    if util is None or 0 < util <= 1:
        return
    facts: dict[str, Fact] = {"util": ctx.command.text("--gpu-memory-utilization") or str(util)}
    yield Hit(
        "gpu-memory-utilization-range", "--gpu-memory-utilization", facts, None,
        (Edit("--gpu-memory-utilization", "0.9"),),
    )  # fmt: skip


@rule("enforce-eager", "warning", "--enforce-eager")
def enforce_eager(ctx: Context) -> Iterator[Hit]:
    if ctx.settings.enforce_eager:
        yield Hit("enforce-eager", "--enforce-eager", {}, None, (Edit("--enforce-eager", None),))


# --- what could not be reviewed -------------------------------------------------------------


@rule("model-unknown", "info", None)
def model_unknown(ctx: Context) -> Iterator[Hit]:
    if ctx.model is None:
        yield Hit("model-unknown", None, {"model": ctx.command.model or "(none given)"})


@rule("model-inferred", "info", None)
def model_inferred(ctx: Context) -> Iterator[Hit]:
    model = ctx.model
    if model is None or model.source != "inferred" or model.inferred_from is None:
        return
    facts: dict[str, Fact] = {"model": model.model_id, "taken": model.inferred_from}
    variant = None if model.max_model_len is None else "copy"
    yield Hit("model-inferred", None, facts, variant)


@rule("default-model", "info", "--model")
def default_model(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "default-model":
            yield Hit("default-model", "--model", {"default": issue.detail or ""})


@rule("hardware-unknown", "info", None)
def hardware_unknown(ctx: Context) -> Iterator[Hit]:
    if ctx.hardware is None:
        yield Hit("hardware-unknown", None, {})
    elif ctx.hardware.spec is None:
        yield Hit("hardware-unknown", None, {"count": ctx.hardware.count}, "count-only")


def run_rules(ctx: Context) -> list[tuple[Rule, Hit]]:
    """Every hit of every rule, in registration order."""
    return [(r, hit) for r in RULES for hit in r.check(ctx)]
