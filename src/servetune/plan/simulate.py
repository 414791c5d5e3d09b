"""vLLM V1's scheduler, iteration by iteration, in virtual time.

Continuous batching (`simulate_continuous`), as vLLM schedules it:
- every step has a token budget (`max_num_batched_tokens`); running requests are served first,
  in the order they were admitted (one token each when decoding, a chunk of their prompt when
  still prefilling), then waiting requests are admitted in arrival order while fewer than
  `max_num_seqs` run and budget is left (chunked prefill: a prompt larger than the budget is
  split over steps; without it, a prompt must fit the budget whole);
- the KV cache is a pool of `block_size`-token blocks; a request holds blocks for every token
  it has computed; when a running request needs a block and none is free, the most recently
  admitted running request is preempted (its blocks freed; it goes back to the head of the queue
  and recomputes its prompt and the tokens it already produced), and no new request is admitted
  in that step;
- with prefix caching (`Limits.prefix_caching`: V1's default, vllm/v1/core/kv_cache_manager.py)
  a preempted request's freed blocks keep their hashes: they go to the tail of the free queue
  (its last blocks first, vllm/v1/core/block_pool.py `free_blocks(reversed(...))`), new
  allocations take blocks from the head, so its prefix survives until the blocks free before it
  and its own tail are taken; when it is scheduled again it recomputes only what was evicted
  (without it, a KV cache that holds ~7 long prompts turns 100 32k-token requests into hundreds
  of full recomputations: 2.7x the measured time on the fit record of Qwen3-14B on an H100);
- the step that completes a prompt also samples the first output token; each later step adds one
  token to each decoding request; a request leaves (and frees its blocks) with its last token;
- V0's default scheduler (`Limits.prefill_first`: releases before 0.8, or VLLM_USE_V1=0, with
  chunked prefill off; vllm/core/scheduler.py `_schedule_default`, 0.6.3: "Don't schedule
  decodes if prefills are scheduled") admits waiting prompts first, whole, and a step that
  prefills decodes nothing: a new request's first token comes fast, every running request's
  next one waits for the prefills;
- sparse attention (`Limits.attention_window`: DeepSeek-V3.2's top-k of the indexer) attends
  each query to at most that many earlier tokens: a step also counts its attention pairs
  capped at the window (`Step.prefill_window_pairs`, `Step.decode_window_context`).

Static batching (`simulate_static`) for the comparison: a batch leaves when it is full or its
first passenger has waited `batch_timeout_s`; it prefills every prompt, then decodes until its
longest member is done, and every reply is delivered at the end (the bus, not the shared taxi).

Both take an `admit_delay_s`: the time between a request's arrival and the moment the engine can
schedule it (the API server's HTTP handling and tokenization, which run beside the engine). It
counts in the request's TTFT but occupies no engine step.

The step time comes from a `StepCost` (plan.step_time), so this module is pure scheduling.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol


class StepCost(Protocol):
    """Seconds one engine step takes for the work scheduled in it."""

    def __call__(self, step: Step) -> float: ...


@dataclass(frozen=True)
class Step:
    """The work of one engine step, as the step-time model needs it."""

    prefill_tokens: int  # prompt tokens computed this step (all chunks)
    prefill_attention: float  # sum over chunks of chunk_tokens x (context before + chunk / 2)
    decode_seqs: int  # requests producing one token
    decode_context: int  # sum of the decoding requests' context lengths (KV read)
    running: int  # requests holding KV blocks
    # with `Limits.attention_window`: the prefill pairs and decode contexts capped at it
    prefill_window_pairs: float = 0.0
    decode_window_context: int = 0


@dataclass(frozen=True)
class Limits:
    """The serve flags the scheduler obeys, and the KV cache it has."""

    max_num_seqs: int
    max_num_batched_tokens: int
    kv_cache_tokens: int | None  # None: unlimited (unknown)
    block_size: int = 16
    chunked_prefill: bool = True
    prefix_caching: bool = False  # a preempted request's blocks stay cached until evicted
    prefill_first: bool = False  # V0 without chunked prefill: prefill steps decode nothing
    attention_window: int | None = None  # sparse attention: earlier tokens a query attends


@dataclass(frozen=True)
class Load:
    """What the users do: closed loop (`concurrency` users, each sending the next request when
    the last one ends) or open loop (Poisson arrivals at `request_rate`)."""

    input_len: int
    output_len: int
    num_prompts: int
    concurrency: int | None = None
    request_rate: float | None = None
    range_ratio: float = 0.0  # lengths uniform in [len x (1 - r), len x (1 + r)], as bench's
    seed: int = 0
    # replies that end at an end-of-sequence token vary more than prompts: their own ratio
    output_range_ratio: float | None = None  # None: range_ratio


@dataclass(frozen=True)
class Finished:
    """One request's life in virtual seconds."""

    arrival: float
    first_token: float
    finish: float
    input_len: int
    output_len: int


@dataclass(frozen=True)
class SimResult:
    """Every finished request, and what the engine went through."""

    requests: tuple[Finished, ...]
    steps: int
    preemptions: int
    mean_running: float
    peak_running: int
    peak_waiting: int
    duration_s: float
    mean_step: Step | None = None  # the average step's work (for the bound)
    kv_peak_fraction: float | None = None  # most KV blocks in use at once / all blocks
    budget_full_fraction: float = 0.0  # share of steps that used the whole token budget
    queued_with_free_seats: float = 0.0  # share of steps with requests waiting and seats free


@dataclass
class _Totals:
    """Running sums over steps, for the averages a `SimResult` reports."""

    steps: int = 0
    prefill_tokens: int = 0
    prefill_attention: float = 0.0
    decode_seqs: int = 0
    decode_context: int = 0
    running: int = 0
    prefill_window_pairs: float = 0.0
    decode_window_context: int = 0
    peak_running: int = 0
    peak_waiting: int = 0
    min_free_blocks: float = math.inf
    budget_full: int = 0
    queued_with_free_seats: int = 0

    def add(self, step: Step, engine: _Engine, used_budget: int) -> None:
        self.steps += 1
        self.prefill_tokens += step.prefill_tokens
        self.prefill_attention += step.prefill_attention
        self.decode_seqs += step.decode_seqs
        self.decode_context += step.decode_context
        self.running += step.running
        self.prefill_window_pairs += step.prefill_window_pairs
        self.decode_window_context += step.decode_window_context
        self.peak_running = max(self.peak_running, len(engine.running))
        self.peak_waiting = max(self.peak_waiting, len(engine.waiting))
        self.min_free_blocks = min(self.min_free_blocks, engine.free_blocks)
        self.budget_full += used_budget >= engine.limits.max_num_batched_tokens
        seats = len(engine.running) < engine.limits.max_num_seqs
        self.queued_with_free_seats += bool(engine.waiting) and seats

    def add_decodes(self, engine: _Engine, steps: int, context: int, windowed: int) -> None:
        """`steps` decode-only steps of every running request (`context`: their summed
        context over all those steps, `windowed` the same capped at the attention window),
        as `add` would count them one by one."""
        n = len(engine.running)
        self.steps += steps
        self.decode_seqs += n * steps
        self.decode_context += context
        self.decode_window_context += windowed
        self.running += n * steps
        self.peak_running = max(self.peak_running, n)
        self.peak_waiting = max(self.peak_waiting, len(engine.waiting))
        self.budget_full += steps * (n >= engine.limits.max_num_batched_tokens)
        seats = n < engine.limits.max_num_seqs
        self.queued_with_free_seats += steps * (bool(engine.waiting) and seats)

    def mean_step(self) -> Step | None:
        if not self.steps:
            return None
        n = self.steps
        return Step(
            self.prefill_tokens // n,
            self.prefill_attention / n,
            round(self.decode_seqs / n),
            self.decode_context // n,
            round(self.running / n),
            self.prefill_window_pairs / n,
            self.decode_window_context // n,
        )


@dataclass(eq=False)  # identity, not field equality: the scheduler looks requests up often
class _Req:
    arrival: float
    prompt: int
    output: int
    target: int = 0  # tokens to (re)compute before decoding: prompt (+ outputs after preemption)
    computed: int = 0
    generated: int = 0
    blocks: int = 0
    first_token: float | None = None
    active: bool = False  # in the running list
    # prefix caching: (allocations counter at which its first cached block is evicted, blocks)
    cached: tuple[float, int] | None = None

    def __post_init__(self) -> None:
        self.target = self.prompt


def _lengths(load: Load, rng: random.Random) -> tuple[int, int]:
    def draw(n: int, ratio: float) -> int:
        if ratio <= 0:
            return n
        low = max(1, math.floor(n * (1 - ratio)))
        return rng.randint(low, max(low, math.ceil(n * (1 + ratio))))

    out_ratio = load.range_ratio if load.output_range_ratio is None else load.output_range_ratio
    return draw(load.input_len, load.range_ratio), draw(load.output_len, out_ratio)


def _open_loop_arrivals(load: Load, rng: random.Random) -> list[float]:
    if load.request_rate is None or math.isinf(load.request_rate):
        return [0.0] * load.num_prompts
    times, t = [], 0.0
    for _ in range(load.num_prompts):
        t += rng.expovariate(load.request_rate)
        times.append(t)
    return times


@dataclass
class _Engine:
    limits: Limits
    free_blocks: float
    waiting: deque[_Req] = field(default_factory=deque)
    running: list[_Req] = field(default_factory=list)
    preemptions: int = 0
    allocated: float = 0.0  # blocks ever taken from the free queue's head (prefix caching)

    def _blocks_for(self, req: _Req, tokens: int) -> int:
        return max(0, math.ceil((req.computed + tokens) / self.limits.block_size) - req.blocks)

    def _take(self, req: _Req, tokens: int) -> bool:
        need = self._blocks_for(req, tokens)
        if need > self.free_blocks:
            return False
        self.free_blocks -= need
        self.allocated += need
        req.blocks += need
        return True

    def _cached_blocks(self, req: _Req) -> int:
        """Blocks of a preempted request's prefix still in the cache (not yet evicted)."""
        if req.cached is None:
            return 0
        evicted_from, blocks = req.cached
        kept = max(0.0, blocks - max(0.0, self.allocated - evicted_from))
        # at least one token to compute: the step that ends the prompt samples the next token
        return min(int(kept), (req.target - 1) // self.limits.block_size)

    def _preempt(self) -> _Req:
        victim = self.running.pop()
        victim.active = False
        if self.limits.prefix_caching and victim.blocks:
            victim.cached = (self.allocated + self.free_blocks, victim.blocks)
        self.free_blocks += victim.blocks
        victim.blocks, victim.computed = 0, 0
        victim.target = victim.prompt + victim.generated
        self.waiting.appendleft(victim)
        self.preemptions += 1
        return victim

    def _serve_running(self, budget: int, plan: list[tuple[_Req, int]]) -> tuple[int, bool]:
        """Running requests first, in admission order; preempt from the back when blocks run out.
        The block arithmetic is inlined: this loop is the simulation's hot path."""
        preempted, size = False, self.limits.block_size
        for req in list(self.running):
            if budget <= 0 or not req.active:
                break
            left = req.target - req.computed
            n = min(left, budget) if left > 0 else 1
            need = (req.computed + n + size - 1) // size - req.blocks
            victim = None
            while need > self.free_blocks and victim is not req:
                preempted = True
                victim = self._preempt()
            if victim is req:  # preempted itself: no room for it this step
                break
            if need > 0:
                self.free_blocks -= need
                self.allocated += need
                req.blocks += need
            plan.append((req, n))
            budget -= n
        return budget, preempted

    def _admit(self, budget: int, plan: list[tuple[_Req, int]]) -> None:
        while self.waiting and len(self.running) < self.limits.max_num_seqs and budget > 0:
            req = self.waiting[0]
            kept = self._cached_blocks(req)
            left = req.target - kept * self.limits.block_size
            if not self.limits.chunked_prefill and left > budget:
                break
            n = min(left, budget)
            if self._blocks_for(req, kept * self.limits.block_size + n) > self.free_blocks:
                break
            if kept:  # its cached prefix leaves the free queue without evicting anything
                self.free_blocks -= kept
                req.blocks, req.computed = kept, kept * self.limits.block_size
            req.cached = None
            self._take(req, n)
            self.waiting.popleft()
            self.running.append(req)
            req.active = True
            plan.append((req, n))
            budget -= n

    def schedule(self) -> list[tuple[_Req, int]]:
        plan: list[tuple[_Req, int]] = []
        budget = self.limits.max_num_batched_tokens
        if self.limits.prefill_first:  # V0: the prompts that fit, whole, and no decode
            self._admit(budget, plan)
            if plan:
                return plan
        budget, preempted = self._serve_running(budget, plan)
        if not preempted and not self.limits.prefill_first:
            self._admit(budget, plan)
        return plan

    def step_work(self, plan: list[tuple[_Req, int]]) -> Step:
        prefill_tokens, attention, decode_seqs, decode_context = 0, 0.0, 0, 0
        window = self.limits.attention_window
        prefill_window, decode_window = 0.0, 0
        for req, n in plan:
            if req.computed < req.target:
                prefill_tokens += n
                attention += n * (req.computed + n / 2)
                if window is not None:
                    prefill_window += windowed_pairs(req.computed, n, window)
            else:
                decode_seqs += 1
                decode_context += req.computed
                if window is not None:
                    decode_window += min(req.computed, window)
        return Step(
            prefill_tokens,
            attention,
            decode_seqs,
            decode_context,
            len(self.running),
            prefill_window,
            decode_window,
        )

    def advance(self, plan: list[tuple[_Req, int]], now: float) -> list[_Req]:
        done = []
        for req, n in plan:
            if req.computed < req.target:
                req.computed += n
                if req.computed >= req.target:
                    req.generated += 1
                    if req.first_token is None:
                        req.first_token = now
            else:
                req.computed += 1
                req.generated += 1
            if req.generated >= req.output:
                req.active = False
                self.free_blocks += req.blocks
                done.append(req)
        if done:
            self.running = [r for r in self.running if r.active]
        return done


def windowed_pairs(start: int, tokens: int, window: int) -> float:
    """Attention pairs of a prompt chunk of `tokens` tokens after `start` computed ones when a
    query attends to at most `window` earlier tokens (the chunk's tokens at positions p from
    start on attend min(p, window) each; as `step_work`'s uncapped n x (start + n / 2))."""
    end = start + tokens
    if end <= window:
        return tokens * (start + tokens / 2)
    if start >= window:
        return float(tokens * window)
    below = window - start  # the chunk's tokens before the window fills
    return below * (start + below / 2) + (end - window) * window


def _total_blocks(limits: Limits) -> float:
    if limits.kv_cache_tokens is None:
        return math.inf
    return limits.kv_cache_tokens // limits.block_size


def simulate_continuous(
    load: Load, limits: Limits, cost: StepCost, admit_delay_s: float = 0.0
) -> SimResult:
    """Continuous batching as vLLM V1 does it (module docstring)."""
    rng = random.Random(load.seed)
    blocks = _total_blocks(limits)
    engine = _Engine(limits, blocks)
    arrivals: list[tuple[float, int]] = []  # (time the engine can see it, sequence number)
    closed = load.concurrency is not None
    first = min(load.concurrency or 0, load.num_prompts) if closed else load.num_prompts
    times = [0.0] * first if closed else _open_loop_arrivals(load, rng)
    for i, t in enumerate(times):
        heapq.heappush(arrivals, (t + admit_delay_s, i))
    issued, finished, totals, now = len(times), list[Finished](), _Totals(), 0.0
    while len(finished) < load.num_prompts:
        while arrivals and arrivals[0][0] <= now:
            t, _ = heapq.heappop(arrivals)
            engine.waiting.append(_Req(t - admit_delay_s, *_lengths(load, rng)))
        if not engine.running and not engine.waiting:
            if not arrivals:
                break
            now = arrivals[0][0]
            continue
        plan = engine.schedule()
        if not plan:  # nothing fits at all: one request longer than the whole KV cache
            break
        next_arrival = arrivals[0][0] if arrivals else math.inf
        now, skipped = _decode_run(engine, plan, cost, totals, now=now, next_arrival=next_arrival)
        if skipped:
            continue
        step = engine.step_work(plan)
        now += cost(step)
        totals.add(step, engine, sum(n for _, n in plan))
        for req in engine.advance(plan, now):
            finished.append(_finished(req, now))
            if closed and issued < load.num_prompts:
                heapq.heappush(arrivals, (now + admit_delay_s, issued))
                issued += 1
    return _result(finished, totals, engine, blocks, now)


def _result(
    finished: list[Finished], totals: _Totals, engine: _Engine, blocks: float, now: float
) -> SimResult:
    steps = totals.steps
    return SimResult(
        requests=tuple(finished),
        steps=steps,
        preemptions=engine.preemptions,
        mean_running=totals.running / steps if steps else 0.0,
        peak_running=totals.peak_running,
        peak_waiting=totals.peak_waiting,
        duration_s=now,
        mean_step=totals.mean_step(),
        kv_peak_fraction=_kv_peak(totals, blocks),
        budget_full_fraction=totals.budget_full / steps if steps else 0.0,
        queued_with_free_seats=totals.queued_with_free_seats / steps if steps else 0.0,
    )


def _decode_run(
    engine: _Engine,
    plan: list[tuple[_Req, int]],
    cost: StepCost,
    totals: _Totals,
    *,
    now: float,
    next_arrival: float,
) -> tuple[float, int]:
    """The fast path: while the same requests only decode, none finishes, no arrival can be
    admitted and the free blocks cover their growth, each step is priced on its own but the
    requests are advanced once at the end. The same timings as stepping one by one; returns
    the new time and the steps taken (0: not applicable, step normally)."""
    reqs, limits = engine.running, engine.limits
    if len(plan) != len(reqs) or (engine.waiting and len(reqs) < limits.max_num_seqs):
        return now, 0
    if any(r.computed < r.target for r in reqs):
        return now, 0
    most = min(r.output - r.generated for r in reqs) - 1  # the step that ends one: normally
    size = limits.block_size
    grow = sum((r.computed + most + size - 1) // size - r.blocks for r in reqs)
    if most < 2 or grow > engine.free_blocks:
        return now, 0
    n, context, steps, total_context = len(reqs), sum(r.computed for r in reqs), 0, 0
    window, total_windowed = limits.attention_window, 0
    while steps < most and now < next_arrival:
        windowed = 0 if window is None else sum(min(r.computed + steps, window) for r in reqs)
        now += cost(Step(0, 0.0, n, context, n, 0.0, windowed))
        total_context += context
        total_windowed += windowed
        context += n
        steps += 1
    totals.add_decodes(engine, steps, total_context, total_windowed)
    for r in reqs:
        r.computed += steps
        r.generated += steps
        extra = (r.computed + size - 1) // size - r.blocks
        if extra > 0:
            engine.free_blocks -= extra
            r.blocks += extra
    totals.min_free_blocks = min(totals.min_free_blocks, engine.free_blocks)
    return now, steps


def _kv_peak(totals: _Totals, blocks: float) -> float | None:
    if math.isinf(blocks):
        return None
    return 1 - totals.min_free_blocks / blocks if blocks > 0 else 1.0


def _finished(req: _Req, now: float) -> Finished:
    first = req.first_token if req.first_token is not None else now
    return Finished(req.arrival, first, now, req.prompt, req.output)


def simulate_static(
    load: Load,
    limits: Limits,
    cost: StepCost,
    batch_timeout_s: float = 1.0,
    admit_delay_s: float = 0.0,
) -> SimResult:
    """Static batching: the bus that waits to fill (or for `batch_timeout_s` after its first
    passenger), then runs until its longest passenger is done; one bus at a time."""
    rng = random.Random(load.seed)
    size = _static_batch_size(load, limits)
    closed = load.concurrency is not None
    pending = [0.0] * min(load.concurrency or 0, load.num_prompts) if closed else []
    if not closed:
        pending = _open_loop_arrivals(load, rng)
    pending = [t + admit_delay_s for t in pending]  # when each passenger reaches the stop
    issued = len(pending)
    finished: list[Finished] = []
    now, steps, running_sum, peak = 0.0, 0, 0, 0
    while pending:
        full_at = pending[size - 1] if len(pending) >= size else math.inf
        depart = max(now, min(full_at, pending[0] + batch_timeout_s))
        boarding = [t for t in pending[:size] if t <= depart]
        del pending[: len(boarding)]
        batch = [_Req(t, *_lengths(load, rng)) for t in boarding]
        prefill_end = depart + _prefill_seconds(batch, limits, cost)
        end, batch_steps = _run_batch(batch, cost, prefill_end)
        steps += batch_steps
        running_sum += len(batch) * batch_steps
        peak = max(peak, len(batch))
        finished += [
            Finished(r.arrival - admit_delay_s, prefill_end, end, r.prompt, r.output) for r in batch
        ]
        for _ in batch:
            if closed and issued < load.num_prompts:
                bisect.insort(pending, end + admit_delay_s)
                issued += 1
        now = end
    return SimResult(
        requests=tuple(finished),
        steps=steps,
        preemptions=0,
        mean_running=running_sum / steps if steps else 0.0,
        peak_running=peak,
        peak_waiting=0,
        duration_s=now,
    )


def _static_batch_size(load: Load, limits: Limits) -> int:
    size = min(limits.max_num_seqs, load.concurrency or limits.max_num_seqs)
    if limits.kv_cache_tokens is not None:  # every seat holds its longest possible sequence
        out_ratio = load.range_ratio if load.output_range_ratio is None else load.output_range_ratio
        per_seq = math.ceil(load.input_len * (1 + load.range_ratio)) + math.ceil(
            load.output_len * (1 + out_ratio)
        )
        size = min(size, max(1, limits.kv_cache_tokens // max(per_seq, 1)))
    return max(1, size)


def _prefill_seconds(batch: list[_Req], limits: Limits, cost: StepCost) -> float:
    longest = max(r.prompt for r in batch)
    tokens = longest * len(batch)  # padded to the longest prompt
    chunk = max(limits.max_num_batched_tokens, longest)
    seconds, done = 0.0, 0
    while done < tokens:
        n = min(chunk, tokens - done)
        seconds += cost(Step(n, n * longest / 2, 0, 0, len(batch)))
        done += n
    return seconds


def _run_batch(batch: list[_Req], cost: StepCost, prefill_end: float) -> tuple[float, int]:
    """When the batch's decoding ends (it starts at `prefill_end`), and the steps it took."""
    longest_prompt, longest_output = max(r.prompt for r in batch), max(r.output for r in batch)
    now, steps = prefill_end, 1
    for i in range(1, longest_output):  # every seat decodes until the longest reply is done
        now += cost(Step(0, 0.0, len(batch), len(batch) * (longest_prompt + i), len(batch)))
        steps += 1
    return now, steps
