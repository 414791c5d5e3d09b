"""Load-test clients side by side: servetune, `vllm bench serve`, guidellm and aiperf.

Every client runs as a child process of this script against the stub in tests/fakes/, which
sends vLLM 0.32.0's exact stream (shared/reference/vllm-stream-0.32.0.txt: compact JSON, vLLM's
fields in vLLM's order, `finish_reason` on the last content chunk, one socket write per event,
yielding between events as vLLM's server does) unless a scenario says otherwise.

1. Client CPU per 1,000 streamed tokens, per scenario (vLLM's chunks at zero delay and at 20 ms
   per token, 100 and 500 streams; the same chunks with spaced JSON). Each client runs a long and a
   short load with the same requests (256 and 16 output tokens); CPU (user + sys of the client and
   its waited-for children, exact from `os.wait4`) of the long minus the short, over the tokens
   the stub counted as sent (its `/stub/stats`), is the cost of one more streamed token: start-up,
   prompt preparation and per-request costs cancel. The stub runs in its own process (its CPU is
   not counted). Rounds repeat the whole set, clients interleaved within each scenario and their
   order rotated by round; the ratios (peer / servetune) are taken per round, and the median and
   spread of those ratios are printed, so a busy neighbour that slows one round shows as spread.
   Beside that marginal figure, a steady one: the client's process-tree CPU (from /proc, every
   0.2 s) over the stub's live token count while it wrote 20% to 80% of the long run's tokens,
   which leaves start-up, the last requests and the summary out (and with them start-up noise).
2. TTFT and TPOT accuracy: in the paced scenario (TTFT 50 ms, ITL 20 ms, 100 streams), each
   client's reported medians minus the stub's settings. The stub's own timing is not perfect on a
   loaded machine (a late write), so servetune's error is the yardstick: a client further off than
   the others adds its own delay.
3. The highest sustained request rate: for each rate of a ladder each client sends rate x 3 s
   evenly spaced requests (8 output tokens, no concurrency cap) to a stub in THIS process, which
   stamps each POST's arrival (`time.perf_counter`, one clock for all processes); the lag of each
   arrival behind an evenly spaced schedule fitted to them (send_lags) is the client's send lag.
   A rate is sustained when lag p99 < 5 ms and every request completed; it fails only when
   --attempts tries in a row fail; a client stops at its first failed rate.

Runs take /tmp/servetune-vllm.lock (flock) one client run at a time (--lock), so the real-vLLM
tests of other work on this machine never overlap a measurement. The script reports and always
exits 0; a CPU ratio under 2x on vLLM's chunks is flagged "below target".

    .venv/bin/python benchmarks/bench_client.py --setup   # once: .venvs/guidellm, .venvs/aiperf
    .venv/bin/python benchmarks/bench_client.py --rounds 2   # ~25 minutes on 2 cores
    .venv/bin/python benchmarks/bench_client.py --quick   # 1 round, 2 scenarios, 2 rates
    .venv/bin/python benchmarks/bench_client.py --scale 0.1 --rounds 1   # a smoke test
    .venv/bin/python benchmarks/bench_client.py --peers servetune,vllm --scenarios zero-100
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import json
import math
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers as peer_table
from lag import CpuSampler, percentile, send_lags, thread_cpu_reader
from peers import Load, Peer

from stub_server import StubBehaviour, ThreadedStub

STUB_SCRIPT = peer_table.ROOT / "tests" / "fakes" / "stub_server.py"
COMPLETIONS = "/v1/completions"
LONG, SHORT = 256, 16
PACED_TTFT_MS, PACED_ITL_MS = 50.0, 20.0
LADDER_OUTPUT_LEN = 8
LAG_LIMIT_S = 0.005
TARGET_RATIO = 2.0
DEFAULT_RATES = (100, 400, 1600, 3200)
QUICK_RATES = (400, 1600)
RUN_TIMEOUT_S = 300.0
LOCK = Path("/tmp/servetune-vllm.lock")


@dataclass(frozen=True)
class Scenario:
    """One stub setting and one concurrency for part 1."""

    key: str
    label: str
    streams: int
    waves: int  # requests = streams x waves: enough tokens to stand above start-up noise
    itl_ms: float = 0.0
    ttft_ms: float = 0.0
    spaced: bool = False
    peers: tuple[str, ...] = peer_table.ALL

    def stub_args(self) -> list[str]:
        args = ["--shape", "vllm-0.32", "--event-writes"]
        args += ["--ttft-ms", repr(self.ttft_ms), "--itl-ms", repr(self.itl_ms)]
        return args + (["--spaced"] if self.spaced else [])

    def load(self, output_len: int, scale: float = 1.0) -> Load:
        waves = max(1, round(self.waves * scale))
        return Load(self.streams * waves, output_len, streams=self.streams)


# vLLM's client spends ~10 s of CPU importing, give or take a second on a busy machine: the long
# runs stream 100k-400k tokens so that the per-token difference stands well above that noise.
SCENARIOS = (
    Scenario("zero-100", "vLLM chunks, no delay, 100 streams", 100, 12),
    Scenario("zero-500", "vLLM chunks, no delay, 500 streams", 500, 3),
    Scenario("paced-100", "vLLM chunks, 20 ms ITL, 100 streams", 100, 4, PACED_ITL_MS,
             PACED_TTFT_MS),
    Scenario("paced-500", "vLLM chunks, 20 ms ITL, 500 streams", 500, 2, PACED_ITL_MS,
             PACED_TTFT_MS),
    Scenario("spaced-100", "spaced JSON, no delay, 100 streams", 100, 12, spaced=True,
             peers=("servetune", "vllm")),
)  # fmt: skip
QUICK_SCENARIOS = ("zero-100", "paced-100")


# --- running one client ------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one client run did, as the OS, the stub and the client's own report tell."""

    cpu_s: float
    wall_s: float
    exit_code: int | None  # None: killed after the timeout
    tokens: int  # content tokens the stub wrote to the end of a stream
    streams: int
    ttft_ms: float | None
    tpot_ms: float | None
    log: Path
    steady_ms_per_1k: float | None = None  # client CPU per 1k tokens, middle of the stream

    def ok(self, load: Load) -> bool:
        return self.exit_code == 0 and self.streams >= load.num_prompts

    def why_not(self, load: Load) -> str:
        if self.exit_code is None:
            return "timed out"
        if self.exit_code != 0:
            return f"exit {self.exit_code}: {_tail(self.log)}"
        return f"{self.streams}/{load.num_prompts} streams completed"


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(line[:200] for line in text[-lines:])


def become_subreaper() -> None:
    """Adopt orphaned descendants (Linux PR_SET_CHILD_SUBREAPER), so that a client's worker
    processes its main process never waited for (aiperf's services, guidellm's workers) are
    reaped here and their CPU is counted in RUSAGE_CHILDREN."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # 36: PR_SET_CHILD_SUBREAPER
        print("warning: not a subreaper: CPU of orphaned client workers is not counted")


_TICK_S = 1 / os.sysconf("SC_CLK_TCK")
STEADY = (0.2, 0.8)  # the share of a run's tokens between which its steady CPU is taken
POLL_S = 0.2


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds of it and its waited-for children), from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
                ticks = sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
                table[int(entry.name)] = (int(fields[1]), ticks * _TICK_S)
    return table


def _children() -> list[int]:
    """Our child processes (adopted orphans included), from /proc."""
    me = os.getpid()
    return [pid for pid, (parent, _) in _proc_table().items() if parent == me]


def _reap_all(keep: set[int], timeout_s: float = 60.0) -> None:
    """Wait until every child but `keep` has ended (kill them after timeout_s) and reap it."""
    deadline = time.monotonic() + timeout_s
    while others := [pid for pid in _children() if pid not in keep]:
        for pid in others:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        if time.monotonic() > deadline:
            for pid in others:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _wait(proc: subprocess.Popen[Any], timeout_s: float) -> int | None:
    """The exit code; None when it had to be killed (its whole process group) after timeout_s."""
    try:
        return proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def _tree_cpu(keep: set[int]) -> float:
    """CPU seconds of every live descendant of this process but `keep` and theirs: the client,
    its workers, and workers orphaned to us (we are their subreaper)."""
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0.0, [p for p in children.get(os.getpid(), []) if p not in keep]
    while todo:
        pid = todo.pop()
        total += table[pid][1]
        todo += children.get(pid, [])
    return total


def _watch(
    proc: subprocess.Popen[Any], stats_url: str, keep: set[int], timeout_s: float
) -> tuple[int | None, list[tuple[int, float]]]:
    """Wait for `proc` as `_wait` does, sampling (tokens the stub has sent, the client's CPU)
    every POLL_S meanwhile."""
    samples: list[tuple[int, float]] = []
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            samples.append((_stub_stats(stats_url)[2], _tree_cpu(keep)))
        time.sleep(POLL_S)
    return _wait(proc, max(0.0, deadline - time.monotonic())), samples


def steady_ms_per_1k(samples: Sequence[tuple[int, float]], first: int, last: int) -> float | None:
    """Client CPU ms per 1,000 tokens while the stub's count went from STEADY[0] to STEADY[1]
    of the run's tokens (first..last): start-up, the last requests and the summary excluded."""
    low = first + STEADY[0] * (last - first)
    high = first + STEADY[1] * (last - first)
    inside = [(t, c) for t, c in samples if low <= t <= high]
    if len(inside) < 3 or inside[-1][0] - inside[0][0] < 1000:
        return None
    (t0, c0), (t1, c1) = inside[0], inside[-1]
    return (c1 - c0) / (t1 - t0) * 1e6


def _stub_stats(base_url: str) -> tuple[int, int, int]:
    """(streams completed, their tokens, content tokens written so far) from the stub."""
    with urllib.request.urlopen(base_url + "/stub/stats", timeout=10) as response:
        data = json.loads(response.read())
    return int(data["streams_completed"]), int(data["tokens_streamed"]), int(data["tokens_sent"])


@contextlib.contextmanager
def _cpu_lock(path: Path | None) -> Iterator[None]:
    if path is None:
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Runner:
    """Runs client processes, each in its own folder (result files, log) under one workdir."""

    def __init__(self, workdir: Path, lock: Path | None) -> None:
        self._workdir = workdir
        self._lock = lock
        self._count = 0
        self.keep: set[int] = set()  # long-lived children (a stub process): not a client's

    def run(self, peer: Peer, base_url: str, load: Load, stats_url: str | None = None) -> Outcome:
        """One run; `stats_url` is the stub to count tokens at (default: base_url)."""
        self._count += 1
        run = self._workdir / f"{self._count:03d}-{peer.name}"
        run.mkdir()
        log = run / "log.txt"
        stats_url = stats_url or base_url
        with _cpu_lock(self._lock), log.open("wb") as out:
            before = _stub_stats(stats_url)
            cpu_before, start = _children_cpu(), time.perf_counter()
            proc = subprocess.Popen(
                peer.argv(base_url, load, run), stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env=peer.env, cwd=run, start_new_session=True,
            )  # fmt: skip
            exit_code, samples = _watch(proc, stats_url, self.keep, RUN_TIMEOUT_S)
            wall = time.perf_counter() - start
            _reap_all(self.keep)
            cpu = _children_cpu() - cpu_before
            after = _stub_stats(stats_url)
        ttft, tpot = peer.read(run)
        return Outcome(
            cpu_s=cpu,
            wall_s=wall,
            exit_code=exit_code,
            tokens=after[1] - before[1],
            streams=after[0] - before[0],
            ttft_ms=ttft,
            tpot_ms=tpot,
            log=log,
            steady_ms_per_1k=steady_ms_per_1k(samples, before[2], after[2]),
        )


@dataclass
class StubProcess:
    """tests/fakes/stub_server.py as its own process (its CPU is not the client's)."""

    workdir: Path
    args: list[str]
    runner: Runner
    base_url: str = ""
    _proc: subprocess.Popen[str] | None = field(default=None, repr=False)

    def __enter__(self) -> StubProcess:
        with (self.workdir / "stub.log").open("a") as log:
            self._proc = subprocess.Popen(
                [sys.executable, str(STUB_SCRIPT), "--port", "0", *self.args],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True,
            )  # fmt: skip
        self.runner.keep.add(self._proc.pid)
        line = self._proc.stdout.readline().split() if self._proc.stdout else []
        if line[:1] != ["READY"]:
            self.__exit__()
            raise RuntimeError(f"the stub did not start: {_tail(self.workdir / 'stub.log')}")
        self.base_url = line[1]
        return self

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.send_signal(signal.SIGTERM)
        if _wait(proc, 15.0) is None:
            print("warning: the stub did not stop on SIGTERM")
        self.runner.keep.discard(proc.pid)
        if proc.stdout is not None:
            proc.stdout.close()


# --- part 1 and 2: CPU per token, TTFT/TPOT --------------------------------------------------


@dataclass
class Pair:
    """A long and a short run of one client in one round of one scenario."""

    long: Outcome
    short: Outcome

    @property
    def ms_per_1k(self) -> float | None:
        """Marginal client CPU milliseconds per 1,000 streamed tokens."""
        tokens = self.long.tokens - self.short.tokens
        if tokens <= 0:
            return None
        return (self.long.cpu_s - self.short.cpu_s) / tokens * 1e6


@dataclass
class Figures:
    """Part 1 results: scenario key -> peer name -> one Pair per round; failures by peer."""

    pairs: dict[str, dict[str, list[Pair]]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def _measure_pair(
    runner: Runner, peer: Peer, url: str, scenario: Scenario, scale: float
) -> Pair | str:
    outcomes = []
    for output_len in (LONG, SHORT):
        load = scenario.load(output_len, scale)
        outcome = runner.run(peer, url, load)
        print(
            f"    {peer.name:9} {load.num_prompts:4} req x {output_len:3} tok: cpu"
            f" {outcome.cpu_s:6.2f} s, wall {outcome.wall_s:5.1f} s, {outcome.tokens} tokens",
            flush=True,
        )
        if not outcome.ok(load):
            return outcome.why_not(load)
        outcomes.append(outcome)
    return Pair(*outcomes)


def measure_cpu(
    runner: Runner,
    peers: Sequence[Peer],
    scenarios: Sequence[Scenario],
    rounds: int,
    workdir: Path,
    *,
    scale: float = 1.0,
) -> Figures:
    figures = Figures()
    for round_no in range(rounds):
        for scenario in scenarios:
            print(f"  round {round_no + 1}: {scenario.label}", flush=True)
            chosen = [p for p in peers if p.name in scenario.peers]
            shift = round_no % max(1, len(chosen))
            with StubProcess(workdir, scenario.stub_args(), runner) as stub:
                for peer in chosen[shift:] + chosen[:shift]:  # rotate the order by round
                    key = f"{scenario.key}/{peer.name}"
                    if key in figures.failed:
                        continue
                    pair = _measure_pair(runner, peer, stub.base_url, scenario, scale)
                    if isinstance(pair, str):
                        figures.failed[key] = pair
                        print(f"    FAILED: {pair}", flush=True)
                        continue
                    figures.pairs.setdefault(scenario.key, {}).setdefault(peer.name, [])
                    figures.pairs[scenario.key][peer.name].append(pair)
    return figures


# --- part 3: the highest sustained rate ------------------------------------------------------


@dataclass(frozen=True)
class RateResult:
    rate: float
    ok: bool
    lag_p50_s: float
    lag_p99_s: float
    note: str


def run_rate(runner: Runner, peer: Peer, stub: ThreadedStub, load: Load) -> RateResult:
    stub.server.reset()
    outcome = runner.run(peer, stub.base_url, load)
    posts = sorted(r.received_at for r in list(stub.server.received) if r.path == COMPLETIONS)
    posts = posts[-load.num_prompts :]  # after any test request a client sends first
    if len(posts) < 2:
        return RateResult(load.rate, False, math.nan, math.nan, outcome.why_not(load))
    lags = send_lags(posts, load.rate)
    p50, p99 = percentile(lags, 50), percentile(lags, 99)
    problems = []
    if not outcome.ok(load):
        problems.append(outcome.why_not(load))
    if p99 >= LAG_LIMIT_S:
        problems.append(f"lag p99 {p99 * 1000:.1f} ms")
    return RateResult(load.rate, not problems, p50, p99, "; ".join(problems))


def measure_rates(
    runner: Runner, peers: Sequence[Peer], rates: Sequence[float], duration_s: float, attempts: int
) -> tuple[dict[str, list[RateResult]], float]:
    """Part 3, the clients interleaved rate by rate; also the stub thread's peak CPU share."""
    results: dict[str, list[RateResult]] = {peer.name: [] for peer in peers}
    behaviour = StubBehaviour(shape="vllm-0.32", event_writes=True)
    with ThreadedStub(behaviour) as stub, CpuSampler(thread_cpu_reader("stub")) as sampler:
        since = time.perf_counter()
        for rate in rates:
            load = Load(max(2, round(rate * duration_s)), LADDER_OUTPUT_LEN, rate=rate)
            for peer in peers:
                done = results[peer.name]
                if done and not done[-1].ok:
                    continue
                for attempt in range(1, attempts + 1):
                    result = run_rate(runner, peer, stub, load)
                    verdict = "ok" if result.ok else f"FAILED ({result.note})"
                    print(
                        f"  {rate:6g} req/s {peer.name:9} #{attempt} lag p50"
                        f" {result.lag_p50_s * 1000:7.2f} ms p99 {result.lag_p99_s * 1000:7.2f} ms:"
                        f" {verdict}",
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


def _spread(values: Sequence[float]) -> str:
    if not values:
        return "n/a"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.2f}"
    return f"{med:.2f} [{min(values):.2f}-{max(values):.2f}]"


Figure = Callable[[Pair], float | None]


def _marginal(pair: Pair) -> float | None:
    return pair.ms_per_1k


def _steady(pair: Pair) -> float | None:
    return pair.long.steady_ms_per_1k


def _ratios(pairs: dict[str, list[Pair]], peer: str, figure: Figure) -> list[float]:
    """Per-round CPU ratios peer / servetune (rounds where both have a figure)."""
    ratios = []
    for ours, theirs in zip(pairs.get("servetune", []), pairs.get(peer, []), strict=False):
        a, b = figure(ours), figure(theirs)
        if a and b and a > 0:
            ratios.append(b / a)
    return ratios


def _cpu_tables(
    figures: Figures, scenarios: Sequence[Scenario], names: Sequence[str], figure: Figure
) -> None:
    print(f"  {'scenario':38}" + "".join(f"{n:>22}" for n in names))
    for scenario in scenarios:
        pairs = figures.pairs.get(scenario.key, {})
        cells = []
        for name in names:
            values = [v for p in pairs.get(name, []) if (v := figure(p)) is not None]
            failed = figures.failed.get(f"{scenario.key}/{name}")
            cells.append("FAILED" if failed else _spread(values) if values else "-")
        print(f"  {scenario.label:38}" + "".join(f"{c:>22}" for c in cells))
    print("  peer / servetune (median of per-round ratios [min-max]):")
    for scenario in scenarios:
        pairs = figures.pairs.get(scenario.key, {})
        cells = ["" if n == "servetune" else _spread(_ratios(pairs, n, figure)) for n in names]
        vllm = _ratios(pairs, "vllm", figure)
        flag = ""
        if vllm and not scenario.spaced:
            target_met = statistics.median(vllm) >= TARGET_RATIO
            flag = "  meets target (>= 2x vllm)" if target_met else "  below target (< 2x vllm)"
        print(f"  {scenario.label:38}" + "".join(f"{c:>22}" for c in cells) + flag)


def report_cpu(figures: Figures, scenarios: Sequence[Scenario], names: Sequence[str]) -> None:
    print(
        "client CPU ms per 1,000 streamed tokens, marginal: a 256- minus a 16-token run of the"
        " same requests\n(median of rounds [min-max]):"
    )
    _cpu_tables(figures, scenarios, names, _marginal)
    low, high = (round(share * 100) for share in STEADY)
    print(
        f"\nclient CPU ms per 1,000 streamed tokens, steady: while the stub wrote {low}% to"
        f" {high}% of the 256-token run's tokens\n(start-up, the last requests and the summary"
        " left out; median of rounds [min-max]):"
    )
    _cpu_tables(figures, scenarios, names, _steady)


def report_accuracy(figures: Figures, names: Sequence[str]) -> None:
    pairs = figures.pairs.get("paced-100", {})
    if not pairs:
        return
    print(
        f"\nreported median TTFT / TPOT minus the stub's {PACED_TTFT_MS:g} / {PACED_ITL_MS:g} ms"
        " (20 ms ITL, 100 streams, 256 tokens; median of rounds):"
    )
    for name in names:
        runs = [p.long for p in pairs.get(name, [])]
        ttft = [r.ttft_ms - PACED_TTFT_MS for r in runs if r.ttft_ms is not None]
        tpot = [r.tpot_ms - PACED_ITL_MS for r in runs if r.tpot_ms is not None]
        if not ttft and not tpot:
            print(f"  {name:10} (not reported)")
            continue
        text_ttft = f"{statistics.median(ttft):+.2f} ms" if ttft else "n/a"
        text_tpot = f"{statistics.median(tpot):+.3f} ms" if tpot else "n/a"
        print(f"  {name:10} TTFT {text_ttft:>11}   TPOT {text_tpot:>11}")


def report_rates(results: dict[str, list[RateResult]], peak: float, rates: Sequence[float]) -> None:
    print(f"\nhighest sustained rate (server-side send-lag p99 < {LAG_LIMIT_S * 1000:g} ms):")
    for name, found in results.items():
        value = highest_sustained(found)
        if value == 0:
            text = f"< {rates[0]:g} req/s"
        elif value == rates[-1]:
            text = f">= {value:g} req/s (the top of the ladder)"
        else:
            text = f"{value:g} req/s"
        lags = ", ".join(f"{r.rate:g}: p99 {r.lag_p99_s * 1000:.1f} ms" for r in found)
        print(f"  {name:10} {text:34} ({lags})")
    print(f"  (the stub thread's peak CPU: {peak:.0%} of a core)")


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
        description="Load-test clients side by side: CPU per 1k tokens, accuracy, highest rate."
    )
    parser.add_argument("--setup", action="store_true", help="create .venvs/guidellm, aiperf")
    parser.add_argument("--quick", action="store_true", help="1 round, 2 scenarios, 2 rates")
    parser.add_argument("--peers", default=",".join(peer_table.ALL), help="which clients")
    keys = ",".join(s.key for s in SCENARIOS)
    parser.add_argument("--scenarios", help=f"part 1 scenarios ({keys})")
    parser.add_argument("--rounds", type=int, help="rounds of part 1 (default 2; quick 1)")
    parser.add_argument("--scale", type=float, default=1.0, help="x requests per part 1 run")
    parser.add_argument("--rates", type=_parse_rates, help="part 3 req/s, comma-separated")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per rate (3)")
    parser.add_argument("--attempts", type=int, default=2, help="tries before a rate fails (2)")
    parser.add_argument("--skip-cpu", action="store_true", help="part 3 only")
    parser.add_argument("--skip-rates", action="store_true", help="parts 1 and 2 only")
    parser.add_argument("--lock", type=Path, default=LOCK, help="flock file per run ('' none)")
    parser.add_argument("--keep", action="store_true", help="keep the logs and result files")
    return parser.parse_args(argv)


def _load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min)"


@contextlib.contextmanager
def _workdir(keep: bool) -> Iterator[Path]:
    if keep:
        path = Path(tempfile.mkdtemp(prefix="bench_client-"))
        print(f"logs and result files: {path}")
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="bench_client-") as name:
        yield Path(name)


def _chosen_scenarios(args: argparse.Namespace) -> list[Scenario]:
    keys = args.scenarios.split(",") if args.scenarios else None
    if keys is None and args.quick:
        keys = list(QUICK_SCENARIOS)
    return [s for s in SCENARIOS if keys is None or s.key in keys]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    wanted = [name.strip() for name in args.peers.split(",") if name.strip()]
    if args.setup:
        return peer_table.setup(wanted)
    peers, skipped = peer_table.peers(set(wanted))
    for name, reason in skipped.items():
        print(f"{name} is not measured: {reason}")
    names = [p.name for p in peers]
    lock = args.lock if str(args.lock) not in ("", ".") else None
    print(f"clients: {', '.join(names)}; {os.cpu_count()} CPUs; {_load_average()}")
    started = time.perf_counter()
    become_subreaper()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the stub on the way out
    with _workdir(args.keep) as workdir:
        runner = Runner(workdir, lock)
        scenarios = _chosen_scenarios(args)
        if not args.skip_cpu and scenarios:
            rounds = args.rounds or (1 if args.quick else 2)
            print(f"\n--- parts 1 and 2: CPU per token, accuracy ({rounds} round(s)) ---")
            figures = measure_cpu(runner, peers, scenarios, rounds, workdir, scale=args.scale)
        if not args.skip_rates:
            rates = args.rates or list(QUICK_RATES if args.quick else DEFAULT_RATES)
            print(f"\n--- part 3: highest rate ({args.duration:g} s per rate) ---")
            results, peak = measure_rates(runner, peers, rates, args.duration, args.attempts)
    print(f"\n=== figures === ({_load_average()})\n")
    if not args.skip_cpu and scenarios:
        report_cpu(figures, scenarios, names)
        report_accuracy(figures, names)
    if not args.skip_rates:
        report_rates(results, peak, rates)
    print(f"\n(took {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
