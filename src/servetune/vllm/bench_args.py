"""vLLM's offline benchmarks, whose engine a review can judge like a server's.

`python benchmarks/benchmark_throughput.py`, `benchmark_latency.py` and `vllm bench
throughput|latency` build an `LLM` engine from the engine's own arguments (`EngineArgs.add_cli_args`
on their parser, 0.6.4 and later) next to options of their own (`--input-len`, `--num-prompts`,
`--backend`...). Scripts up to 0.6.3 spelled each engine setting they pass as an option of their
own, under the engine flag's name, and refuse any other. The options each program adds, release by
release, are read from vLLM's sdists by scripts/build_bench_flags.py (data/vllm_bench_flags.json).
From 0.10.2 the scripts only say they moved to `vllm bench`: their words are read as that
subcommand's, which is what the user meant.

The benchmark's own words are kept apart (the command's prefix), so they are neither reviewed as
unknown engine flags nor lost when the command is spelled again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from servetune import _data
from servetune.vllm import flags as vllm_flags

__all__ = ["PROGRAMS", "BenchOptions", "options", "split_words"]

# The programs the data file describes: script file names and `vllm bench` subcommands.
PROGRAMS = frozenset(
    {"benchmark_throughput.py", "benchmark_latency.py", "bench throughput", "bench latency"}
)


@dataclass(frozen=True)
class BenchOptions:
    """What one release of a benchmark program parses besides the engine's own flags."""

    engine_args: bool  # the parser takes every engine flag (EngineArgs.add_cli_args)
    flags: dict[str, str]  # its own options: spelling -> value | store_true | bool | list


@cache
def _runs(program: str) -> tuple[tuple[str, str, dict[str, object]], ...]:
    programs: dict[str, list[list[object]]] = _data.load("vllm_bench_flags.json")["programs"]
    runs = []
    for first, last, entry in programs.get(program, []):
        if isinstance(entry, dict):
            runs.append((str(first), str(last), {str(k): v for k, v in entry.items()}))
    return tuple(runs)


def options(program: str, version: str) -> BenchOptions | None:
    """The program's options in release `version`: the run that holds it, else the newest run
    that started at or before it, else the first (a release older than the program's source)."""
    runs = _runs(program)
    if not runs:
        return None
    chosen = runs[0][2]
    for first, _last, entry in runs:
        if vllm_flags.version_at_least(version, first):
            chosen = entry
    moved = chosen.get("moved")
    if isinstance(moved, str) and moved != program:
        return options(moved, version)
    flags = chosen.get("flags")
    return BenchOptions(
        engine_args=bool(chosen.get("engine_args")),
        flags={str(k): str(v) for k, v in flags.items()} if isinstance(flags, dict) else {},
    )


def split_words(
    found: BenchOptions, words: Sequence[str], engine_flag: Callable[[str], bool]
) -> tuple[list[str], list[str], list[str]]:
    """(the program's own words, the engine's words, options the program refuses).

    An own option that is not an engine flag takes its value with it (`--input-len 512`). A
    script that does not take the engine's arguments (0.6.3 and before) passes only the engine
    settings it spells itself: another flag is refused as argparse refuses it."""
    own: list[str] = []
    engine: list[str] = []
    refused: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        name, has_equals, _ = word.partition("=")
        flag = vllm_flags.normalize(name)
        kind = found.flags.get(flag) if word.startswith("-") else None
        if kind is not None and not (engine_flag(flag) and not found.engine_args):
            own.append(word)
            while kind in ("value", "list") and not has_equals and index < len(words):
                if words[index].startswith("-") and not words[index][1:2].isdigit():
                    break
                own.append(words[index])
                index += 1
                if kind == "value":
                    break
            continue
        if word.startswith("-") and kind is None and not found.engine_args:
            refused.append(flag)
        engine.append(word)
    return own, engine, refused
