"""What tune hands back: `tune.json` (the contract) and the terminal summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from servetune import texts
from servetune.measure.results import write_atomic
from servetune.texts import Language
from servetune.tune.search import TuneResult
from servetune.tune.trial import TrialResult

SCHEMA_VERSION = 1
TUNE_FILE = "tune.json"
REPORT_FILE = "report.html"


def _t(key: str, language: Language, **facts: object) -> str:
    return texts.format("tune", key, language, **facts)


def capacity_json(trial: TrialResult) -> dict[str, Any] | None:
    c = trial.capacity
    if c is None or trial.status != "ok":
        return None
    return {"max_concurrency": c.max_concurrency, "output_throughput": c.output_throughput,
            "request_throughput": c.request_throughput}  # fmt: skip


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:+.0f}%"


def next_step(result: TuneResult, language: Language) -> str:
    best, baseline = result.best, result.baseline
    if best is None:
        limit = result.trials[-1].limit or "slo-unreachable"
        return _t("next.none", language, limit=_t(f"limit.{limit}", language))
    if best is baseline:
        return _t("next.same", language, tried=len(result.trials),
                  limit=_t(f"limit.{baseline.limit or 'compute'}", language))  # fmt: skip
    imp = result.improvement
    ci = "CI ?" if imp.ci_low_pct is None else f"CI {_pct(imp.ci_low_pct)}..{_pct(imp.ci_high_pct)}"
    base_users = baseline.capacity.max_concurrency if baseline.capacity else 0
    users = best.capacity.max_concurrency if best.capacity else 0
    return _t("next.better", language, best=users, baseline=base_users, pct=_pct(imp.pct), ci=ci)


def document(result: TuneResult, output: Path) -> dict[str, Any]:
    """tune.json, exactly as the contract spells it."""
    language = result.config.language
    baseline, best = result.baseline, result.best
    best_doc = None
    if best is not None:
        imp = result.improvement
        best_doc = {"flags": dict(best.flags), "command": result.commands[best.index],
                    "capacity": capacity_json(best), "improvement_pct": imp.pct,
                    "ci_low_pct": imp.ci_low_pct, "ci_high_pct": imp.ci_high_pct}  # fmt: skip
    return {
        "schema_version": SCHEMA_VERSION,
        "slo": result.config.targets.as_json(),
        "baseline": {
            "flags": dict(baseline.flags),
            "capacity": capacity_json(baseline),
            "limit": baseline.limit,
        },
        "best": best_doc,
        "trials": [
            {
                "flags": dict(t.flags),
                "status": t.status,
                "capacity": capacity_json(t),
                "limit": t.limit,
                "root_cause": t.root_cause,
                "runs": t.runs,
                "placement": asdict(t.placement) if t.placement else None,
                "started_at": t.started_at,
                "ended_at": t.ended_at,
            }
            for t in result.trials
        ],
        "server_starts": result.server_starts,
        "report": str(output / REPORT_FILE),
        "next_step": next_step(result, language),
        **({"interference": result.interference.as_json()} if result.interference else {}),
    }


def changes(flags: Mapping[str, str], baseline: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(flag, yours, now) for every flag whose value differs from the baseline's."""
    return [(f, baseline.get(f, "-"), v) for f, v in flags.items() if baseline.get(f) != v]


def _capacity_line(trial: TrialResult, language: Language) -> str:
    c = trial.capacity
    if c is None or trial.status != "ok":
        return _t("summary.none", language)
    sure = "?" if c.sure is None else f"{c.sure:.0%}"
    tokens = "?" if c.output_throughput is None else f"{c.output_throughput:,.0f}"
    return _t("summary.capacity", language, users=c.max_concurrency, sure=sure, tokens=tokens)


def _limit_words(trial: TrialResult, language: Language) -> str:
    if trial.limit is None:
        return "-"
    return f"{trial.limit} ({_t('limit.' + trial.limit, language)})"


def _trial_row(trial: TrialResult, baseline: TrialResult, language: Language) -> str:
    diff = ", ".join(f"{f} {v}" for f, _, v in changes(trial.flags, baseline.flags)) or "-"
    users = trial.capacity.max_concurrency if trial.capacity else "-"
    return (f"  {trial.index + 1:>2}. {trial.status:<15} {users!s:>5} "
            f"{_t('summary.users', language)}  {trial.limit or '-':<22} {diff}")  # fmt: skip


def summary_text(result: TuneResult, output: Path) -> str:
    language = result.config.language
    baseline, best = result.baseline, result.best
    lines = [
        _t("summary.baseline", language) + _capacity_line(baseline, language),
        "  " + _t("summary.limit", language, limit=_limit_words(baseline, language)),
    ]
    if best is not None:
        lines += [_t("summary.best", language) + _capacity_line(best, language),
                  "  " + result.commands[best.index]]  # fmt: skip
        diff = changes(best.flags, baseline.flags)
        lines.append(_t("summary.diff", language))
        lines += [f"  {f}: {old} -> {new}" for f, old, new in diff] or [
            "  " + _t("summary.no-diff", language)
        ]
    lines += ["", _t("summary.trials", language)]
    lines += [_trial_row(t, baseline, language) for t in result.trials]
    lines += [
        "",
        _t("summary.starts", language, starts=result.server_starts,
           start_s=f"{result.start_s:.0f} s", measure_s=f"{result.measure_s:.0f} s"),
        _t("summary.report", language, path=output / REPORT_FILE),
        _t("summary.next", language, text=next_step(result, language)),
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


def write_document(result: TuneResult, output: Path) -> dict[str, Any]:
    """Write DIR/tune.json atomically and return it."""
    doc = document(result, output)
    write_atomic(output / TUNE_FILE, doc)
    return doc
