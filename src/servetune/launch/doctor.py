"""`doctor`: read a vLLM server log, or an excerpt of one, and say what happened (ready, failed,
still starting) and why.

Works on logs of vLLM 0.6 to 0.33, GPU or CPU builds, whole or as the 5-40 lines users paste,
through docker, kubectl, Ray or NIM prefixes. The text is untrusted: `servetune.vllm.log` reads it
into lines (the same reader `serve` follows a start with) and everything else works on those.

How a failure is read:
- *whose log*: a text with no line any vLLM release prints (see `vllm.log.shows_vllm`: another
  server's log, a bare library traceback, random bytes) raises `NotAVllmLog`; an empty text is
  a start that has not written anything yet (`starting`);
- the *status*, from the log's own sequence: `ready` once the API server announced itself (the
  address line, the route list, uvicorn's lines, the periodic stats), took a request (uvicorn's
  access line, a request added or received, an error of its request handlers) or its engine
  served (the end of V0's request loop, which only a request starts; an engine-dead error,
  which only an engine that ran raises), and a request's traceback or the errors of a shutdown
  afterwards do not change that. An engine that died after that (`EngineDeadError`, "Engine
  loop has died", `MQLLMEngine is already dead`, the process killed) leaves a server that no
  longer serves: `failed`, with the engine's own error as the root cause where the excerpt
  holds it (its diagnoses, then `engine-dead-at-serving:cause`), else `engine-dead-at-serving`
  on the line that says it died. A collective between the GPUs that torch's watchdog timed out
  (`Watchdog caught collective operation timeout`) leaves an engine that hangs or is taken
  down: `failed`, before ready or after. A port that fails to
  bind after the announcement (uvicorn binds after its startup in vLLM 0.6.0-0.6.3) is
  `failed` too. Before ready, `failed` on a fatal line (argparse, engine or worker
  failure, the process killed: `Killed`, exit code 137) or an exception that no startup progress
  follows, even when the closing lines are missing; `starting` when nothing decisive is there.
  Only the last start of a log appended over restarts counts, unless it has not got past the
  point where the one before it failed: a crash loop (a container restarting vLLM on the same
  refused flag or busy port) is that failure;
- the *root cause* is the most specific error, not the last line: vLLM ends an engine failure
  with "Engine core initialization failed. See root cause above.", so the error printed before
  that wrapper is the one that counts; never a `Traceback` header, a line that heads one
  (`WorkerProc hit an exception.`) or a source line a traceback quotes (`raise ...`,
  `self._initialize_kv_caches(...)`), unless the excerpt ends on it before the exception line
  and it is a `raise` that spells its message out (`cut_traceback.raised`); for an `EOFError`
  of `input()` (a prompt in a container without stdin) the question it asked; for torch's
  NCCL watchdog, the timeout it caught, not what it then says (`we are taking the entire
  process down`);
- *diagnoses* come from the table in `diagnoses.py`, in priority order, the one whose evidence
  is the root cause first; for a traceback cut before its exception, from the check it stopped
  in (`cut_traceback.py`). Ids reuse `check`'s rule ids where the cause is the same.

A diagnosis keeps its texts as `doctor` text keys with the facts the log gave (`Sentence`):
`DoctorReport.to_json()` says them in English whatever `--lang` is, `render.doctor` in the
language asked for. The root cause and the evidence are vLLM's own lines, quoted as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from servetune import texts
from servetune.errors import NotAVllmLog
from servetune.launch import cut_traceback, diagnoses, flag_errors, log_facts
from servetune.launch.diagnoses import Hit
from servetune.texts import Area, ErrorText, Language
from servetune.vllm import log as vllm_log
from servetune.vllm.log import LogLine, Reported

__all__ = ["Diagnosis", "DoctorReport", "Reported", "Sentence", "diagnose"]

Status = Literal["ready", "failed", "starting"]


class _Lenient(dict[str, str]):
    """Facts for str.format_map: a fact the log did not give shows as `?`, never a KeyError."""

    def __missing__(self, key: str) -> str:
        return "?"


class Sentence(texts.Sentence):
    """A `doctor` text key with the facts the log gave; a fact an excerpt left out reads `?`."""

    __slots__ = ()
    area: ClassVar[Area] = "doctor"

    def text(self, language: Language = "en") -> str:
        facts = _Lenient({name: str(value) for name, value in self.facts})
        return texts.get(self.area, self.key, language).format_map(facts)


@dataclass(frozen=True)
class Diagnosis:
    """One cause found in the log: its id, its texts (`<id>[:<variant>].title` ... of the
    doctor texts, with the log's facts), and the line that shows it."""

    id: str
    title: Sentence
    why: Sentence
    fix: Sentence
    evidence: str

    def to_json(self) -> dict[str, object]:
        """The diagnosis in the `--format json` contract: its texts in English."""
        return {
            "id": self.id,
            "title": self.title.text(),
            "why": self.why.text(),
            "fix": self.fix.text(),
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class DoctorReport:
    """The verdict on one log."""

    status: Status
    root_cause: str | None
    diagnoses: tuple[Diagnosis, ...]
    reported: Reported

    def to_json(self) -> dict[str, object]:
        """The report as the `--format json` contract spells it."""
        return {
            "status": self.status,
            "root_cause": self.root_cause,
            "diagnoses": [d.to_json() for d in self.diagnoses],
            "reported": {
                "kv_cache_tokens": self.reported.kv_cache_tokens,
                "max_concurrency": self.reported.max_concurrency,
                "vllm_version": self.reported.vllm_version,
            },
        }


# --- status -------------------------------------------------------------------------------------


def _failed(lines: Sequence[LogLine]) -> bool:
    """A finished text: a fatal line, or an error the start never got past."""
    fatal = any(vllm_log.is_fatal(line) for line in lines)
    return fatal or vllm_log.unrecovered_error(lines) is not None


def _ready_at(lines: Sequence[LogLine]) -> int | None:
    """Where the API server announced itself, read in the log's own order: None when nothing
    announced it, when the port failed to bind after the announcement (uvicorn binds after its
    startup in vLLM 0.6.0-0.6.3), or when a fatal line came before uvicorn's startup finished.
    What follows the final line (a request's traceback) does not undo it."""
    first = next((i for i, line in enumerate(lines) if vllm_log.is_ready(line)), None)
    if first is None or any(vllm_log.port_lost(line) for line in lines[first:]):
        return None
    final = next((i for i, line in enumerate(lines) if vllm_log.final_ready(line)), None)
    if final is not None:
        return final
    # What a shutdown signal's handling prints (workers killed, tracebacks) is not a failure.
    if any(vllm_log.is_fatal(line) for line in _until_shutdown(lines[first:])):
        return None
    return first


def _served_from(lines: Sequence[LogLine], ready_at: int) -> int:
    """Where the server's own errors start: after the ready line, or, when that line is the
    report of the engine dying while it served (V0's request loop), after the ready line before
    it, since the error that ended the loop is printed first."""
    if not vllm_log.served(lines[ready_at]):
        return ready_at + 1
    earlier = [i for i in range(ready_at) if vllm_log.is_ready(lines[i])]
    return earlier[-1] + 1 if earlier else 0


def _until_shutdown(lines: Sequence[LogLine]) -> list[LogLine]:
    for index, line in enumerate(lines):
        if vllm_log.is_shutdown(line):
            return list(lines[:index])
    return list(lines)


# --- root cause ---------------------------------------------------------------------------------

# `Exception in worker VllmWorkerProcess while processing method init_device: <message>,
# Traceback (most recent call last):` (vLLM 0.5-0.8 workers): the message is the cause.
_WORKER_MESSAGE = re.compile(r"while processing method \w+: (?P<msg>.+?),? Traceback \(most")
_NOT_A_CAUSE = re.compile(r"^(?:Traceback \(most recent|raise |File \"|\^+$|~+)")
# Python source a traceback quotes, when a paste lost its indentation (Markdown outside a code
# block): `self._initialize_kv_caches(vllm_config)`, `return torch.ops._C.x(`, `out = f(x)`.
_SOURCE = re.compile(
    r"^(?:self\.\w|(?:return|raise|await|yield)\b|[A-Za-z_][\w.]* = |[A-Za-z_]\w*(?:\.\w+)+\()"
)
_FRAME_LINE = re.compile(r'^\s*File "[^"]+", line \d+')
# `input()` met a closed stdin (a container): the question it asked is the cause, not this.
_NO_ANSWER = re.compile(r"^EOFError: EOF when reading a line")


def _pydantic_error(lines: Sequence[LogLine]) -> str | None:
    for index, line in enumerate(lines):
        if "ValidationError:" in line.text and "validation error" in line.text:
            for follower in lines[index + 1 :]:
                body = follower.text.strip()
                if body.startswith("Value error, "):
                    return body.removeprefix("Value error, ")
                if "[type=" in body:
                    return body
    return None


# Exceptions a failure raises in the tasks it cancels (uvicorn's lifespan waiting on its queue
# when the app's startup dies): a consequence, never the cause.
_CANCELLED = re.compile(
    r"^(?:asyncio\.(?:exceptions\.)?|concurrent\.futures\._base\.)?CancelledError\b"
)


def _real_exception(line: LogLine) -> bool:
    text = line.text.strip()
    return (
        vllm_log.is_exception(line)
        and not vllm_log.is_wrapper(line.text)
        and _CANCELLED.match(text) is None
    )


# NCCL's `unhandled cuda error` (torch's `DistBackendError: NCCL error in: ..., unhandled cuda
# error`) says only that a CUDA call NCCL made failed; where the excerpt also holds a CUDA out of
# memory (a peer's exception, NCCL's `Cuda failure 'out of memory'`), that is the call's failure.
_CUDA_CONSEQUENCE = re.compile(
    r"NCCL error.*unhandled cuda error|\bncclUnhandledCudaError\b|NCCL_ERROR_UNHANDLED_CUDA"
)


def _first_cause(lines: Sequence[LogLine]) -> str | None:
    """The last real exception before the first wrapper, else the last real one at all."""
    wrapper = next(
        (i for i, line in enumerate(lines) if line.loud and vllm_log.is_wrapper(line.text)), None
    )
    if wrapper is not None:
        for line in reversed(lines[:wrapper]):
            if _real_exception(line):
                return line.text.strip()
    real = [line.text.strip() for line in lines if _real_exception(line)]
    return real[-1] if real else None


def _exception_cause(lines: Sequence[LogLine]) -> str | None:
    """`_first_cause`, or the out of memory behind it when it is NCCL's failed CUDA call: an
    exception, else an error line that says it (NCCL's own `Last error: Cuda failure 'out of
    memory'` is the rest of its message: the NCCL error stays the cause)."""
    cause = _first_cause(lines)
    if cause is None or _CUDA_CONSEQUENCE.search(cause) is None:
        return cause
    ooms = [
        line
        for line in lines
        if line.loud and log_facts.OOM.search(line.text) and "Cuda failure" not in line.text
    ]
    exceptions = [line for line in ooms if _real_exception(line)]
    errors = [line for line in ooms if line.level in ("ERROR", "CRITICAL")]
    oom = next(iter(exceptions or errors), None)
    return cause if oom is None else oom.text.strip()


def _is_source(lines: Sequence[LogLine], index: int, *, by_place: bool = True) -> bool:
    """A line of Python source a traceback quotes: shaped so, or (`by_place`) right after its
    frame line."""
    body = lines[index].text.strip()
    if _SOURCE.match(body) is not None or _NOT_A_CAUSE.match(body) is not None:
        return True
    return by_place and index > 0 and _FRAME_LINE.match(lines[index - 1].text) is not None


def _heads_traceback(lines: Sequence[LogLine], index: int) -> bool:
    """A request handler's `logger.exception("Error in chat completion stream generator.")`:
    a fixed phrase, the traceback right after it ends in the exception that says what failed.
    (V0's engine logs `logger.exception(e)`, the exception's own message, before its traceback:
    that one is a cause.)"""
    following = lines[index + 1 : index + 2]
    return (
        vllm_log.answered(lines[index])
        and bool(following)
        and following[0].text.startswith("Traceback (most recent call last)")
    )


def _message_cause(lines: Sequence[LogLine]) -> str | None:
    """No exception line: a worker's inline message, else the last error message line (never a
    traceback's frame or source line)."""
    for line in lines:
        match = _WORKER_MESSAGE.search(line.text)
        if match is not None and line.loud:
            return match["msg"].strip()
    errors = [
        line.text.strip()
        for index, line in enumerate(lines)
        if line.level in ("ERROR", "CRITICAL")
        and not line.text[:1].isspace()
        and not _is_source(lines, index)
        and not _heads_traceback(lines, index)
    ]
    real = [text for text in errors if not vllm_log.is_wrapper(text)]
    return real[-1] if real else None


def _question(lines: Sequence[LogLine], cause: str) -> str | None:
    """The first line of the text a prompt printed before its `input()` met a closed stdin:
    raw lines between the traceback's header and the EOFError, not its frames or source (the
    prompt went to stdout, the traceback to stderr: a paste interleaves them)."""
    at = next((i for i, line in enumerate(lines) if line.text.strip() == cause), len(lines))
    header = [i for i in range(at) if lines[i].text.startswith("Traceback (most recent")]
    start = header[-1] + 1 if header else 0
    for index in range(start, at):
        line = lines[index]
        raw_text = line.level is None and line.text[:1].strip() != ""
        if (
            raw_text
            and not _is_source(lines, index, by_place=False)
            and not vllm_log.is_traceback(line)
        ):
            return line.text.strip()
    return None


def _root_cause(lines: Sequence[LogLine]) -> str | None:
    """The line that explains the failure; see the module docstring for the order."""
    for line in lines:
        if line.level is None and vllm_log.is_argparse_error(line):
            return line.text.strip()
    cause = (
        _pydantic_error(lines)
        or _exception_cause(lines)
        or _message_cause(lines)
        or next((text for text in diagnoses.telling_lines(lines)), None)
        or cut_traceback.raised(lines)
    )
    if cause is not None and _NO_ANSWER.match(cause):
        return _question(lines, cause) or cause
    return cause


def _fatal_line(lines: Sequence[LogLine], *, wrappers: bool) -> str | None:
    """The first fatal line; with `wrappers=False` only one that says more than "see above"
    (a dead worker, argparse): a wrapper is evidence, never a root cause."""
    return next(
        (
            line.text.strip()
            for line in lines
            if vllm_log.is_fatal(line) and (wrappers or not vllm_log.is_wrapper(line.text))
        ),
        None,
    )


# --- diagnoses ----------------------------------------------------------------------------------


def _diagnosis(hit: Hit) -> Diagnosis:
    key = f"{hit.id}:{hit.variant}" if hit.variant else hit.id
    if not texts.has("doctor", f"{key}.title"):
        key = hit.id
    title, why, fix = (Sentence(f"{key}.{field}", **hit.facts) for field in ("title", "why", "fix"))
    return Diagnosis(id=hit.id, title=title, why=why, fix=fix, evidence=hit.evidence)


_ITERATION_TIMEOUT = "Engine iteration timed out"


def _dead_engine(scope: Sequence[LogLine], causes: Sequence[Hit]) -> list[Hit]:
    """A server that was up and whose engine then died: its requests fail from then on (V0's
    API server ends itself). Where the excerpt holds the engine's own error, its diagnoses come
    first, then the death they caused (`engine-dead-at-serving:cause`): two facts, why it died
    and that the server no longer serves. Else V0's loop that timed out says so itself, or the
    line that says the engine died stands alone."""
    died = next((line for line in scope if vllm_log.engine_died(line)), None)
    if causes:
        evidence = died.text.strip() if died is not None else causes[0].evidence
        return [*causes, Hit("engine-dead-at-serving", "cause", {}, evidence)]
    timeout = next((line for line in scope if _ITERATION_TIMEOUT in line.text), None)
    if timeout is not None:
        return [Hit("engine-dead-at-serving", "timeout", {}, timeout.text.strip())]
    return [] if died is None else [Hit("engine-dead-at-serving", None, {}, died.text.strip())]


# --- the verdict --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Verdict:
    """Status, the lines that explain it, the root cause, and whether the server was up before
    it failed (its engine died serving)."""

    status: Status
    scope: list[LogLine]
    root: str | None
    served: bool = False


def _verdict(lines: Sequence[LogLine]) -> _Verdict:
    ready_at = _ready_at(lines)
    if ready_at is not None:
        # Errors after a shutdown signal are the shutdown's, not the server's.
        scope = _until_shutdown(lines[_served_from(lines, ready_at) :])
        if not any(vllm_log.engine_died(line) for line in scope):
            return _Verdict("ready", scope, None)
        # The engine died after the server was up: it no longer serves anything.
        root = _root_cause(scope) or _fatal_line(scope, wrappers=False)
        return _Verdict("failed", scope, root, served=True)
    if _failed(lines):
        return _Verdict(
            "failed", list(lines), _root_cause(lines) or _fatal_line(lines, wrappers=False)
        )
    return _Verdict("starting", list(lines), None)


def _judged_run(runs: Sequence[Sequence[LogLine]]) -> tuple[_Verdict, list[LogLine]]:
    """The verdict on the last run, and the run it rests on. A restart that has not yet got past
    the point where the run before it failed is a crash loop (a container restarting vLLM on the
    same refused flag or busy port): the earlier failure is the verdict."""
    last = list(runs[-1])
    verdict = _verdict(last)
    if verdict.status != "starting" or len(runs) < 2:
        return verdict, last
    previous = list(runs[-2])
    before = _verdict(previous)
    if before.status == "failed" and vllm_log.furthest_phase(last) <= vllm_log.furthest_phase(
        previous
    ):
        return before, previous + last
    return verdict, last


def _require_vllm(text: str, lines: Sequence[LogLine]) -> None:
    """Raise `NotAVllmLog` for a text with no line any vLLM release prints. An empty text is a
    log nothing was written to yet (a start that just began), not another program's."""
    if not text.strip() or vllm_log.shows_vllm(text):
        return
    if diagnoses.vllm_says([line.text for line in lines]):
        return
    raise NotAVllmLog(ErrorText("doctor.not-vllm"))


def diagnose(text: str, *, vllm_output: bool = False) -> DoctorReport:
    """Read a vLLM server log (the whole text or an excerpt) and say what happened, and why.

    Pure: the caller reads the file. Only the last run in the text counts when a log holds
    several starts, unless it is a crash loop (the restart got no further than the failed run
    before it). Diagnoses come in the pattern table's priority order, the one whose evidence is
    the root cause first; a failed start always has at least one (`engine-init-failed` when no
    pattern knows the error).

    A text with no vLLM line at all (another server's log, a bare library traceback, random
    bytes) raises `NotAVllmLog`; `vllm_output=True` says the text is the output of a vLLM
    process the caller started (`serve`, `tune`), judged whatever it holds.
    """
    every = vllm_log.read_lines(text)
    if not vllm_output:
        _require_vllm(text, every)
    verdict, lines = _judged_run(vllm_log.runs(every))
    status, scope, root = verdict.status, verdict.scope, verdict.root
    reported = vllm_log.reported(lines)
    texts = diagnoses.telling(scope)
    hits = flag_errors.argparse_hits(texts, reported.vllm_version)
    facts = log_facts.context(lines, served=verdict.served)
    hits += diagnoses.table_hits([*texts, *([root] if root else [])], facts)
    if root is not None:
        hits.sort(key=lambda hit: root not in hit.evidence)  # stable: priority order otherwise
    if verdict.served:
        hits = _dead_engine(scope, hits)
    elif root is None and not hits and status == "failed":
        hits = cut_traceback.hits(scope)
    if status == "failed" and not hits:
        evidence = root or _fatal_line(lines, wrappers=True) or ""
        hits = [Hit("engine-init-failed", None, {}, evidence)]
    return DoctorReport(status, root, tuple(_diagnosis(hit) for hit in hits), reported)
