"""Tune's search with several trials in flight: as many proposals at once as the executor fits.

The decisions are the one-knob search of `servetune.tune.search` (its state, moves and
`better` verdict): measure the user's command alone, read its limit, then propose the first
untried moves from the best configuration so far, as many as fit side by side (both directions
of a knob, then the neighbours), never more than the server starts left. A proposal is kept as
the new best only when it beats the best beyond the noise.

Interference check: trials that share a node share its CPU, PCIe and network, so the first
side-by-side batch also runs the user's command again, beside the others, and compares its
output throughput at capacity with the run alone. Above `INTERFERENCE_PCT` the parallel numbers
are not comparable: tune says so and goes on with one trial per node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from servetune.tune import knobs
from servetune.tune.executor import Executor, gpus_needed
from servetune.tune.search import (
    PATIENCE,
    Candidate,
    Runner,
    TuneConfig,
    TuneResult,
    _changed,
    _missed,
    _State,
    command_text,
    improves,
    knob_values,
    outcome,
)
from servetune.tune.sentence import Sentence
from servetune.tune.trial import EventSink, TrialResult, TrialSpec

INTERFERENCE_PCT = 3.0  # beyond this, side-by-side numbers are not comparable with alone ones
BESIDE_FOLDER = "interference"


@dataclass(frozen=True)
class Interference:
    """The user's command measured alone and beside other trials, once."""

    alone_throughput: float | None  # output tokens/s at capacity
    beside_throughput: float | None
    alone_users: int | None
    beside_users: int | None
    difference_pct: float | None  # beside vs alone (None: not measured)
    folder: str

    @property
    def comparable(self) -> bool:
        """Whether side-by-side numbers can be compared with numbers measured alone."""
        if self.difference_pct is None:
            return self.beside_throughput is not None or self.beside_users is None
        return abs(self.difference_pct) <= INTERFERENCE_PCT

    @property
    def note(self) -> Sentence:
        """The check's verdict in one sentence."""
        key = "interference.comparable" if self.comparable else "interference.not-comparable"
        diff = "?" if self.difference_pct is None else f"{self.difference_pct:+.1f}%"
        return Sentence(key, diff=diff, threshold=f"{INTERFERENCE_PCT:g}%")

    def to_json(self) -> dict[str, Any]:
        alone = {"max_concurrency": self.alone_users, "output_throughput": self.alone_throughput}
        beside = {
            "max_concurrency": self.beside_users,
            "output_throughput": self.beside_throughput,
        }
        return {
            "alone": alone,
            "beside": beside,
            "difference_pct": self.difference_pct,
            "threshold_pct": INTERFERENCE_PCT,
            "comparable": self.comparable,
            "folder": self.folder,
        }


def interference(alone: TrialResult, beside: TrialResult, folder: Path) -> Interference:
    """Compare the same configuration's capacity alone and beside others."""
    a, b = alone.capacity, beside.capacity
    a_tps = a.output_throughput if a is not None and alone.status == "ok" else None
    b_tps = b.output_throughput if b is not None and beside.status == "ok" else None
    diff = None
    if a_tps and b_tps is not None:
        diff = (b_tps - a_tps) / a_tps * 100
    elif a_tps and beside.status != "ok":
        diff = -100.0  # it could not even meet the targets beside the others
    return Interference(
        alone_throughput=a_tps,
        beside_throughput=b_tps,
        alone_users=a.max_concurrency if a is not None else None,
        beside_users=b.max_concurrency if b is not None else None,
        difference_pct=diff,
        folder=str(folder),
    )


@dataclass
class _Run:
    """One search with an executor: the search's state plus what ran side by side."""

    state: _State
    executor: Executor
    on_event: EventSink

    def batch(
        self, candidates: Sequence[Candidate], extra: Sequence[Candidate] = ()
    ) -> list[TrialResult]:
        """Run `candidates` (and `extra`, unrecorded) at once; record the candidates in order
        (lost attempts first, as their own trials) and return their results, then extra's."""
        state = self.state
        first = len(state.trials)
        numbered = [
            replace(c, spec=replace(c.spec, index=first + i)) for i, c in enumerate(candidates)
        ]
        runnable = [c for c in [*numbered, *extra] if not c.report.errors]
        for c in numbered:
            self.on_event(f"trial {c.spec.index + 1}: {_changed(c.changes)}")
        done = self.executor.run([c.spec for c in runnable], self.on_event)
        found = {str(c.spec.folder): r for c, r in zip(runnable, done, strict=True)}
        for lost in self.executor.lost():
            self._record_lost(lost, numbered)
        state.runner = _replay(found)
        results = [state.execute(c) for c in numbered]
        return results + [found[str(c.spec.folder)] for c in extra if not c.report.errors]

    def _record_lost(self, lost: TrialResult, candidates: Sequence[Candidate]) -> None:
        """A lost attempt is a trial of its own (its retry follows it)."""
        state = self.state
        index = len(state.trials)
        state.trials.append(replace(lost, index=index))
        match = next((c for c in candidates if dict(c.spec.flags) == dict(lost.flags)), None)
        if match is not None:
            state.commands[index] = command_text(match.command)
            state.changes[index] = match.changes


def proposals(
    state: _State, origin: TrialResult, values: Mapping[str, tuple[str, ...]], room: int
) -> list[Candidate]:
    """Up to `room` untried single-knob moves from `origin`, in the search's order."""
    base = state.changes[origin.index]
    found: list[Candidate] = []
    keys: set[str] = set()
    for move in knobs.moves(origin.limit, origin.flags, values, _missed(origin)):
        if len(found) >= room:
            break
        candidate = state.prepare({**base, move.flag: move.value})
        key = str(candidate.spec.folder)
        if state.is_new(candidate) and key not in keys:
            keys.add(key)
            found.append(candidate)
    return found


def _beside(first: Candidate, output: Path) -> Candidate:
    folder = output / BESIDE_FOLDER
    return replace(first, spec=replace(first.spec, folder=folder, index=-1))


def search(
    config: TuneConfig,
    executor: Executor,
    on_event: EventSink = lambda _: None,
    *,
    interference_check: bool = False,
) -> TuneResult:
    """The search with `executor`; every trial lands in `config.output` as it finishes."""
    state = _State(config, _unused, lambda _: None)  # the executor runs every trial
    run = _Run(state, executor, on_event)
    first = state.prepare({})
    baseline = run.batch([first])[0]  # alone
    values = knob_values(config, first, baseline)
    best: TrialResult | None = baseline if baseline.status == "ok" else None
    checked: Interference | None = None
    need = gpus_needed(first.spec)
    idle = 0
    while (
        left := config.max_starts - state.starts - (checked is not None)
    ) > 0 and idle < PATIENCE:
        room = min(executor.room(need), left)  # the check's own start counts too
        beside = interference_check and checked is None and baseline.status == "ok" and room > 1
        batch = proposals(state, best or baseline, values, room - beside)
        if not batch:
            break
        extra = [_beside(first, config.output)] if beside else []
        results = run.batch(batch, extra)
        for result in results[: len(batch)]:
            if improves(result, best):
                best, idle = result, 0
            else:
                idle += 1
        if beside:
            checked = interference(baseline, results[-1], config.output / BESIDE_FOLDER)
            on_event(checked.note.text())
            if not checked.comparable:
                executor.one_per_node()
    if interference_check and checked is None:
        on_event("interference check: not run (never room for two trials at once)")
    return outcome(config, state, baseline, best, values, interference=checked)


def _replay(found: Mapping[str, TrialResult]) -> Runner:
    """A runner that hands back what the executor already ran (by the trial's folder)."""

    def runner(spec: TrialSpec, _sink: EventSink) -> TrialResult:
        return found[str(spec.folder)]

    return runner


def _unused(_spec: TrialSpec, _sink: EventSink) -> TrialResult:
    raise AssertionError("every trial runs through the executor")
