"""The periodic stats lines vLLM logs while busy: the scheduler's state and the throughput over the
last interval (re-exported by `servetune.vllm.log`).

V0's `Avg prompt throughput: ... Running: N reqs, Swapped: N reqs, Pending: N reqs, GPU KV cache
usage: X%, CPU KV cache usage: Y%` (0.6-0.10), V1's `Engine 000: ... Running: N reqs, Waiting: N
reqs[, Deferred: N reqs][, Preemptions: N], GPU KV cache usage: X%, ...` and its `N Engines
Aggregated:` form (0.8-0.33), with `CPU`/`XPU` in place of `GPU` on other builds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from servetune.vllm.log_lines import raw_lines

__all__ = ["StatsLine", "stats_lines"]

_STATS = re.compile(
    r"(?:Engine (?P<engine>\d+): |(?P<engines>\d+) Engines? Aggregated: )?"
    r"Avg prompt throughput: (?P<prompt>[\d.]+) tokens/s, "
    r"Avg generation throughput: (?P<generation>[\d.]+) tokens/s, "
    r"Running: (?P<running>\d+) reqs?, "
    r"(?:Swapped: (?P<swapped>\d+) reqs?, )?"
    r"(?:(?:Pending|Waiting): (?P<waiting>\d+) reqs?, )?"
    r"(?:Deferred: (?P<deferred>\d+) reqs?, )?"
    r"(?:Preemptions: (?P<preemptions>\d+), )?"
    r"(?:GPU|CPU|XPU|NPU|HPU|TPU)? ?KV cache usage: (?P<kv>[\d.]+)%"
    r"(?:, CPU KV cache usage: (?P<cpu_kv>[\d.]+)%)?"
)
# vLLM's own time stamp (`INFO 02-28 21:48:18`): month-day, no year.
_STAMP = re.compile(r"\b(\d\d-\d\d \d\d:\d\d:\d\d)\b")


@dataclass(frozen=True)
class StatsLine:
    """One periodic stats line: the scheduler's state and the throughput over the last interval.

    `stamp` is vLLM's time stamp as printed (`MM-DD HH:MM:SS`, no year), None where a paste lost
    it; `engine` the engine's index (`000`), or `all` for the aggregated line; `waiting` is V0's
    `Pending`; KV cache usage is a 0-1 fraction, as /metrics has it.
    """

    stamp: str | None
    engine: str | None
    prompt_tokens_per_s: float
    generation_tokens_per_s: float
    running: int
    waiting: int | None
    kv_cache_usage: float
    swapped: int | None = None
    deferred: int | None = None
    preemptions: int | None = None  # in this interval (V1 0.33)
    cpu_kv_cache_usage: float | None = None


def _stats(match: re.Match[str], stamp: str | None) -> StatsLine:
    def count(name: str) -> int | None:
        value = match[name]
        return None if value is None else int(value)

    cpu_kv = match["cpu_kv"]
    return StatsLine(
        stamp=stamp,
        engine=match["engine"] or ("all" if match["engines"] else None),
        prompt_tokens_per_s=float(match["prompt"]),
        generation_tokens_per_s=float(match["generation"]),
        running=int(match["running"]),
        waiting=count("waiting"),
        kv_cache_usage=float(match["kv"]) / 100,
        swapped=count("swapped"),
        deferred=count("deferred"),
        preemptions=count("preemptions"),
        cpu_kv_cache_usage=None if cpu_kv is None else float(cpu_kv) / 100,
    )


def stats_lines(text: str) -> list[StatsLine]:
    """Every periodic stats line of a log, in order; several pasted onto one line (a lost line
    break) count one by one, each with the last time stamp printed before it."""
    found: list[StatsLine] = []
    for raw in raw_lines(text):
        start = 0
        for match in _STATS.finditer(raw):
            stamps = _STAMP.findall(raw, start, match.start())
            found.append(_stats(match, stamps[-1] if stamps else None))
            start = match.end()
    return found
