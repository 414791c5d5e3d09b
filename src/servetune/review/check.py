"""`check`: review a `vllm serve` command against the model and the hardware before launch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from servetune import texts
from servetune.review import capacity, hardware, model, settings
from servetune.review.rules import Context, Edit, Hit, Rule, Severity, run_rules
from servetune.texts import Language
from servetune.vllm import serve_command
from servetune.vllm.serve_command import ArgValue, ServeCommand

_SEVERITY_ORDER: dict[Severity, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Finding:
    """One red flag, in the report's language."""

    rule: str
    severity: Severity
    flag: str | None
    title: str
    why: str
    fix: str
    ask_ai: str


@dataclass(frozen=True)
class CheckOptions:
    """Everything `check` needs besides the command (one value, as the CLI builds it)."""

    gpus: str | None = None  # --gpus SPEC; None: detect with NVML
    vllm_version: str | None = None
    model_config: Path | None = None
    online: bool = False
    language: Language = "en"
    detect_hardware: bool = True
    config_dir: Path | None = None  # where a relative `--config file.yaml` is looked up


@dataclass(frozen=True)
class Report:
    """The review: what was understood, what was estimated, and what is wrong."""

    command: ServeCommand
    model: model.ModelFacts | None
    hardware: hardware.Hardware | None
    settings: settings.Settings
    estimate: capacity.Estimate | None
    findings: tuple[Finding, ...]
    corrected_command: str | None  # None when nothing needs changing
    language: Language

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")


def _facts(ctx: Context, hit: Hit) -> dict[str, object]:
    base: dict[str, object] = {
        "machine": ctx.machine(),
        "model": ctx.model.model_id if ctx.model else ctx.command.model or "",
        "version": ctx.command.version,
    }
    return base | dict(hit.facts)


def _finding(ctx: Context, rule: Rule, hit: Hit, language: Language) -> Finding:
    entry = f"{hit.rule}:{hit.variant}" if hit.variant else hit.rule
    if not texts.has("review", f"{entry}.title"):
        entry = hit.rule
    facts = _facts(ctx, hit)

    def text(field: str) -> str:
        return texts.format("review", f"{entry}.{field}", language, **facts)

    return Finding(
        rule=hit.rule,
        severity=rule.severity,
        flag=hit.flag if hit.flag is not None else rule.flag,
        title=text("title"),
        why=text("why"),
        fix=text("fix"),
        ask_ai=text("ask_ai") if texts.has("review", f"{entry}.ask_ai") else "",
    )


def corrected(command: ServeCommand, edits: Sequence[Edit]) -> str | None:
    """The command with every fix applied, or None when no fix changes it."""
    args: dict[str, ArgValue] = dict(command.args)
    order = list(command.order)
    touched: set[str] = set()
    for edit in edits:
        touched.add(edit.flag)
        if edit.value is None:
            args.pop(edit.flag, None)
            continue
        args[edit.flag] = edit.value
        if edit.flag not in order:
            order.append(edit.flag)
    typo_fixed = any(i.kind in ("dash-typo", "bool-flag-value") for i in command.issues)
    if not touched and not typo_fixed:
        return None
    # Settings that came from a --config file stay there unless a fix changes them.
    shown = [f for f in order if f not in command.from_config or f in touched]
    return serve_command.render(command, args, shown)


def review(
    command: ServeCommand,
    *,
    model_facts: model.ModelFacts | None,
    machine: hardware.Hardware | None,
    language: Language = "en",
) -> Report:
    """Run every rule over a parsed command with known model and hardware facts."""
    effective = settings.resolve(command, model_facts, machine)
    memory = machine.spec.memory_gib if machine and machine.spec else None
    est = (
        capacity.estimate(model_facts, effective, memory, version=command.version)
        if model_facts
        else None
    )
    ctx = Context(command, effective, model_facts, machine, est)
    hits = run_rules(ctx)
    findings = sorted(
        (_finding(ctx, rule, hit, language) for rule, hit in hits),
        key=lambda f: _SEVERITY_ORDER[f.severity],
    )
    # Warnings' edits first, so that an error's fix wins where both touch one flag.
    ordered = sorted(hits, key=lambda rh: -_SEVERITY_ORDER[rh[0].severity])
    edits = [e for rule, hit in ordered if rule.severity != "info" for e in hit.edits]
    return Report(
        command=command,
        model=model_facts,
        hardware=machine,
        settings=effective,
        estimate=est,
        findings=tuple(findings),
        corrected_command=corrected(command, edits),
        language=language,
    )


def _hardware(options: CheckOptions) -> hardware.Hardware | None:
    if options.gpus is not None:
        return hardware.parse_gpus(options.gpus)
    return hardware.detect() if options.detect_hardware else None


def check_command(command: ServeCommand, options: CheckOptions) -> Report:
    """Review an already parsed command: find the model and the hardware, then run the rules."""
    machine = _hardware(options)
    facts = model.find_model(
        command.model, model_config=options.model_config, online=options.online
    )
    return review(command, model_facts=facts, machine=machine, language=options.language)


def check_text(text: str, options: CheckOptions) -> Report:
    """Review a command given as text (as pasted from a chat or a blog)."""
    command = serve_command.parse_text(
        text, version=options.vllm_version, config_dir=options.config_dir
    )
    return check_command(command, options)


def check_argv(argv: Sequence[str], options: CheckOptions) -> Report:
    """Review a command given as argv words (`servetune check -- vllm serve ...`)."""
    command = serve_command.parse_tokens(
        argv, version=options.vllm_version, config_dir=options.config_dir
    )
    return check_command(command, options)
