"""The serve flags tune may move, their candidate values, and which way each limit points.

Candidates come from `check`'s estimate: the KV cache room caps `--max-num-seqs` at the
sequences that fit, `--gpu-memory-utilization` goes no higher than SAFE_UTILIZATION, and
tensor parallelism and an FP8 KV cache are offered only where the GPUs and the model allow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from servetune.errors import UsageError
from servetune.review.check import Report
from servetune.texts import ErrorText
from servetune.tune.limit import Limit

SEQS = "--max-num-seqs"
BATCHED = "--max-num-batched-tokens"
UTIL = "--gpu-memory-utilization"
TP = "--tensor-parallel-size"
KV_DTYPE = "--kv-cache-dtype"
KNOBS = (SEQS, BATCHED, UTIL, TP, KV_DTYPE)
# Memory left to the CUDA context, other processes and fragmentation: vLLM preallocates
# utilization x the GPU's memory and fails to start when another process holds part of it.
SAFE_UTILIZATION = 0.95
_BATCHED_LADDER = (256, 512, 1024, 2048, 4096, 8192, 16384)
_SEQS_LADDER = (8, 16, 32, 64, 128, 256, 512, 1024)
_UTIL_LADDER = (0.8, 0.85, 0.9, 0.92, SAFE_UTILIZATION)
_FP8_CAPABILITY = 89  # FP8 KV cache kernels: Ada / Hopper and newer

Direction = Literal["up", "down"]


@dataclass(frozen=True)
class Move:
    flag: str
    value: str
    why: str  # the limit or reason behind the move


def parse_knob(text: str) -> tuple[str, tuple[str, ...]]:
    """`--knob FLAG=V1,V2` -> ("--flag", ("V1", "V2")) (the flag with or without dashes)."""
    flag, sep, values = text.partition("=")
    items = tuple(v.strip() for v in values.split(",") if v.strip())
    if not sep or not flag.strip() or not items:
        raise UsageError(ErrorText("tune.bad-knob", text=text))
    name = "--" + flag.strip().lstrip("-")
    return name, items


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return float("nan")


def candidates(
    report: Report, tokens_per_request: int, kv_tokens: int | None
) -> dict[str, tuple[str, ...]]:
    """The default knobs and their values for this command on these GPUs."""
    s = report.settings
    batched = sorted({*_BATCHED_LADDER, s.max_num_batched_tokens or 2048})
    values: dict[str, tuple[str, ...]] = {BATCHED: tuple(str(v) for v in batched)}
    fit = kv_tokens // max(1, tokens_per_request) if kv_tokens else None
    seqs = {v for v in _SEQS_LADDER if fit is None or v <= max(fit, 8)}
    seqs.add(s.max_num_seqs)
    if fit is not None and fit >= 1:
        seqs.add(fit)
    values[SEQS] = tuple(str(v) for v in sorted(seqs))
    utils = {v for v in _UTIL_LADDER if v <= SAFE_UTILIZATION} | {s.gpu_memory_utilization}
    values[UTIL] = tuple(f"{v:g}" for v in sorted(utils))
    machine = report.hardware
    if machine is not None and machine.count > 1:
        sizes = [n for n in (1, 2, 4, 8) if n <= machine.count and _divides(report, n)]
        values[TP] = tuple(str(n) for n in sizes)
    capability = machine.spec.capability if machine and machine.spec else None
    if capability is not None and capability >= _FP8_CAPABILITY:
        values[KV_DTYPE] = ("auto", "fp8")
    return values


def _divides(report: Report, size: int) -> bool:
    model = report.model
    heads = model.num_attention_heads if model else None
    return heads is None or heads % size == 0


def step(values: Sequence[str], current: str, direction: Direction) -> str | None:
    """The next candidate above or below `current` (numerically when the values are numbers)."""
    if all(_number(v) == _number(v) for v in values) and _number(current) == _number(current):
        now = _number(current)
        ordered = sorted(values, key=_number)
        if direction == "up":
            return next((v for v in ordered if _number(v) > now), None)
        return next((v for v in reversed(ordered) if _number(v) < now), None)
    ordered = list(values)
    if current not in ordered:
        return ordered[0] if direction == "up" and ordered else None
    index = ordered.index(current) + (1 if direction == "up" else -1)
    return ordered[index] if 0 <= index < len(ordered) else None


# Which way each limit points, in order of preference (the seed's decision logic).
_POINTS: dict[str, tuple[tuple[str, Direction], ...]] = {
    "max-num-batched-tokens": ((BATCHED, "up"),),
    "max-num-seqs": ((SEQS, "up"),),
    "kv-cache": ((UTIL, "up"), (KV_DTYPE, "up"), (SEQS, "down"), (TP, "up")),
    "compute": ((TP, "up"), (BATCHED, "down")),
    "slo-unreachable": ((BATCHED, "up"), (TP, "up")),
    "failed-start": ((UTIL, "down"), (BATCHED, "down")),
    "client": (),
}


def moves(
    limit: Limit | None,
    flags: Mapping[str, str],
    values: Mapping[str, Sequence[str]],
    missed: Sequence[str] = (),
) -> list[Move]:
    """Single-knob moves from `flags`: first those the limit points to, then the remaining
    neighbours of every knob (so that a wrong reading of the limit cannot end the search)."""
    pointed = list(_POINTS.get(limit or "", ()))
    if limit == "compute" and missed and set(missed) <= {"ttft"}:
        pointed = [(BATCHED, "up"), *pointed]  # only TTFT missed: prefill chunks too small
    found: list[Move] = []
    for flag, direction in pointed:
        move = _move(flag, direction, flags, values, f"limit {limit}")
        if move is not None:
            found.append(move)
    directions: tuple[Direction, ...] = ("up", "down")
    for flag in values:
        for direction in directions:
            move = _move(flag, direction, flags, values, "exploring")
            if move is not None and all((m.flag, m.value) != (flag, move.value) for m in found):
                found.append(move)
    return found


def _move(
    flag: str,
    direction: Direction,
    flags: Mapping[str, str],
    values: Mapping[str, Sequence[str]],
    why: str,
) -> Move | None:
    if flag not in values:
        return None
    value = step(values[flag], flags.get(flag, ""), direction)
    return None if value is None else Move(flag, value, why)
