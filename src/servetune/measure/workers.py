"""`--workers N`: one load test sent from several processes, when one core cannot keep up.

The parent process plans the run (prompts, the seeded arrival schedule) exactly as a single
process would. Request i then belongs to worker i mod N, with its own index, prompt and
scheduled time; all workers start at one shared instant (`time.perf_counter` reads the
system-wide monotonic clock on Linux, macOS and Windows, so one value means the same moment in
every process), and each sends its requests when the schedule says. The records come back to
the parent and merge, in index order, into the same `BenchRun` a single process produces. A
`--max-concurrency` cap is shared out: each worker holds its part of the slots. The parent
keeps the rest of the run: warm-up, `/metrics` sampling, progress, stopping.

Workers are started with the `spawn` method (a fresh interpreter: safe when the parent runs
threads, and the same on every platform); they ignore Ctrl-C and stop when the parent says.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.sharedctypes import SynchronizedArray
from multiprocessing.synchronize import Event as ProcessEvent
from typing import Any

from servetune.errors import UsageError
from servetune.measure import bench
from servetune.measure.bench import BenchConfig, Progress, RequestRecord
from servetune.measure.client import run_event_loop
from servetune.measure.workload import Prompt
from servetune.texts import ErrorText

START_LEAD_S = 0.1  # the shared start lies this far ahead when it is sent to the workers
READY_TIMEOUT_S = 120.0  # a worker process must be up by then (imports on a busy machine)
_COUNTERS = 4  # done, failed, in flight, output tokens: one row per worker, for progress
_PUBLISH_S = 0.25


def worker_count(text: str) -> int:
    """`--workers` as given: a positive number, or `auto` (one per core but one)."""
    if text == "auto":
        return max(1, _cores() - 1)
    if not text.isdigit() or int(text) < 1:
        raise UsageError(ErrorText("bench.workers-count", text=text))
    return int(text)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may run on
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def share(total: int, parts: int, part: int) -> int:
    """Part `part` of `total` shared out as evenly as whole numbers allow."""
    return total // parts + (1 if part < total % parts else 0)


@dataclass(frozen=True)
class Job:
    """One worker's share of a run: requests `slot`, `slot + step`, ... with their prompts."""

    config: BenchConfig
    slot: int
    step: int
    prompts: list[Prompt]
    arrivals: list[float] | None  # None: a timed closed loop
    concurrency: int | None
    continuous_usage: bool


def jobs(
    config: BenchConfig,
    measured: list[Prompt],
    arrivals: list[float] | None,
    *,
    continuous_usage: bool,
) -> list[Job]:
    """The run shared out round-robin: request i (prompt i, arrival i) to worker i mod N."""
    n = config.workers
    out = []
    for slot in range(n):
        if arrivals is not None:
            mine = arrivals[slot::n]
            prompts = [measured[i % len(measured)] for i in range(slot, len(arrivals), n)]
        else:
            mine, prompts = None, measured[slot::n] or measured
        cap = share(config.max_concurrency, n, slot) if config.max_concurrency else None
        out.append(Job(config, slot, n, prompts or measured, mine, cap, continuous_usage))
    return out


class WorkerPool:
    """The worker processes of one run; see the module docstring."""

    def __init__(self, shares: list[Job]) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._counters: SynchronizedArray[float] = context.Array("d", _COUNTERS * len(shares))
        self._jobs = shares
        self._pipes: list[Connection] = []
        self._processes: list[Any] = []
        self.lost = False  # a worker ended without handing back its records
        for job in shares:
            parent, child = context.Pipe()
            process = context.Process(
                target=_main,
                args=(job, child, self._stop, self._counters),
                name=f"servetune-worker-{job.slot}",
                daemon=True,
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)

    async def begin(self) -> float:
        """Wait until every worker is ready, then give them one start time; returns it."""
        for pipe in self._pipes:
            if not await asyncio.to_thread(pipe.poll, READY_TIMEOUT_S):
                raise UsageError(ErrorText("bench.worker-start"))
            pipe.recv()
        start = time.perf_counter() + START_LEAD_S
        for pipe in self._pipes:
            pipe.send(start)
        return start

    async def results(self, stop: asyncio.Event) -> list[RequestRecord]:
        """Every worker's records, merged in request order (stopping them all on `stop`)."""
        relay = asyncio.create_task(self._relay(stop))
        try:
            parts = await asyncio.gather(
                *(asyncio.to_thread(self._collect, i) for i in range(len(self._jobs)))
            )
        finally:
            relay.cancel()
        return sorted((r for part in parts for r in part), key=lambda r: r.index)

    async def _relay(self, stop: asyncio.Event) -> None:
        await stop.wait()
        self._stop.set()

    def _collect(self, slot: int) -> list[RequestRecord]:
        try:
            kind, payload = self._pipes[slot].recv()
        except (EOFError, OSError):
            kind, payload = "failed", "the process ended without its records"
        if kind == "records":
            records: list[RequestRecord] = payload
            return records
        self.lost = True
        return _lost(self._jobs[slot], str(payload))

    def snapshot(self, start: float, total: int | None) -> Progress:
        rows = [self._counters[i : i + _COUNTERS] for i in range(0, len(self._counters), 4)]
        done, failed, in_flight, tokens = (int(sum(col)) for col in zip(*rows, strict=True))
        return Progress(time.perf_counter() - start, done, failed, in_flight, tokens, total)

    def close(self) -> None:
        self._stop.set()
        for process in self._processes:
            process.join(timeout=5.0)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5.0)
        for pipe in self._pipes:
            pipe.close()


def _lost(job: Job, why: str) -> list[RequestRecord]:
    """A failed worker's requests, recorded as cancelled (their results are gone)."""
    count = len(job.arrivals) if job.arrivals is not None else 0
    out = []
    for k in range(count):
        prompt = job.prompts[k % len(job.prompts)]
        assert job.arrivals is not None  # noqa: S101 - count is 0 otherwise
        rec = RequestRecord(
            job.slot + k * job.step, False, job.arrivals[k], prompt.input_len, prompt.max_tokens
        )
        rec.error, rec.error_detail = "cancelled", f"worker {job.slot} failed: {why}"
        out.append(rec)
    return out


def _main(
    job: Job, conn: Connection, stop: ProcessEvent, counters: SynchronizedArray[float]
) -> None:
    """A worker process: its share of the run, then its records back through `conn`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which decides
    try:
        records = run_event_loop(_work(job, conn, stop, counters))  # uvloop where installed
        conn.send(("records", records))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which keeps the run
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


async def _work(
    job: Job, conn: Connection, stop: ProcessEvent, counters: SynchronizedArray[float]
) -> list[RequestRecord]:
    client, _ = bench.make_client(job.config)
    runner = bench.make_runner(
        job.config,
        client,
        time.perf_counter,
        continuous_usage=job.continuous_usage,
        concurrency=job.concurrency,
    )
    conn.send("ready")
    runner.start = await asyncio.to_thread(conn.recv)
    stopped = asyncio.Event()
    helpers = [
        asyncio.create_task(_watch(stop, stopped)),
        asyncio.create_task(_publish(runner, counters, job.slot)),
    ]
    try:
        await bench.drive(runner, job.prompts, job.arrivals, stopped, first=job.slot, step=job.step)
    finally:
        for task in helpers:
            task.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        _write(runner, counters, job.slot)
        await client.aclose()
    return runner.records


async def _watch(stop: ProcessEvent, stopped: asyncio.Event) -> None:
    while not stop.is_set():
        await asyncio.sleep(0.05)
    stopped.set()


async def _publish(runner: Any, counters: SynchronizedArray[float], slot: int) -> None:
    while True:
        _write(runner, counters, slot)
        await asyncio.sleep(_PUBLISH_S)


def _write(runner: Any, counters: SynchronizedArray[float], slot: int) -> None:
    finished = [r for r in runner.records if r.error is not None or r.output_tokens is not None]
    ok = sum(1 for r in finished if r.ok)
    row = (ok, len(finished) - ok, runner.in_flight, runner.output_tokens)
    with contextlib.suppress(ValueError):
        counters[slot * _COUNTERS : (slot + 1) * _COUNTERS] = row
