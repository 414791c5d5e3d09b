"""`check`: review a `vllm serve` command against the model and the hardware before launch.

The report keeps what was decided, not how to say it: a finding's title, why, fix and ask-AI
line are `review` text keys with their facts (`Sentence`). `Report.to_json()` says them in
English (the `--format json` contract, whatever `--lang` is); `render.check.report_text` says
them in the language asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from servetune import texts
from servetune.review import capacity, hardware, model, settings
from servetune.review.rules import Context, Edit, Fact, Found, Severity, run_rules
from servetune.review.sentence import Sentence
from servetune.vllm import serve_command
from servetune.vllm.serve_command import ArgValue, ServeCommand

_SEVERITY_ORDER: dict[Severity, int] = {"error": 0, "warning": 1, "info": 2}
CHECK_SCHEMA_VERSION = 1  # `check --format json`; result files: measure.result_schema


@dataclass(frozen=True)
class Finding:
    """One red flag: its rule's identity and its texts, each a `review` key with its facts
    (`<rule>[:<variant>].title` ...), said in a language only when shown. `ask_ai` is None
    where the rule has no question to ask an AI."""

    rule: str
    severity: Severity
    flag: str | None
    title: Sentence
    why: Sentence
    fix: Sentence
    ask_ai: Sentence | None

    def to_json(self) -> dict[str, object]:
        """The finding in the `--format json` contract: its texts in English."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "flag": self.flag,
            "title": self.title.text(),
            "why": self.why.text(),
            "fix": self.fix.text(),
            "ask_ai": self.ask_ai.text() if self.ask_ai else "",
        }


@dataclass(frozen=True)
class CheckOptions:
    """Everything `check` needs besides the command (one value, as the CLI builds it)."""

    gpus: str | None = None  # --gpus SPEC; None: detect with NVML
    vllm_version: str | None = None
    model_config: Path | None = None
    online: bool = False
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

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    def to_json(self) -> dict[str, object]:
        """The `--format json` document (schema_version 1): English whatever `--lang` is."""
        s = self.settings
        return {
            "schema_version": CHECK_SCHEMA_VERSION,
            "vllm_version": self.command.version,
            "command": {"model": self.command.model, "args": dict(self.command.args)},
            "model": self.model.to_json() if self.model else None,
            "hardware": self.hardware.to_json() if self.hardware else None,
            "findings": [f.to_json() for f in self.findings],
            "estimate": self.estimate.to_json() if self.estimate else None,
            "effective": {
                "tensor_parallel_size": s.tensor_parallel_size,
                "pipeline_parallel_size": s.pipeline_parallel_size,
                "data_parallel_size": s.data_parallel_size,
                "max_model_len": s.max_model_len,
                "max_num_seqs": s.max_num_seqs,
                "max_num_batched_tokens": s.max_num_batched_tokens,
                "gpu_memory_utilization": s.gpu_memory_utilization,
                "dtype": s.dtype,
                "chunked_prefill": s.chunked_prefill,
            },
            "corrected_command": self.corrected_command,
        }


def _facts(ctx: Context, found: Found) -> dict[str, Fact]:
    base: dict[str, Fact] = {
        "machine": ctx.machine(),
        "model": ctx.model.model_id if ctx.model else ctx.command.model or "",
        "version": ctx.command.version,
    }
    return base | dict(found.facts)


def _finding(ctx: Context, found: Found) -> Finding:
    entry = f"{found.rule}:{found.variant}" if found.variant else found.rule
    if not texts.has("review", f"{entry}.title"):
        entry = found.rule
    facts = _facts(ctx, found)

    def said(field: str) -> Sentence:
        return Sentence(f"{entry}.{field}", **facts)

    return Finding(
        rule=found.rule,
        severity=found.severity,
        flag=found.flag,
        title=said("title"),
        why=said("why"),
        fix=said("fix"),
        ask_ai=said("ask_ai") if texts.has("review", f"{entry}.ask_ai") else None,
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


# The verdicts the card's memory decides: where a name may be cards of different memory (`H20`:
# 96 GB, or 141 GB as the H20-3e), one that holds for only some of them is a warning naming both.
_MEMORY_VERDICTS = frozenset({"weights-dont-fit", "kv-cache-too-small", "profile-activation-oom"})


def _gpu_label(spec: hardware.GpuSpec) -> str:
    return f"{spec.name} ({spec.memory_gib:g} GB)"


def _across_variants(
    findings: Sequence[Finding],
    command: ServeCommand,
    model_facts: model.ModelFacts | None,
    machine: hardware.Hardware,
) -> list[Finding]:
    """The findings with each memory error that another memory variant of the named card does
    not share made a warning whose why says both cards."""
    spec = machine.spec
    if spec is None or not machine.variants:
        return list(findings)
    each = [
        (
            variant,
            {
                f.rule
                for f in review(
                    command, model_facts=model_facts, machine=machine.as_variant(variant)
                ).errors
            },
        )
        for variant in machine.variants
    ]
    kept: list[Finding] = []
    for finding in findings:
        spared = [variant for variant, errors in each if finding.rule not in errors]
        if finding.severity != "error" or finding.rule not in _MEMORY_VERDICTS or not spared:
            kept.append(finding)
            continue
        why = Sentence(
            "memory-variant.why",
            why=finding.why,
            holds=_gpu_label(spec),
            spared=", ".join(_gpu_label(variant) for variant in spared),
        )
        kept.append(replace(finding, severity="warning", why=why))
    return sorted(kept, key=lambda f: _SEVERITY_ORDER[f.severity])


def review(
    command: ServeCommand,
    *,
    model_facts: model.ModelFacts | None,
    machine: hardware.Hardware | None,
) -> Report:
    """Run every rule over a parsed command with known model and hardware facts."""
    effective = settings.resolve(command, model_facts, machine)
    memory = machine.spec.memory_gib if machine and machine.spec else None
    est = (
        capacity.estimate(
            model_facts,
            effective,
            memory,
            version=command.version,
            gpu=machine.spec if machine else None,
            release_known=command.release_known,
            cards=machine.cards if machine else (),
        )
        if model_facts
        else None
    )
    ctx = Context(command, effective, model_facts, machine, est)
    hits = run_rules(ctx)
    findings = sorted(
        (_finding(ctx, found) for found in hits), key=lambda f: _SEVERITY_ORDER[f.severity]
    )
    if machine is not None and machine.variants:
        findings = _across_variants(findings, command, model_facts, machine)
    # Warnings' edits first, so that an error's fix wins where both touch one flag.
    ordered = sorted(hits, key=lambda found: -_SEVERITY_ORDER[found.severity])
    edits = [e for found in ordered if found.severity != "info" for e in found.edits]
    return Report(
        command=command,
        model=model_facts,
        hardware=machine,
        settings=effective,
        estimate=est,
        findings=tuple(findings),
        corrected_command=corrected(command, edits),
    )


def _hardware(options: CheckOptions) -> hardware.Hardware | None:
    if options.gpus is not None:
        return hardware.parse_gpus(options.gpus)
    return hardware.detect() if options.detect_hardware else None


def check_command(command: ServeCommand, options: CheckOptions) -> Report:
    """Review an already parsed command: find the model and the hardware, then run the rules."""
    machine = _hardware(options)
    facts = None
    # vLLM reads the model's config, its quantization_config included, from --hf-config-path
    # where one is given (0.8+, `ModelConfig`: `get_config(hf_config_path or model)`)
    config_path = command.text("--hf-config-path") if options.model_config is None else None
    if config_path:
        facts = model.find_model(config_path, online=options.online)
    if facts is None:
        facts = model.find_model(
            command.model_on_host, model_config=options.model_config, online=options.online
        )
    return review(command, model_facts=facts, machine=machine)


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
