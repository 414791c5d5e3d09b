"""The rule framework: what a rule sees (`Context`), what it yields (`Hit`, `Edit`), the
registry every rule module adds itself to with `@rule`, and `run_rules`, which stamps each hit
with its rule's identity (`Found`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from servetune.review.capacity import Estimate
from servetune.review.hardware import Hardware
from servetune.review.model import ModelFacts
from servetune.review.sentence import Sentence
from servetune.review.settings import Settings
from servetune.vllm.serve_command import ArgValue, ServeCommand

Severity = Literal["error", "warning", "info"]
Fact = str | int | float | Sentence  # a Sentence: a word of the review texts, said in its language


@dataclass(frozen=True)
class Edit:
    """A change to the command that the fix implies: set `flag` to `value` (None removes it)."""

    flag: str
    value: ArgValue | None


@dataclass(frozen=True)
class Hit:
    """What a rule body yields: the facts its texts need, which text variant
    (`<rule-id>:<variant>.*` in the review texts; None: `<rule-id>.*`), and the edits its fix
    implies. Never the rule's id, severity or flag: `run_rules` stamps them from `@rule`.

    `flag` is only for a rule whose flag differs from hit to hit (the command-line rules name
    the flag the user's token spelled); None keeps the flag given to `@rule`.

    `by_release` marks a judgement that holds only in some vLLM releases (a flag removed in
    0.10, a check vLLM added in 0.20): when the command names no release and the newest one is
    assumed, such an error is said as a warning, since the user may well run an older one."""

    facts: Mapping[str, Fact] = field(default_factory=dict)
    variant: str | None = None
    edits: tuple[Edit, ...] = ()
    flag: str | None = field(default=None, kw_only=True)
    by_release: bool = field(default=False, kw_only=True)
    # A milder severity than the rule's for this hit (an estimate whose range straddles the
    # limit is a warning, not an error); None keeps the rule's.
    severity: Severity | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Context:
    """Everything a rule may look at."""

    command: ServeCommand
    settings: Settings
    model: ModelFacts | None
    hardware: Hardware | None
    estimate: Estimate | None

    @property
    def visible_gpus(self) -> int | None:
        """GPUs vLLM can see: the machine's, narrowed by CUDA_VISIBLE_DEVICES in the command."""
        if self.hardware is None:
            return None
        visible = self.command.env.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            ids = [v for v in visible.split(",") if v.strip()]
            return min(len(ids), self.hardware.count)
        return self.hardware.count

    def machine(self) -> str | Sentence:
        """The GPUs as the texts name them (`2x A100-80GB`)."""
        if self.hardware is None:
            return Sentence("fact.machine-unknown")
        name = self.hardware.name or "GPU"
        return f"{self.hardware.count}x {name}"


RuleFn = Callable[[Context], Iterator[Hit]]


@dataclass(frozen=True)
class Rule:
    """A registered rule: its identity (`id`, `severity`, the `flag` it concerns) and its body."""

    id: str
    severity: Severity
    flag: str | None
    check: RuleFn


@dataclass(frozen=True)
class Found:
    """A hit stamped with the identity of the rule that yielded it."""

    rule: str
    severity: Severity
    flag: str | None
    facts: Mapping[str, Fact]
    variant: str | None
    edits: tuple[Edit, ...]


RULES: list[Rule] = []


def rule(rule_id: str, severity: Severity, flag: str | None) -> Callable[[RuleFn], RuleFn]:
    """Register the decorated body under `rule_id`; its hits become findings of `severity`
    about `flag` (None: no one flag, or the hit names its own)."""

    def register(fn: RuleFn) -> RuleFn:
        RULES.append(Rule(rule_id, severity, flag, fn))
        return fn

    return register


def rule_by_id(rule_id: str) -> Rule:
    return next(r for r in RULES if r.id == rule_id)


def _stamp(r: Rule, hit: Hit, release_known: bool) -> Found:
    flag = r.flag if hit.flag is None else hit.flag
    severity: Severity = r.severity if hit.severity is None else hit.severity
    if hit.by_release and not release_known and severity == "error":
        severity = "warning"
    return Found(r.id, severity, flag, hit.facts, hit.variant, hit.edits)


def run_rules(ctx: Context) -> list[Found]:
    """Every hit of every rule, in registration order, stamped with its rule's identity."""
    known = ctx.command.release_known
    return [_stamp(r, hit, known) for r in RULES for hit in r.check(ctx)]
