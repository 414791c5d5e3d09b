"""`accept`: the five acceptance checks of a deployment, each pass, fail or unknown.

1. hardware: the GPUs the review found match TP x PP x DP;
2. quantization: `--quantization` matches the checkpoint (no on-the-fly AWQ/GPTQ mix-ups);
3. started: the server started (its log says ready, or /health answers 200);
4. data: before/after results exist on both sides;
5. one-knob: exactly one serving flag changed between them;
6. quality (only when a `servetune quality` result is given): no detectable loss of answer
   quality (or a gain) after the change.

Accepted only when every check passes: "unknown" is not a pass, since nothing was shown.

Each check's evidence is a `Sentence` (a `judge` text key, `evidence.*`, and its facts): the JSON
document carries it in English, the text view says it in the report's language. Text quoted from
elsewhere stays as it was written: a log line, a result file's path, an error message; a
review finding's title is quoted in the language asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from servetune.errors import UsageError
from servetune.judge.sentence import Joined, Sentence
from servetune.texts import LANGUAGES, ErrorText, Language, Sayable

if TYPE_CHECKING:
    from servetune.judge.compare import Comparison
    from servetune.review.check import Report

CheckStatus = Literal["pass", "fail", "unknown"]
Probe = Callable[[str, int], bool]  # (host, port) -> does GET /health answer 200?

# Each check's id and English name (the JSON contract); the text view says the name in the
# report's language (`check.<id>` of the judge texts).
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
    """One acceptance check: `sentence` says what was looked at (None when nothing was);
    `evidence` is that in English, as the JSON document carries it."""

    id: str
    name: str
    status: CheckStatus
    sentence: Sentence | None = None

    @property
    def evidence(self) -> str:
        return self.evidence_in("en")

    def evidence_in(self, language: Language) -> str:
        return self.sentence.text(language) if self.sentence is not None else ""


@dataclass(frozen=True)
class Quoted:
    """Text another part of servetune wrote, in each language it was written in: said in the
    language asked for, else in English (a `Sentence` fact)."""

    said: tuple[tuple[Language, str], ...]

    def text(self, language: Language = "en") -> str:
        by_language = dict(self.said)
        return by_language.get(language, by_language["en"])


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


def _check(check_id: str, status: CheckStatus, evidence: Sentence | None) -> Check:
    return Check(check_id, NAMES[check_id], status, evidence)


def _said(key: str, **facts: str | int | float | Sayable) -> Sentence:
    return Sentence(f"evidence.{key}", **facts)


_SOURCES = {"--gpus": "given", "nvml": "nvml"}  # where the GPUs were found: its text key


def _hardware(report: Report) -> Check:
    s, machine = report.settings, report.hardware
    grid = _said(
        "hardware.grid",
        tp=s.tensor_parallel_size,
        pp=s.pipeline_parallel_size,
        dp=s.data_parallel_size,
        gpus=s.gpus_needed,
    )
    if machine is None:
        return _check("hardware", "unknown", _said("hardware.none", grid=grid))
    source = _said(f"hardware.source.{_SOURCES[machine.source]}")
    key = "hardware.named" if machine.name else "hardware.found"
    have = _said(key, count=machine.count, name=machine.name or "", source=source, grid=grid)
    status: CheckStatus = "pass" if machine.count == s.gpus_needed else "fail"
    return _check("hardware", status, have)


def _finding_title(report: Report) -> Quoted:
    """The first quantization finding's title, said in every language."""
    title = next(f.title for f in report.findings if f.rule in _QUANT_RULES)
    return Quoted(tuple((language, title.text(language)) for language in LANGUAGES))


def _quantization(report: Report) -> Check:
    if any(f.rule in _QUANT_RULES for f in report.findings):
        return _check("quantization", "fail", _said("quoted", text=_finding_title(report)))
    if report.model is None:
        return _check("quantization", "unknown", _said("quantization.no-config"))
    quant = report.model.quantization
    flag = report.settings.quantization or _said("quantization.auto")
    if quant is None:
        return _check("quantization", "pass", _said("quantization.plain", flag=flag))
    return _check(
        "quantization", "pass", _said("quantization.method", method=quant.method, flag=flag)
    )


def _read_log(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        reason = exc.strerror or exc
        raise UsageError(
            ErrorText("cannot-read", path=path, reason=reason), ErrorText("hint.vllm-log")
        ) from exc


def _started(report: Report, log: Path | None, probe: Probe) -> Check:
    from servetune.launch.doctor import diagnose
    from servetune.launch.launcher import server_address

    if log is not None:
        doctor = diagnose(_read_log(log))
        if doctor.status == "ready":
            return _check("started", "pass", _said("started.ready", log=str(log)))
        if doctor.status == "failed":
            cause = doctor.root_cause  # a line of vLLM's log, quoted as it is
            failed = _said("started.failed", cause=cause) if cause else None
            return _check("started", "fail", failed or _said("started.failed-unsaid"))
        return _check("started", "unknown", _said("started.starting", log=str(log)))
    host, port = server_address(report.command)
    url = f"http://{host}:{port}/health"
    if probe(host, port):
        return _check("started", "pass", _said("started.health", url=url))
    return _check("started", "unknown", _said("started.no-answer", url=url))


def _value(value: str | None) -> str | Sentence:
    return _said("knob.unset") if value is None else value


def _one_knob(result: Comparison) -> Check:
    if any(w.rule == "config-unknown" for w in result.warnings):
        return _check("one-knob", "unknown", _said("knob.unknown"))
    changes = result.config_changes
    if not changes:
        return _check("one-knob", "fail", _said("knob.none"))
    said = tuple(
        Sentence("conclusion.knob", flag=c.flag, before=_value(c.before), after=_value(c.after))
        for c in changes
    )
    if len(changes) == 1:
        return _check("one-knob", "pass", _said("knob.one", change=said[0]))
    listed = Joined(said, "list.comma")
    return _check("one-knob", "fail", _said("knob.many", n=len(changes), changes=listed))


def _data(before: Sequence[Path], after: Sequence[Path]) -> tuple[Check, Check]:
    from servetune.judge.compare import compare
    from servetune.judge.runs import load_side

    if not before or not after:
        missing = _said("data.missing")
        return _check("data", "fail", missing), _check("one-knob", "unknown", missing)
    try:
        result = compare(load_side(before), load_side(after))
    except UsageError as exc:
        unusable = _said("data.unusable", error=exc)
        return _check("data", "fail", unusable), _check("one-knob", "unknown", None)
    # Numbers that exist but cannot be taken at face value pass, with the reason beside them.
    doubts = Joined(
        tuple(
            _said("data.doubt", warning=w.sentence)
            for w in result.warnings
            if w.rule in ("single-run", "prefix-cache-hits")
        )
    )
    return _check("data", "pass", _said("data.found", doubts=doubts)), _one_knob(result)


def _quality(path: Path) -> Check:
    from servetune.quality.evaluate import read_summary

    try:
        summary = read_summary(path)
    except UsageError as exc:
        return _check("quality", "fail", _said("quality.unusable", error=exc))

    def points(value: float | None) -> str | Sentence:
        return _said("quality.none") if value is None else f"{value:+.1f}"

    evidence = _said(
        "quality.result",
        dataset=summary.dataset,
        n=summary.n,
        difference=points(summary.difference_pct_points),
        low=points(summary.ci_low),
        high=points(summary.ci_high),
        verdict=_said(f"quality.verdict.{summary.verdict}"),
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
