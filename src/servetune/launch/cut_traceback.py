"""Where a traceback cut before its exception line stopped, and the diagnosis that shows.

Pasted excerpts often end inside a traceback: the exception that names the cause is the last line
of it, and the paste stopped before. `doctor` asks here only when a failed start has no root
cause and the message table found nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from servetune.launch.diagnoses import Hit
from servetune.vllm import log as vllm_log

# The innermost vLLM function a cut traceback shows names the check that raised, where that
# function raises one error only (V0's worker.py, 0.4-0.10): `_check_if_gpu_supports_dtype`
# refuses bfloat16 below compute capability 8.0 and nothing else; `raise_if_cache_size_invalid`,
# the first thing `initialize_cache` does with the blocks profiling found, refuses a KV cache
# without one request of max-model-len (or without any block).
#
# `LLM.wake_up` (sleep mode, 0.7 on) maps again all the GPU memory `sleep` handed back, and checks
# only that sleep mode is on, which `sleep` before it already checked: a traceback that stopped
# there is memory that did not come back (`CUDA Error: out of memory at cumem_allocator.cpp`).
_STOPPED_IN = (
    (re.compile(r"\bin _check_if_gpu_supports_dtype$"), "dtype-unsupported-gpu"),
    (re.compile(r'/vllm/[\w/]+\.py", line \d+, in wake_up$'), "out-of-memory"),
    (
        re.compile(r"\bin raise_if_cache_size_invalid$|^Error executing method initialize_cache\."),
        "kv-cache-too-small",
    ),
)


def _stopped_at(lines: Sequence[vllm_log.LogLine]) -> str | None:
    """The innermost frame line of a text that ends inside a traceback. V0's `execute_method`
    only calls the method its header names (`Error executing method initialize_cache. ...`,
    worker_base.py, 0.4 on): for a traceback cut right after that frame, the header."""
    dispatched = False
    for line in reversed(lines):
        text = line.text.strip()
        if vllm_log.is_exception(line) and not text.startswith("Error executing method "):
            return None
        if text.startswith("Error executing method "):
            return text if dispatched else None
        if text.startswith("File ") and not dispatched:
            if not text.endswith(" in execute_method"):
                return text
            dispatched = True
        elif text.startswith("File "):
            return None
    return None


# A `raise` whose message is a string literal (or an f-string: its fixed words): Python quotes the
# statement in the innermost frame, then prints the exception, whose message is that literal.
_RAISE_LITERAL = re.compile(
    r"""^raise (?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\([rRbBuUfF]{0,2}["']"""
)
_FRAME = re.compile(r'^\s*File "[^"]+", line \d+')


def raised(lines: Sequence[vllm_log.LogLine]) -> str | None:
    """The `raise` statement a text that ends inside a traceback stopped on, when it spells its
    message out (`raise ValueError("No available memory for the cache blocks. "`): the paste lost
    the exception line, whose message is that literal, so the statement is the error as far as
    the excerpt holds it. None when an exception line follows, or the innermost frame quotes a
    call or a message the statement builds elsewhere."""
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line.text)]
    if not frames or frames[-1] + 1 >= len(lines):
        return None
    after = lines[frames[-1] + 1 :]
    if any(vllm_log.is_exception(line) for line in after):
        return None
    statement = after[0].text.strip()
    return statement if _RAISE_LITERAL.match(statement) else None


def _kv_hit(lines: Sequence[vllm_log.LogLine], stopped: str) -> Hit | None:
    numbers = vllm_log.reported(lines)
    tokens, blocks = numbers.kv_cache_tokens, numbers.gpu_blocks
    if tokens is None or blocks is None:
        return None  # nothing says how big the cache was
    if blocks <= 0:
        return Hit("kv-cache-too-small", "none", {}, stopped)
    if numbers.max_model_len is not None and numbers.max_model_len <= tokens:
        return None  # the length fits: another step of initialize_cache failed
    facts = {"estimate": str(tokens), "blocks": str(blocks)}
    return Hit("kv-cache-too-small", "blocks", facts, stopped)


def hits(lines: Sequence[vllm_log.LogLine]) -> list[Hit]:
    """The diagnosis a failed start's cut traceback shows by where it stopped, or none."""
    stopped = _stopped_at(lines)
    if stopped is None:
        return []
    for pattern, rule_id in _STOPPED_IN:
        if pattern.search(stopped) is None:
            continue
        if rule_id == "dtype-unsupported-gpu":
            return [Hit(rule_id, "cut", {}, stopped)]
        if rule_id == "out-of-memory":
            return [Hit(rule_id, "sleep-mode", {}, stopped)]
        hit = _kv_hit(lines, stopped)
        return [hit] if hit is not None else []
    return []
