"""`servetune plan` as a library call: a command, its GPUs and a load in; the prediction, the
bound, the what-ifs and continuous-vs-static batching out.

    config = PlanConfig(load=Load(1000, 200, 1000, concurrency=50), slo=Slo(ttft_ms=2000))
    result = run_plan(report, config, CheckOptions(gpus="1xA100-80GB"))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from servetune.errors import UsageError
from servetune.judge import runs
from servetune.plan import accuracy, calibrate, predict, step_time, uncertainty, what_if
from servetune.plan.note import Note
from servetune.plan.simulate import Load
from servetune.review.check import CheckOptions, Finding, Report, check_command, check_text
from servetune.texts import ErrorText
from servetune.vllm import serve_command

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PlanConfig:
    """The load, the targets, and the runs to calibrate on."""

    load: Load
    slo: predict.Slo
    calibrate: tuple[Path, ...] = ()
    what_ifs: bool = True


@dataclass(frozen=True)
class Corrected:
    """A command check refused but knows the fix for: what plan predicts instead."""

    report: Report  # check's review of the corrected command (no errors left)
    command: str  # the corrected command, as check prints it
    fixed: tuple[Finding, ...]  # the errors of the command as given, each fixed


def corrected(report: Report, options: CheckOptions) -> Corrected | Report | None:
    """What plan can plan: the report itself when check found no error; the corrected command
    when check knows a fix for every error (a `--max-model-len` that fits, a TP the GPUs
    allow) and the corrected command passes check; None when some error has no fix."""
    if not report.errors:
        return report
    if report.corrected_command is None:
        return None
    # the corrected command under the release the first check used, whatever chose it
    again = check_text(
        report.corrected_command, replace(options, vllm_version=report.command.version)
    )
    if again.errors:
        return None
    return Corrected(again, report.corrected_command, report.errors)


@dataclass(frozen=True)
class PlanResult:
    """Everything `plan` answers (the JSON contract, typed)."""

    report: Report
    load: Load
    slo: predict.Slo
    base: predict.Outcome
    what_ifs: tuple[what_if.WhatIf, ...]
    static: predict.Prediction
    calibration: calibrate.Fit | None
    notes: tuple[Note, ...]
    corrected: Corrected | None = None  # set when the command as given was refused
    group: str = ""  # the accuracy group its intervals come from (`accuracy.kind_of`)
    intervals: dict[str, uncertainty.Interval] = field(default_factory=dict)

    @property
    def best(self) -> what_if.WhatIf | None:
        """The what-if that serves the most users within the targets (or the most throughput
        when there are no targets)."""
        scored = [(w, w.outcome) for w in self.what_ifs if w.outcome is not None]
        if not scored:
            return None

        def score(pair: tuple[what_if.WhatIf, predict.Outcome]) -> float:
            p = pair[1].prediction
            if not self.slo.empty:
                return float(p.max_concurrency_meeting_slo or 0)
            return p.output_throughput

        return max(scored, key=score)[0]

    def _interval_json(self) -> dict[str, object]:
        figures: dict[str, object] = {m: _pair(i) for m, i in self.intervals.items()}
        return {"coverage": uncertainty.COVERAGE, "group": self.group, **figures}

    def to_json(self) -> dict[str, object]:
        """The `--format json` object of the contract (English, whatever the view's language)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "prediction": prediction_json(self.base.prediction),
            "verdict": self.base.verdict,
            "bound": self.base.bound,
            "what_if": [_what_if_json(w) for w in self.what_ifs],
            "batching": {
                "continuous": prediction_json(self.base.prediction),
                "static": prediction_json(self.static),
            },
            "calibrated": self.calibration is not None,
            "notes": [note.text() for note in self.notes],
            "interval": self._interval_json(),
            "planned_command": self.corrected.command if self.corrected else None,
            "corrections": [_correction_json(f) for f in self.corrected.fixed]
            if self.corrected
            else [],
        }


def _pair(interval: uncertainty.Interval) -> list[object]:
    return [_finite(interval.low), _finite(interval.high)]


def _correction_json(finding: Finding) -> dict[str, object]:
    return {"rule": finding.rule, "title": finding.title.text(), "fix": finding.fix.text()}


def _observation(
    run: runs.Run, base: Report, options: CheckOptions, default_load: Load
) -> calibrate.Observation:
    """One measured run as the calibration sees it: its own command and GPUs when recorded."""
    report = base
    if run.command:
        command = serve_command.parse_text(run.command, version=base.command.version)
        gpus = run.gpus or options.gpus
        report = check_command(command, replace(options, gpus=gpus))
    settings = run.workload.settings
    tokens = run.workload.mean_tokens

    def number(key: str) -> float | None:
        try:
            return float(settings[key])
        except (KeyError, ValueError):
            return None

    concurrency = number("--max-concurrency")
    rate = number("--request-rate")
    load = Load(
        input_len=round(tokens.get("input") or default_load.input_len),
        output_len=max(2, round(tokens.get("output") or default_load.output_len)),
        num_prompts=max(run.completed, 1),
        concurrency=int(concurrency) if concurrency else None,
        request_rate=rate if rate and rate != float("inf") else None,
    )
    if load.concurrency is None and load.request_rate is None:
        load = replace(load, concurrency=max(run.completed, 1))  # rate inf, no cap: all at once
    measured = {m: v for m in calibrate.METRICS if (v := run.values.get(m)) is not None}
    return calibrate.Observation(predict.setup(report), load, measured, run.source)


def _calibrate(
    paths: Sequence[Path], report: Report, options: CheckOptions, load: Load
) -> calibrate.Fit:
    side = runs.load_side(list(paths))
    observations = [_observation(r, report, options, load) for r in side.runs]
    usable = [o for o in observations if o.measured]
    if not usable:
        raise UsageError(ErrorText("plan.no-calibration"))
    return calibrate.fit(usable)


def _constants(e: step_time.Efficiency) -> dict[str, str]:
    return {
        "bandwidth": f"{e.bandwidth:.2f}",
        "compute": f"{e.compute:.2f}",
        "step_ms": f"{1000 * e.step_overhead_s:.1f}",
        "seq_us": f"{1e6 * e.per_seq_s:.0f}",
    }


def _notes(report: Report, fit: calibrate.Fit | None) -> list[Note]:
    notes = []
    if fit is None:
        notes.append(Note("note.uncalibrated", **_constants(step_time.Efficiency())))
    else:
        worst = max((abs(e) for errs in fit.errors.values() for e in errs.values()), default=0.0)
        constants = _constants(fit.efficiency)
        notes.append(
            Note("note.calibrated", runs=len(fit.errors), **constants, worst=f"{100 * worst:.0f}")
        )
    model = report.model
    if model is not None and model.is_moe:
        notes.append(Note("note.moe"))
    if model is not None and model.is_mla:
        notes.append(Note("note.mla"))
    return notes


def run_plan(report: Report | Corrected, config: PlanConfig, options: CheckOptions) -> PlanResult:
    """Predict the command under the load, try the what-ifs, and compare static batching.
    A `Corrected` command (see `corrected`) is planned as corrected, and says so."""
    fixed = report if isinstance(report, Corrected) else None
    report = report.report if isinstance(report, Corrected) else report
    _refuse_too_long(report, config.load)
    fit = _calibrate(config.calibrate, report, options, config.load) if config.calibrate else None
    efficiency = fit.efficiency if fit else step_time.Efficiency()

    def make_setup(r: Report) -> predict.Setup:
        return predict.setup(r, efficiency)

    setup_ = make_setup(report)
    base = predict.predict(setup_, config.load, config.slo)
    group, error = accuracy.kind_of(report), _worst(fit)
    base = replace(base, verdict=uncertainty.verdict(base, config.slo, group, error))
    bounds = uncertainty.intervals(group, base.prediction, error)
    static = predict.summarise(predict.run_static(setup_, config.load), setup_, config.slo)
    whatifs: list[what_if.WhatIf] = []
    if config.what_ifs:
        for change in what_if.changes(report, base, config.load):
            whatifs.append(what_if.evaluate(change, options, config.load, config.slo, make_setup))
    return PlanResult(
        report=report,
        load=config.load,
        slo=config.slo,
        base=base,
        what_ifs=tuple(whatifs),
        static=static,
        calibration=fit,
        notes=(*_notes(report, fit), *_interval_note(group, bounds)),
        corrected=fixed,
        group=group,
        intervals=bounds,
    )


def _refuse_too_long(report: Report, load: Load) -> None:
    """vLLM's OpenAI server refuses a request whose prompt and `max_tokens` together exceed
    `--max-model-len` ("This model's maximum context length is ..."): a load of them has no
    throughput to predict, only errors."""
    length = report.settings.max_model_len
    tokens = load.input_len + load.output_len
    if length and not report.settings.max_model_len_auto and tokens > length:
        raise UsageError(
            ErrorText(
                "plan.request-too-long",
                tokens=tokens,
                input_len=load.input_len,
                output_len=load.output_len,
                length=length,
            )
        )


def _worst(fit: calibrate.Fit | None) -> float | None:
    if fit is None:
        return None
    return max((abs(e) for errs in fit.errors.values() for e in errs.values()), default=0.0)


def _interval_note(group: str, bounds: dict[str, uncertainty.Interval]) -> list[Note]:
    """The 80% intervals of the headline figures, as a note of the answer."""
    if len(bounds) < len(accuracy.METRICS):
        return []
    out, tpot, ttft = (bounds[m] for m in accuracy.METRICS)
    return [
        Note(
            "note.interval",
            group=group,
            out=f"{out.low:,.0f}-{out.high:,.0f}",
            tpot=f"{tpot.low:,.1f}-{tpot.high:,.1f}",
            ttft=f"{ttft.low:,.0f}-{ttft.high:,.0f}",
        )
    ]


def batching_sweep(
    result: PlanResult, efficiency: step_time.Efficiency | None = None
) -> list[tuple[int, predict.Prediction, predict.Prediction]]:
    """Continuous and static batching of this configuration over 1, 2, 4, ... users (up to
    twice the load's users, at least 8): the numbers behind `plan --plot`."""
    fit = result.calibration
    setup_ = predict.setup(result.report, efficiency or (fit.efficiency if fit else None))
    top = max(8, 2 * (result.load.concurrency or setup_.limits.max_num_seqs))
    users, points = 1, []
    while users <= top:
        load = replace(
            result.load, concurrency=users, request_rate=None, num_prompts=max(4 * users, 64)
        )
        cont = predict.summarise(predict.run(setup_, load), setup_, result.slo)
        static = predict.summarise(predict.run_static(setup_, load), setup_, result.slo)
        points.append((users, cont, static))
        users *= 2
    return points


PREDICTION_KEYS = (
    "output_throughput", "request_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
    "p99_tpot_ms", "mean_e2el_ms", "kv_cache_tokens", "max_concurrency_meeting_slo", "qps_per_gpu",
)  # fmt: skip


def _finite(value: object) -> object:
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    return value


def prediction_json(p: predict.Prediction) -> dict[str, object]:
    return {key: _finite(getattr(p, key)) for key in PREDICTION_KEYS}


def _what_if_json(w: what_if.WhatIf) -> dict[str, object]:
    return {
        "change": w.change,
        "command": w.command,
        "gpus": w.gpus,
        "prediction": prediction_json(w.outcome.prediction) if w.outcome else None,
        "verdict": w.outcome.verdict if w.outcome else None,
        "bound": w.outcome.bound if w.outcome else None,
        "note": w.note.text() if w.note else None,
    }
