"""`accept`: the five acceptance checks of a deployment, each pass, fail or unknown.

1. hardware: the GPUs the review found match TP x PP x DP;
2. quantization: `--quantization` matches the checkpoint (no on-the-fly AWQ/GPTQ mix-ups);
3. started: the server started (its log says ready, or /health answers 200);
4. data: before/after results exist on both sides;
5. one-knob: exactly one serving flag changed between them;
6. quality (only when a `servetune quality` result is given): no detectable loss of answer
   quality (or a gain) after the change.

Accepted only when every check passes: "unknown" is not a pass, since nothing was shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from servetune.errors import UsageError

if TYPE_CHECKING:
    from servetune.judge.compare import Comparison
    from servetune.review.check import Report

CheckStatus = Literal["pass", "fail", "unknown"]
Probe = Callable[[str, int], bool]  # (host, port) -> does GET /health answer 200?

# Each check's id (the JSON contract) and its name as the report prints it.
NAMES = {
    "hardware": "hardware matches TP",
    "quantization": "quantization matches the checkpoint",
    "started": "the server started",
    "data": "before/after numbers exist",
    "one-knob": "only one knob changed",
    "quality": "answer quality held",
}
_QUANT_RULES = ("quant-on-unquantized", "quant-method-mismatch")


@dataclass(frozen=True)
class Check:
    """One acceptance check: `evidence` says what was looked at (empty when nothing was)."""

    id: str
    name: str
    status: CheckStatus
    evidence: str


@dataclass(frozen=True)
class Acceptance:
    """The checks, in the order of the module docstring (five, or six with a quality result)."""

    checks: tuple[Check, ...]

    @property
    def accepted(self) -> bool:
        return all(c.status == "pass" for c in self.checks)

    def count(self, status: CheckStatus) -> int:
        return sum(1 for c in self.checks if c.status == status)

    def to_json(self) -> dict[str, object]:
        """The `--format json` document: `accepted`, then each check's four fields."""
        return {
            "accepted": self.accepted,
            "checks": [
                {"id": c.id, "name": c.name, "status": c.status, "evidence": c.evidence}
                for c in self.checks
            ],
        }


def _check(check_id: str, status: CheckStatus, evidence: str) -> Check:
    return Check(check_id, NAMES[check_id], status, evidence)


def _hardware(report: Report) -> Check:
    s, machine = report.settings, report.hardware
    grid = (
        f"TP {s.tensor_parallel_size} x PP {s.pipeline_parallel_size} x "
        f"DP {s.data_parallel_size} = {s.gpus_needed}"
    )
    if machine is None:
        return _check("hardware", "unknown", f"no --gpus and NVML found no GPU; {grid}")
    have = f"{machine.count} GPU(s)" + (f" ({machine.name})" if machine.name else "")
    status: CheckStatus = "pass" if machine.count == s.gpus_needed else "fail"
    return _check("hardware", status, f"{have} from {machine.source}; {grid}")


def _quantization(report: Report) -> Check:
    bad = [f for f in report.findings if f.rule in _QUANT_RULES]
    if bad:
        return _check("quantization", "fail", bad[0].title)
    if report.model is None:
        return _check("quantization", "unknown", "the model's config.json was not found")
    quant = report.model.quantization
    flag = report.settings.quantization
    ckpt = f"checkpoint: {quant.method}" if quant else "checkpoint: not quantized"
    return _check("quantization", "pass", f"{ckpt}; --quantization {flag or '(auto)'}")


def _read_log(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(
            f"cannot read {path}: {exc.strerror or exc}", "give a vLLM log file"
        ) from exc


def _started(report: Report, log: Path | None, probe: Probe) -> Check:
    from servetune.launch.doctor import diagnose
    from servetune.launch.launcher import server_address

    if log is not None:
        doctor = diagnose(_read_log(log), report.language)
        if doctor.status == "ready":
            return _check("started", "pass", f"{log}: Application startup complete")
        if doctor.status == "failed":
            return _check("started", "fail", doctor.root_cause or "the log shows a failed start")
        return _check("started", "unknown", f"{log}: still starting, no ready line yet")
    host, port = server_address(report.command)
    if probe(host, port):
        return _check("started", "pass", f"GET http://{host}:{port}/health answered 200")
    return _check(
        "started", "unknown", f"no --log, and nothing answers http://{host}:{port}/health"
    )


def _one_knob(result: Comparison) -> Check:
    if any(w.rule == "config-unknown" for w in result.warnings):
        return _check("one-knob", "unknown", "no server command recorded in the results")
    changes = result.config_changes
    said = ", ".join(f"{c.flag} {c.before} -> {c.after}" for c in changes)
    if len(changes) == 1:
        return _check("one-knob", "pass", said)
    if not changes:
        return _check("one-knob", "fail", "no serving flag changed between the runs")
    return _check("one-knob", "fail", f"{len(changes)} knobs changed: {said}")


def _data(before: Sequence[Path], after: Sequence[Path]) -> tuple[Check, Check]:
    from servetune.judge.compare import compare
    from servetune.judge.runs import load_side

    if not before or not after:
        missing = "no --before/--after results given: measure with `servetune bench` first"
        return _check("data", "fail", missing), _check("one-knob", "unknown", missing)
    try:
        result = compare(load_side(before), load_side(after))
    except UsageError as exc:
        return _check("data", "fail", exc.message), _check("one-knob", "unknown", "")
    # Numbers that exist but cannot be taken at face value pass, with the reason beside them.
    doubts = [w.message for w in result.warnings if w.rule in ("single-run", "prefix-cache-hits")]
    found = "results found on both sides" + "".join(f" ({doubt})" for doubt in doubts)
    return _check("data", "pass", found), _one_knob(result)


def _quality(path: Path) -> Check:
    from servetune.quality.evaluate import read_summary

    try:
        summary = read_summary(path)
    except UsageError as exc:
        return _check("quality", "fail", exc.message)

    def points(value: float | None) -> str:
        return "n/a" if value is None else f"{value:+.1f}"

    evidence = (
        f"{summary.dataset}, {summary.n} questions: after - before = "
        f"{points(summary.difference_pct_points)} points (95% interval "
        f"{points(summary.ci_low)} to {points(summary.ci_high)}), {summary.verdict}"
    )
    outcomes: dict[str, CheckStatus] = {
        "no-detectable-loss": "pass",
        "better": "pass",
        "worse": "fail",
    }
    status = outcomes.get(summary.verdict, "unknown")
    return _check("quality", status, evidence)


def accept(
    report: Report,
    *,
    log: Path | None = None,
    before: Sequence[Path] = (),
    after: Sequence[Path] = (),
    probe: Probe | None = None,
    quality: Path | None = None,
) -> Acceptance:
    """Run the five checks on check's `report` of the serve command, the server's `log` (else
    `probe` asks the command's address for /health) and the `before`/`after` result files, and
    a sixth on a `servetune quality` result when `quality` names one.

    Raises `UsageError` only for a log that cannot be read; unreadable results fail `data`
    (or `quality`).
    """
    if probe is None:
        from servetune.launch.launcher import healthy

        probe = healthy
    return Acceptance(
        checks=(
            _hardware(report),
            _quantization(report),
            _started(report, log, probe),
            *_data(before, after),
            *([_quality(quality)] if quality is not None else []),
        )
    )
