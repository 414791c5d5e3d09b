"""The search over knobs: the seed's decision logic, one knob per server start.

Measure the user's command, read which limit held it back, move the knob that limit points to
(one knob per step), and keep the change only when it is better beyond the noise: the new
configuration met the targets at a load the old one failed, or, where their capacities overlap,
`compare`'s interval on the output throughput at capacity (over the repeats) says better. Stop
when no move is left or the server starts allowed (`max_starts`) are spent. The full grid of
knob values is the baseline to beat, not the method.

Trials run through `runner` (by default one after another on this machine); a cluster engine
can run the same `TrialSpec`s elsewhere.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from servetune.errors import UsageError
from servetune.judge.compare import compare, load_side
from servetune.launch import doctor, launcher
from servetune.measure.bench import EndpointPath
from servetune.measure.workload import WorkloadSpec
from servetune.review.check import CheckOptions, Report, check_command
from servetune.review.settings import Settings
from servetune.tune import knobs, output
from servetune.tune.trial import EventSink, Targets, TrialResult, TrialSpec, run_trial
from servetune.vllm.serve_command import ArgValue, ServeCommand, parse_tokens

if TYPE_CHECKING:
    from servetune.tune.parallel import Interference
    from servetune.tune.sentence import Sentence

Runner = Callable[[TrialSpec, EventSink], TrialResult]
_NOT_CARRIED = ("--host", "--port")  # each trial listens on a free loopback port
# Consecutive trials without a kept change after which the search stops early: by then the
# limit's own moves are spent and the neighbours tried did not help either.
PATIENCE = 3


@dataclass(frozen=True)
class TuneConfig:
    """One `servetune tune`, as the CLI (or a library user) describes it."""

    argv: tuple[str, ...]  # the user's `vllm serve ...` words
    targets: Targets
    output: Path
    vllm: str
    workload: WorkloadSpec = field(default_factory=WorkloadSpec)
    endpoint: EndpointPath = "/v1/completions"
    seed: int = 0
    gpus: str | None = None
    vllm_version: str | None = None
    ready_timeout_s: float = 1800.0
    knobs: Mapping[str, tuple[str, ...]] | None = None  # None: the default knobs
    max_starts: int = 12
    repeats: int = 2
    model_config: Path | None = None  # check's --model-config
    online: bool = False
    force: bool = False  # start configurations despite check's error findings


@dataclass(frozen=True)
class Candidate:
    """A configuration ready to run (or refused by check)."""

    changes: Mapping[str, str]
    command: ServeCommand
    report: Report
    spec: TrialSpec


@dataclass(frozen=True)
class Improvement:
    pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None


@dataclass(frozen=True)
class TuneResult:
    config: TuneConfig
    baseline: TrialResult
    best: TrialResult | None
    trials: tuple[TrialResult, ...]
    commands: Mapping[int, str]  # trial index -> its `vllm serve` command
    improvement: Improvement
    values: Mapping[str, tuple[str, ...]]  # the knob values considered
    interference: Interference | None = None  # --interference-check (tune/parallel.py)

    @property
    def server_starts(self) -> int:
        return sum(1 for t in self.trials if t.started)

    @property
    def start_s(self) -> float:
        return sum(t.start_s for t in self.trials)

    @property
    def measure_s(self) -> float:
        return sum(t.measure_s for t in self.trials)

    @property
    def next_step(self) -> Sentence:
        """What to do now (tune.json's `next_step` in English; the views say it in theirs)."""
        return output.next_step(self)

    def to_json(self) -> dict[str, Any]:
        """tune.json, exactly as the contract spells it."""
        return output.document(self)


def with_flags(command: ServeCommand, changes: Mapping[str, str]) -> ServeCommand:
    """The command with `changes` set (added at the end when new) and no --host/--port."""
    args: dict[str, ArgValue] = {f: v for f, v in command.args.items() if f not in _NOT_CARRIED}
    order = [f for f in command.order if f not in _NOT_CARRIED]
    for flag, value in changes.items():
        args[flag] = value
        if flag not in order:
            order.append(flag)
    return replace(command, args=args, order=tuple(order))


def effective_flags(command: ServeCommand, settings: Settings) -> dict[str, str]:
    """Every flag the command sets (as text), plus the effective value of every knob."""
    flags: dict[str, str] = {}
    for flag in command.order:
        value = command.args[flag]
        if isinstance(value, bool):
            flags[flag] = "true" if value else "false"
        else:
            flags[flag] = " ".join(value) if isinstance(value, tuple) else value
    flags[knobs.SEQS] = str(settings.max_num_seqs)
    if settings.max_num_batched_tokens is not None:
        flags[knobs.BATCHED] = str(settings.max_num_batched_tokens)
    flags[knobs.UTIL] = f"{settings.gpu_memory_utilization:g}"
    flags[knobs.TP] = str(settings.tensor_parallel_size)
    flags[knobs.KV_DTYPE] = settings.kv_cache_dtype
    return flags


def _folder(output: Path, flags: Mapping[str, str]) -> Path:
    digest = hashlib.sha1(json.dumps(dict(sorted(flags.items()))).encode(), usedforsecurity=False)
    return output / "trials" / digest.hexdigest()[:12]


def command_text(command: ServeCommand) -> str:
    words = ["vllm", "serve", *launcher.launch_argv(command, "vllm")[2:]]
    return " ".join(words)


@dataclass
class _State:
    config: TuneConfig
    runner: Runner
    on_event: EventSink
    trials: list[TrialResult] = field(default_factory=list)
    commands: dict[int, str] = field(default_factory=dict)
    changes: dict[int, Mapping[str, str]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    hint: int = 8

    def prepare(self, changes: Mapping[str, str]) -> Candidate:
        config = self.config
        base = parse_tokens(config.argv, version=config.vllm_version)
        command = with_flags(base, changes)
        options = CheckOptions(
            gpus=config.gpus,
            vllm_version=config.vllm_version,
            detect_hardware=config.gpus is None,
            model_config=config.model_config,
            online=config.online,
        )
        report = check_command(command, options)
        flags = effective_flags(command, report.settings)
        spec = TrialSpec(
            index=len(self.trials),
            argv=tuple(launcher.launch_argv(command, config.vllm)),
            flags=flags,
            served_model=command.text("--served-model-name") or command.model or "",
            workload=config.workload,
            endpoint=config.endpoint,
            seed=config.seed,
            targets=config.targets,
            folder=_folder(config.output, flags),
            vllm=config.vllm,
            gpus=config.gpus,
            ready_timeout_s=config.ready_timeout_s,
            repeats=config.repeats,
            start_users=self.hint,
            max_num_seqs=report.settings.max_num_seqs * report.settings.data_parallel_size,
        )
        return Candidate(changes, command, report, spec)

    def execute(self, candidate: Candidate) -> TrialResult:
        spec = candidate.spec
        self.seen.add(json.dumps(dict(sorted(spec.flags.items()))))
        index = len(self.trials)
        self.on_event(f"trial {index + 1}: " + _changed(candidate.changes))
        if candidate.report.errors and not self.config.force:
            result = TrialResult(
                index,
                spec.flags,
                "failed-start",
                None,
                "failed-start",
                "check: " + candidate.report.errors[0].title.text(),
            )
        else:
            result = replace(self.runner(spec, self.on_event), index=index)
        self.trials.append(result)
        self.commands[index] = command_text(candidate.command)
        self.changes[index] = candidate.changes
        if result.capacity is not None and result.capacity.max_concurrency:
            self.hint = result.capacity.max_concurrency
        return result

    def is_new(self, candidate: Candidate) -> bool:
        return json.dumps(dict(sorted(candidate.spec.flags.items()))) not in self.seen

    @property
    def starts(self) -> int:
        return sum(1 for t in self.trials if t.started)


def _changed(changes: Mapping[str, str]) -> str:
    if not changes:
        return "your command"
    return ", ".join(f"{f} {v}" for f, v in changes.items())


def _tokens_per_request(workload: WorkloadSpec) -> int:
    return workload.random_input_len + workload.random_output_len


def _kv_tokens(result: TrialResult, report: Report) -> int | None:
    """The KV cache vLLM reported at the baseline's start, else check's estimate."""
    if result.log is not None:
        try:
            text = Path(result.log).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        reported = (
            doctor.diagnose(text, vllm_output=True).reported.kv_cache_tokens if text else None
        )
        if reported:
            return reported
    return report.estimate.kv_cache_tokens if report.estimate else None


def _at_capacity(result: TrialResult) -> list[Path]:
    level = result.capacity.max_concurrency if result.capacity else None
    return [Path(p.result_file) for p in result.probes if p.concurrency == level and p.result_file]


def improvement(before: TrialResult, after: TrialResult) -> Improvement:
    """Output throughput at capacity, after vs before, with compare's interval (over repeats)."""
    b, a = _at_capacity(before), _at_capacity(after)
    if not b or not a:
        return Improvement(None, None, None)
    if before is after:
        return Improvement(0.0, None, None)
    try:
        row = compare(load_side(b), load_side(a), ["output_throughput"]).metrics[0]
    except UsageError:
        return Improvement(None, None, None)
    return Improvement(row.change_pct, row.ci_low_pct, row.ci_high_pct)


def better(candidate: TrialResult, best: TrialResult) -> bool:
    """Better beyond the noise: met the targets where `best` failed, or (capacities
    overlapping) compare's throughput verdict at capacity over the repeats is `better`."""
    c, b = candidate.capacity, best.capacity
    if candidate.status != "ok" or c is None:
        return False
    if b is None or best.status != "ok":
        return True
    if b.first_failing is not None and c.max_concurrency >= b.first_failing:
        return True
    if c.first_failing is not None and c.first_failing <= b.max_concurrency:
        return False
    found = improvement(best, candidate)
    return found.ci_low_pct is not None and found.ci_low_pct > 0


def _missed(result: TrialResult) -> list[str]:
    failing = result.capacity.first_failing if result.capacity else None
    probe = next((p for p in result.probes if p.concurrency == failing), None)
    if probe is None:
        probe = next((p for p in result.probes if not p.passed), None)
    if probe is None:
        return []
    return [k for k, (over, n) in probe.misses.items() if n and over > 0]


def run_tune(
    config: TuneConfig, runner: Runner = run_trial, on_event: EventSink = lambda _: None
) -> TuneResult:
    """Run the search; every trial lands in `config.output` as it finishes (resumable)."""
    state = _State(config, runner, on_event)
    first = state.prepare({})
    baseline = state.execute(first)
    values = knob_values(config, first, baseline)
    best: TrialResult | None = baseline if baseline.status == "ok" else None
    idle = 0
    while state.starts < config.max_starts and idle < PATIENCE:
        candidate = _next(state, best or baseline, values)
        if candidate is None:
            break
        result = state.execute(candidate)
        if improves(result, best):
            best, idle = result, 0
        else:
            idle += 1
    return outcome(config, state, baseline, best, values)


def knob_values(
    config: TuneConfig, first: Candidate, baseline: TrialResult
) -> dict[str, tuple[str, ...]]:
    """The values to consider per knob: `--knob` as given, else chosen from check's estimate and
    the KV cache the baseline's server reported."""
    if config.knobs:
        return dict(config.knobs)
    per_request = _tokens_per_request(config.workload)
    return knobs.candidates(first.report, per_request, _kv_tokens(baseline, first.report))


def improves(result: TrialResult, best: TrialResult | None) -> bool:
    """Whether `result` becomes the best so far (the first success, or better than the best)."""
    if best is None:
        return result.status == "ok"
    return better(result, best)


def outcome(
    config: TuneConfig,
    state: _State,
    baseline: TrialResult,
    best: TrialResult | None,
    values: Mapping[str, tuple[str, ...]],
    *,
    interference: Interference | None = None,
) -> TuneResult:
    """The search's result from what it ran (both the one-at-a-time and the parallel search)."""
    return TuneResult(
        config=config,
        baseline=baseline,
        best=best,
        trials=tuple(state.trials),
        commands=dict(state.commands),
        improvement=improvement(baseline, best) if best else Improvement(None, None, None),
        values=values,
        interference=interference,
    )


def _next(
    state: _State, origin: TrialResult, values: Mapping[str, tuple[str, ...]]
) -> Candidate | None:
    """The first move from `origin` to a configuration not tried yet."""
    base_changes = state.changes[origin.index]
    for move in knobs.moves(origin.limit, origin.flags, values, _missed(origin)):
        candidate = state.prepare({**base_changes, move.flag: move.value})
        if state.is_new(candidate):
            return candidate
    return None
