"""`bench`: run a load test against an OpenAI-compatible server and record every request.

One asyncio loop: a dispatcher sends requests at their precomputed arrival times (optionally
capped at `max_concurrency` in flight), each request streams and timestamps its chunks, and a
sampler reads `/metrics` before, during (once a second) and after the run. With `workers` > 1
the requests are shared out to worker processes (`measure/workers.py`) on the same schedule.
What is decided before the first request (prompts, schedule, the server's prefix cache emptied
or a fresh prompt seed) is in `measure/prepare.py`. Nothing here prints; `progress` receives
snapshots.
"""

from __future__ import annotations

import asyncio
import functools
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from servetune.errors import UsageError
from servetune.measure import prepare, schedule, server_metrics
from servetune.measure.client import ClientLimits, Endpoint, HttpClient, RequestFailed, json_body
from servetune.measure.stream import MalformedStream, StreamFailed, StreamTally
from servetune.measure.workload import Prompt, WorkloadSpec
from servetune.texts import ErrorText

if TYPE_CHECKING:  # workers builds on this module
    from servetune.measure.workers import WorkerPool

EndpointPath = Literal["/v1/completions", "/v1/chat/completions"]
Clock = Callable[[], float]


@dataclass(frozen=True)
class BenchConfig:
    """One load test, as the CLI (or a library user) describes it."""

    base_url: str
    model: str
    endpoint: EndpointPath = "/v1/completions"
    api_key: str | None = field(default=None, repr=False)
    workload: WorkloadSpec = field(default_factory=WorkloadSpec)
    duration_s: float | None = None
    request_rate: float = math.inf
    burstiness: float = 1.0
    max_concurrency: int | None = None
    warmup: int = 0
    ignore_eos: bool = False
    seed: int = 0
    request_timeout_s: float = 600.0
    goodput_slo_ms: dict[str, float] = field(default_factory=dict)
    label: str | None = None
    server_command: str | None = None
    gpus: str | None = None  # the server's GPUs (`--gpus` spec), recorded for compare
    metrics_interval_s: float = 1.0
    # Seed of the random prompts' text. None: the run's --seed when the server's prefix cache
    # was reset before the run, else a fresh one (recorded) so repeats cannot hit each other.
    prompt_seed: int | None = None
    workers: int = 1  # client processes sharing the requests

    def redacted(self) -> dict[str, object]:
        """The config for the result file: every field, the API key never."""
        spec = self.workload
        return {
            "base_url": self.base_url,
            "model": self.model,
            "endpoint": self.endpoint,
            "api_key": "<redacted>" if self.api_key else None,
            "dataset_name": spec.dataset_name,
            "dataset_path": str(spec.dataset_path) if spec.dataset_path else None,
            "num_prompts": spec.num_prompts,
            "random_input_len": spec.random_input_len,
            "random_output_len": spec.random_output_len,
            "random_range_ratio": spec.random_range_ratio,
            "random_prefix_len": spec.random_prefix_len,
            "sharegpt_output_len": spec.sharegpt_output_len,
            "duration_s": self.duration_s,
            "request_rate": "inf" if math.isinf(self.request_rate) else self.request_rate,
            "burstiness": "inf" if math.isinf(self.burstiness) else self.burstiness,
            "max_concurrency": self.max_concurrency,
            "warmup": self.warmup,
            "ignore_eos": self.ignore_eos,
            "seed": self.seed,
            "request_timeout_s": self.request_timeout_s,
            "goodput_slo_ms": dict(self.goodput_slo_ms),
            "label": self.label,
            "gpus": self.gpus,
            "metrics_interval_s": self.metrics_interval_s,
            "prompt_seed": self.prompt_seed,
            "workers": self.workers,
        }


@dataclass(slots=True)
class RequestRecord:
    """Everything measured about one request. Times are seconds from the run's start."""

    index: int
    warmup: bool
    scheduled_s: float
    input_len: int | None  # tokens requested (random dataset) or None
    max_tokens: int
    slot_s: float | None = None  # when the request held a concurrency slot (>= scheduled_s)
    queue_s: float | None = None  # time spent blocked waiting for that slot
    sent_s: float | None = None
    content_times: list[float] = field(default_factory=list)
    chunk_tokens: list[int] = field(default_factory=list)  # running usage per chunk, if sent
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    output_tokens_source: Literal["usage", "chunks"] | None = None
    error: str | None = None  # error kind; None for a success
    error_detail: str | None = None
    http_status: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.content_times) and self.sent_s is not None

    @property
    def ttft_s(self) -> float | None:
        if not self.ok or self.sent_s is None:
            return None
        return self.content_times[0] - self.sent_s

    @property
    def e2el_s(self) -> float | None:
        if not self.ok or self.sent_s is None:
            return None
        return self.content_times[-1] - self.sent_s

    @property
    def lag_s(self) -> float | None:
        """How late the client sent, not counting waits for a concurrency slot:
        sent - scheduled - queue. An overloaded client (a busy event loop) shows up here."""
        if self.sent_s is None:
            return None
        return self.sent_s - self.scheduled_s - (self.queue_s or 0.0)


@dataclass(frozen=True)
class Progress:
    """A snapshot for live displays."""

    elapsed_s: float
    done: int
    failed: int
    in_flight: int
    output_tokens: int
    total: int | None


@dataclass
class BenchRun:
    """The raw outcome of a run, before statistics."""

    config: BenchConfig
    date: str
    records: list[RequestRecord]
    duration_s: float
    samples: list[server_metrics.MetricsSample]
    metrics_available: bool
    tokenizer_mode: str
    server_version: str | None
    limits: ClientLimits
    partial: bool = False
    prompt_seed: int | None = None  # the random prompts' text seed this run used
    prefix_cache_reset: bool = False  # the server emptied its prefix cache before the run
    workers: int = 1


def _body(config: BenchConfig, prompt: Prompt, continuous_usage: bool) -> bytes:
    payload: dict[str, object] = {
        "model": config.model,
        "max_tokens": prompt.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.0,
    }
    if continuous_usage:
        payload["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    if config.ignore_eos:
        payload["ignore_eos"] = True
    if config.endpoint == "/v1/chat/completions":
        messages = prompt.messages or ({"role": "user", "content": prompt.text or ""},)
        payload["messages"] = list(messages)
    else:
        text = prompt.text
        if text is None and prompt.messages:
            text = "\n".join(str(m.get("content", "")) for m in prompt.messages)
        payload["prompt"] = text or ""
    return json_body(payload)


@dataclass
class _Runner:
    config: BenchConfig
    client: HttpClient
    clock: Clock
    continuous_usage: bool = False
    start: float = 0.0
    records: list[RequestRecord] = field(default_factory=list)
    in_flight: int = 0
    output_tokens: int = 0
    semaphore: asyncio.Semaphore | None = None

    async def _consume(self, rec: RequestRecord, body: bytes) -> bool:
        """Stream one response into `rec`; True when `[DONE]` came. Events are counted as they
        arrive, inside the event loop's read callback (no task switch per event)."""
        tally = StreamTally(self.start, rec.content_times, rec.chunk_tokens, counter=self)
        try:
            await self.client.stream_to(self.config.endpoint, body, tally.feed, self.clock)
        except StreamFailed as exc:
            raise RequestFailed("server_error", str(exc)) from exc
        if tally.completion_tokens is not None:
            rec.output_tokens, rec.output_tokens_source = tally.completion_tokens, "usage"
        if tally.prompt_tokens is not None:
            rec.prompt_tokens = tally.prompt_tokens
        if not rec.content_times:  # no text: the token events time it, if usage counts any
            rec.content_times.extend(tally.token_times())
            self.output_tokens += len(rec.content_times)
        return tally.done

    async def one(self, rec: RequestRecord, prompt: Prompt, *, has_slot: bool = False) -> None:
        """Run one request; with `has_slot` the caller already holds its concurrency slot."""
        if self.semaphore is not None and not has_slot:
            if self.semaphore.locked():
                before = self.clock()
                await self.semaphore.acquire()
                rec.queue_s = self.clock() - before
            else:
                await self.semaphore.acquire()
        self.in_flight += 1
        try:
            rec.slot_s = self.clock() - self.start
            body = _body(self.config, prompt, self.continuous_usage)
            rec.sent_s = self.clock() - self.start
            async with asyncio.timeout(self.config.request_timeout_s):
                await self._consume(rec, body)
            if rec.output_tokens is None:
                rec.output_tokens, rec.output_tokens_source = len(rec.content_times), "chunks"
            if not rec.content_times:
                rec.error, rec.error_detail = "empty", "the stream carried no generated text"
        except RequestFailed as exc:
            rec.error, rec.error_detail, rec.http_status = exc.kind, exc.detail, exc.status
        except MalformedStream as exc:
            rec.error, rec.error_detail = "malformed", str(exc)
        except TimeoutError:
            rec.error = "timeout"
            rec.error_detail = f"no complete answer within {self.config.request_timeout_s:g} s"
        except asyncio.CancelledError:
            rec.error, rec.error_detail = "cancelled", "the run was stopped"
        finally:
            self.in_flight -= 1
            if self.semaphore is not None:
                self.semaphore.release()


def _snapshot(runner: _Runner, total: int | None) -> Progress:
    measured = [r for r in runner.records if not r.warmup]
    finished = [r for r in measured if r.error is not None or r.output_tokens is not None]
    return Progress(
        elapsed_s=runner.clock() - runner.start,
        done=sum(1 for r in finished if r.ok),
        failed=sum(1 for r in finished if not r.ok),
        in_flight=runner.in_flight,
        output_tokens=runner.output_tokens,
        total=total,
    )


async def _report_progress(
    snapshot: Callable[[], Progress], progress: Callable[[Progress], None]
) -> None:
    while True:
        progress(snapshot())
        await asyncio.sleep(0.5)


async def _dispatch(
    runner: _Runner,
    prompts: list[Prompt],
    arrivals: list[float] | None,
    stop: asyncio.Event,
    deadline_s: float | None,
    *,
    first: int,
    step: int,
) -> list[asyncio.Task[None]]:
    """Send each request at its arrival time; returns the request tasks. The k-th request sent
    here is request `first + k x step` of the run (a worker's share), with prompt k."""
    config = runner.config
    rng = random.Random(config.seed + 1)
    times = (
        iter(arrivals)
        if arrivals is not None
        else schedule.arrivals_until(deadline_s or 0.0, config.request_rate, config.burstiness, rng)
    )
    tasks: list[asyncio.Task[None]] = []
    for k, offset in enumerate(times):
        if stop.is_set() or (
            deadline_s is not None and runner.clock() - runner.start >= deadline_s
        ):
            break
        delay = runner.start + offset - runner.clock()
        if 0 < delay < 0.5:
            await asyncio.sleep(delay)  # cheap; a stop is noticed right after
        elif delay >= 0.5:
            try:
                await asyncio.wait_for(stop.wait(), delay)
                break  # stopped while waiting
            except TimeoutError:
                pass
        # Closed loop (no rate, a concurrency cap): take the slot here, so that no backlog of
        # waiting tasks builds up; the request releases it.
        closed_loop = runner.semaphore is not None and math.isinf(config.request_rate)
        if (
            closed_loop
            and runner.semaphore is not None
            and not await _acquire_or_stop(runner.semaphore, stop)
        ):
            break
        prompt = prompts[k % len(prompts)]
        rec = RequestRecord(first + k * step, False, offset, prompt.input_len, prompt.max_tokens)
        if closed_loop:
            rec.scheduled_s = runner.clock() - runner.start  # sent as soon as a slot frees
        runner.records.append(rec)
        tasks.append(asyncio.create_task(runner.one(rec, prompt, has_slot=closed_loop)))
    return tasks


async def _acquire_or_stop(semaphore: asyncio.Semaphore, stop: asyncio.Event) -> bool:
    """Take a slot, unless the run is stopped first (then False, holding nothing)."""
    acquire = asyncio.ensure_future(semaphore.acquire())
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({acquire, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if acquire.done() and not acquire.cancelled():
        if stop.is_set():
            semaphore.release()
            return False
        return True
    acquire.cancel()
    return False


async def _warm_up(runner: _Runner, prompts: list[Prompt]) -> None:
    warm = [
        RequestRecord(-1 - i, True, 0.0, p.input_len, p.max_tokens) for i, p in enumerate(prompts)
    ]
    runner.records.extend(warm)
    runner.start = runner.clock()
    await asyncio.gather(*(runner.one(r, p) for r, p in zip(warm, prompts, strict=True)))


async def drive(
    runner: _Runner,
    prompts: list[Prompt],
    arrivals: list[float] | None,
    stop: asyncio.Event,
    *,
    first: int = 0,
    step: int = 1,
) -> None:
    """Send the requests on schedule and wait for them all, or for `stop` (then the requests
    in flight are cancelled and recorded as such). Arrivals None: a timed closed loop."""
    deadline = runner.config.duration_s
    tasks = await _dispatch(runner, prompts, arrivals, stop, deadline, first=first, step=step)
    waiter: asyncio.Future[list[None]] = asyncio.gather(*tasks)
    stopper = asyncio.create_task(stop.wait())
    either: list[asyncio.Future[Any]] = [waiter, stopper]
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    if not waiter.done():
        waiter.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def make_client(config: BenchConfig) -> tuple[HttpClient, ClientLimits]:
    """The HTTP client of a run, with its limits stated (one per process)."""
    limits = ClientLimits(request_timeout_s=config.request_timeout_s)
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    return HttpClient(Endpoint.parse(config.base_url), limits, headers), limits


def make_runner(
    config: BenchConfig,
    client: HttpClient,
    clock: Clock,
    *,
    continuous_usage: bool,
    concurrency: int | None,
) -> _Runner:
    runner = _Runner(config, client, clock, continuous_usage=continuous_usage)
    if concurrency:
        runner.semaphore = asyncio.Semaphore(concurrency)
    return runner


async def run_bench(
    config: BenchConfig,
    *,
    progress: Callable[[Progress], None] | None = None,
    stop: asyncio.Event | None = None,
    clock: Clock = time.perf_counter,
) -> BenchRun:
    """Run the load test. `stop` ends it early (in-flight requests are cancelled, the result
    is marked partial); `clock` is injectable for tests (with `workers` > 1 the processes share
    `time.perf_counter`)."""
    if config.workers < 1:
        raise UsageError(ErrorText("bench.workers-min"))
    if config.max_concurrency is not None and config.max_concurrency < config.workers:
        cap, count = config.max_concurrency, config.workers
        raise UsageError(ErrorText("bench.workers-over-slots", cap=cap, count=count))
    stop = stop or asyncio.Event()
    client, limits = make_client(config)
    try:
        plan = await prepare.plan(config, client)
        return await _measure(plan, client, limits, progress=progress, stop=stop, clock=clock)
    finally:
        await client.aclose()


_SCRAPE_TIMEOUT_S = 10.0  # a loaded server answers /metrics late; a lost sample is a gap


def _pool(plan: prepare.Plan) -> WorkerPool | None:
    """The worker processes for `workers` > 1, started now: they get ready during warm-up."""
    if plan.config.workers < 2:
        return None
    from servetune.measure.workers import WorkerPool, jobs  # it builds on this module

    usage = plan.version is not None
    return WorkerPool(jobs(plan.config, plan.measured, plan.arrivals, continuous_usage=usage))


def _reporter(
    runner: _Runner,
    pool: WorkerPool | None,
    total: int | None,
    progress: Callable[[Progress], None],
) -> asyncio.Task[None]:
    snapshot = (
        functools.partial(pool.snapshot, runner.start, total)
        if pool is not None
        else functools.partial(_snapshot, runner, total)
    )
    return asyncio.create_task(_report_progress(snapshot, progress))


async def _measure(
    plan: prepare.Plan,
    client: HttpClient,
    limits: ClientLimits,
    *,
    progress: Callable[[Progress], None] | None,
    stop: asyncio.Event,
    clock: Clock,
) -> BenchRun:
    config = plan.config
    runner = make_runner(
        config,
        client,
        clock,
        continuous_usage=plan.version is not None,
        concurrency=config.max_concurrency,
    )
    pool = _pool(plan)
    sampler = server_metrics.Sampler(client, clock, config.metrics_interval_s, _SCRAPE_TIMEOUT_S)
    background: list[asyncio.Task[None]] = []
    try:
        if plan.warmup:
            await _warm_up(runner, plan.warmup)
        await sampler.scrape()  # the counters before the run
        runner.start = await pool.begin() if pool is not None else clock()
        background.append(asyncio.create_task(sampler.every()))
        if progress is not None:
            total = None if config.duration_s is not None else len(plan.measured)
            background.append(_reporter(runner, pool, total, progress))
        if pool is None:
            await drive(runner, plan.measured, plan.arrivals, stop)
        else:
            runner.records.extend(await pool.results(stop))
    finally:
        duration = _duration(runner, clock)
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        if pool is not None:
            pool.close()
    await sampler.scrape()  # the counters after the run
    lost = pool is not None and pool.lost
    return _outcome(plan, runner, sampler, limits, duration, partial=stop.is_set() or lost)


def _outcome(
    plan: prepare.Plan,
    runner: _Runner,
    sampler: server_metrics.Sampler,
    limits: ClientLimits,
    duration: float,
    *,
    partial: bool,
) -> BenchRun:
    samples = sampler.samples(runner.start)
    return BenchRun(
        config=plan.config,
        date=plan.date,
        records=runner.records,
        duration_s=duration,
        samples=samples,
        metrics_available=bool(sampler.available and samples),
        tokenizer_mode=plan.tokenizer_mode,
        server_version=plan.version,
        limits=limits,
        partial=partial,
        prompt_seed=plan.prompt_seed,
        prefix_cache_reset=plan.prefix_cache_reset,
        workers=plan.config.workers,
    )


def _duration(runner: _Runner, clock: Clock) -> float:
    """First dispatch to last completion (to now when nothing completed)."""
    measured = [r for r in runner.records if not r.warmup]
    sends = [r.sent_s for r in measured if r.sent_s is not None]
    ends = [r.content_times[-1] for r in measured if r.content_times]
    first = min(sends, default=0.0)
    return max(ends, default=clock() - runner.start) - first
