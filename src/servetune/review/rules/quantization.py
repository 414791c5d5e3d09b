"""Quantization and dtype: the flag against the checkpoint and the GPU."""

from __future__ import annotations

from collections.abc import Iterator

from servetune.review.model import FLOAT16_REFUSED
from servetune.review.rules.base import Context, Edit, Fact, Hit, rule
from servetune.vllm.flags import version_at_least

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
ONLINE_METHODS = frozenset(
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


def method_family(method: str) -> str:
    return _CHECKPOINT_METHODS.get(method, method)


def effective_method(ctx: Context) -> str | None:
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
    if method not in _CHECKPOINT_METHODS or method in ONLINE_METHODS:
        return
    facts = _quant_facts(ctx) | {"family": method_family(method).upper()}
    yield Hit(facts, None, (Edit("--quantization", None),))


@rule("quant-method-mismatch", "error", "--quantization")
def quant_method_mismatch(ctx: Context) -> Iterator[Hit]:
    method = ctx.settings.quantization
    quant = ctx.model.quantization if ctx.model else None
    if method is None or quant is None:
        return
    if method_family(method) == method_family(quant.method) or method == "marlin":
        return
    yield Hit(_quant_facts(ctx), None, (Edit("--quantization", None),))


@rule("quant-unsupported-gpu", "error", "--quantization")
def quant_unsupported_gpu(ctx: Context) -> Iterator[Hit]:
    method = effective_method(ctx)
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
    yield Hit(facts)


@rule("fp8-weight-only", "warning", "--quantization")
def fp8_weight_only(ctx: Context) -> Iterator[Hit]:
    method = effective_method(ctx)
    gpu = ctx.hardware.spec if ctx.hardware else None
    if method is None or not method.startswith("fp8") or gpu is None or gpu.capability is None:
        return
    needed = min_capability(method, ctx.command.version) or 0
    if gpu.capability >= 89 or gpu.capability < needed:
        return
    yield Hit(_quant_facts(ctx) | {"gpu": gpu.name})


@rule("quant-slow-kernel", "warning", "--quantization")
def quant_slow_kernel(ctx: Context) -> Iterator[Hit]:
    method = ctx.settings.quantization
    quant = ctx.model.quantization if ctx.model else None
    gpu = ctx.hardware.spec if ctx.hardware else None
    version = ctx.command.version
    if method not in ("awq", "gptq") or quant is None or method_family(quant.method) != method:
        return
    if version_at_least(version, "0.27.0") or gpu is None or gpu.capability is None:
        return
    marlin_from = 75 if version_at_least(version, "0.15.0") else 80
    bits_ok = quant.bits in ((4, 8) if method == "gptq" else (4,))
    if gpu.capability < marlin_from or not bits_ok:
        return
    facts = _quant_facts(ctx) | {"marlin": f"{method}_marlin", "gpu": gpu.name, "version": version}
    yield Hit(facts, None, (Edit("--quantization", None),))


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
    yield Hit(facts, None, (Edit("--dtype", fix_dtype),))


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
    yield Hit(facts, None, (Edit("--dtype", fix),), by_release=True)
