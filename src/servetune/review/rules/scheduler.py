"""Scheduler limits: the token budget, the sequence cap, and memory quantization freed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from servetune.review import capacity
from servetune.review.capacity import Estimate
from servetune.review.rules.base import Context, Edit, Fact, Hit, rule
from servetune.review.rules.quantization import ONLINE_METHODS, effective_method, method_family
from servetune.review.settings import batch_defaults, v0_engine
from servetune.vllm.flags import flags_of, version_at_least


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
    yield Hit(facts, None, (Edit("--max-num-batched-tokens", str(default)),))


@rule("batched-tokens-below-model-len", "error", "--max-num-batched-tokens")
def batched_tokens_below_model_len(ctx: Context) -> Iterator[Hit]:
    s = ctx.settings
    if s.chunked_prefill or s.max_num_batched_tokens is None or s.max_model_len is None:
        return
    if s.max_num_batched_tokens >= s.max_model_len:
        return
    facts: dict[str, Fact] = {"mbt": s.max_num_batched_tokens, "max_model_len": s.max_model_len}
    edits = (Edit("--max-num-batched-tokens", str(s.max_model_len)),)
    yield Hit(facts, None, edits)


@rule("batched-tokens-below-num-seqs", "error", "--max-num-batched-tokens")
def batched_tokens_below_num_seqs(ctx: Context) -> Iterator[Hit]:
    s = ctx.settings
    if s.max_num_batched_tokens is None or s.max_num_batched_tokens >= s.max_num_seqs:
        return
    facts: dict[str, Fact] = {"mbt": s.max_num_batched_tokens, "seqs": s.max_num_seqs}
    edits = (Edit("--max-num-batched-tokens", str(max(s.max_num_seqs, 2048))),)
    yield Hit(facts, None, edits)


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
    ) or s.quantization in ONLINE_METHODS
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
    yield Hit(facts, variant, edits)


_NATIVE_FP8_CAPABILITY = 89  # Ada and Hopper and newer run FP8 GEMMs: there FP8 is for speed
# Quantizing buys at most this share of the load (--max-num-seqs conversations of a typical
# length) over what the original checkpoint already holds: below it, "don't quantize just to
# save" (an AWQ 7B on one H100 holds ~10% more KV than the original's million tokens).
_WORTHWHILE_GAIN = 0.10


def _original_estimate(ctx: Context) -> Estimate | None:
    """The estimate for the same serve flags on the original (unquantized) checkpoint."""
    model, hw = ctx.model, ctx.hardware
    if model is None or hw is None or hw.spec is None:
        return None
    plain_model = replace(model, quantization=None)
    dtype = ctx.settings.dtype or "bfloat16"
    plain_settings = replace(ctx.settings, quantization=None, dtype=dtype)
    return capacity.estimate(
        plain_model,
        plain_settings,
        hw.spec.memory_gib,
        version=ctx.command.version,
        gpu=hw.spec,
        cards=hw.cards,
    )


def _quant_to_weigh(ctx: Context) -> str | None:
    """The quantization method worth weighing against the original checkpoint, or None."""
    model, s, hw = ctx.model, ctx.settings, ctx.hardware
    method = effective_method(ctx)
    if model is None or method is None or method == "mxfp4" or hw is None or hw.spec is None:
        return None  # gpt-oss ships MXFP4 only: there is no original to fall back to
    if model.quantization is None and s.quantization not in ONLINE_METHODS:
        return None  # AWQ/GPTQ asked of a plain checkpoint: quant-on-unquantized says it
    native_fp8 = (hw.spec.capability or 0) >= _NATIVE_FP8_CAPABILITY
    if method_family(method) == "fp8" and native_fp8:
        return None
    return method


@rule("quant-unneeded", "warning", "--quantization")
def quant_unneeded(ctx: Context) -> Iterator[Hit]:
    """Quantized although it buys little: the seed's "don't quantize just to save".

    The load is --max-num-seqs conversations of a typical length (2,048 tokens, or
    --max-model-len if shorter), not every slot at the full context. Fires when the original
    checkpoint holds a full-length sequence and either the whole load, or all but less than
    `_WORTHWHILE_GAIN` of the load that the quantized one holds (the AWQ 7B on an H100: the
    original's 1.1M tokens are 53% of 1024 x 2048, AWQ's 58%). Not when the original does not
    fit, and not for FP8 on GPUs with native FP8 GEMMs (compute capability >= 8.9), where the
    speed-up is the point."""
    s, method = ctx.settings, _quant_to_weigh(ctx)
    original = _original_estimate(ctx) if method else None
    if method is None or original is None or not original.kv_cache_tokens:
        return
    if s.max_model_len and (original.max_model_len_that_fits or 0) < s.max_model_len:
        return
    typical = min(_TYPICAL_CONVERSATION, s.max_model_len or _TYPICAL_CONVERSATION)
    load = s.max_num_seqs * typical
    quant_tokens = ctx.estimate.kv_cache_tokens if ctx.estimate else None
    covered = min(1.0, original.kv_cache_tokens / load)
    covered_quant = min(1.0, (quant_tokens or 0) / load)
    if covered < 1.0 and covered_quant - covered >= _WORTHWHILE_GAIN:
        return
    facts: dict[str, Fact] = {
        "method": method,
        "weights": round(original.weights_gib_per_gpu, 1),
        "kv_tokens": original.kv_cache_tokens,
        "seqs": s.max_num_seqs,
        "typical": typical,
        "machine": ctx.machine(),
        "conversations": original.kv_cache_tokens // typical,
        "covered_pct": round(100 * covered),
        "quant_tokens": quant_tokens or 0,
        "gain_pct": round(100 * ((quant_tokens or 0) / original.kv_cache_tokens - 1)),
    }
    yield Hit(facts, None if covered >= 1.0 else "small-gain")


# Prefix caching beside a sliding window: V0's cache refuses the pair ("Sliding window is not
# allowed with prefix caching enabled!" in `BlockSpaceManagerV1`, 0.4.1-0.5; "Prefix caching is
# not supported with sliding window. Run with --disable-sliding-window to use prefix caching."
# in `CacheConfig._verify_prefix_caching`, 0.5-0.10, only `if ... not envs.VLLM_USE_V1` from 0.8,
# where V1 became the default and caches sliding-window layers itself). `sliding_window` is the
# config's unless `--disable-sliding-window` or `use_sliding_window: false`
# (`get_hf_config_sliding_window`), as the model facts read it.
_V1_DEFAULT_SINCE = "0.8.0"


@rule("prefix-caching-sliding-window", "error", "--enable-prefix-caching")
def prefix_caching_sliding_window(ctx: Context) -> Iterator[Hit]:
    """`--enable-prefix-caching` on a model whose every layer slides its attention window, on
    the V0 engine, which stops at startup (see above). Where the release is assumed (the newest,
    V1), the older releases' refusal is said as an `info` (`older`)."""
    model = ctx.model
    if not ctx.command.switch("--enable-prefix-caching") or model is None:
        return
    if ctx.command.switch("--disable-sliding-window") or not model.sliding_window:
        return
    if model.num_layers is None or model.sliding_layers < model.num_layers:
        return  # interleaved windows (Gemma 2/3) are not read here
    facts: dict[str, Fact] = {
        "window": model.sliding_window,
        "model": model.model_id,
        "since": _V1_DEFAULT_SINCE,
    }
    edits = (Edit("--disable-sliding-window", True),)
    if "--disable-sliding-window" not in flags_of(ctx.command.version):
        edits = (Edit("--enable-prefix-caching", None),)  # no such flag before 0.4.3
    if v0_engine(ctx.command):
        variant = "v0" if version_at_least(ctx.command.version, _V1_DEFAULT_SINCE) else None
        yield Hit(facts, variant, edits, by_release=True)
    elif not ctx.command.release_known:
        yield Hit(facts, "older", edits, severity="info")
