"""The rule framework: what a rule sees (`Context`), what it returns (`Hit`, `Edit`), and the
registry every rule module adds itself to with `@rule`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from servetune.review.capacity import Estimate
from servetune.review.hardware import Hardware
from servetune.review.model import ModelFacts
from servetune.review.settings import Settings
from servetune.vllm.serve_command import ArgValue, ServeCommand

Severity = Literal["error", "warning", "info"]
Fact = str | int | float


@dataclass(frozen=True)
class Edit:
    """A change to the command that the fix implies: set `flag` to `value` (None removes it)."""

    flag: str
    value: ArgValue | None


@dataclass(frozen=True)
class Hit:
    """One occurrence of a rule: which message variant, with which facts, and the edit."""

    rule: str
    flag: str | None
    facts: Mapping[str, Fact] = field(default_factory=dict)
    variant: str | None = None
    edits: tuple[Edit, ...] = ()


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

    def machine(self) -> str:
        if self.hardware is None:
            return "an unknown number of GPUs"
        name = self.hardware.name or "GPU"
        return f"{self.hardware.count}x {name}"


RuleFn = Callable[[Context], Iterator[Hit]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    flag: str | None
    check: RuleFn


RULES: list[Rule] = []


def rule(rule_id: str, severity: Severity, flag: str | None) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        RULES.append(Rule(rule_id, severity, flag, fn))
        return fn

    return register


def rule_by_id(rule_id: str) -> Rule:
    return next(r for r in RULES if r.id == rule_id)


def run_rules(ctx: Context) -> list[tuple[Rule, Hit]]:
    """Every hit of every rule, in registration order."""
    return [(r, hit) for r in RULES for hit in r.check(ctx)]
