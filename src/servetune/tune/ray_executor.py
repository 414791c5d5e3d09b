"""Tune trials placed by Ray: each trial asks for the GPUs its configuration needs.

Ray is an optional dependency (`pip install 'servetune[ray]'`), imported only when asked for.
Each trial is one Ray task with `num_gpus` = tensor x pipeline x data parallel size: Ray picks
a node with that many free GPUs and sets `CUDA_VISIBLE_DEVICES` for the task; the task runs
`serve` + `bench` there (`run_trial`: vLLM on a free port, the load generator on the same node)
in a scratch folder and returns the trial's files. The driver writes them into the trial's
folder of the output directory, exactly where the local executor writes them.

Failures: a task whose worker or node dies comes back `lost`, one whose trial could not start
for a reason outside vLLM (`run_trial` raised) `failed-start`; either is recorded with its
reason and run again once, on another node where one has room. Ctrl-C cancels every task in
flight (each stops its vLLM; a task that does not stop is killed, and its vLLM dies with it).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import socket
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from servetune.errors import MissingExtra, UsageError
from servetune.texts import ErrorText
from servetune.tune.executor import Clock, gpus_needed, label, stamp, visible_devices
from servetune.tune.trial import (
    EventSink,
    Placement,
    TrialResult,
    TrialSpec,
    load_result,
    run_trial,
    save_result,
)

STOP_WAIT_S = 30.0  # how long Ctrl-C waits for tasks to stop their servers before killing them


def import_ray() -> Any:
    """The `ray` module, or `MissingExtra` (which says how to install it)."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise MissingExtra("ray", ErrorText("feature.tune-ray")) from exc


def check_address(text: str) -> str:
    """`auto`, `local` or `ray://HOST:PORT` (the `address` of a `RayExecutor`)."""
    if text in ("auto", "local"):
        return text
    host, sep, port = text.removeprefix("ray://").rpartition(":")
    if text.startswith("ray://") and sep and host and port.isdigit():
        return text
    raise UsageError(ErrorText("tune.bad-address", text=text))


# --- on the worker ------------------------------------------------------------------------------


def run_on_worker(spec: TrialSpec, events: Any = None) -> dict[str, Any]:
    """Run one trial on the node Ray picked, in a scratch folder; return its files and where
    and when it ran. A failure of our own (not vLLM's) comes back as `error`. Progress lines
    go to `events` (a Ray queue the driver reads), when given."""
    ray = importlib.import_module("ray")
    where = {
        "node": socket.gethostname(),
        "node_id": ray.get_runtime_context().get_node_id(),
        "devices": visible_devices(),
        "started_at": time.time(),
    }
    with tempfile.TemporaryDirectory(prefix="servetune-trial-") as tmp:
        here = Path(tmp)
        on_event = _sender(events, label(spec), tmp, str(spec.folder))
        on_event(f"runs on {where['node']} (GPUs {where['devices'] or '-'})")
        try:
            result = run_trial(replace(spec, folder=here), on_event)
        except Exception as exc:  # noqa: BLE001 - reported to the driver as a failed start
            return {**where, "error": f"{type(exc).__name__}: {exc}", "ended_at": time.time()}
        files = {str(p.relative_to(here)): p.read_bytes() for p in here.rglob("*") if p.is_file()}
    return {
        **where,
        "result": result.to_json(),
        "files": files,
        "folder": tmp,
        "ended_at": time.time(),
    }


def _sender(events: Any, name: str, scratch: str, folder: str) -> EventSink:
    """Progress lines into the driver's queue, naming the files where the driver will put
    them; a full or gone queue only loses lines."""

    def send(line: str) -> None:
        if events is None:
            return
        with contextlib.suppress(Exception):  # progress is best effort: the trial goes on
            events.put_nowait(f"{name}: {line.replace(scratch, folder)}")

    return send


# --- on the driver ------------------------------------------------------------------------------


def _moved(path: str | None, old: str, new: Path) -> str | None:
    if path is None or not path.startswith(old):
        return path
    return str(new / Path(path).relative_to(old))


def land(spec: TrialSpec, doc: dict[str, Any]) -> TrialResult:
    """Write a finished trial's files into its folder here and return its result, stamped."""
    folder = spec.folder
    for name, data in doc["files"].items():
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts:
            continue
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    result = TrialResult.from_json(doc["result"])
    old = doc["folder"]
    probes = tuple(
        replace(p, result_file=_moved(p.result_file, old, folder)) for p in result.probes
    )
    result = replace(result, index=spec.index, probes=probes, log=_moved(result.log, old, folder))
    placement = Placement(str(doc["node"]), str(doc["devices"]))
    result = stamp(result, placement, float(doc["started_at"]), float(doc["ended_at"]))
    save_result(folder, result)
    return result


@dataclass(frozen=True)
class _Attempt:
    index: int  # the spec's position in the batch
    retry: bool
    submitted_at: float


def _failure(
    spec: TrialSpec, status: str, reason: str, doc: dict[str, Any], now: float
) -> TrialResult:
    placement = Placement(str(doc.get("node", "?")), str(doc.get("devices", "")))
    return TrialResult(
        index=spec.index,
        flags=spec.flags,
        status="lost" if status == "lost" else "failed-start",
        capacity=None,
        limit=None if status == "lost" else "failed-start",
        root_cause=reason,
        placement=placement,
        started_at=float(doc.get("started_at", now)),
        ended_at=float(doc.get("ended_at", now)),
    )


@dataclass
class _Batch:
    """The trials of one `run` call and where each stands."""

    specs: Sequence[TrialSpec]
    on_event: EventSink
    results: list[TrialResult | None]
    queued: list[int] = field(default_factory=list)
    pending: dict[Any, _Attempt] = field(default_factory=dict)
    nodes: dict[Any, str] = field(default_factory=dict)  # task -> the node it is pinned to


@dataclass
class RayExecutor:
    """Trials side by side on a Ray cluster's GPUs (see the module's docstring)."""

    address: str = "auto"
    gpus: int | None = None  # `local`: the GPUs to declare (None: the ones Ray finds)
    parallel: int | None = None  # at most this many trials in flight (None: as the GPUs allow)
    clock: Clock = time.time
    task: Any = run_on_worker  # what each Ray task runs (tests give a stand-in)
    name: str = "ray"
    _ray: Any = None
    _remote: Any = None
    _per_node: bool = False
    _events: Any = None  # a Ray queue of the workers' progress lines
    _lost: list[TrialResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        ray = self._ray = import_ray()
        check_address(self.address)
        try:
            if self.address == "local":
                cpus = max(os.cpu_count() or 1, self.gpus or 0) * 2
                ray.init(
                    address="local",
                    num_gpus=self.gpus,
                    num_cpus=cpus,
                    include_dashboard=False,
                    log_to_driver=False,
                )
            else:
                ray.init(address=self.address, log_to_driver=False)
        except Exception as exc:  # Ray raises many kinds; the user needs one message
            why = _last_line(exc)
            raise UsageError(ErrorText("tune.no-ray-cluster", at=self.address, why=why)) from exc
        self._remote = ray.remote(self.task)
        queue = importlib.import_module("ray.util.queue")
        self._events = queue.Queue(maxsize=1000, actor_options={"num_cpus": 0})

    # --- room -------------------------------------------------------------------------------

    def node_gpus(self) -> dict[str, int]:
        """Alive node id -> its GPUs."""
        return {
            n["NodeID"]: int(n.get("Resources", {}).get("GPU", 0))
            for n in self._ray.nodes()
            if n.get("Alive")
        }

    def room(self, gpus: int) -> int:
        fits = [n // max(gpus, 1) for n in self.node_gpus().values()]
        total = sum(min(f, 1) for f in fits) if self._per_node else sum(fits)
        if self.parallel is not None:
            total = min(total, self.parallel)
        return max(total, 1)

    def one_per_node(self) -> None:
        self._per_node = True

    # --- running ----------------------------------------------------------------------------

    def _submit(self, spec: TrialSpec, avoid: str | None = None, node: str | None = None) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        need = gpus_needed(spec)
        target = node or self._elsewhere(need, avoid)
        options: dict[str, Any] = {"num_gpus": need, "num_cpus": 1, "max_retries": 0}
        if target is not None:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(
                target, soft=not self._per_node
            )
        return self._remote.options(**options).remote(spec, self._events)

    def _elsewhere(self, need: int, avoid: str | None) -> str | None:
        if avoid is None:
            return None
        others = [n for n, g in self.node_gpus().items() if n != avoid and g >= need]
        return others[0] if others else None

    def run(self, specs: Sequence[TrialSpec], on_event: EventSink) -> list[TrialResult]:
        batch = _Batch(specs, on_event, [None] * len(specs))
        for i, spec in enumerate(specs):
            done = load_result(spec.folder, spec.flags)
            if done is not None:
                on_event(f"{label(spec)}: finished in an earlier run: reused")
                batch.results[i] = done
            elif (refusal := self._refusal(spec)) is not None:
                batch.results[i] = refusal
            else:
                batch.queued.append(i)
        try:
            self._drive(batch)
        except KeyboardInterrupt:
            self.stop(list(batch.pending))
            raise
        return [r for r in batch.results if r is not None]

    def _refusal(self, spec: TrialSpec) -> TrialResult | None:
        """A trial no node can hold fails now rather than wait forever for GPUs."""
        need, most = gpus_needed(spec), max(self.node_gpus().values(), default=0)
        if need <= most:
            return None
        now = self.clock()
        reason = f"needs {need} GPUs on one node; the largest node of the Ray cluster has {most}"
        return _failure(spec, "failed-start", reason, {"node": "-"}, now)

    def _drive(self, batch: _Batch) -> None:
        """Keep as many trials in flight as there is room for, until all are back."""
        while batch.queued or batch.pending:
            while batch.queued and self._may_start(len(batch.pending), batch.queued[0], batch):
                i = batch.queued.pop(0)
                spec = batch.specs[i]
                node = self._free_node(spec, set(batch.nodes.values()))
                ref = self._submit(spec, node=node)
                batch.pending[ref] = _Attempt(i, retry=False, submitted_at=self.clock())
                if node is not None:
                    batch.nodes[ref] = node
                batch.on_event(f"{label(spec)}: asks Ray for {gpus_needed(spec)} GPUs")
            ready, _ = self._ray.wait(list(batch.pending), num_returns=1, timeout=1.0)
            self._relay(batch.on_event)
            for ref in ready:
                batch.nodes.pop(ref, None)
                self._collect(batch, ref, batch.pending.pop(ref))

    def _relay(self, on_event: EventSink) -> None:
        """Pass on the progress lines the workers sent since the last call."""
        try:
            lines = self._events.get_nowait_batch(self._events.qsize())
        except Exception:  # noqa: BLE001 - progress is best effort
            return
        for line in lines:
            on_event(line)

    def _may_start(self, in_flight: int, i: int, batch: _Batch) -> bool:
        return in_flight < self.room(gpus_needed(batch.specs[i]))

    def _free_node(self, spec: TrialSpec, busy: set[str]) -> str | None:
        """With one trial per node: a node with none in flight (None: let Ray choose)."""
        if not self._per_node:
            return None
        need = gpus_needed(spec)
        free = [n for n, g in self.node_gpus().items() if g >= need and n not in busy]
        return free[0] if free else None

    def _collect(self, batch: _Batch, ref: Any, attempt: _Attempt) -> None:
        spec = batch.specs[attempt.index]
        result, failed, node_id = self._outcome(spec, ref, attempt)
        if failed and not attempt.retry:
            self._lost.append(result)
            batch.on_event(
                f"{label(spec)}: {result.status} ({result.root_cause}); running it again elsewhere"
            )
            new = self._submit(spec, avoid=node_id)
            batch.pending[new] = _Attempt(attempt.index, retry=True, submitted_at=self.clock())
            return
        batch.results[attempt.index] = result
        where = result.placement
        place = f" on {where.node} (GPUs {where.cuda_visible_devices or '-'})" if where else ""
        batch.on_event(f"{label(spec)}: {result.status}{place}")

    def _outcome(
        self, spec: TrialSpec, ref: Any, attempt: _Attempt
    ) -> tuple[TrialResult, bool, str | None]:
        """The attempt's result, whether Ray or the worker failed it (not vLLM), and the node
        a retry should avoid (None: unknown, or gone with the worker)."""
        ray = self._ray
        now = self.clock()
        try:
            doc = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # our code raised past its own handler
            reason = f"the trial's task failed: {_last_line(exc)}"
            since = {"started_at": attempt.submitted_at}
            return _failure(spec, "failed-start", reason, since, now), True, None
        except ray.exceptions.RayError as exc:  # the worker or its node died
            reason = f"the Ray worker was lost: {type(exc).__name__}: {_last_line(exc)}"
            since = {"started_at": attempt.submitted_at}
            return _failure(spec, "lost", reason, since, now), True, None
        if "error" in doc:
            reason = f"could not run the trial on {doc['node']}: {doc['error']}"
            return _failure(spec, "failed-start", reason, doc, now), True, str(doc["node_id"])
        return land(spec, doc), False, None

    def lost(self) -> list[TrialResult]:
        found, self._lost = self._lost, []
        return found

    def stop(self, refs: Sequence[Any]) -> None:
        """Cancel tasks in flight: each stops its server; those still running are killed."""
        ray = self._ray
        for ref in refs:
            ray.cancel(ref, force=False)
        _, left = ray.wait(list(refs), num_returns=len(refs), timeout=STOP_WAIT_S)
        for ref in left:
            ray.cancel(ref, force=True)

    def close(self) -> None:
        """Disconnect (and stop the private instance of `local`)."""
        if self._ray is not None and self._ray.is_initialized():
            self._ray.shutdown()


def _last_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__
