"""The report's tune section: a tune directory (`tune.json` and each trial's `trial.json`) read
back into a `TuneResult` and drawn by tune's own report (`render.tune_report`), so that tune's
report has one renderer. Its plots are matplotlib's (the `report` extra).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import get_args

from servetune.errors import UsageError
from servetune.render.report_runs import Provenance, load_records
from servetune.texts import ErrorText
from servetune.tune.capacity import Capacity
from servetune.tune.limit import LIMITS, Limit
from servetune.tune.output import TUNE_FILE
from servetune.tune.parallel import Interference
from servetune.tune.search import Improvement, TuneConfig, TuneResult
from servetune.tune.trial import TRIAL_FILE, Status, Targets, TrialResult

_TARGET = re.compile(r"p(?P<percentile>[0-9.]+)_(?P<key>[a-z0-9]+)_ms")
HINT = ErrorText("hint.tune-dir")


def is_tune_dir(path: Path) -> bool:
    return path.is_dir() and (path / TUNE_FILE).is_file()


def _flags_key(flags: Mapping[str, object]) -> str:
    return json.dumps(dict(sorted((str(k), str(v)) for k, v in flags.items())))


def _read(path: Path) -> dict[str, object]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(ErrorText("cannot-read", path=path, reason=exc), HINT) from exc
    if not isinstance(doc, dict):
        raise UsageError(ErrorText("report.not-object", path=path), HINT)
    return doc


def _trials_on_disk(folder: Path) -> dict[str, TrialResult]:
    """Every finished trial under `folder/trials`, by its flags."""
    found: dict[str, TrialResult] = {}
    for path in sorted((folder / "trials").glob(f"*/{TRIAL_FILE}")):
        try:
            trial = TrialResult.from_json(_read(path))
        except (UsageError, KeyError, TypeError, ValueError):
            continue  # a trial cut short: tune.json's own line for it still shows
        found[_flags_key(trial.flags)] = trial
    return found


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _int(value: object) -> int | None:
    found = _num(value)
    return None if found is None else int(found)


def _capacity(doc: object) -> Capacity | None:
    if not isinstance(doc, dict):
        return None
    users = _int(doc.get("max_concurrency")) or 0
    return Capacity(
        users, None, _num(doc.get("output_throughput")), _num(doc.get("request_throughput")), None
    )


def _status(value: object) -> Status:
    return next((s for s in get_args(Status) if s == value), "lost")


def _limit(value: object) -> Limit | None:
    return next((limit for limit in LIMITS if limit == value), None)


def _trial(index: int, doc: dict[str, object], on_disk: Mapping[str, TrialResult]) -> TrialResult:
    flags = doc.get("flags")
    if not isinstance(flags, dict):
        raise UsageError(ErrorText("report.trial-no-flags", number=index + 1), HINT)
    found = on_disk.get(_flags_key(flags))
    if found is not None:
        return TrialResult.from_json({**found.to_json(), "index": index})
    return TrialResult(
        index=index,
        flags={str(k): str(v) for k, v in flags.items()},
        status=_status(doc.get("status")),
        capacity=_capacity(doc.get("capacity")),
        limit=_limit(doc.get("limit")),
        root_cause=cause if isinstance(cause := doc.get("root_cause"), str) else None,
    )


def _targets(slo: object) -> Targets:
    slo_ms, percentile = {}, 99.0
    for name, value in slo.items() if isinstance(slo, dict) else []:
        match = _TARGET.fullmatch(str(name))
        if match and isinstance(value, int | float):
            slo_ms[match["key"]] = float(value)
            percentile = float(match["percentile"])
    return Targets(slo_ms, percentile)


def _interference(doc: object) -> Interference | None:
    if not isinstance(doc, dict):
        return None
    alone, beside = _object(doc.get("alone")), _object(doc.get("beside"))
    return Interference(
        alone_throughput=_num(alone.get("output_throughput")),
        beside_throughput=_num(beside.get("output_throughput")),
        alone_users=_int(alone.get("max_concurrency")),
        beside_users=_int(beside.get("max_concurrency")),
        difference_pct=_num(doc.get("difference_pct")),
        folder=str(doc.get("folder", "")),
    )


def _object(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def load_tune(folder: Path) -> TuneResult:
    """A tune directory as the result tune returned when it wrote it."""
    doc = _read(folder / TUNE_FILE)
    on_disk = _trials_on_disk(folder)
    listed = doc.get("trials")
    if not isinstance(listed, list) or not listed:
        raise UsageError(ErrorText("report.no-trials", path=folder / TUNE_FILE), HINT)
    trials = tuple(_trial(i, _object(t), on_disk) for i, t in enumerate(listed))
    best_doc = _object(doc.get("best"))
    key = _flags_key(_object(best_doc.get("flags")))
    best = next((t for t in trials if best_doc and _flags_key(t.flags) == key), None)
    improvement = Improvement(
        _num(best_doc.get("improvement_pct")),
        _num(best_doc.get("ci_low_pct")),
        _num(best_doc.get("ci_high_pct")),
    )
    commands = {best.index: str(best_doc.get("command", ""))} if best is not None else {}
    config = TuneConfig(argv=(), targets=_targets(doc.get("slo")), output=folder, vllm="vllm")
    return TuneResult(
        config,
        trials[0],
        best,
        trials,
        commands,
        improvement,
        {},
        _interference(doc.get("interference")),
    )


def tune_provenance(result: TuneResult) -> Provenance:
    """What the baseline's first measured probe recorded, and the commands tune compared."""
    source = str(result.config.output)
    commands = [c for c in result.commands.values() if c]
    for trial in result.trials:
        for probe in trial.probes:
            if probe.result_file and Path(probe.result_file).is_file():
                found = load_records([Path(probe.result_file)])[0].provenance
                server = [c for c in found.commands[1:] if c not in commands]
                return Provenance(
                    source,
                    (*server, *commands),
                    True,
                    found.servetune_version,
                    found.vllm_version,
                    found.gpus,
                    found.measured,
                )
    return Provenance(source, tuple(commands), True, None, None, None, None)
