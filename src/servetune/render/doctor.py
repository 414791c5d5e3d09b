"""The doctor's report as text in the language asked for (its JSON is `DoctorReport.to_json`,
English): the diagnoses' sentences said in that language, the labels the `report.*` texts of
the doctor area."""

from __future__ import annotations

from typing import TYPE_CHECKING

from servetune import texts
from servetune.render.check import wrap

if TYPE_CHECKING:
    from servetune.launch.doctor import DoctorReport
    from servetune.texts import Language


def _label(key: str, language: Language, **facts: object) -> str:
    return texts.format("doctor", f"report.{key}", language, **facts)


def _reported(report: DoctorReport, language: Language) -> list[str]:
    reported = report.reported
    numbers = []
    if reported.vllm_version:
        numbers.append(_label("version", language, version=reported.vllm_version))
    if reported.kv_cache_tokens is not None:
        numbers.append(_label("kv_cache", language, tokens=reported.kv_cache_tokens))
    if reported.max_concurrency is not None:
        numbers.append(_label("concurrency", language, concurrency=reported.max_concurrency))
    if reported.model_loading_gib is not None:
        numbers.append(_label("weights", language, gib=reported.model_loading_gib))
    if reported.available_kv_cache_gib is not None:
        numbers.append(_label("kv_memory", language, gib=reported.available_kv_cache_gib))
    return ["", _label("reported", language) + ", ".join(numbers)] if numbers else []


def doctor_text(report: DoctorReport, language: Language = "en") -> str:
    """Status, root cause, each diagnosis with why/fix/evidence, then vLLM's own numbers."""
    lines = [_label("status", language) + report.status]
    if report.root_cause:
        lines += wrap(report.root_cause, "", _label("root_cause", language))
    for d in report.diagnoses:
        lines += ["", *wrap(d.title.text(language), "", f"[{d.id}] ")]
        lines += wrap(d.why.text(language), "  ", _label("why", language))
        lines += wrap(d.fix.text(language), "  ", _label("fix", language))
        if d.evidence:
            lines += wrap(d.evidence, "  ", _label("evidence", language))
    return "\n".join(lines + _reported(report, language)) + "\n"
