"""Where trials run: the executor seam between tune's search and the machines.

An executor runs a batch of trials (`TrialSpec`s, plain values) and hands back their results,
each stamped with where it ran (`Placement`: the node and the `CUDA_VISIBLE_DEVICES` its server
was given) and when (`started_at`, `ended_at`, Unix seconds). `LocalExecutor` is tune's own
behaviour: trials one after another on this machine. `servetune.tune.ray_executor.RayExecutor`
places them side by side on the GPUs of a Ray cluster. Both write every trial into the same
output directory (`trials/<digest>/trial.json` beside its probes), so tune.json, the report,
resume and `compare` read them the same way.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from servetune.review import settings
from servetune.tune.trial import (
    EventSink,
    Placement,
    TrialResult,
    TrialSpec,
    load_result,
    run_trial,
    save_result,
)
from servetune.vllm.serve_command import parse_tokens

Runner = Callable[[TrialSpec, EventSink], TrialResult]
Clock = Callable[[], float]


def gpus_needed(spec: TrialSpec) -> int:
    """GPUs one server of this trial takes: tensor x pipeline x data parallel sizes."""
    words = list(spec.argv)
    if len(words) > 1 and words[1] == "serve":
        words[0] = "vllm"  # the program may have any name (--vllm PATH)
    return max(settings.resolve(parse_tokens(words), None, None).gpus_needed, 1)


def label(spec: TrialSpec) -> str:
    """How progress lines name a trial (the interference check's run has no number)."""
    return f"trial {spec.index + 1}" if spec.index >= 0 else "trial 1 again, beside others"


def visible_devices(env: Mapping[str, str] | None = None) -> str:
    """The `CUDA_VISIBLE_DEVICES` a server started from here gets ("" when none is set)."""
    if env is not None and "CUDA_VISIBLE_DEVICES" in env:
        return env["CUDA_VISIBLE_DEVICES"]
    return os.environ.get("CUDA_VISIBLE_DEVICES", "")


def stamp(
    result: TrialResult, placement: Placement, started_at: float, ended_at: float
) -> TrialResult:
    """The result with where and when it ran."""
    return replace(result, placement=placement, started_at=started_at, ended_at=ended_at)


class Executor(Protocol):
    """Runs trials; `room` says how many trials needing `gpus` GPUs each fit at once."""

    name: str

    def room(self, gpus: int) -> int: ...

    def run(self, specs: Sequence[TrialSpec], on_event: EventSink) -> list[TrialResult]:
        """One result per spec, in the order of `specs`, each already written to its folder.
        A spec whose folder holds a finished result of the same flags is not run again."""
        ...

    def lost(self) -> list[TrialResult]:
        """Attempts lost since the last call (a worker or node died; retried once elsewhere)."""
        ...

    def one_per_node(self) -> None:
        """From now on, at most one trial per node at a time."""
        ...

    def close(self) -> None: ...


@dataclass
class LocalExecutor:
    """Trials one after another on this machine (tune's behaviour without a cluster)."""

    runner: Runner = run_trial
    clock: Clock = time.time
    node: str = field(default_factory=socket.gethostname)
    name: str = "local"

    def room(self, gpus: int) -> int:  # noqa: ARG002 - one at a time whatever it needs
        return 1

    def run(self, specs: Sequence[TrialSpec], on_event: EventSink) -> list[TrialResult]:
        return [self.run_one(spec, on_event) for spec in specs]

    def run_one(self, spec: TrialSpec, on_event: EventSink) -> TrialResult:
        """`runner` on this machine, stamped with this node, its GPUs and the times."""
        done = load_result(spec.folder, spec.flags)
        if done is not None:
            on_event("finished in an earlier run: reused")
            return done
        started_at = self.clock()
        result = self.runner(spec, on_event)
        placement = Placement(self.node, visible_devices(spec.env))
        result = stamp(result, placement, started_at, self.clock())
        save_result(spec.folder, result)
        return result

    def lost(self) -> list[TrialResult]:
        return []

    def one_per_node(self) -> None:
        return None

    def close(self) -> None:
        return None
