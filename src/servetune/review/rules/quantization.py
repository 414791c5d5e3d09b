"""Quantization and dtype: the flag against the checkpoint and the GPU."""

from __future__ import annotations

import math
from collections.abc import Iterator

from servetune.review.model import FLOAT16_REFUSED, QuantFacts
from servetune.review.rules.base import Context, Edit, Fact, Hit, Severity, rule
from servetune.vllm.flags import known_versions, version_at_least

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
# Minimum compute capability per method: {method: [(first release, capability)]}, newest last,
# as each release's `get_min_capability` returns it (quantization/*.py; the 75s of fp8 and the
# Marlin methods from 0.14.0, ModelOpt FP8's 80 from 0.27.0).
_MIN_CAPABILITY: dict[str, list[tuple[str, int]]] = {
    "awq": [("0.0.0", 75)],
    "awq_marlin": [("0.0.0", 80), ("0.14.0", 75)],
    "auto_awq": [("0.0.0", 75)],
    "gptq": [("0.0.0", 60)],
    "gptq_marlin": [("0.0.0", 80), ("0.14.0", 75), ("0.27.0", 60)],
    "auto_gptq": [("0.0.0", 60)],
    "fp8": [("0.0.0", 80), ("0.14.0", 75)],
    "fbgemm_fp8": [("0.0.0", 80)],
    "compressed-tensors": [("0.0.0", 70)],
    "bitsandbytes": [("0.0.0", 70)],
    "gguf": [("0.0.0", 60)],
    "modelopt": [("0.0.0", 89), ("0.27.0", 80)],
    "modelopt_fp4": [("0.0.0", 100), ("0.9.0", 80), ("0.14.0", 75)],
    "mxfp4": [("0.0.0", 80)],
    "gpt_oss_mxfp4": [("0.0.0", 80)],
    "experts_int8": [("0.0.0", 80)],
    "moe_wna16": [("0.0.0", 70)],
    "torchao": [("0.0.0", 75)],
    "quark": [("0.0.0", 70)],
    "fp_quant": [("0.0.0", 100)],
}


# compressed-tensors / llm-compressor: the minimum capability of each scheme, from its
# `get_min_capability()` (compressed_tensors/schemes/, 0.5.5-0.33). W8A8-FP8 below 8.9 falls
# back to the weight-only FP8 Marlin scheme (`_get_scheme_from_parts`), so its floor is
# W8A16-FP8's. WnA16 with zero points (asymmetric) needs Marlin, the only kernel with zero
# points below Hopper (Exllama's has none).
_SCHEME_MIN_CAPABILITY: dict[str, list[tuple[str, int]]] = {
    "W4A16": [("0.0.0", 80), ("0.12.0", 75)],
    "W8A16": [("0.0.0", 80), ("0.12.0", 75)],
    "W4A16-asym": [("0.0.0", 80), ("0.15.0", 75)],
    "W8A16-asym": [("0.0.0", 80), ("0.15.0", 75)],
    "W8A16-FP8": [("0.0.0", 80), ("0.15.0", 75)],
    "W8A8-FP8": [("0.0.0", 80), ("0.15.0", 75)],
    "W8A8-INT8": [("0.0.0", 75)],
    "W4A8-INT": [("0.0.0", 75)],
    "W4A8-FP8": [("0.0.0", 90)],
    "NVFP4": [("0.0.0", 80), ("0.15.0", 75)],
    "MXFP4": [("0.0.0", 80)],
}
# fp8 KV cache on GPUs without FP8 attention kernels. V1 runs Volta and Turing from 0.10.2
# (before, they fell back to V0's paged attention, which converts fp8 in software); there the
# Triton attention backend holds the cache, and Triton's e4m3 type (fp8e4nv) needs SM 8.9,
# while its e5m2 works. From 0.24 Triton refuses any fp8 cache below 8.9 ("FP8 KV cache is not
# supported by the Triton attention backend"), and FlashInfer, which Ampere uses for an fp8
# cache, is disabled on SM 7.5: {first release: (capability below which it fails, dtypes)}.
_FP8_KV_LIMITS: list[tuple[str, int, tuple[str, ...]]] = [
    ("0.10.2", 75, ("fp8", "fp8_e4m3")),
    ("0.24.0", 80, ("fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla")),
]


def method_family(method: str) -> str:
    return _CHECKPOINT_METHODS.get(method, method)


def effective_method(ctx: Context) -> str | None:
    """The method vLLM will run: the flag, else the checkpoint's own."""
    if ctx.settings.quantization:
        return ctx.settings.quantization
    quant = ctx.model.quantization if ctx.model else None
    return quant.method if quant else None


def min_capability(method: str, version: str, scheme: str | None = None) -> int | None:
    """The lowest compute capability (x10) vLLM `version` runs `method` on; for
    compressed-tensors, its `scheme`'s when it is known."""
    table = _SCHEME_MIN_CAPABILITY.get(scheme or "") if method == "compressed-tensors" else None
    table = table or _MIN_CAPABILITY.get(method)
    if table is None and method.startswith("fp8"):
        table = _MIN_CAPABILITY["fp8"]
    if table is None:
        return None
    return [cap for since, cap in table if version_at_least(version, since)][-1]


def _scheme(ctx: Context, method: str) -> str | None:
    quant = ctx.model.quantization if ctx.model else None
    if method != "compressed-tensors" or quant is None:
        return None
    return quant.scheme


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


# A Marlin spelling of `--quantization` on a plain GPTQ/AWQ checkpoint, which
# `_verify_quantization` compares with the checkpoint's method once each method's
# `override_quantization_method` has had its say: {(spelling, checkpoint method): (first release
# that refuses it, first that takes it)}. From 0.4.3 `GPTQMarlinConfig` (and from 0.5.3
# `AWQMarlinConfig`) turns the checkpoint's method into its Marlin one only for
# `is_valid_user_quant = (user_quant is None or user_quant == "marlin")`, until 0.5.4 added
# `or user_quant == "gptq_marlin"` / `"awq_marlin"`: between, vLLM stops with "Quantization method
# specified in the model config (gptq) does not match the quantization method specified in the
# `quantization` argument (gptq_marlin)". 0.4.2 made the comparison itself and took gptq_marlin
# (and `marlin`, as gptq_marlin); 0.4.1 had no conversion, so `marlin` fit Marlin-format
# checkpoints only; `marlin` on AWQ is converted from 0.5.3, where AWQ-Marlin arrived.
_MARLIN_SPELLING_REFUSED: dict[tuple[str, str], tuple[str, str]] = {
    ("gptq_marlin", "gptq"): ("0.4.3", "0.5.4"),
    ("awq_marlin", "awq"): ("0.5.3", "0.5.4"),
    ("marlin", "gptq"): ("0.0.0", "0.4.2"),
    ("marlin", "awq"): ("0.0.0", "0.5.3"),
}


def _marlin_spelling_refused(method: str, checkpoint: str, version: str) -> bool:
    window = _MARLIN_SPELLING_REFUSED.get((method, checkpoint))
    if window is None:
        return False
    first, taken = window
    return version_at_least(version, first) and not version_at_least(version, taken)


@rule("quant-method-mismatch", "error", "--quantization")
def quant_method_mismatch(ctx: Context) -> Iterator[Hit]:
    method = ctx.settings.quantization
    quant = ctx.model.quantization if ctx.model else None
    if method is None or quant is None:
        return
    checkpoint = quant.method.lower()
    if _marlin_spelling_refused(method, checkpoint, ctx.command.version):
        facts = _quant_facts(ctx) | {"version": ctx.command.version}
        yield Hit(facts, "release", (Edit("--quantization", None),), by_release=True)
        return
    if method_family(method) == method_family(checkpoint) or method == "marlin":
        return
    if method == "moe_wna16" and _moe_wna16_reads(quant):
        return
    yield Hit(_quant_facts(ctx), None, (Edit("--quantization", None),))


def _moe_wna16_reads(quant: QuantFacts) -> bool:
    """`--quantization moe_wna16` on an AWQ or GPTQ checkpoint is vLLM's override, not a
    mismatch: `MoeWNA16Config.override_quantization_method` (0.7.2 on) takes 4-bit AWQ and
    4/8-bit GPTQ without act-order (`is_moe_wna16_compatible`; act-order is not among the
    facts read, so GPTQ is taken as compatible)."""
    if quant.method == "awq":
        return quant.bits in (None, 4)
    return quant.method == "gptq" and quant.bits in (None, 4, 8)


# FP8 MoE experts below native FP8 (SM 8.9): `Fp8MoEMethod` has no weight-only Marlin path
# before 0.9.0 (its first `fused_marlin_moe`), so the Triton fused-MoE kernel meets fp8e4nv and
# stops ("type fp8e4nv not supported in this architecture"); linear layers fall back earlier.
_FP8_MOE_MARLIN_SINCE = "0.9.0"
_NATIVE_FP8 = 89


def _fp8_moe_refused(ctx: Context, method: str | None) -> bool:
    gpu = ctx.hardware.spec if ctx.hardware else None
    if method is None or not method.startswith("fp8") or gpu is None or gpu.capability is None:
        return False
    if ctx.model is None or not ctx.model.is_moe or gpu.capability >= _NATIVE_FP8:
        return False
    floor = min_capability(method, ctx.command.version) or 0
    return gpu.capability >= floor and not version_at_least(
        ctx.command.version, _FP8_MOE_MARLIN_SINCE
    )


@rule("quant-unsupported-gpu", "error", "--quantization")
def quant_unsupported_gpu(ctx: Context) -> Iterator[Hit]:
    method = effective_method(ctx)
    gpu = ctx.hardware.spec if ctx.hardware else None
    if method is None or gpu is None or gpu.capability is None:
        return
    if _fp8_moe_refused(ctx, method):
        facts = _quant_facts(ctx) | {
            "method": method,
            "needed": "8.9",
            "have": gpu.compute_capability or "",
            "gpu": gpu.name,
            "version": ctx.command.version,
            "since": _FP8_MOE_MARLIN_SINCE,
        }
        yield Hit(facts, "moe", by_release=True)
        return
    scheme = _scheme(ctx, method)
    needed = min_capability(method, ctx.command.version, scheme)
    if needed is None or gpu.capability >= needed:
        return
    facts = _quant_facts(ctx) | {
        "method": f"{method} {scheme}" if scheme else method,
        "needed": f"{needed // 10}.{needed % 10}",
        "have": gpu.compute_capability or "",
        "gpu": gpu.name,
        "version": ctx.command.version,
    }
    yield Hit(facts, "scheme" if scheme else None)


@rule("kv-cache-dtype-unsupported-gpu", "error", "--kv-cache-dtype")
def kv_cache_dtype_unsupported_gpu(ctx: Context) -> Iterator[Hit]:
    """An fp8 KV cache on a GPU whose attention backend cannot hold one (`_FP8_KV_LIMITS`)."""
    kv = ctx.settings.kv_cache_dtype.lower()
    gpu = ctx.hardware.spec if ctx.hardware else None
    version = ctx.command.version
    if not kv.startswith("fp8") or gpu is None or gpu.capability is None:
        return
    limits = [
        (below, kinds) for since, below, kinds in _FP8_KV_LIMITS if version_at_least(version, since)
    ]
    if not limits:
        return
    below, kinds = limits[-1]
    if gpu.capability >= below or kv not in kinds:
        return
    e5m2 = "fp8_e5m2" not in kinds
    facts: dict[str, Fact] = {
        "kv_dtype": kv,
        "gpu": gpu.name,
        "have": gpu.compute_capability or "",
        "version": version,
        "needed": f"{below // 10}.{below % 10}",
    }
    fix = "fp8_e5m2" if e5m2 else "auto"
    yield Hit(facts, "e5m2" if e5m2 else None, (Edit("--kv-cache-dtype", fix),), by_release=True)


@rule("fp8-weight-only", "warning", "--quantization")
def fp8_weight_only(ctx: Context) -> Iterator[Hit]:
    method = effective_method(ctx)
    gpu = ctx.hardware.spec if ctx.hardware else None
    if method is None or not method.startswith("fp8") or gpu is None or gpu.capability is None:
        return
    needed = min_capability(method, ctx.command.version) or 0
    if gpu.capability >= 89 or gpu.capability < needed or _fp8_moe_refused(ctx, method):
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


# --- quantized layers split by tensor parallelism ------------------------------------------

_GROUPED_FAMILIES = ("awq", "gptq")
_MARLIN_TILE_K = 128  # GPTQ_MARLIN_MIN_THREAD_K, binding for AWQ-Marlin before 0.7.3
_AWQ_MARLIN_FALLS_BACK = "0.7.3"  # unsupported layers fall back to plain AWQ from here


def _tile(ctx: Context, method: str, group: int) -> int:
    """What a rank's input share must be a multiple of: the quantization group (its scales
    cannot be split), and before 0.7.3 AWQ-Marlin's 128-wide tile (later releases fall back to
    plain AWQ for such a layer, which needs whole groups only)."""
    gpu = ctx.hardware.spec if ctx.hardware else None
    marlin = method == "awq_marlin" or (
        method == "awq"
        and not ctx.settings.quantization
        and (gpu is None or (gpu.capability or 0) >= 80)
    )
    if marlin and not version_at_least(ctx.command.version, _AWQ_MARLIN_FALLS_BACK):
        return math.lcm(group, _MARLIN_TILE_K)
    return group


def _tp_shares(ctx: Context) -> list[tuple[str, int, bool]]:
    """(what, full width, routed experts?) for the quantized layers TP splits along their
    input: the MLP's down projection and attention's output projection."""
    model = ctx.model
    if model is None:
        return []
    heads = (model.num_attention_heads or 0) * (model.head_dim or 0)
    dense = model.dense_intermediate_size or model.intermediate_size
    shares = []
    if dense and (not model.is_moe or model.num_dense_layers):
        shares.append(("intermediate_size", dense, False))
    if model.is_moe and model.moe_intermediate_size:
        shares.append(("moe_intermediate_size", model.moe_intermediate_size, True))
    if heads:
        shares.append(("num_attention_heads x head_dim", heads, False))
    return shares


def _misfit(width: int, tp: int, tile: int) -> bool:
    return bool(width % tp or (width // tp) % tile)


@rule("quant-tp-shape", "error", "--tensor-parallel-size")
def quant_tp_shape(ctx: Context) -> Iterator[Hit]:
    """Group-quantized layers (AWQ, GPTQ, compressed-tensors WnA16) need every rank's share of
    a layer split along its input to be whole groups: vLLM stops while it builds the layers
    ("Weight input_size_per_partition = 14784 is not divisible by min_thread_k = 128", "The
    input size is not aligned with the quantized weight shape"). Routed experts fall back to
    the MoE WNA16 kernels, which start and fail on the first request ("size_k must divisible
    by BLOCK_SIZE_K"): a warning. A model whose facts come from its name alone (`inferred`)
    may be a republished checkpoint with padded layers: a warning too."""
    method, tp = effective_method(ctx), ctx.settings.tensor_parallel_size
    quant = ctx.model.quantization if ctx.model else None
    if method is None or quant is None or tp == 1 or not quant.group_size:
        return
    family = method_family(method)
    if quant.group_size <= 0 or family not in (*_GROUPED_FAMILIES, "compressed-tensors"):
        return
    tile = _tile(ctx, method, quant.group_size)
    expert_parallel = bool(ctx.command.switch("--enable-expert-parallel"))
    for what, width, experts in _tp_shares(ctx):
        if (experts and expert_parallel) or not _misfit(width, tp, tile):
            continue  # expert parallelism places experts whole
        valid = [t for t in (1, 2, 4, 8) if not _misfit(width, t, tile)]
        facts: dict[str, Fact] = {
            "what": what,
            "width": width,
            "tp": tp,
            "size": width // tp,
            "tile": tile,
            "valid": ", ".join(str(t) for t in valid) or "1",
            "model": ctx.model.model_id if ctx.model else "",
        }
        guessed = ctx.model is not None and ctx.model.source == "inferred"
        severity: Severity | None = "warning" if experts or guessed else None
        yield Hit(facts, "experts" if experts else "sizes", severity=severity)
        return


# --- dtype ----------------------------------------------------------------------------------


# From 0.9.0 `--dtype auto` falls back to the platform's first supported dtype where the GPU
# lacks the checkpoint's (`_get_and_verify_dtype`, later `_resolve_auto_dtype`: "Your device
# ... doesn't support torch.bfloat16. Falling back to torch.float16"): float16 before Ampere.
_AUTO_DTYPE_FALLBACK_SINCE = "0.9.0"


def _auto_falls_back(ctx: Context) -> bool:
    """`--dtype auto` with a bfloat16 checkpoint on a CUDA GPU without bfloat16, in a release
    that then computes in float16."""
    gpu = ctx.hardware.spec if ctx.hardware else None
    return (
        gpu is not None
        and gpu.capability is not None
        and gpu.capability < 80
        and ctx.settings.dtype == "bfloat16"
        and version_at_least(ctx.command.version, _AUTO_DTYPE_FALLBACK_SINCE)
    )


@rule("dtype-unsupported-gpu", "error", "--dtype")
def dtype_unsupported_gpu(ctx: Context) -> Iterator[Hit]:
    gpu = ctx.hardware.spec if ctx.hardware else None
    if gpu is None or gpu.capability is None or gpu.capability >= 80:
        return
    explicit = ctx.settings.dtype_flag.lower() == "bfloat16"
    old_auto = (
        ctx.settings.dtype_flag == "auto"
        and ctx.settings.dtype == "bfloat16"
        and not version_at_least(ctx.command.version, _AUTO_DTYPE_FALLBACK_SINCE)
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


# --- the activation dtype a quantization method computes in ----------------------------------

# `get_supported_act_dtypes()` of each method's config, release by release (vllm/model_executor/
# layers/quantization/, 0.4.1-0.33): vLLM stops when the model's dtype is not among them
# ("torch.float16 is not supported for quantization method mxfp4. Supported dtypes:
# [torch.bfloat16]"). {method: [(first release, last release, dtypes)]}; a method or a release
# not listed takes float16 and bfloat16 alike. The plain AWQ and GPTQ kernels compute in float16
# until the releases that merged them (0.24, 0.22); their Marlin forms take both.
_ACT_DTYPES: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "awq": [("0.0.0", "0.23.99", ("float16",))],
    "gptq": [("0.0.0", "0.21.99", ("float16",))],
    "gptq_marlin": [("0.4.2", "0.4.2", ("float16",))],
    "gptq_marlin_24": [("0.0.0", "0.15.99", ("float16",))],
    "marlin": [("0.0.0", "0.10.1.99", ("float16",))],
    "aqlm": [("0.0.0", "0.10.0.99", ("float16",))],
    "squeezellm": [("0.0.0", "0.6.0.99", ("float16",))],
    "qqq": [("0.0.0", "0.10.1.99", ("float16",))],
    "mxfp4": [("0.10.1", "99.0", ("bfloat16",))],
    "gpt_oss_mxfp4": [("0.10.1", "99.0", ("bfloat16",))],
    "fp_quant": [("0.11.1", "99.0", ("bfloat16",))],
    "modelopt_mxfp8": [("0.16.0", "99.0", ("bfloat16",))],
    "inc": [("0.10.0", "0.14.99", ("bfloat16",))],
}
# A plain AWQ/GPTQ checkpoint without `--quantization` runs as its Marlin form where the GPU
# has it (`override_quantization_method`, 0.6 on): Marlin takes bfloat16.
_TO_MARLIN = {"awq": "awq_marlin", "gptq": "gptq_marlin"}
_DTYPE_WORDS = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16"}


def _act_dtypes(method: str, version: str) -> tuple[str, ...] | None:
    for first, last, dtypes in _ACT_DTYPES.get(method, []):
        if version_at_least(version, first) and version_at_least(last, version):
            return dtypes
    return None


def _running_method(ctx: Context) -> str | None:
    method = effective_method(ctx)
    if method in _TO_MARLIN and not ctx.settings.quantization:
        gpu = ctx.hardware.spec if ctx.hardware else None
        needed = min_capability(_TO_MARLIN[method], ctx.command.version) or 80
        if gpu is None or gpu.capability is None or gpu.capability >= needed:
            return _TO_MARLIN[method]  # unknown GPU: the usual case, a capable one
    return method


# Releases still run today (the V1 engine's, 0.8 on): where the command names no release, a
# refusal only older ones make is a warning (as pp-unsupported-model's `older`).
_STILL_RUN_SINCE = "0.8.0"


def _compute_dtype(ctx: Context) -> tuple[str | None, bool]:
    """The dtype the model computes in and whether `--dtype` named it: `auto` is the dtype
    `_get_and_verify_dtype` resolves (the checkpoint's `torch_dtype`, float32 downcast), which
    `get_quant_config` checks against the method as it would a dtype given ("torch.bfloat16 is
    not supported for quantization method awq" for a bfloat16 checkpoint and `--dtype auto`)."""
    flag = ctx.settings.dtype_flag.lower()
    if flag in _DTYPE_WORDS:
        return _DTYPE_WORDS[flag], True
    resolved = _DTYPE_WORDS.get(ctx.settings.dtype or "") if flag == "auto" else None
    if flag == "auto" and _auto_falls_back(ctx):
        resolved = "float16"
    return resolved, False


def _refused_before(method: str, dtype: str) -> str | None:
    """The first release that takes `dtype` for `method` where releases still run today
    (0.8 on) refuse it; None where they take it."""
    allowed = _act_dtypes(method, _STILL_RUN_SINCE)
    if allowed is None or dtype in allowed:
        return None
    later = [v for v in known_versions() if version_at_least(v, _STILL_RUN_SINCE)]
    return next((v for v in later if dtype in (_act_dtypes(method, v) or (dtype,))), None)


@rule("quant-dtype-unsupported", "error", "--dtype")
def quant_dtype_unsupported(ctx: Context) -> Iterator[Hit]:
    """`--dtype`, or the checkpoint's dtype under `auto`, that the quantization method's kernels
    do not compute in. Where the release is assumed (the newest) and only older releases still
    run today refuse it, a warning (`older`)."""
    dtype, given = _compute_dtype(ctx)
    method = _running_method(ctx)
    if dtype is None or method is None:
        return
    version = ctx.command.version
    allowed = _act_dtypes(method, version)
    facts: dict[str, Fact] = {"dtype": dtype, "method": method, "version": version}
    variant = None if given else "auto"
    if allowed is not None and dtype not in allowed:
        facts["allowed"] = ", ".join(allowed)
        # a guessed checkpoint's dtype (a name's inferred facts) may not be its own
        guessed = not given and ctx.model is not None and ctx.model.source == "inferred"
        severity: Severity | None = "warning" if guessed else None
        edits = (Edit("--dtype", allowed[0]),)
        yield Hit(facts, variant, edits, by_release=True, severity=severity)
        return
    since = None if ctx.command.release_known else _refused_before(method, dtype)
    if since is None:
        return
    older = _act_dtypes(method, _STILL_RUN_SINCE) or ()
    facts |= {"allowed": ", ".join(older), "since": since}
    yield Hit(facts, "older", severity="warning")
