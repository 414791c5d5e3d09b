"""A stand-in for `vllm serve`: a small model of vLLM's scheduler behind vLLM's HTTP surface.

Run it as vLLM would be run (`python vllm_sim.py serve MODEL --max-num-seqs 64 ...`, or through
the `vllm` wrapper script `write_executable()` makes) and it prints vLLM's startup lines, listens
on `--port`, and serves /health, /v1/models, /version, /v1/completions and /v1/chat/completions
(streaming with usage), /tokenize, /detokenize and /metrics.

The scheduler follows vLLM's V1 engine in miniature (continuous batching with chunked prefill):
- each step has a token budget (`--max-num-batched-tokens`); running requests take theirs first
  (one token per decoding request, a chunk of the prompt for one still prefilling), then waiting
  requests are admitted while fewer than `--max-num-seqs` run;
- the KV cache is a pool of 16-token blocks sized from `--gpu-memory-utilization` (GPU memory x
  utilization - weights - an activation reserve that grows with the token budget); when a
  running request needs a block and none is free, the newest running request is preempted (its
  blocks freed, its prompt recomputed later);
- a step takes `base + per prefill token x tokens + per decoding request x requests` ms.
The world (memory, weights, KV bytes per token, step costs) comes from `SIM_*` environment
variables, so a test knows the true best configuration of a grid: `closed_loop()` runs the same
scheduler in virtual time with closed-loop users, as `servetune tune` measures it.

`SIM_TIME_SCALE` (default 1) multiplies every step's real sleep; the reported latencies scale
with it. A `--gpu-memory-utilization` above `SIM_SAFE_UTIL` fails the start with CUDA's
out-of-memory error (another process holds that memory), as a real GPU would. It prints the
`CUDA_VISIBLE_DEVICES` it was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import stat
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

GIB = 1024**3
BLOCK = 16
VERSION = "0.32.0"
MAX_MODEL_LEN = 2048


@dataclass(frozen=True)
class World:
    """The simulated GPU and model. Times in (virtual) milliseconds."""

    gpu_gib: float = 24.0
    weights_gib: float = 5.0
    kv_bytes_per_token: int = 3 * 1024 * 1024
    safe_util: float = 0.95
    step_base_ms: float = 4.0
    prefill_token_ms: float = 0.02
    decode_seq_ms: float = 0.5

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> World:
        """The defaults, with each `SIM_<FIELD>` variable that is set (`SIM_GPU_GIB=80`)."""
        default = cls()

        def number(name: str) -> float:
            var = "SIM_" + name.upper()
            return float(env[var]) if var in env else float(getattr(default, name))

        return cls(
            gpu_gib=number("gpu_gib"),
            weights_gib=number("weights_gib"),
            kv_bytes_per_token=int(number("kv_bytes_per_token")),
            safe_util=number("safe_util"),
            step_base_ms=number("step_base_ms"),
            prefill_token_ms=number("prefill_token_ms"),
            decode_seq_ms=number("decode_seq_ms"),
        )


@dataclass(frozen=True)
class Knobs:
    """The serve flags the scheduler reads (vLLM 0.20+'s defaults for a GPU under 70 GiB or
    an A100)."""

    max_num_seqs: int = 256
    max_num_batched_tokens: int = 2048
    gpu_memory_utilization: float = 0.92
    max_model_len: int = MAX_MODEL_LEN

    @classmethod
    def from_flags(cls, flags: Mapping[str, str]) -> Knobs:
        return cls(
            max_num_seqs=int(flags.get("--max-num-seqs", 256)),
            max_num_batched_tokens=int(flags.get("--max-num-batched-tokens", 2048)),
            gpu_memory_utilization=float(flags.get("--gpu-memory-utilization", 0.92)),
            max_model_len=int(flags.get("--max-model-len", MAX_MODEL_LEN)),
        )


def reserve_gib(knobs: Knobs) -> float:
    """Activation memory held back from the KV cache: grows with the step token budget."""
    return 2.0 + 3.5 * knobs.max_num_batched_tokens / 8192 + 0.15


def kv_tokens(world: World, knobs: Knobs) -> int:
    """Tokens the KV cache holds, in whole blocks (0 when nothing is left for it)."""
    free = world.gpu_gib * knobs.gpu_memory_utilization - world.weights_gib - reserve_gib(knobs)
    blocks = int(max(0.0, free) * GIB // (world.kv_bytes_per_token * BLOCK))
    return blocks * BLOCK


@dataclass
class Request:
    prompt_len: int
    max_tokens: int
    arrived_ms: float = 0.0
    computed: int = 0  # tokens in the KV cache (prompt, then generated ones)
    generated: int = 0
    blocks: int = 0
    token_times_ms: list[float] = field(default_factory=list)
    on_token: Callable[[int], None] | None = None

    @property
    def prefilling(self) -> bool:
        """Still reading its prompt (or, after a preemption, recomputing what it had)."""
        return self.computed < self.prompt_len + max(0, self.generated - 1)

    def to_prefill(self) -> int:
        return self.prompt_len + max(0, self.generated - 1) - self.computed


class Scheduler:
    """vLLM's continuous batching in miniature; `step()` runs one engine step."""

    def __init__(self, world: World, knobs: Knobs) -> None:
        self.world, self.knobs = world, knobs
        self.total_blocks = kv_tokens(world, knobs) // BLOCK
        self.free_blocks = self.total_blocks
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.preemptions = 0
        self.now_ms = 0.0

    def add(self, request: Request) -> None:
        request.arrived_ms = self.now_ms
        self.waiting.append(request)

    def usage(self) -> float:
        if not self.total_blocks:
            return 0.0
        return 1 - self.free_blocks / self.total_blocks

    def _grow(self, request: Request, new_tokens: int) -> bool:
        need = math.ceil((request.computed + new_tokens) / BLOCK) - request.blocks
        if need <= self.free_blocks:
            self.free_blocks -= max(0, need)
            request.blocks += max(0, need)
            return True
        return False

    def _preempt(self) -> None:
        victim = self.running.pop()
        self.free_blocks += victim.blocks
        victim.blocks, victim.computed = 0, 0  # recomputed from the prompt later
        self.waiting.appendleft(victim)
        self.preemptions += 1

    def _schedule_running(self, budget: int) -> tuple[dict[int, int], int]:
        planned: dict[int, int] = {}
        index = 0
        while index < len(self.running) and budget > 0:
            request = self.running[index]
            want = min(request.to_prefill(), budget) if request.prefilling else 1
            while not self._grow(request, want):
                if self.running[-1] is request:
                    self._preempt()
                    return planned, budget
                self._preempt()
            planned[id(request)] = want
            budget -= want
            index += 1
        return planned, budget

    def _admit(self, planned: dict[int, int], budget: int) -> None:
        while self.waiting and budget > 0 and len(self.running) < self.knobs.max_num_seqs:
            request = self.waiting[0]
            want = min(request.to_prefill(), budget)
            if not self._grow(request, want):
                break
            self.waiting.popleft()
            self.running.append(request)
            planned[id(request)] = want
            budget -= want

    def step(self) -> float:
        """Run one step; returns its duration in ms (0 when idle)."""
        planned, budget = self._schedule_running(self.knobs.max_num_batched_tokens)
        self._admit(planned, budget)
        if not planned:
            return 0.0
        prefill = decode = 0
        for request in self.running:
            tokens = planned.get(id(request), 0)
            if request.prefilling:
                prefill += tokens
            elif tokens:
                decode += 1
        w = self.world
        duration = w.step_base_ms + w.prefill_token_ms * prefill + w.decode_seq_ms * decode
        self.now_ms += duration
        self._advance(planned)
        return duration

    def _advance(self, planned: dict[int, int]) -> None:
        finished = []
        for request in self.running:
            tokens = planned.get(id(request), 0)
            if not tokens:
                continue
            request.computed += tokens
            if request.prefilling:
                continue  # the step that finishes a prompt also samples its next token
            request.generated += 1
            request.token_times_ms.append(self.now_ms)
            if request.on_token is not None:
                request.on_token(request.generated)
            if request.generated >= request.max_tokens:
                finished.append(request)
        for request in finished:
            self.running.remove(request)
            self.free_blocks += request.blocks
            request.blocks = 0


# --- the truth: closed-loop capacity in virtual time -------------------------------------------


def _percentile(values: Sequence[float], p: float) -> float:
    data = sorted(values)
    rank = p / 100 * (len(data) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (rank - low)


def closed_loop(
    world: World, knobs: Knobs, users: int, *, input_len: int, output_len: int, measured: int
) -> dict[str, list[float]]:
    """TTFT and TPOT (ms) of `measured` requests after a ramp of `users` requests, with `users`
    users each sending their next request when the last one ends."""
    sched = Scheduler(world, knobs)
    total = users + measured
    sent = 0
    done: list[Request] = []

    def send() -> None:
        nonlocal sent
        request = Request(input_len, output_len)
        sched.add(request)
        sent += 1
        pending.append(request)

    pending: list[Request] = []
    for _ in range(min(users, total)):
        send()
    while len(done) < total:
        if sched.step() == 0.0 and not sched.running:
            break
        for request in [r for r in pending if r.generated >= r.max_tokens]:
            pending.remove(request)
            done.append(request)
            if sent < total:
                send()
    return _latencies(done[users:], output_len)


def _latencies(done: Sequence[Request], output_len: int) -> dict[str, list[float]]:
    ttft = [r.token_times_ms[0] - r.arrived_ms for r in done if r.token_times_ms]
    tpot = [
        (r.token_times_ms[-1] - r.token_times_ms[0]) / (output_len - 1)
        for r in done
        if len(r.token_times_ms) > 1
    ]
    return {"ttft": ttft, "tpot": tpot}


def meets(
    world: World,
    knobs: Knobs,
    users: int,
    slo_ms: Mapping[str, float],
    *,
    percentile: float,
    input_len: int,
    output_len: int,
    measured: int = 100,
) -> bool:
    """Whether `users` closed-loop users meet every SLO at `percentile`, in virtual time."""
    lat = closed_loop(
        world, knobs, users, input_len=input_len, output_len=output_len, measured=measured
    )
    return all(bool(lat[k]) and _percentile(lat[k], percentile) <= v for k, v in slo_ms.items())


def true_capacity(
    world: World,
    knobs: Knobs,
    slo_ms: Mapping[str, float],
    *,
    percentile: float,
    input_len: int,
    output_len: int,
    measured: int = 100,
    most: int = 512,
) -> int:
    """The largest number of closed-loop users whose latencies meet every SLO (0: none), found
    by doubling then bisecting in virtual time (latency grows with the users)."""
    if kv_tokens(world, knobs) < input_len + output_len:
        return 0

    def ok(users: int) -> bool:
        return meets(
            world,
            knobs,
            users,
            slo_ms,
            percentile=percentile,
            input_len=input_len,
            output_len=output_len,
            measured=measured,
        )

    low, high = 0, 1
    while high <= most and ok(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if ok(middle) else (low, middle)
    return low


# --- vLLM's HTTP surface ---------------------------------------------------------------------


class _Tokenizer:
    """Whitespace words, one id per distinct word."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: dict[int, str] = {}

    def encode(self, text: str) -> list[int]:
        out = []
        for word in text.split():
            if word not in self.ids:
                self.ids[word] = len(self.ids) + 1
                self.words[self.ids[word]] = word
            out.append(self.ids[word])
        return out

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self.words.get(i, "tok") for i in ids)


class SimServer:
    def __init__(self, world: World, knobs: Knobs, model: str, scale: float) -> None:
        self.sched = Scheduler(world, knobs)
        self.model, self.scale = model, scale
        self.tokenizer = _Tokenizer()
        self.wake = asyncio.Event()

    async def engine(self) -> None:
        while True:
            duration = self.sched.step()
            if duration == 0.0:
                self.wake.clear()
                await self.wake.wait()
                continue
            await asyncio.sleep(duration / 1000 * self.scale)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)
        }
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        payload = json.loads(body) if body else {}
        path = path.split("?", 1)[0]
        if method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
            await self._generate(writer, payload, chat=path.endswith("chat/completions"))
        else:
            status, data, kind = self._simple(method, path, payload)
            writer.write(
                f"HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\n"
                f"content-length: {len(data)}\r\n\r\n".encode()
                + data
            )
        await writer.drain()
        return True

    def _simple(  # noqa: PLR0911 - one answer per endpoint
        self, method: str, path: str, payload: dict[str, object]
    ) -> tuple[int, bytes, str]:
        text = "application/json"
        if path == "/health":
            return 200, b"", text
        if path == "/version":
            return 200, json.dumps({"version": VERSION}).encode(), text
        if path == "/v1/models":
            card = {
                "id": self.model,
                "object": "model",
                "root": self.model,
                "max_model_len": self.sched.knobs.max_model_len,
            }
            return 200, json.dumps({"object": "list", "data": [card]}).encode(), text
        if path == "/metrics":
            return 200, self._metrics().encode(), "text/plain; version=0.0.4"
        if method == "POST" and path == "/tokenize":
            ids = self.tokenizer.encode(str(payload.get("prompt", "")))
            return 200, json.dumps({"count": len(ids), "tokens": ids}).encode(), text
        if method == "POST" and path == "/detokenize":
            tokens = payload.get("tokens")
            ids = [int(i) for i in tokens] if isinstance(tokens, list) else []
            return 200, json.dumps({"prompt": self.tokenizer.decode(ids)}).encode(), text
        return 404, b'{"detail":"Not Found"}', text

    def _metrics(self) -> str:
        labels = f'{{engine="0",model_name="{self.model}"}}'
        s = self.sched
        rows = [
            ("vllm:num_requests_running", len(s.running)),
            ("vllm:num_requests_waiting", len(s.waiting)),
            ("vllm:kv_cache_usage_perc", s.usage()),
            ("vllm:num_preemptions_total", s.preemptions),
        ]
        return "".join(f"# TYPE {n} gauge\n{n}{labels} {float(v)!r}\n" for n, v in rows)

    def _prompt_len(self, payload: dict[str, object], chat: bool) -> int:
        if chat:
            messages = cast("list[dict[str, object]]", payload.get("messages") or [])
            text = " ".join(str(m.get("content", "")) for m in messages)
        else:
            text = str(payload.get("prompt", ""))
        return max(1, len(text.split()))

    async def _generate(
        self, writer: asyncio.StreamWriter, payload: dict[str, object], *, chat: bool
    ) -> None:
        prompt_len = self._prompt_len(payload, chat)
        asked = payload.get("max_tokens")
        max_tokens = int(asked) if isinstance(asked, int | float | str) and asked else 16
        queue: asyncio.Queue[int] = asyncio.Queue()
        request = Request(prompt_len, max_tokens, on_token=queue.put_nowait)
        self.sched.add(request)
        self.wake.set()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:16]
        made = 0
        while made < max_tokens:
            made = await queue.get()
            last = made >= max_tokens
            if chat:
                choice = {
                    "index": 0,
                    "delta": {"content": " tok"},
                    "finish_reason": "length" if last else None,
                }
            else:
                choice = {"index": 0, "text": " tok", "finish_reason": "length" if last else None}
            self._event(writer, {"id": rid, "model": self.model, "choices": [choice]})
            await writer.drain()
        usage = {
            "prompt_tokens": prompt_len,
            "total_tokens": prompt_len + made,
            "completion_tokens": made,
        }
        self._event(writer, {"id": rid, "model": self.model, "choices": [], "usage": usage})
        data = b"data: [DONE]\n\n"
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")

    @staticmethod
    def _event(writer: asyncio.StreamWriter, obj: object) -> None:
        data = b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


# --- the `vllm serve` process ----------------------------------------------------------------


def _log(level: str, where: str, text: str) -> None:
    stamp = time.strftime("%m-%d %H:%M:%S")
    print(f"{level} {stamp} [{where}] {text}", flush=True)


def _parse(argv: Sequence[str]) -> tuple[str, dict[str, str], str, int]:
    args = list(argv)
    if args and args[0] == "serve":
        args = args[1:]
    model = args.pop(0) if args and not args[0].startswith("-") else "sim"
    flags: dict[str, str] = {}
    i = 0
    while i < len(args):
        flag, _, value = args[i].partition("=")
        if not value and i + 1 < len(args) and not args[i + 1].startswith("--"):
            value, i = args[i + 1], i + 1
        flags[flag] = value or "true"
        i += 1
    host = flags.get("--host", "127.0.0.1")
    return model, flags, host, int(flags.get("--port", 8000))


def _start_checks(world: World, knobs: Knobs, tokens: int) -> str | None:
    """vLLM's startup errors for this configuration, as it words them, or None."""
    if knobs.max_num_batched_tokens < knobs.max_num_seqs:
        return (
            f"ValueError: max_num_batched_tokens ({knobs.max_num_batched_tokens}) must be "
            f"greater than or equal to max_num_seqs ({knobs.max_num_seqs})."
        )
    if knobs.gpu_memory_utilization > world.safe_util:
        return (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 "
            f"has a total capacity of {world.gpu_gib:.2f} GiB of which 312.00 MiB is free."
        )
    if tokens < knobs.max_model_len:
        return (
            f"ValueError: The model's max seq len ({knobs.max_model_len}) is larger than the "
            f"maximum number of tokens that can be stored in KV cache ({tokens}). Try "
            "increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine."
        )
    return None


async def _serve(server: SimServer, host: str, port: int) -> None:
    engine = asyncio.create_task(server.engine())
    listener = await asyncio.start_server(server.handle, host, port, backlog=1024)
    _log("INFO", "launcher.py:37", "Available routes are: /health, /v1/completions, /metrics")
    print("INFO:     Started server process", flush=True)
    print("INFO:     Application startup complete.", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    listener.close()
    engine.cancel()
    print("INFO:     Shutting down", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    env = os.environ
    model, flags, host, port = _parse(sys.argv[1:] if argv is None else argv)
    world, knobs = World.from_env(env), Knobs.from_flags(flags)
    scale = float(env.get("SIM_TIME_SCALE", "1"))
    _log("INFO", "api_server.py:1", f"vLLM API server version {VERSION}")
    _log("INFO", "api_server.py:2", f"args: model={model!r} flags={flags}")
    print(f"CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES', '')}", flush=True)
    _log("INFO", "gpu_model_runner.py:1", "Starting to load model " + model)
    _log("INFO", "gpu_model_runner.py:2", f"Model loading took {world.weights_gib:.4f} GiB")
    tokens = kv_tokens(world, knobs)
    problem = _start_checks(world, knobs, tokens)
    if problem is not None:
        _log("ERROR", "core.py:1", "EngineCore failed to start.")
        print("Traceback (most recent call last):", flush=True)
        print('  File "vllm/v1/engine/core.py", line 1, in run_engine_core', flush=True)
        print(problem, flush=True)
        print("RuntimeError: Engine core initialization failed. See root cause above.", flush=True)
        return 1
    _log("INFO", "kv_cache_utils.py:1", f"GPU KV cache size: {tokens:,} tokens")
    concurrency = tokens / knobs.max_model_len
    _log(
        "INFO",
        "kv_cache_utils.py:2",
        f"Maximum concurrency for {knobs.max_model_len:,} tokens per request: {concurrency:.2f}x",
    )
    asyncio.run(_serve(SimServer(world, knobs, model, scale), host, port))
    return 0


def write_executable(folder: Path) -> Path:
    """A `vllm` program in `folder` that runs this simulator (for `--vllm PATH`)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vllm"
    path.write_text(f'#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve()} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


if __name__ == "__main__":
    sys.exit(main())
