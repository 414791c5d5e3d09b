"""The one reader of vLLM's log: lines, markers and the numbers vLLM reports.

`serve` follows a start line by line and `doctor` reads a finished log or a pasted excerpt; both
judge with the predicates here, so they cannot disagree about what a line means.

- **Lines.** `log_lines` reads the text into `LogLine`s, every prefix other tools put before
  vLLM's own text removed (re-exported here: `read_lines`, `parse_line`).
- **Whose log.** `shows_vllm`: whether any line is one vLLM prints (its logger prefix, process
  tags, files, program or name, its server's and engine's own messages); a text with none is
  another program's, and so is one whose only vLLM lines are those an import prints.
- **Markers.** *ready*: the API server announced itself (the address line, the route list,
  uvicorn's lines, the periodic stats), took a request (`answered`) or its engine served
  (`served`); only a port that fails to bind undoes that (`port_lost`).
  *Runs*: a log appended over restarts splits at each banner. *fatal*: a line after which the
  start cannot succeed (the engine or a worker failed, argparse refused the command). An *exception*
  line (`ValueError: ...`) or a traceback is decisive only in a finished text and only when no
  startup progress follows it: vLLM prints tracebacks it recovers from, so while a start is
  being followed a traceback alone never stops it (the process exiting does).
- **Numbers.** What vLLM reported about memory and capacity, for every release 0.6 to 0.33:
  the KV cache, and the scheduler's caps where the log states them (`args: Namespace(...)` of
  0.6-0.8, `non-default args: {...}` of 0.11+, `Chunked prefill is enabled with ...`).
- **Stats lines.** The scheduler's state vLLM logs every few seconds while busy (`stats_lines`,
  read in `log_stats`):
  V0's `Avg prompt throughput: ... Running: N reqs, Swapped: N reqs, Pending: N reqs, GPU KV
  cache usage: X%, CPU KV cache usage: Y%` (0.6-0.10), V1's `Engine 000: ... Running: N reqs,
  Waiting: N reqs[, Deferred: N reqs][, Preemptions: N], GPU KV cache usage: X%, ...` and its
  `N Engines Aggregated:` form (0.8-0.33), with `CPU`/`XPU` in place of `GPU` on other builds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from servetune.vllm.log_lines import LEVELS, QUIET, LogLine, parse_line, raw_lines, read_lines
from servetune.vllm.log_stats import StatsLine, stats_lines

__all__ = [
    "PHASES",
    "LogLine",
    "Reported",
    "StartWatch",
    "StatsLine",
    "answered",
    "engine_died",
    "final_ready",
    "furthest_phase",
    "is_argparse_error",
    "is_exception",
    "is_fatal",
    "is_progress",
    "is_ready",
    "is_run_start",
    "is_shutdown",
    "is_traceback",
    "is_wrapper",
    "last_run",
    "parse_line",
    "phase",
    "port_lost",
    "read_lines",
    "reported",
    "runs",
    "served",
    "shows_vllm",
    "stats_lines",
    "unrecovered_error",
]

# --- markers ------------------------------------------------------------------------------------

# The API server announced itself, in the order vLLM prints it (entrypoints/launcher.py and
# uvicorn, every release 0.4-0.33): the address line (0.7+), the route list (`Available routes
# are:`, then one `Route: /v1/models, Methods: GET` a route), uvicorn's `Started server process`,
# `Application startup complete` and, when uvicorn bound the port itself (vLLM before 0.6.4),
# `Uvicorn running on ...`. Then the periodic stats (`Avg prompt throughput: ...`, V0 metrics.py
# and V1 loggers.py alike), logged only by a server that is up. And the end of a server that was
# up: uvicorn's `Server._serve` returns right after a startup that failed, so its shutdown lines
# (`Shutting down`, `Waiting for application shutdown.`, `Application shutdown complete.`,
# `Finished server process [N]`) follow only a completed startup; vLLM's `serve_http` logs
# "Shutting down FastAPI HTTP server." when a signal cancels the server it started (0.5-0.10);
# from 0.23 its signal handler, installed once the HTTP server task runs, logs the steps of that
# shutdown as `[shutdown] API server: shutdown triggered`, `... stopping engine client mode=...`,
# `... shutting down FastAPI HTTP server` (entrypoints/launcher.py, launchers/ in 0.33).
_SERVER_END = (
    r"^(?:Shutting down|Waiting for application shutdown\.|Application shutdown complete\."
    r"|Finished server process \[\d+\]|Shutting down FastAPI HTTP server\."
    r"|\[shutdown\] API server: .+)$"
)
_READY = re.compile(
    r"Application startup complete|Starting vLLM (?:API )?server(?: \d+)? on https?://"
    r"|Available routes are:|Route: /\S*, Methods: |Started server process \[\d+\]"
    r"|Uvicorn running on (?:https?://|socket |unix socket )|Avg prompt throughput: |" + _SERVER_END
)
# uvicorn finished its startup, or the server reports what it serves, or its end.
_FINAL_READY = re.compile(r"Application startup complete|Avg prompt throughput: |" + _SERVER_END)
# The API server took a request, which it does only once it is up: uvicorn's access line
# (`"POST /v1/chat/completions HTTP/1.1" 500`), the engine adding one (`Added request <id>.`, V0
# AsyncLLMEngine and MQLLMEngine 0.4-0.10, V1 AsyncLLM 0.8+) or the request logger receiving
# it (`Received request <id>: ...`, entrypoints/logger.py).
_ANSWERED = re.compile(
    r'"(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) /\S* HTTP/[\d.]+" \d{3}\b'
    r"|^Added request \S+\.$|^Received request \S+: "
)
# vLLM's OpenAI request handlers (`serving_chat.py`, `serving_completion.py`... up to 0.2x,
# `serving.py` of each endpoint's folder later) log errors only while they handle a request
# (`logger.exception("Error in preprocessing prompt inputs")`, "Error with model ...").
_HANDLER = re.compile(r"^serving(?:_\w+)?\.py$")
# Only an engine that served a request prints these: V0's AsyncLLMEngine starts its background
# loop at the first request (`add_request`: `if not self.is_running: start_background_loop()`,
# 0.4-0.10), and `_log_task_completion` reports that loop's end, which only an error causes
# (a cancelled loop logs "Engine is gracefully shutting down." at INFO); a request sent to the
# dead loop is refused with "Background loop has errored already".
# The same for the API server's handler of a request that met a dead engine: it ends the server
# (`MQLLMEngine is already dead, terminating server process`, launcher.py 0.5-0.8). And the
# engine-dead errors of the engine clients, which only an engine that was running raises (a start
# that fails says "Engine process failed to start" or "Engine core initialization failed"): V0's
# MQEngineDeadError ("Engine loop is not running", 0.6-0.10) and V1's EngineDeadError (the core
# reported ENGINE_CORE_DEAD from its busy loop, 0.8+). And that loop's own timeout:
# `run_engine_loop` logs "Engine iteration timed out. This should never happen!" when a step of
# the requests it runs takes longer than VLLM_ENGINE_ITERATION_TIMEOUT_S, then marks the engine
# errored (0.4-0.10). And V1's `AsyncLLM output_handler failed.` (async_llm.py 0.8-0.33): the
# output handler reads the engine core's outputs; AsyncLLM starts it only after
# `make_async_mp_client` returned, i.e. after the engine core's handshake (KV cache sized, graphs
# captured), so it fails only when an engine core that had started died.
_SERVED = re.compile(
    r"Engine background task failed|Exception in callback _log_task_completion"
    r"|Engine iteration timed out\. This should never happen"
    r"|AsyncEngineDeadError: (?:Task finished unexpectedly|Background loop (?:has errored|is not))"
    r"|(?:has failed|is already dead), terminating server process"
    r"|^(?:[\w.]+\.)?(?:MQ)?EngineDeadError: "
    r"|^AsyncLLM output_handler failed\.$"
)
# The port could not be bound. vLLM 0.6.4+ binds it before the engine starts; before that
# uvicorn binds it after `Application startup complete` (vllm#8791, pipeline parallel), so this
# line undoes every ready line before it.
_PORT_LOST = re.compile(
    r"error while attempting to bind on address|[Aa]ddress already in use|\[Errno (?:98|48)\]"
)
# A new run starts at the banner (0.15+ logo or plain line, 0.6-0.11 "API server version") or at
# argparse's usage text; logs appended over restarts are read from the last run only.
_RUN_START = re.compile(r"^(?:usage: |vLLM (?:API )?server version |.*█.*\bversion \d)")
_ARGPARSE = re.compile(r"^(?:vllm(?: serve)?|[\w./-]*api_server(?:\.py)?): error: (?P<msg>.+)$")
_EXCEPTION = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?P<name>(?=[A-Z])\w*(?:Error|Exception|Exit|Interrupt))(?::\s*.*)?$"
)
# torch's ProcessGroupNCCL watchdog (every torch vLLM ran on): a collective between the GPUs
# did not complete within the process group's timeout (`Timeout(ms)=600000`). The engine's step
# waits on that collective, so the engine is hung; with the watchdog's default error handling
# torch then takes the process down ("To avoid data inconsistency, we are taking the entire
# process down."). Before ready or after, the server serves nothing again.
_COLLECTIVE_TIMEOUT = r"Watchdog caught collective operation timeout"
# Lines after which the start cannot succeed, whatever follows.
_FATAL = re.compile(
    r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start"
    r"|EngineCore hit an exception|WorkerProc (?:initialization failed|failed to start)"
    r"|exited with code [1-9]|error while attempting to bind on address"
    r"|Worker proc \S+ died unexpectedly|Exception in worker \S+ while processing method"
    r"|This might cause deadlock in distributed execution|" + _COLLECTIVE_TIMEOUT
)
# An accelerator's allocator ran out (torch's for CUDA and ROCm, torch_npu's for Ascend, the XPU
# one): vLLM recovers from no such exception before it is up, so it is fatal even when other
# workers log progress after it (Ray interleaves every worker's lines).
_OOM_EXCEPTION = re.compile(r"(?:CUDA|HIP|NPU|XPU) out of memory|OutOfMemoryError")
# Fatal at any level: vLLM 0.5-0.8 log a dead worker's clean-up at INFO.
_FATAL_ANY_LEVEL = re.compile(r"Killing local vLLM worker processes|\bWorker \S+ pid \d+ died")
# The process got SIGKILL (the OOM killer, a container's memory limit): a shell reports the
# signal's name alone on a line, docker, compose and Kubernetes exit code 137 (128 + 9).
_KILLED = re.compile(
    r"^(?:Killed$|Out of memory: Killed process \d+|.*\bexited with code 137\b"
    r"|.*\b[Ee]xit [Cc]ode:? 137\b|.*\bOOMKilled\b)"
)
# Messages that only say "something failed elsewhere": above them (the API server's wrappers),
# or in the traceback they head, whose exception line comes last (`logger.exception(...)` of a
# worker's `execute_method`, 0.4 on, and of V1's engine core and workers, 0.8 on).
_WRAPPERS = re.compile(
    r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start"
    r"|WorkerProc (?:initialization failed|failed to start)|EngineCore encountered"
    r"|EngineDeadError|^(?:\w+\.)*(?:SystemExit|KeyboardInterrupt)\b"
    r"|^ray\.exceptions\.\w+\(|^Process \w+-?\d*:$"
    r"|EngineCore hit an exception|WorkerProc hit an exception|^Error executing method \S+\. "
    r"|^Invocation of \S+ method failed"
    # torch_npu's error code after the exception it reports (`[ERROR] 2025-03-05-07:15:39
    # (PID:1, Device:0, RankID:-1) ERR99999 UNKNOWN application exception`)
    r"|\(PID:\d+, Device:-?\d+, RankID:-?\d+\) ERR\d{5}\b"
    r"|terminating server process|Engine loop (?:has died|is not running)"
    r"|^Exception in worker \S+ while processing method \w+\.$|^AsyncLLM output_handler failed\.$"
    # what torch's watchdog says after the timeout it caught: its consequences
    r"|Timeout at NCCL work: \d+|Exception \(either an error or timeout\) detected by watchdog"
    r"|Some NCCL operations have failed or timed out|we are taking the entire process down"
    r"|watchdog thread terminated with exception: (?:\[[^\]]*\] )?" + _COLLECTIVE_TIMEOUT
)
# After "ready", only these make an error the server's own rather than a request's.
_ENGINE_DIED = re.compile(
    r"EngineCore encountered a fatal error|EngineDeadError|Engine loop (?:has died|is not running)|"
    + _COLLECTIVE_TIMEOUT
)
_SHUTDOWN = re.compile(
    r"\[shutdown\]|SIGTERM|SIGINT|received signal|Shutting down|shutdown complete|KeyboardInterrupt"
)
# Startup phases worth a line of progress while following a start: (pattern, label).
PHASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Starting to load model|Loading weights|Loading safetensors"), "loading weights"),
    (re.compile(r"Model loading took ([\d.]+) ?GiB"), "weights loaded ({0} GiB)"),
    (re.compile(r"(?:GPU|CPU|XPU) KV cache size: ([\d,]+) tokens"), "KV cache: {0} tokens"),
    (
        re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"),
        "maximum concurrency at {0} tokens: {1}x",
    ),
    (re.compile(r"torch\.compile takes|Compiling a graph|Dynamo bytecode"), "compiling"),
    (re.compile(r"Capturing CUDA graph|Capturing cudagraphs"), "capturing CUDA graphs"),
    (re.compile(r"Graph capturing finished"), "CUDA graphs captured"),
)


def is_ready(line: LogLine) -> bool:
    """The API server announced itself, took a request, or the engine served (see
    `final_ready` for the line that settles it)."""
    return _READY.search(line.text) is not None or answered(line) or served(line)


def final_ready(line: LogLine) -> bool:
    """uvicorn finished its startup, the server logged its stats or took a request, or its
    engine served: after this only a port that fails to bind (`port_lost`) undoes the start."""
    return _FINAL_READY.search(line.text) is not None or answered(line) or served(line)


def answered(line: LogLine) -> bool:
    """The API server took a request: its access line, the request added or received, or an
    error its request handlers logged."""
    if _ANSWERED.search(line.text.strip()) is not None:
        return True
    return (
        line.level == "ERROR"
        and line.source is not None
        and _HANDLER.match(line.source) is not None
    )


def served(line: LogLine) -> bool:
    """A line only an engine that served requests prints: the end of V0's request loop, which
    is also its death (`engine_died`); the error that ended it is printed before it."""
    return line.loud and _SERVED.search(line.text) is not None


def port_lost(line: LogLine) -> bool:
    """The API server's port could not be bound: the start failed, whatever came before."""
    return line.level not in QUIET and _PORT_LOST.search(line.text) is not None


def is_fatal(line: LogLine) -> bool:
    """A line after which this start cannot succeed (argparse, engine or worker failure, the
    process killed); never the source a traceback quotes (`raise RuntimeError("Engine core
    initialization failed. "`)."""
    if line.text[:1].isspace():
        return False
    if _FATAL_ANY_LEVEL.search(line.text):
        return True
    if line.level is None and _KILLED.match(line.text) is not None:
        return True
    if line.level in QUIET:
        return False
    if is_exception(line) and _OOM_EXCEPTION.search(line.text) is not None:
        return True
    return _ARGPARSE.match(line.text) is not None or _FATAL.search(line.text) is not None


def is_argparse_error(line: LogLine) -> bool:
    return _ARGPARSE.match(line.text) is not None


def is_exception(line: LogLine) -> bool:
    """`ValueError: ...` and the like, raw or logged as an error, not a traceback frame; and
    pydantic's `Value error, ...` line of a refused config, which users often quote alone."""
    if not line.loud:
        return False
    if line.text.lstrip().startswith("Value error, "):
        return True
    return not line.text[:1].isspace() and _EXCEPTION.match(line.text) is not None


def is_wrapper(text: str) -> bool:
    """A message that only points at an error printed before it."""
    return _WRAPPERS.search(text) is not None


def engine_died(line: LogLine) -> bool:
    """After ready: the engine died, or the process was killed (a server that stopped serving,
    not one request's error)."""
    if line.level is None and _KILLED.match(line.text) is not None:
        return True
    return line.loud and (_ENGINE_DIED.search(line.text) is not None or served(line))


def is_shutdown(line: LogLine) -> bool:
    return _SHUTDOWN.search(line.text) is not None


def phase(text: str) -> str | None:
    """A short progress label for a startup line, or None."""
    for pattern, label in PHASES:
        match = pattern.search(text)
        if match:
            return label.format(*match.groups())
    return None


def is_progress(line: LogLine) -> bool:
    """The start moved on: a phase, a ready line or a new run."""
    return phase(line.text) is not None or is_ready(line) or is_run_start(line)


def is_run_start(line: LogLine) -> bool:
    return _RUN_START.match(line.text.strip()) is not None


def last_run(lines: Sequence[LogLine]) -> list[LogLine]:
    """Only the last start of a log appended over restarts."""
    return runs(lines)[-1]


def runs(lines: Sequence[LogLine]) -> list[list[LogLine]]:
    """The starts of a log appended over restarts, in order (one, for a log of one start or an
    excerpt without a banner); what comes before the first banner belongs to the first run."""
    starts = [i for i, line in enumerate(lines) if is_run_start(line) and i > 0]
    bounds = [0, *starts, len(lines)]
    return [list(lines[a:b]) for a, b in pairwise(bounds) if b > a] or [[]]


def furthest_phase(lines: Sequence[LogLine]) -> int:
    """How far a start got: the index in `PHASES` of the latest phase it reached, -1 for none."""
    reached = [
        index
        for line in lines
        for index, (pattern, _) in enumerate(PHASES)
        if pattern.search(line.text)
    ]
    return max(reached, default=-1)


_FRAME = re.compile(r'^(?:Traceback \(most recent call last\)|\s*File "[^"]+", line \d+)')


def is_traceback(line: LogLine) -> bool:
    """A traceback's header or one of its frames, raw or logged as an error."""
    return line.level not in QUIET and _FRAME.match(line.text) is not None


def unrecovered_error(lines: Sequence[LogLine]) -> LogLine | None:
    """In a finished text, the first line of an error no startup progress follows: an exception
    line, or a traceback cut before its exception (a paste that stops mid-traceback)."""
    found: LogLine | None = None
    for line in lines:
        if is_exception(line) or is_traceback(line):
            found = found or line
        elif found is not None and is_progress(line):
            found = None  # vLLM recovered from it
    return found


# --- whose log ----------------------------------------------------------------------------------

# What only vLLM prints, or what names vLLM: its logger's prefix (`INFO 03-21 20:19:24
# [launcher.py:34] `; 0.4-0.7 without the brackets; NIM's with the year), its process tags
# (`(APIServer pid=1) `, `(EngineCore_DP0 pid=2) `, `(VllmWorker rank=0 pid=3) `,
# `(VllmWorkerProcess pid=4) `, `(Worker_TP1 pid=5) `, Ray's `(RayWorkerWrapper pid=6, ip=...) `),
# the word vllm as a name of its own (its files and modules in a traceback, `/usr/bin/vllm`, the
# `vllm serve` command, its banner, a wrapper's "vLLM config: {...}", a container or pod the
# platform named after it), argparse's lines with its program, its engine's wrappers and its
# stats line. Other servers (SGLang's `[2025-02-09 21:23:00 TP2] `, TGI's
# `text_generation_launcher`, a plain uvicorn app) print none of these.
_VLLM_PREFIX = (
    rf"(?:^|\s)(?:{LEVELS}) (?:\d{{4}}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[?[\w./-]+\.py:\d+\]"
)
_VLLM_MARK = re.compile(
    _VLLM_PREFIX
    + r"|\((?:APIServer|ApiServer|EngineCore|VllmWorker|Worker|RayWorker)\w*(?: rank=\d+)? pid=\d+"
    r"|(?i:\bvllm\b)|\bvllm_version\b"
    r"|Engine core initialization failed|EngineCore failed to start|EngineDeadError"
    r"|Engine process failed to start|Avg prompt throughput: "
)


# What vLLM logs when it is only imported, which any program that imports it prints too (SGLang
# 0.4 imports vLLM's layers, and its log carries vLLM's platform line): the platform detection
# of vllm/platforms/__init__.py (0.7 on), the plugin discovery of vllm/plugins/__init__.py, and
# the import warnings of _custom_ops.py and triton_utils. A text whose only vLLM lines are these
# is another program's log.
_IMPORT_ONLY = re.compile(
    r"Automatically detected platform \w+\.$|No platform detected, vLLM is running on "
    r"|^Platform plugin \S+ is activated$|^Available plugins for group \S+:$"
    r"|^name=\S+, value=\S+$|^all available plugins for group \S+ will be loaded\.$"
    r"|^set environment variable VLLM_PLUGINS to control which plugins to load\.$"
    r"|^plugin \S+ loaded\.$|^Failed to import from vllm\._C\w*(?: with |: )"
    r"|^Triton not installed or not compatible|^Triton is not installed\. "
)
# Messages only vLLM's server and engine print, behind whatever prefix a project that wraps
# vLLM puts on its lines (its Ray actor's tag, its own logger): the engine's start
# (llm_engine.py 0.4-0.10, V1's core), the memory it found, the progress bars of its loader and
# of `LLM.generate`, the API server's route list.
_VLLM_SAYS = re.compile(
    r"^Initializing an? (?:V1 )?LLM engine|# (?:GPU|CUDA|CPU|NPU|XPU) blocks: \d+"
    r"|^(?:Loading model weights|Model loading) took [\d.]+ ?Gi?B"
    r"|^(?:GPU|CPU|XPU|NPU) KV cache size: [\d,]+ tokens|^Maximum concurrency for [\d,]+ tokens"
    r"|^Loading safetensors checkpoint shards: |^Processed prompts: |^Capturing CUDA graph shapes: "
    r"|^Available routes are:$|^Route: /\S*, Methods: |^init engine \(profile, create kv cache"
)


def _vllm_line(raw: str) -> bool:
    line = parse_line(raw)
    if _IMPORT_ONLY.search(line.text):
        return False
    return bool(
        _VLLM_MARK.search(raw) or _ARGPARSE.match(line.text) or _VLLM_SAYS.search(line.text)
    )


def shows_vllm(text: str) -> bool:
    """Whether any line of the text is one that vLLM prints (see `_VLLM_MARK`, `_VLLM_SAYS`); a
    text with none is not a vLLM log at all. Messages vLLM shares with the libraries it runs
    (torch, transformers, huggingface_hub, NCCL, argparse, uvicorn) are not enough, and neither
    are the lines vLLM prints when another program only imports it (`_IMPORT_ONLY`)."""
    return any(_vllm_line(raw) for raw in raw_lines(text))


# --- the start, followed line by line --------------------------------------------------------


class StartWatch:
    """What the log of a start says so far, fed one raw line at a time (for `serve`).

    `ready` once the API server announced itself; `fatal` once a fatal line came before that.
    An exception alone is never fatal here: the text is still growing, and vLLM goes on after
    the tracebacks it handles; a start that really died exits, which the caller sees.
    """

    def __init__(self) -> None:
        self.ready = False
        self.fatal: LogLine | None = None

    def feed(self, raw: str) -> None:
        line = parse_line(raw)
        if self.ready or self.fatal is not None:
            return
        if is_ready(line):
            self.ready = True
        elif is_fatal(line):
            self.fatal = line


# --- what vLLM reported -------------------------------------------------------------------------


@dataclass(frozen=True)
class Reported:
    """What vLLM itself reported; None when the text does not say."""

    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    vllm_version: str | None = None
    available_kv_cache_gib: float | None = None  # negative: the weights did not leave room
    model_loading_gib: float | None = None
    gpu_blocks: int | None = None
    max_num_seqs: int | None = None  # the scheduler's caps, where the log states them
    max_num_batched_tokens: int | None = None
    max_model_len: int | None = None


_KV_TOKENS = re.compile(r"KV cache size: ([\d,]+) tokens")
_CONCURRENCY = re.compile(r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x")
_BLOCKS = re.compile(
    r"# (?:GPU|CUDA|CPU) blocks: (\d+)|num_gpu_blocks is: (\d+)|# (?:npu|xpu) blocks: (\d+)"
)
_BLOCK_SIZE = re.compile(r"\bblock_size(?:=|': )(\d+)")
_AVAILABLE_KV = re.compile(
    r"Available KV cache memory: (-?[\d.]+) GiB"
    r"|the rest of the memory reserved for KV Cache is (-?[\d.]+) ?GiB"
)
_LOADING = re.compile(
    r"Model loading took (-?[\d.]+) ?GiB|Loading model weights took (-?[\d.]+) ?GB"
    r"|model weights take (-?[\d.]+) ?GiB"
)
# The caps: `args: Namespace(max_num_seqs=256, ...)` (0.6-0.8), `non-default args: {'max_num_seqs':
# 64, ...}` (0.11+), `Chunked prefill is enabled with max_num_batched_tokens=2048.`, `Using max
# model len 4096`.
_MAX_NUM_SEQS = re.compile(r"\bmax_num_seqs(?:=|': )(\d+)")
_MAX_BATCHED = re.compile(r"\bmax_num_batched_tokens(?:=|': )(\d+)")
_MAX_MODEL_LEN = re.compile(r"\bmax_model_len(?:=|': )(\d+)|Using max model len (\d+)")
_VERSION_NUMBER = r"v?(\d+\.\d+(?:\.\d+)?(?:[.+-]?[A-Za-z0-9]+)*)"
_VERSIONS = tuple(
    re.compile(pattern + _VERSION_NUMBER)
    for pattern in (
        r"vLLM (?:API )?server version ",
        r"█.*\bversion ",
        r"Starting vLLM (?:API )?server.*?\bversion ",
        r"LLM engine \(",
        r"vllm_version[=:]\s*'?",
        r"\bvLLM\b.*\bversion ",
    )
)


def _last(pattern: re.Pattern[str], texts: Iterable[str]) -> str | None:
    found = [m for text in texts if (m := pattern.search(text))]
    if not found:
        return None
    return next(g for g in found[-1].groups() if g is not None).replace(",", "")


def _version(texts: Sequence[str]) -> str | None:
    for pattern in _VERSIONS:
        for text in texts:
            match = pattern.search(text)
            if match:
                return match[1].rstrip(".")
    return None


def _number(value: str | None) -> float | None:
    return None if value is None else float(value)


def reported(lines: Sequence[LogLine]) -> Reported:
    """The numbers vLLM logged (the last of each, for a log with several workers)."""
    texts = [line.text for line in lines]
    blocks = _last(_BLOCKS, texts)
    tokens = _last(_KV_TOKENS, texts)
    kv_tokens = int(tokens) if tokens is not None else None
    if kv_tokens is None and blocks is not None:
        # V0 (0.6-0.8) logs blocks, not tokens; 16 tokens a block unless --block-size said else.
        kv_tokens = int(blocks) * int(_last(_BLOCK_SIZE, texts) or 16)
    return Reported(
        kv_cache_tokens=kv_tokens,
        max_concurrency=_number(_last(_CONCURRENCY, texts)),
        vllm_version=_version(texts),
        available_kv_cache_gib=_number(_min_available(texts)),
        model_loading_gib=_number(_last(_LOADING, texts)),
        gpu_blocks=None if blocks is None else int(blocks),
        max_num_seqs=_integer(_last(_MAX_NUM_SEQS, texts)),
        max_num_batched_tokens=_integer(_last(_MAX_BATCHED, texts)),
        max_model_len=_integer(_last(_MAX_MODEL_LEN, texts)),
    )


def _integer(value: str | None) -> int | None:
    return None if value is None else int(value)


def _min_available(texts: Sequence[str]) -> str | None:
    """The smallest KV cache memory any worker reported: one short worker stops them all."""
    values = [
        next(g for g in m.groups() if g is not None)
        for text in texts
        if (m := _AVAILABLE_KV.search(text))
    ]
    return min(values, key=float) if values else None
