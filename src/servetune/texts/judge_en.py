"""What `compare` and `accept` print, in English (their JSON documents keep their own English
keys and values: those are the contract). `verdict.*` and `status.*` spell the closed sets of
`judge.compare.Verdict` and `judge.accept.CheckStatus`; `check.<id>` names accept's checks."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    # --- compare ---
    "compare.runs": (
        "before: {before} run(s), after: {after} run(s); {confidence} intervals by resampling "
        "{method}."
    ),
    "compare.method.runs": "runs",
    "compare.method.requests": "requests within a run",
    "compare.column.metric": "metric",
    "compare.column.before": "before",
    "compare.column.after": "after",
    "compare.column.change": "change",
    "compare.column.ci": "CI",
    "compare.column.verdict": "verdict",
    "compare.changed_flags": "Changed flags (before -> after):",
    "compare.unset": "unset",
    "compare.default": " (default)",
    "compare.warnings": "Warnings:",
    "compare.next_step": "Next step: {step}",
    "verdict.better": "better",
    "verdict.worse": "worse",
    "verdict.no-change": "no-change",
    "verdict.insufficient-data": "insufficient",
    # --- accept ---
    "accept.accepted": "ACCEPTED",
    "accept.not_accepted": "NOT ACCEPTED ({failed} failed, {unknown} unknown)",
    "accept.check": "  [{status}] {name}: {evidence}",
    "status.pass": "pass",
    "status.fail": "fail",
    "status.unknown": "unknown",
    "check.hardware": "hardware matches TP",
    "check.quantization": "quantization matches the checkpoint",
    "check.started": "the server started",
    "check.data": "before/after numbers exist",
    "check.one-knob": "only one knob changed",
    "check.quality": "answer quality held",
}
