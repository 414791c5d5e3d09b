"""A trial: one configuration, one workload, one result folder, measured on one server start.

A trial is an independent unit: `TrialSpec` holds everything it needs (plain values a cluster
engine can ship to another machine), `run_trial` reviews the command, starts vLLM on a free port,
searches its capacity, stops vLLM, and writes `trial.json` beside the probes' result files. It
never prints; `on_event` receives short progress lines.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from servetune.launch import doctor, launcher
from servetune.measure import metrics, results
from servetune.measure.bench import BenchConfig, EndpointPath, RequestRecord, run_bench
from servetune.measure.client import run_event_loop
from servetune.measure.workload import WorkloadSpec
from servetune.tune import capacity as cap
from servetune.tune.limit import Limit, LoadSignals, diagnose, signals

Status = Literal["ok", "failed-start", "slo-unreachable", "lost"]  # lost: its worker died
TRIAL_FILE = "trial.json"
EventSink = Callable[[str], None]


@dataclass(frozen=True)
class Targets:
    """Latency targets: SLO key (ttft, tpot, itl, e2el) -> milliseconds, at one percentile."""

    slo_ms: Mapping[str, float]
    percentile: float = 99.0

    def to_json(self) -> dict[str, float]:
        """`{"p99_ttft_ms": 2000, ...}` as tune.json spells them."""
        return {f"p{self.percentile:g}_{k}_ms": v for k, v in self.slo_ms.items()}


@dataclass(frozen=True)
class TrialSpec:
    """Everything one trial needs, as plain values."""

    index: int
    argv: tuple[str, ...]  # the `vllm serve ...` words with this trial's flags, no --port
    flags: Mapping[str, str]  # effective knob values (tune.json's "flags")
    served_model: str
    workload: WorkloadSpec
    endpoint: EndpointPath
    seed: int
    targets: Targets
    folder: Path
    vllm: str
    gpus: str | None = None
    ready_timeout_s: float = 1800.0
    repeats: int = 2
    start_users: int = 8
    max_num_seqs: int = 256
    env: Mapping[str, str] | None = None  # the server's environment (None: ours)


@dataclass(frozen=True)
class Placement:
    """Where a trial ran: the node's name and the GPUs it was given ("" when none was set)."""

    node: str
    cuda_visible_devices: str


@dataclass(frozen=True)
class TrialResult:
    index: int
    flags: Mapping[str, str]
    status: Status
    capacity: cap.Capacity | None
    limit: Limit | None
    root_cause: str | None
    probes: tuple[cap.Probe, ...] = ()
    started: bool = False  # a server start was spent
    start_s: float = 0.0
    measure_s: float = 0.0
    log: str | None = None
    placement: Placement | None = None  # set by the executor (tune/executor.py)
    started_at: float | None = None  # Unix seconds
    ended_at: float | None = None

    @property
    def runs(self) -> int:
        return len(self.probes)

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["flags"] = dict(self.flags)
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TrialResult:
        probes = tuple(_probe_from_json(p) for p in doc.get("probes", []))
        capacity = doc.get("capacity")
        return cls(
            index=int(doc["index"]),
            flags=dict(doc["flags"]),
            status=doc["status"],
            capacity=cap.Capacity(**capacity) if capacity else None,
            limit=doc.get("limit"),
            root_cause=doc.get("root_cause"),
            probes=probes,
            started=bool(doc.get("started")),
            start_s=float(doc.get("start_s", 0.0)),
            measure_s=float(doc.get("measure_s", 0.0)),
            log=doc.get("log"),
            placement=Placement(**doc["placement"]) if doc.get("placement") else None,
            started_at=doc.get("started_at"),
            ended_at=doc.get("ended_at"),
        )


def _probe_from_json(doc: Mapping[str, Any]) -> cap.Probe:
    fields = dict(doc)
    fields["misses"] = {k: (int(v[0]), int(v[1])) for k, v in doc["misses"].items()}
    fields["load"] = LoadSignals(**doc["load"]) if doc.get("load") else None
    return cap.Probe(**fields)


def load_result(folder: Path, flags: Mapping[str, str]) -> TrialResult | None:
    """A finished trial of these flags in `folder`, or None (absent, unreadable, other flags)."""
    try:
        doc = json.loads((folder / TRIAL_FILE).read_text(encoding="utf-8"))
        result = TrialResult.from_json(doc)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return result if dict(result.flags) == dict(flags) else None


def save_result(folder: Path, result: TrialResult) -> None:
    results.write_atomic(folder / TRIAL_FILE, result.to_json())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# --- one probe ----------------------------------------------------------------------------------


def _values(records: list[RequestRecord], key: str) -> list[float]:
    """Seconds per request (per gap for ITL) of one SLO key, over successful requests."""
    ok = [r for r in records if r.ok]
    if key == "itl":
        return [g for r in ok for g in metrics.itl_gaps(r.content_times)]
    if key == "ttft":
        return [v for r in ok if (v := r.ttft_s) is not None]
    if key == "e2el":
        return [v for r in ok if (v := r.e2el_s) is not None]
    found = []
    for r in ok:
        if r.e2el_s is not None and r.ttft_s is not None and r.output_tokens is not None:
            tpot = metrics.tpot(r.e2el_s, r.ttft_s, r.output_tokens)
            found.append(tpot if tpot is not None else 0.0)  # vLLM's goodput rule
    return found


@dataclass
class Prober:
    """Measures load levels of one running server."""

    spec: TrialSpec
    base_url: str
    server_command: str
    on_event: EventSink = field(default=lambda _: None)

    def __call__(self, users: int, repeat: int = 0) -> cap.Probe:
        spec = self.spec
        needed = cap.requests_needed(spec.targets.percentile)
        config = BenchConfig(
            base_url=self.base_url,
            model=spec.served_model,
            endpoint=spec.endpoint,
            workload=replace(spec.workload, num_prompts=needed + users),
            max_concurrency=users,
            seed=spec.seed + repeat,
            label=f"trial{spec.index}-c{users}-r{repeat}",
            server_command=self.server_command,
            gpus=spec.gpus,
            metrics_interval_s=0.25,
            request_timeout_s=max(60.0, 30 * max(spec.targets.slo_ms.values()) / 1000),
        )
        self.on_event(f"probe: {users} users" + (f" (repeat {repeat})" if repeat else ""))
        run = run_event_loop(run_bench(config))
        summary = results.summarize(run)
        path = spec.folder / "probes" / f"c{users:04d}-r{repeat}.json"
        results.write_atomic(path, results.document(run, summary))
        return _probe(
            spec,
            records=run.records,
            users=users,
            repeat=repeat,
            summary=summary,
            path=str(path),
            samples=run.samples,
        )


def _probe(
    spec: TrialSpec,
    *,
    records: list[RequestRecord],
    users: int,
    repeat: int,
    summary: results.Summary,
    path: str,
    samples: list[Any],
) -> cap.Probe:
    measured = [r for r in records if not r.warmup and r.index >= users]  # after the first wave
    failed = sum(1 for r in measured if not r.ok)
    targets = spec.targets
    latency: dict[str, float | None] = {}
    misses: dict[str, tuple[int, int]] = {}
    for key, limit_ms in targets.slo_ms.items():
        values = _values(measured, key)
        latency[key] = (
            metrics.percentile(sorted(values), targets.percentile) * 1000 if values else None
        )
        misses[key] = (sum(1 for v in values if v * 1000 > limit_ms), len(values))
    passed, sure = cap.verdict(misses, failed, targets.percentile)
    lag = summary.send_lag.percentiles.get(99)
    return cap.Probe(
        concurrency=users,
        repeat=repeat,
        measured=len(measured),
        failed=failed,
        latency_ms=latency,
        misses=misses,
        output_throughput=summary.output_throughput,
        request_throughput=summary.request_throughput,
        duration_s=summary.duration_s,
        result_file=path,
        passed=passed,
        sure=sure,
        load=signals(samples) if samples else None,
        client_lag_p99_s=lag,
    )


# --- the trial ----------------------------------------------------------------------------------


def measure(spec: TrialSpec, prober: Callable[[int, int], cap.Probe]) -> TrialResult:
    """Search the capacity with `prober` (a running server), repeat at it, name the limit."""
    search = cap.Search(probe=lambda users: prober(users, 0), start=spec.start_users)
    capacity, probes = search.run()
    if capacity.max_concurrency == 0:
        return TrialResult(
            spec.index,
            spec.flags,
            "slo-unreachable",
            capacity,
            "slo-unreachable",
            None,
            tuple(probes),
            started=True,
        )
    for repeat in range(1, spec.repeats):
        probes.append(prober(capacity.max_concurrency, repeat))
    limit = (
        _limit(spec, [p for p in probes if not p.passed]) if capacity.first_failing else "client"
    )
    return TrialResult(
        spec.index, spec.flags, "ok", capacity, limit, None, tuple(probes), started=True
    )


def _limit(spec: TrialSpec, failing: list[cap.Probe]) -> Limit:
    """The limit most failing probes point to (one probe's once-a-second /metrics can be
    thin on a busy machine); a tie goes to the lowest load."""
    tightest = min(spec.targets.slo_ms.values()) / 1000
    votes = [
        diagnose(
            p.load,
            users=p.concurrency,
            max_num_seqs=spec.max_num_seqs,
            client_lag_p99_s=p.client_lag_p99_s,
            tightest_slo_s=tightest,
        )
        for p in sorted(failing, key=lambda p: p.concurrency)
    ]
    counts = Counter(votes)
    return max(votes, key=lambda v: (counts[v], -votes.index(v)))


def elapsed(start: float) -> float:
    return time.monotonic() - start


def _command_text(argv: tuple[str, ...]) -> str:
    """The server command as `compare` reads it: `vllm serve ...` whatever the program's path."""
    words = ["vllm", *argv[1:]] if len(argv) > 1 and argv[1] == "serve" else list(argv)
    return shlex.join(words)


def _root_cause(log: str, outcome: str) -> str:
    report = doctor.diagnose(log, vllm_output=True)
    if report.root_cause:
        return report.root_cause
    if report.diagnoses:
        return report.diagnoses[0].title.text()
    return {
        "exited": "vLLM exited before it was ready",
        "fatal": "a fatal error in the log",
        "timeout": "vLLM was not ready in time",
    }.get(outcome, outcome)


def run_trial(spec: TrialSpec, on_event: EventSink = lambda _: None) -> TrialResult:
    """Run the trial, or return its result from an earlier run of the same flags in its folder.
    The server is always stopped, also on Ctrl-C (KeyboardInterrupt passes through)."""
    done = load_result(spec.folder, spec.flags)
    if done is not None:
        on_event("finished in an earlier run: reused")
        return done
    port = free_port()
    argv = [*spec.argv, "--host", "127.0.0.1", "--port", str(port)]
    log_path = spec.folder / "vllm.log"
    log_path.unlink(missing_ok=True)
    began = time.monotonic()
    with launcher.ManagedServer(argv, log_path, "127.0.0.1", port, env=_env(spec.env)) as server:
        on_event(f"starting vLLM (pid {server.pid}; log: {log_path})")
        outcome = server.wait_ready(spec.ready_timeout_s, _phase_events(on_event))
        start_s = elapsed(began)
        if outcome != "ready":
            root = _root_cause(server.log_text(), outcome)
            result = TrialResult(
                spec.index,
                spec.flags,
                "failed-start",
                None,
                "failed-start",
                root,
                started=True,
                start_s=start_s,
                log=str(log_path),
            )
        else:
            on_event(f"ready after {start_s:.0f} s")
            began = time.monotonic()
            prober = Prober(spec, f"http://127.0.0.1:{port}", _command_text(spec.argv), on_event)
            result = replace(measure(spec, prober), start_s=start_s, log=str(log_path))
            result = replace(result, measure_s=elapsed(began))
    save_result(spec.folder, result)
    return result


def _env(extra: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if extra is None else {**os.environ, **extra}


def _phase_events(on_event: EventSink) -> Callable[[str], None]:
    shown: set[str] = set()

    def on_line(line: str) -> None:
        label = launcher.phase(line)
        if label and label not in shown:
            shown.add(label)
            on_event(label)

    return on_line
