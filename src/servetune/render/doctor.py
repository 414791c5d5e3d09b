"""The doctor's report as text (its JSON is `DoctorReport.to_json`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from servetune.render.check import wrap

if TYPE_CHECKING:
    from servetune.launch.doctor import DoctorReport

# The labels of the text report (English; zh-TW to come with the text tables).
LABELS = {
    "status": "status: ",
    "root_cause": "root cause: ",
    "why": "why: ",
    "fix": "fix: ",
    "evidence": "evidence: ",
    "reported": "reported: ",
    "version": "vLLM {version}",
    "kv_cache": "KV cache {tokens:,} tokens",
    "concurrency": "max concurrency {concurrency:.2f}x",
}


def _reported(report: DoctorReport) -> list[str]:
    reported = report.reported
    numbers = []
    if reported.vllm_version:
        numbers.append(LABELS["version"].format(version=reported.vllm_version))
    if reported.kv_cache_tokens is not None:
        numbers.append(LABELS["kv_cache"].format(tokens=reported.kv_cache_tokens))
    if reported.max_concurrency is not None:
        numbers.append(LABELS["concurrency"].format(concurrency=reported.max_concurrency))
    return ["", LABELS["reported"] + ", ".join(numbers)] if numbers else []


def doctor_text(report: DoctorReport) -> str:
    """Status, root cause, each diagnosis with why/fix/evidence, then vLLM's own numbers."""
    lines = [LABELS["status"] + report.status]
    if report.root_cause:
        lines += wrap(report.root_cause, "", LABELS["root_cause"])
    for d in report.diagnoses:
        lines += ["", *wrap(d.title, "", f"[{d.id}] ")]
        lines += wrap(d.why, "  ", LABELS["why"]) + wrap(d.fix, "  ", LABELS["fix"])
        if d.evidence:
            lines += wrap(d.evidence, "  ", LABELS["evidence"])
    return "\n".join(lines + _reported(report)) + "\n"
