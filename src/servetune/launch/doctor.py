"""`doctor`: read a vLLM server log and say what happened (ready, failed, still starting) and why.

Works on logs of vLLM 0.6 to 0.33, GPU or CPU builds. The log is untrusted text: it is parsed once
into logical lines (process/level/time prefix removed) and everything else works on those.

How a failure is read:
- the *status* comes from markers: `Application startup complete` means it was ready (errors
  printed afterwards while shutting down do not change that); argparse errors, engine start-up
  failures and top-level tracebacks mean it failed; anything else is still starting;
- the *root cause* is the real error, not the last line: vLLM ends an engine failure with
  "Engine core initialization failed. See root cause above.", so the error printed before that
  wrapper is the one that counts;
- *diagnoses* come from a table of vLLM's own messages (see ../shared/reference/vllm-rules.md),
  in priority order. Ids reuse `check`'s rule ids where the cause is the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from servetune._did_you_mean import suggest
from servetune.texts.doctor_en import EN, DoctorText
from servetune.texts import Language
from servetune.vllm import flags as vllm_flags
from servetune.vllm.serve_command import UNICODE_DASHES

Status = Literal["ready", "failed", "starting"]


@dataclass(frozen=True)
class Diagnosis:
    """One cause found in the log, in the report's language, with the line that shows it."""

    id: str
    title: str
    why: str
    fix: str
    evidence: str


@dataclass(frozen=True)
class Reported:
    """What vLLM itself reported; None when the log does not say."""

    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    vllm_version: str | None = None


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
            "diagnoses": [
                {"id": d.id, "title": d.title, "why": d.why, "fix": d.fix, "evidence": d.evidence}
                for d in self.diagnoses
            ],
            "reported": {
                "kv_cache_tokens": self.reported.kv_cache_tokens,
                "max_concurrency": self.reported.max_concurrency,
                "vllm_version": self.reported.vllm_version,
            },
        }


# --- lines --------------------------------------------------------------------------------------

# `(EngineCore_DP0 pid=123) ERROR 11-30 07:40:31 [core.py:1510] ` (0.8+), `INFO 12-10 10:00:00
# api_server.py:585] ` (0.6), uvicorn's `INFO:     `, optionally behind a container timestamp
# (`docker logs -t`, `kubectl logs --timestamps`) and torch's `[rank0]: `.
_PREFIX = re.compile(
    r"^(?:\d{4}-\d\d-\d\dT\S+\s)?(?:\[rank\d+\]:\s?)?"
    r"(?:\((?:[^()]|\([^()]*\))*? pid=\d+\)\s*)?"
    r"(?:(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)"
    r"(?::\s+|\s+\d\d-\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+\[?[\w./-]+:\d+\]\s?))?"
)
# torch/glog lines: `W1130 07:36:16.401000 7670 torch/_library/triton.py:53] ...`
_GLOG = re.compile(r"^\[?(?P<level>[IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+(?:\d+\s+)?[\w./-]+:\d+\]\s?")
# Colour codes: vLLM colours its prefixes on a terminal (`docker logs` of a `-t` container).
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_GLOG_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}
_QUIET_LEVELS = frozenset({"DEBUG", "INFO", "WARNING"})
# pydantic prints `<field>` on one line and `  <message> [type=...]` on the next.
_PYDANTIC_FIELD = re.compile(r"^[a-z_][\w.]*$")
_PYDANTIC_VALUE_NOISE = re.compile(r"\s*\[type=value_error, input_value=.*\]$")


@dataclass(frozen=True)
class _Line:
    level: str | None  # None: raw stderr (tracebacks, argparse), never INFO noise
    text: str  # without the prefix, right-stripped; indentation kept (traceback frames)

    @property
    def loud(self) -> bool:
        """Worth reading for errors: raw or ERROR/CRITICAL, and not a traceback frame."""
        if self.level in _QUIET_LEVELS:
            return False
        return not self.text[:1].isspace() or self.text.lstrip().startswith("Value error, ")


def _parse_line(raw: str) -> _Line:
    raw = _ANSI.sub("", raw)
    glog = _GLOG.match(raw)
    if glog:
        return _Line(_GLOG_LEVELS[glog["level"]], raw[glog.end() :].rstrip())
    match = _PREFIX.match(raw)  # always matches: every part of the prefix is optional
    if match is None:
        return _Line(None, raw.rstrip())
    return _Line(match["level"], raw[match.end() :].rstrip())


def _lines(text: str) -> list[_Line]:
    parsed = [_parse_line(raw) for raw in text.splitlines()]
    merged: list[_Line] = []
    for line in parsed:
        previous = merged[-1] if merged else None
        body = line.text.strip()
        if (
            previous is not None
            and line.text.startswith("  ")
            and "[type=" in body
            and _PYDANTIC_FIELD.match(previous.text)
        ):
            merged[-1] = _Line(previous.level, f"{previous.text}: {body}")
            continue
        if body.startswith("Value error, "):
            # Drop the `[type=..., input_value=ArgsKwargs(...)]` tail: the whole config, truncated.
            merged.append(_Line(line.level, "  " + _PYDANTIC_VALUE_NOISE.sub("", body)))
            continue
        merged.append(line)
    return merged


# --- status -------------------------------------------------------------------------------------

_READY = "Application startup complete"
# A new run starts at the banner (0.15+ logo or plain line, 0.6-0.11 "API server version") or at
# argparse's usage text; logs appended over restarts are read from the last run only.
_RUN_START = re.compile(r"^(?:usage: |vLLM (?:API )?server version |.*█.*\bversion \d)")
_ARGPARSE = re.compile(r"^(?:vllm(?: serve)?|[\w./-]*api_server(?:\.py)?): error: (?P<msg>.+)$")
_EXCEPTION = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?P<name>(?=[A-Z])\w*(?:Error|Exception|Exit|Interrupt))(?::\s*.*)?$"
)
# Messages that only say "something failed above"; the root cause is printed before them.
_WRAPPERS = re.compile(
    r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start"
    r"|WorkerProc (?:initialization failed|failed to start)|EngineCore encountered"
    r"|EngineDeadError|^(?:\w+\.)*(?:SystemExit|KeyboardInterrupt)\b"
)
_FATAL = re.compile(
    r"Engine core initialization failed|Engine process failed to start|EngineCore failed to start"
    r"|WorkerProc failed to start|exited with code [1-9]|error while attempting to bind on address"
)
# After "ready", only these make an error the server's own rather than a request's.
_ENGINE_DIED = re.compile(
    r"EngineCore encountered a fatal error|EngineDeadError|Engine loop has died"
)
_SHUTDOWN = re.compile(
    r"\[shutdown\]|SIGTERM|SIGINT|received signal|Shutting down|shutdown complete|KeyboardInterrupt"
)


def _last_run(lines: list[_Line]) -> list[_Line]:
    starts = [i for i, line in enumerate(lines) if _RUN_START.match(line.text.strip())]
    return lines[starts[-1] :] if starts else lines


def _is_exception(line: _Line) -> bool:
    return line.loud and not line.text[:1].isspace() and _EXCEPTION.match(line.text) is not None


def _failed(lines: Sequence[_Line]) -> bool:
    traceback_seen = False
    for line in lines:
        if line.level in _QUIET_LEVELS:
            continue
        if _ARGPARSE.match(line.text) or _FATAL.search(line.text):
            return True
        if line.text.startswith("Traceback (most recent call last)"):
            traceback_seen = line.level is None
        elif traceback_seen and _is_exception(line):
            return True  # a traceback on stderr that ran to its end killed the process
    return False


def _fatal_line(lines: Sequence[_Line]) -> str | None:
    for line in lines:
        if line.level not in _QUIET_LEVELS and (
            _ARGPARSE.match(line.text) or _FATAL.search(line.text)
        ):
            return line.text.strip()
    return None


def _until_shutdown(lines: Sequence[_Line]) -> list[_Line]:
    for index, line in enumerate(lines):
        if _SHUTDOWN.search(line.text):
            return list(lines[:index])
    return list(lines)


# --- root cause ---------------------------------------------------------------------------------


def _pydantic_error(lines: Sequence[_Line]) -> str | None:
    for index, line in enumerate(lines):
        if "ValidationError:" in line.text and "validation error" in line.text:
            for follower in lines[index + 1 :]:
                body = follower.text.strip()
                if body.startswith("Value error, "):
                    return body.removeprefix("Value error, ")
                if "[type=" in body:
                    return body
    return None


def _root_cause(lines: Sequence[_Line]) -> str | None:
    """The line that explains the failure; see the module docstring for the order."""
    for line in lines:
        if line.level is None and _ARGPARSE.match(line.text):
            return line.text.strip()
    pydantic = _pydantic_error(lines)
    if pydantic is not None:
        return pydantic
    wrapper = next(
        (i for i, line in enumerate(lines) if line.loud and _WRAPPERS.search(line.text)), None
    )
    if wrapper is not None:
        for line in reversed(lines[:wrapper]):
            if _is_exception(line) and not _WRAPPERS.search(line.text):
                return line.text.strip()
    exceptions = [line.text.strip() for line in lines if _is_exception(line)]
    real = [text for text in exceptions if not _WRAPPERS.search(text)]
    if real or exceptions:
        return (real or exceptions)[-1]
    errors = [line.text.strip() for line in lines if line.level in ("ERROR", "CRITICAL")]
    return errors[-1] if errors else None


# --- what vLLM reported -------------------------------------------------------------------------

_KV_TOKENS = re.compile(r"KV cache size: ([\d,]+) tokens")
_CONCURRENCY = re.compile(r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x")
_V0_BLOCKS = re.compile(r"# (?:GPU|CPU) blocks: (\d+)")
_BLOCK_SIZE = re.compile(r"\bblock_size(?:=|': )(\d+)")
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


def _last_int(pattern: re.Pattern[str], lines: Sequence[_Line]) -> int | None:
    found = [m for line in lines if (m := pattern.search(line.text))]
    return int(found[-1][1].replace(",", "")) if found else None


def _version(lines: Sequence[_Line]) -> str | None:
    for pattern in _VERSIONS:
        for line in lines:
            match = pattern.search(line.text)
            if match:
                return match[1].rstrip(".")
    return None


def _reported(lines: Sequence[_Line]) -> Reported:
    tokens = _last_int(_KV_TOKENS, lines)
    if tokens is None:
        # V0 (0.6-0.8) logs blocks, not tokens; 16 tokens a block unless --block-size said else.
        blocks = _last_int(_V0_BLOCKS, lines)
        size = _last_int(_BLOCK_SIZE, lines) or 16
        tokens = None if blocks is None else blocks * size
    concurrency = [m for line in lines if (m := _CONCURRENCY.search(line.text))]
    return Reported(
        kv_cache_tokens=tokens,
        max_concurrency=float(concurrency[-1][1]) if concurrency else None,
        vllm_version=_version(lines),
    )


# --- diagnoses ----------------------------------------------------------------------------------

Facts = dict[str, str]


@dataclass(frozen=True)
class _Pattern:
    id: str
    regexes: tuple[re.Pattern[str], ...]  # alternatives (re allows a group name once a pattern)
    variant: str | None = None
    derive: Callable[[Facts], Facts] | None = None


@dataclass(frozen=True)
class _Hit:
    id: str
    variant: str | None
    facts: Facts
    evidence: str


def _cc(value: str) -> str:
    """vLLM prints capability 75 in some messages and 7.5 in others; show 7.5."""
    return value if "." in value or not value.isdigit() else f"{int(value) // 10}.{value[-1]}"


def _heads(facts: Facts) -> Facts:
    heads = int(facts["heads"])
    valid = [d for d in range(1, min(heads, 64) + 1) if heads % d == 0 and (d <= 8 or d % 8 == 0)]
    return {"valid": ", ".join(map(str, valid))}


def _busy(facts: Facts) -> Facts:
    free, total = float(facts["free"]), float(facts["total"])
    fit = math.floor((free / total - 0.01) * 100) / 100 if total > 0 else 0.0
    return {"used": f"{total - free:.2f}", "fit_util": f"{max(fit, 0.0):.2f}"}


def _p(
    rule_id: str,
    *patterns: str,
    variant: str | None = None,
    derive: Callable[[Facts], Facts] | None = None,
) -> _Pattern:
    return _Pattern(rule_id, tuple(re.compile(p) for p in patterns), variant, derive)


# Priority order: the most specific first. One diagnosis per id; the first pattern that matches
# any line wins. Messages are vLLM's own (../shared/reference/vllm-rules.md, by section).
_PATTERNS: tuple[_Pattern, ...] = (
    # argparse (8.1); "unrecognized arguments" is read token by token in _argparse_hits
    _p(
        "bool-flag-value",
        r"argument (?P<flag>--[\w-]+)(?:/--[\w-]+)*: ignored explicit argument '(?P<value>[^']*)'",
        derive=lambda f: {"negative": "--no-" + f["flag"].removeprefix("--")},
    ),
    _p("invalid-value", r"argument (?P<flag>[-\w/]+): invalid \w+(?: value)?: '(?P<value>[^']*)'"),
    _p("missing-value", r"argument (?P<flag>[-\w/]+): expected (?:one|at least one) argument"),
    # before the model loads (9)
    _p("port-in-use", r"[Aa]ddress already in use|\[Errno (?:98|48)\]"),
    _p(
        "model-access-denied",
        r"Access to model (?P<model>\S+?) is restricted",
        r"gated repo for url https://huggingface\.co/(?P<model>[^/\s]+/[^/\s]+)/",
        r"GatedRepoError|[Cc]annot access gated repo|trying to access a gated repo"
        r"|403 Client Error|Invalid credentials in Authorization header|Invalid user token",
    ),
    _p(
        "trust-remote-code-required",
        r"`trust_remote_code=True`|requires you to execute the (?:configuration|modeling) file"
        r"|contains custom code which must be executed",
    ),
    _p(
        "model-not-found",
        r"OfflineModeIsEnabled|LocalEntryNotFoundError|couldn't connect to 'https://huggingface"
        r"|outgoing traffic has been disabled",
        variant="offline",
    ),
    _p(
        "model-not-found",
        r"Invalid repository ID or local directory specified: '(?P<model>[^']+)'",
        r"Repo id must be in the form 'repo_name' or 'namespace/repo_name': '(?P<model>[^']+)'",
        r"(?P<model>\S+) is not a local folder and is not a valid model identifier",
        r"RepositoryNotFoundError|Repository Not Found for url"
        r"|does not appear to have a file named config\.json",
    ),
    _p(
        "architecture-unsupported",
        r"Model architecture (?P<arch>\w+) was supported in vLLM until v?(?P<until>\d[\d.]*\d)",
        variant="dropped",
    ),
    _p(
        "architecture-unsupported",
        r"Model architecture (?P<arch>\w+) is not supported in-tree anymore",
        variant="plugin",
    ),
    _p(
        "architecture-unsupported",
        r"model type .(?P<model_type>[\w-]+). but Transformers does not recognize this "
        r"architecture",
        variant="model-type",
    ),
    _p(
        "architecture-unsupported",
        r"Model architectures? (?P<arch>\[[^\]]*\]|\S+) (?:are|is) not supported",
        r"Model architectures (?P<arch>\[[^\]]*\]) failed to be inspected",
    ),
    # --- parallelism, section 1
    _p(
        "tp-exceeds-gpus",
        r"World size \((?P<world>\d+)\) is larger than the number of available GPUs "
        r"\((?P<gpus>\d+)\)",
    ),
    _p(
        "tp-exceeds-gpus",
        r"Cannot provide a placement group|Unable to load Ray|invalid device ordinal"
        r"|DP adjusted local rank \d+ is out of bounds",
        variant="other",
    ),
    _p(
        "tp-heads-indivisible",
        r"Total number of attention heads \((?P<heads>\d+)\) must be divisible by tensor parallel "
        r"size \((?P<tp>\d+)\)",
        derive=_heads,
    ),
    _p(
        "tp-heads-indivisible",
        r"Weight \w+_size_per_partition = (?P<size>\d+) is not divisible by\s+[\w ]+ = "
        r"(?P<tile>\d+)",
        variant="kernel",
    ),
    _p(
        "tp-heads-indivisible",
        r"^AssertionError: (?P<a>\d+) is not divisible by (?P<b>\d+)$",
        variant="kv",
    ),
    # --- quantization and dtype, sections 2 and 3
    _p(
        "quant-method-mismatch",
        r"Quantization method specified in the model config \((?P<checkpoint>[^)]*)\) does not "
        r"match the quantization method specified in the .quantization. argument "
        r"\((?P<flag>[^)]*)\)",
    ),
    _p("quant-on-unquantized", r"Cannot find the config file for (?P<method>[\w-]+)"),
    _p(
        "quant-unsupported-gpu",
        r"The quantization method (?P<method>[\w-]+) is not supported for the current GPU\. "
        r"Minimum capability: (?P<needed>\d+)\. Current capability: (?P<have>\d+)",
        derive=lambda f: {"needed": _cc(f["needed"]), "have": _cc(f["have"])},
    ),
    _p(
        "quant-unsupported-gpu",
        r"(?P<dtype>\S+) is not supported for quantization method (?P<method>[\w-]+)\. "
        r"Supported dtypes: (?P<supported>.+)$",
        variant="dtype",
    ),
    _p(
        "quant-unsupported-gpu",
        r"(?P<method>[\w-]+) quantization is currently not supported in (?P<device>.+?)\.?$",
        variant="platform",
    ),
    _p(
        "dtype-unsupported-gpu",
        r"Bfloat16 is only supported on GPUs with compute capability of at least 8\.0\. Your "
        r"(?P<gpu>.+?) GPU (?:has compute capability (?P<have>[\d.]*\d)|does not have)",
    ),
    _p(
        "dtype-unsupported-model",
        r"The model type '(?P<model_type>[^']+)' does not support float16",
    ),
    # lengths and scheduler limits (4.3, 4.4, 4.6)
    _p(
        "model-len-exceeds-model",
        r"User-specified max_model_len \((?P<asked>\d+)\) is greater than the derived "
        r"max_model_len \((?P<key>\w+)=(?P<limit>\d+)",
    ),
    _p(
        "batched-tokens-below-model-len",
        r"max_num_batched_tokens \((?P<mbt>\d+)\) is smaller than max_model_len "
        r"\((?P<max_model_len>\d+)\)",
    ),
    _p(
        "batched-tokens-below-num-seqs",
        r"max_num_batched_tokens \((?P<mbt>\d+)\) must be greater than or equal to max_num_seqs "
        r"\((?P<seqs>\d+)\)",
    ),
    _p(
        "gpu-memory-utilization-range",
        r"gpu_memory_utilization: Input should be (?:less|greater).*?input_value=(?P<util>[^,\]]+)",
        r"(?i:gpu memory utilization) must be less than 1\.0\. Got (?P<util>[\d.]*\d)",
    ),
    # --- memory, sections 4.5, 4.6 and 9
    _p(
        "gpu-memory-busy",
        r"Free memory on device.*?\((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is less "
        r"than desired GPU memory utilization \((?P<util>[\d.]+), (?P<requested>[\d.]*\d) GiB\)",
        derive=_busy,
    ),
    _p("gpu-memory-busy", r"Error in memory profiling\. Initial free memory", variant="profiling"),
    _p("weights-dont-fit", r"Failed to load model - not enough GPU memory"),
    _p(
        "kv-cache-too-small",
        r"max seq len \((?P<max_model_len>\d+)\).*?estimated maximum model length is "
        r"(?P<estimate>\d+)",
        r"The model's max seq len \((?P<max_model_len>\d+)\) is larger than the maximum number "
        r"of tokens that can be stored in KV cache \((?P<estimate>\d+)\)",
        variant="estimate",
    ),
    _p(
        "kv-cache-too-small",
        r"To serve at least one request with the models?'s max seq len \((?P<max_model_len>\d+)\)",
    ),
    _p(
        "kv-cache-too-small",
        r"No available memory for the cache blocks|Cannot auto-fit max_model_len",
        variant="none",
    ),
    _p(
        "out-of-memory",
        r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|HIP out of memory",
    ),
    # multi-GPU communication (9)
    _p(
        "nccl-error",
        r"\bNCCL error\b|\bnccl(?:System|Internal|InvalidUsage|UnhandledCuda|Remote)Error\b"
        r"|ncclCommInitRank failed",
    ),
)

# A diagnosis that already explains another one's evidence (the gated-repo error is wrapped in
# "Invalid repository ID"; the weights OOM carries the torch OOM text).
_COVERS: Mapping[str, tuple[str, ...]] = {
    "model-access-denied": ("model-not-found",),
    "trust-remote-code-required": ("model-not-found", "architecture-unsupported"),
    "weights-dont-fit": ("out-of-memory",),
}

_CONTEXT = {
    "port": re.compile(r"'port': (\d+)|\bport=(\d+)|Starting vLLM .*?https?://[^\s:]+:(\d+)"),
    "model": re.compile(r"'model': '([^']+)'|\bmodel='([^']+)'|█.*\bmodel\s+(\S+)"),
}


def _context(lines: Sequence[_Line]) -> Facts:
    facts: Facts = {"port": "8000"}  # vllm serve's default
    for key, pattern in _CONTEXT.items():
        for line in lines:
            match = pattern.search(line.text)
            if match:
                facts[key] = next(g for g in match.groups() if g is not None)
                break
    return facts


def _facts(pattern: _Pattern, match: re.Match[str], context: Facts) -> Facts:
    facts = dict(context)
    facts.update({k: v for k, v in match.groupdict().items() if v is not None})
    if pattern.derive is not None:
        facts.update(pattern.derive(facts))
    return facts


def _table_hits(texts: Sequence[str], context: Facts) -> list[_Hit]:
    hits: list[_Hit] = []
    for pattern in _PATTERNS:
        if any(hit.id == pattern.id for hit in hits):
            continue
        # Alternatives in order: an earlier one names more facts (the gated model's name).
        found = next(
            ((m, text) for regex in pattern.regexes for text in texts if (m := regex.search(text))),
            None,
        )
        if found is not None:
            match, text = found
            hits.append(_Hit(pattern.id, pattern.variant, _facts(pattern, match, context), text))
    covered = {c for hit in hits for c in _COVERS.get(hit.id, ())}
    return [hit for hit in hits if hit.id not in covered]


# `vllm: error: unrecognized arguments: ...` names every token argparse could not place.
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (?P<args>.+)$")


def _flag_hit(token: str, version: str | None, evidence: str) -> _Hit:
    if token[0] in UNICODE_DASHES:
        fixed = "--" + token.lstrip(UNICODE_DASHES + "-")
        return _Hit("dash-typo", None, {"token": token, "fixed": fixed}, evidence)
    flag = vllm_flags.normalize(token.split("=", 1)[0])
    facts: Facts = {"token": token}
    gone = vllm_flags.removal(flag, version) if version else None
    if gone is not None and gone.first_seen is not None and version is not None:
        facts |= {"first_seen": gone.first_seen, "version": version}
        return _Hit("unknown-flag", "too-new", facts, evidence)
    if gone is not None or flag in vllm_flags.REPLACEMENTS:
        replacement = vllm_flags.REPLACEMENTS.get(flag)
        if replacement:
            return _Hit("removed-flag", "replaced", facts | {"replacement": replacement}, evidence)
        return _Hit("removed-flag", None, facts, evidence)
    return _unknown_flag_hit(flag, facts, version, evidence)


def _unknown_flag_hit(flag: str, facts: Facts, version: str | None, evidence: str) -> _Hit:
    if version is None and any(flag in vllm_flags.flags_of(v) for v in vllm_flags.known_versions()):
        # A real flag of some release: the server is older or newer than the command assumed.
        return _Hit("unknown-flag", "other-release", facts, evidence)
    suggestion = suggest(flag, vllm_flags.suggestions(version or vllm_flags.newest_version()))
    if suggestion:
        return _Hit("unknown-flag", "did-you-mean", facts | {"suggestion": suggestion}, evidence)
    return _Hit("unknown-flag", None, facts, evidence)


_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})


def _argparse_hits(texts: Sequence[str], version: str | None) -> list[_Hit]:
    for text in texts:
        match = _UNRECOGNIZED.search(text)
        if match is None or not _ARGPARSE.match(text):
            continue
        tokens = match["args"].split()
        if not tokens:
            continue
        hits = [_flag_hit(t, version, text) for t in tokens if t[0] in UNICODE_DASHES + "-"]
        if tokens[0].lower() in _BOOL_WORDS:
            # `--enforce-eager True`: argparse took the switch and left its value over.
            hits.insert(0, _Hit("bool-flag-value", "value-only", {"token": tokens[0]}, text))
        elif not tokens[0].startswith(tuple(UNICODE_DASHES + "-")):
            # A value before any flag: a value given to a switch, or a flag lost to a line break.
            hits.insert(0, _Hit("unknown-flag", "stray", {"token": tokens[0]}, text))
        return hits
    return []


# --- texts --------------------------------------------------------------------------------------


class _Lenient(dict[str, str]):
    """Facts for str.format_map: a fact the log did not give shows as `?`, never a KeyError."""

    def __missing__(self, key: str) -> str:
        return "?"


def table(language: Language) -> Mapping[str, DoctorText]:
    """The texts of the diagnoses, keyed `id` or `id:variant`."""
    if language == "zh-TW":
        from servetune.texts.doctor_zh_tw import ZH_TW

        return ZH_TW
    return EN


def _render(hit: _Hit, texts: Mapping[str, DoctorText]) -> Diagnosis:
    key = f"{hit.id}:{hit.variant}" if hit.variant else hit.id
    text = texts.get(key) or texts[hit.id]
    facts = _Lenient(hit.facts)
    return Diagnosis(
        id=hit.id,
        title=text["title"].format_map(facts),
        why=text["why"].format_map(facts),
        fix=text["fix"].format_map(facts),
        evidence=hit.evidence,
    )


# --- the verdict --------------------------------------------------------------------------------


def _explains(hit: _Hit, root: str) -> bool:
    """The hit's evidence is the root-cause line (pydantic's "Value error, " prefix aside)."""
    return root in hit.evidence


def diagnose(text: str, language: Language = "en") -> DoctorReport:
    """Read a vLLM server log (the whole text) and say what happened, and why.

    Pure: the caller reads the file. Only the last run in the text counts when a log holds
    several starts. Diagnoses come in the pattern table's priority order, the one whose evidence
    is the root cause first; a failed start always has at least one (`engine-init-failed` when
    no pattern knows the error).
    """
    lines = _last_run(_lines(text))
    reported = _reported(lines)
    ready_at = next((i for i, line in enumerate(lines) if _READY in line.text), None)
    if ready_at is not None:
        status: Status = "ready"
        # Errors after a shutdown signal are the shutdown's, not the server's.
        scope = _until_shutdown(lines[ready_at + 1 :])
        died = any(line.loud and _ENGINE_DIED.search(line.text) for line in scope)
        root = _root_cause(scope) if died else None
    else:
        status = "failed" if _failed(lines) else "starting"
        scope = lines
        root = _root_cause(scope) or (_fatal_line(scope) if status == "failed" else None)
    texts = [line.text.strip() for line in scope if line.loud]
    hits = _argparse_hits(texts, reported.vllm_version)
    hits += _table_hits([*texts, *([root] if root else [])], _context(lines))
    if root is not None:
        hits.sort(key=lambda hit: not _explains(hit, root))  # stable: priority order otherwise
    if status == "failed" and not hits:
        hits = [_Hit("engine-init-failed", None, {}, root or "")]
    rendered = tuple(_render(hit, table(language)) for hit in hits)
    return DoctorReport(status, root, rendered, reported)
