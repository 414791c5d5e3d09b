"""`explain`: every flag of a command in plain words, for this command's own values.

The five knobs people tune most (tensor parallelism, max-num-seqs, max-num-batched-tokens,
quantization, dtype) get an explanation built from the model, the GPUs and vLLM's defaults;
other common flags get a fixed note; the rest say what kind of option they are.

Each meaning is a `Meaning`: an `explain` text key with its facts (pieces of other meanings
among them), said in English by `Explanation.to_json()` and in `--lang` by
`render.check.explanations_text`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from servetune import texts
from servetune.review.check import Report
from servetune.review.settings import batch_defaults
from servetune.texts import Area, Sentence
from servetune.vllm import flags as vllm_flags

__all__ = ["Explanation", "Meaning", "explain"]


class Meaning(Sentence):
    """An `explain` text key with the facts that fill it."""

    __slots__ = ()
    area: ClassVar[Area] = "explain"


@dataclass(frozen=True)
class Explanation:
    """One flag of the command: as written (`value` None for a switch), and what it means."""

    flag: str
    value: str | None
    meaning: Meaning

    def to_json(self) -> dict[str, object]:
        """The item of `explain --format json`: the meaning in English."""
        return {"flag": self.flag, "value": self.value, "meaning": self.meaning.text()}


_Explainer = Callable[[Report, str | None], Meaning]
_NOTHING = ""  # a piece a meaning leaves out (its template reads `{heads}`, `{default}`...)


def _tp(report: Report, _value: str | None) -> Meaning:
    s, model = report.settings, report.model
    tp = s.tensor_parallel_size
    if tp == 1:
        return Meaning("tp.one")
    heads_total = model.num_attention_heads if model else None
    share = heads_total // tp if heads_total and heads_total % tp == 0 else "?"
    heads: Meaning | str = _NOTHING
    if model and heads_total:
        heads = Meaning("tp.heads", model=model.model_id, heads=heads_total, share=share)
    return Meaning("tp.many", tp=tp, heads=heads)


def _vllm_defaults(report: Report) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) vLLM would pick here without the flags."""
    gpu = report.hardware.spec if report.hardware else None
    mbt, seqs, _ = batch_defaults(report.command.version, gpu)
    return mbt, seqs


def _max_num_seqs(report: Report, _value: str | None) -> Meaning:
    s = report.settings
    default = s.defaults.get("--max-num-seqs")
    _, vllm_default = _vllm_defaults(report)
    note = (
        Meaning("max-num-seqs.default", default=default)
        if default
        else Meaning("max-num-seqs.replaced", vllm_default=vllm_default)
    )
    return Meaning("max-num-seqs", seqs=s.max_num_seqs, note=note)


def _mbt(report: Report, _value: str | None) -> Meaning:
    s = report.settings
    vllm_default, _ = _vllm_defaults(report)
    chunked = "chunked" if s.chunked_prefill else "whole"
    mode = Meaning(f"max-num-batched-tokens.{chunked}")
    replaced = (
        Meaning("max-num-batched-tokens.replaced", vllm_default=vllm_default)
        if "--max-num-batched-tokens" in s.user_set
        else Meaning("max-num-batched-tokens.default")
    )
    mbt = s.max_num_batched_tokens
    return Meaning("max-num-batched-tokens", mbt=str(mbt), replaced=replaced, mode=mode)


def _quantization(report: Report, value: str | None) -> Meaning:
    quant = report.model.quantization if report.model else None
    method = (value or "").lower()
    online = method.startswith("fp8") or method in ("bitsandbytes", "experts_int8")
    checkpoint = (
        Meaning("quantization.quantized", checkpoint_method=quant.method)
        if quant
        else Meaning("quantization.plain")
    )
    how = Meaning("quantization.online" if online else "quantization.offline", method=method)
    return Meaning("quantization", how=how, checkpoint=checkpoint)


def _dtype(report: Report, _value: str | None) -> Meaning:
    return Meaning("dtype", dtype=report.settings.dtype or "?")


_KNOBS: dict[str, _Explainer] = {
    "--tensor-parallel-size": _tp,
    "--max-num-seqs": _max_num_seqs,
    "--max-num-batched-tokens": _mbt,
    "--quantization": _quantization,
    "--dtype": _dtype,
}


def _generic(flag: str) -> Meaning:
    spec = vllm_flags.spec_any_version(flag)
    kind = Meaning("generic.switch" if spec.kind in ("bool", "store_true") else "generic.option")
    default: Meaning | str = _NOTHING
    if spec.default not in (None, ""):
        default = Meaning("generic.default", default=str(spec.default))
    return Meaning("generic", kind=kind, default=default, name=flag.removeprefix("--"))


def _value(report: Report, flag: str) -> str | None:
    value = report.command.args.get(flag)
    if value is True or value is None:
        return None
    if value is False:
        return "off"
    return " ".join(value) if isinstance(value, tuple) else value


def _meaning(report: Report, flag: str, value: str | None) -> Meaning:
    if flag in _KNOBS:
        return _KNOBS[flag](report, value)
    if texts.has("explain", f"note.{flag}"):
        return Meaning(f"note.{flag}")
    return _generic(flag)


def explain(report: Report) -> list[Explanation]:
    """One explanation per flag of the command, in the order written; the five knobs always."""
    items: list[Explanation] = []
    if report.command.model:
        items.append(Explanation("model", report.command.model, Meaning("model")))
    flags = list(report.command.order)
    flags += [k for k in _KNOBS if k not in flags]
    for flag in flags:
        value = _value(report, flag)
        if flag == "--quantization" and value is None:
            continue
        items.append(Explanation(flag, value, _meaning(report, flag, value)))
    return items
