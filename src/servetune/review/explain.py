"""`explain`: every flag of a command in plain words, for this command's own values.

The five knobs people tune most (tensor parallelism, max-num-seqs, max-num-batched-tokens,
quantization, dtype) get an explanation built from the model, the GPUs and vLLM's defaults;
other common flags get a fixed note; the rest say what kind of option they are.
"""

from __future__ import annotations

from collections.abc import Callable

from servetune import texts
from servetune.review.check import Report
from servetune.review.settings import batch_defaults
from servetune.texts import Language
from servetune.vllm import flags as vllm_flags

Explanation = tuple[str, str | None, str]  # (flag, value as written, meaning)
_Explainer = Callable[[Report, str | None, Language], str]


def _text(key: str, lang: Language, **facts: object) -> str:
    return texts.format("explain", key, lang, **facts)


def _tp(report: Report, _value: str | None, lang: Language) -> str:
    s, model = report.settings, report.model
    tp = s.tensor_parallel_size
    if tp == 1:
        return _text("tp.one", lang)
    heads_total = model.num_attention_heads if model else None
    share = heads_total // tp if heads_total and heads_total % tp == 0 else "?"
    heads = (
        _text("tp.heads", lang, model=model.model_id, heads=heads_total, share=share)
        if model and heads_total
        else ""
    )
    return _text("tp.many", lang, tp=tp, heads=heads)


def _vllm_defaults(report: Report) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) vLLM would pick here without the flags."""
    gpu = report.hardware.spec if report.hardware else None
    mbt, seqs, _ = batch_defaults(report.command.version, gpu)
    return mbt, seqs


def _max_num_seqs(report: Report, _value: str | None, lang: Language) -> str:
    s = report.settings
    default = s.defaults.get("--max-num-seqs")
    _, vllm_default = _vllm_defaults(report)
    note = (
        _text("max-num-seqs.default", lang, default=default.text(lang))
        if default
        else _text("max-num-seqs.replaced", lang, vllm_default=vllm_default)
    )
    return _text("max-num-seqs", lang, seqs=s.max_num_seqs, note=note)


def _mbt(report: Report, _value: str | None, lang: Language) -> str:
    s = report.settings
    vllm_default, _ = _vllm_defaults(report)
    mode = _text(
        "max-num-batched-tokens.chunked" if s.chunked_prefill else "max-num-batched-tokens.whole",
        lang,
    )
    replaced = (
        _text("max-num-batched-tokens.replaced", lang, vllm_default=vllm_default)
        if "--max-num-batched-tokens" in s.user_set
        else _text("max-num-batched-tokens.default", lang)
    )
    return _text(
        "max-num-batched-tokens", lang, mbt=s.max_num_batched_tokens, replaced=replaced, mode=mode
    )


def _quantization(report: Report, value: str | None, lang: Language) -> str:
    quant = report.model.quantization if report.model else None
    method = (value or "").lower()
    online = method.startswith("fp8") or method in ("bitsandbytes", "experts_int8")
    checkpoint = (
        _text("quantization.quantized", lang, checkpoint_method=quant.method)
        if quant
        else _text("quantization.plain", lang)
    )
    how = _text("quantization.online" if online else "quantization.offline", lang, method=method)
    return _text("quantization", lang, how=how, checkpoint=checkpoint)


def _dtype(report: Report, _value: str | None, lang: Language) -> str:
    return _text("dtype", lang, dtype=report.settings.dtype or "?")


_KNOBS: dict[str, _Explainer] = {
    "--tensor-parallel-size": _tp,
    "--max-num-seqs": _max_num_seqs,
    "--max-num-batched-tokens": _mbt,
    "--quantization": _quantization,
    "--dtype": _dtype,
}


def _generic(flag: str, lang: Language) -> str:
    spec = vllm_flags.spec_any_version(flag)
    kind = _text(
        "generic.switch" if spec.kind in ("bool", "store_true") else "generic.option", lang
    )
    default = (
        _text("generic.default", lang, default=spec.default)
        if spec.default not in (None, "")
        else ""
    )
    return _text("generic", lang, kind=kind, default=default, name=flag.removeprefix("--"))


def _value(report: Report, flag: str) -> str | None:
    value = report.command.args.get(flag)
    if value is True or value is None:
        return None
    if value is False:
        return "off"
    return " ".join(value) if isinstance(value, tuple) else value


def explain(report: Report) -> list[Explanation]:
    """One explanation per flag of the command, in the order written; the five knobs always."""
    lang = report.language
    items: list[Explanation] = []
    if report.command.model:
        items.append(("model", report.command.model, _text("model", lang)))
    flags = list(report.command.order)
    flags += [k for k in _KNOBS if k not in flags]
    for flag in flags:
        value = _value(report, flag)
        if flag in _KNOBS:
            if flag == "--quantization" and value is None:
                continue
            items.append((flag, value, _KNOBS[flag](report, value, lang)))
        elif texts.has("explain", f"note.{flag}"):
            items.append((flag, value, _text(f"note.{flag}", lang)))
        else:
            items.append((flag, value, _generic(flag, lang)))
    return items
