"""What tune hands back: `tune.json` (the contract, `TuneResult.to_json`), the next step it
says (a `Sentence`), and the flags a configuration changes against the user's command.

The terminal summary and report.html are views of the same result, in `servetune.render.tune`
and `servetune.render.tune_report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from servetune.measure.results import write_atomic
from servetune.tune.sentence import Sentence
from servetune.tune.trial import TrialResult

if TYPE_CHECKING:
    from servetune.tune.search import TuneResult

SCHEMA_VERSION = 1
TUNE_FILE = "tune.json"
REPORT_FILE = "report.html"


def capacity_json(trial: TrialResult) -> dict[str, Any] | None:
    c = trial.capacity
    if c is None or trial.status != "ok":
        return None
    return {
        "max_concurrency": c.max_concurrency,
        "output_throughput": c.output_throughput,
        "request_throughput": c.request_throughput,
    }


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:+.0f}%"


def next_step(result: TuneResult) -> Sentence:
    """What to do now: serve the best command, keep yours, or loosen the targets."""
    best, baseline = result.best, result.baseline
    if best is None:
        limit = result.trials[-1].limit or "slo-unreachable"
        return Sentence("next.none", limit=Sentence(f"limit.{limit}"))
    if best is baseline:
        held = Sentence(f"limit.{baseline.limit or 'compute'}")
        return Sentence("next.same", tried=len(result.trials), limit=held)
    imp = result.improvement
    ci = "CI ?"
    if imp.ci_low_pct is not None:
        ci = f"CI {_pct(imp.ci_low_pct)}..{_pct(imp.ci_high_pct)}"
    base_users = baseline.capacity.max_concurrency if baseline.capacity else 0
    users = best.capacity.max_concurrency if best.capacity else 0
    return Sentence("next.better", best=users, baseline=base_users, pct=_pct(imp.pct), ci=ci)


def _best_json(result: TuneResult) -> dict[str, Any] | None:
    best = result.best
    if best is None:
        return None
    imp = result.improvement
    return {
        "flags": dict(best.flags),
        "command": result.commands[best.index],
        "capacity": capacity_json(best),
        "improvement_pct": imp.pct,
        "ci_low_pct": imp.ci_low_pct,
        "ci_high_pct": imp.ci_high_pct,
    }


def _trial_json(t: TrialResult) -> dict[str, Any]:
    return {
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


def document(result: TuneResult) -> dict[str, Any]:
    """tune.json, exactly as the contract spells it (English whatever the views' language)."""
    baseline = result.baseline
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "slo": result.config.targets.to_json(),
        "baseline": {
            "flags": dict(baseline.flags),
            "capacity": capacity_json(baseline),
            "limit": baseline.limit,
        },
        "best": _best_json(result),
        "trials": [_trial_json(t) for t in result.trials],
        "server_starts": result.server_starts,
        "report": str(result.config.output / REPORT_FILE),
        "next_step": next_step(result).text(),
    }
    if result.interference:
        doc["interference"] = result.interference.to_json()
    return doc


def changes(flags: Mapping[str, str], baseline: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(flag, yours, now) for every flag whose value differs from the baseline's."""
    return [(f, baseline.get(f, "-"), v) for f, v in flags.items() if baseline.get(f) != v]


def write_document(result: TuneResult) -> dict[str, Any]:
    """Write DIR/tune.json atomically and return it."""
    doc = result.to_json()
    write_atomic(result.config.output / TUNE_FILE, doc)
    return doc
