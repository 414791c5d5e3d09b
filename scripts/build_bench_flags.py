"""Build the flags of vLLM's offline benchmarks (src/servetune/data/vllm_bench_flags.json).

Run from the repository root: `python scripts/build_bench_flags.py [--offline]`.

`benchmarks/benchmark_throughput.py`, `benchmarks/benchmark_latency.py` and the `vllm bench
throughput|latency` subcommands (vllm/benchmarks/throughput.py, latency.py) build an LLM engine
from the engine's own arguments (`EngineArgs.add_cli_args` / `AsyncEngineArgs.add_cli_args` on
their parser) and add their own (`--input-len`, `--num-prompts`, `--backend`...). The 0.6.3 script
(and the ones before it) spelled every engine setting it passed as its own option instead. So a
review of such a command reads the engine's flags as `vllm serve`'s and needs, per release, the
script's own options (read here statically with `ast` from every sdist in .cache/vllm-sdist/,
fetched by build_flag_tables.py) and whether the parser takes the engine's arguments at all.

From 0.10.2 the two scripts only print that they moved to `vllm bench` and exit: a release whose
script does so is written `moved` (the command it names is the user's meaning).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from build_flag_tables import ROOT, _all_releases, _index, _spelling, fetch
from sdist_files import read_files, release_key

OUTPUT = ROOT / "src" / "servetune" / "data" / "vllm_bench_flags.json"
# Each program's source in the sdist (paths below the project folder).
SOURCES = {
    "benchmark_throughput.py": "benchmarks/benchmark_throughput.py",
    "benchmark_latency.py": "benchmarks/benchmark_latency.py",
    "bench throughput": "vllm/benchmarks/throughput.py",
    "bench latency": "vllm/benchmarks/latency.py",
}
MOVED_TO = {"benchmark_throughput.py": "bench throughput", "benchmark_latency.py": "bench latency"}
_ENGINE_CLASSES = {"EngineArgs", "AsyncEngineArgs"}


def _kind(call: ast.Call) -> str:
    """value | store_true | bool | list, as the add_argument call writes it."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    action, nargs = keywords.get("action"), keywords.get("nargs")
    if isinstance(action, ast.Constant) and action.value in ("store_true", "store_false"):
        return "store_true"
    if action is not None and "BooleanOptional" in ast.unparse(action):
        return "bool"
    if isinstance(nargs, ast.Constant) and nargs.value in ("+", "*"):
        return "list"
    return "value"


def program_options(text: str) -> dict[str, object] | None:
    """{engine_args, flags: {spelling: kind}} of one program's source; None for a stub that
    defines no parser."""
    tree = ast.parse(text)
    flags: dict[str, str] = {}
    engine = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if node.func.attr == "add_cli_args" and isinstance(owner, ast.Name):
            engine = engine or owner.id in _ENGINE_CLASSES
        if node.func.attr != "add_argument":
            continue
        names = [
            a.value
            for a in node.args
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value[:1] == "-"
        ]
        for name in names:
            flags[_spelling(name)] = _kind(node)
    if not flags and not engine:
        return None
    return {"engine_args": engine, "flags": dict(sorted(flags.items()))}


_WANTED = re.compile(r"^[^/]+/(" + "|".join(re.escape(f) for f in SOURCES.values()) + ")$")


def read_programs(path: Path) -> dict[str, dict[str, object] | None]:
    """Each program's options in one sdist (absent programs left out; None: a stub)."""
    texts = read_files(path, _WANTED)
    return {
        program: program_options(texts[source])
        for program, source in SOURCES.items()
        if source in texts
    }


def build(offline: bool = False) -> dict[str, object]:
    sdists = fetch(offline)
    releases = [v for v in _all_releases(_index(offline=True)) if v in sdists]
    per_release = {version: read_programs(sdists[version]) for version in releases}
    programs: dict[str, list[list[object]]] = {}
    for program in SOURCES:
        runs: list[list[object]] = []
        for version in sorted(releases, key=release_key):
            if program not in per_release[version]:
                continue
            entry = per_release[version][program]
            if entry is None:
                entry = {"moved": MOVED_TO.get(program, program)}
            if runs and runs[-1][2] == entry:
                runs[-1][1] = version
            else:
                runs.append([version, version, entry])
        programs[program] = runs
        print(f"{program}: {len(runs)} runs, {runs[0][0] if runs else '-'} to {runs[-1][1]}")
    return {
        "about": (
            "The own options of vLLM's offline benchmarks by release ([first, last, entry] runs "
            "over the releases with an sdist), read by scripts/build_bench_flags.py: "
            "engine_args says whether the parser also takes the engine's arguments; moved: the "
            "release's script only says it moved to that `vllm bench` subcommand."
        ),
        "programs": programs,
    }


def write(data: dict[str, object]) -> None:
    lines = ["{", f' "about": {json.dumps(data["about"])},', ' "programs": {']
    programs: dict[str, list[list[object]]] = data["programs"]  # type: ignore[assignment]
    blocks = []
    for program, runs in programs.items():
        inner = ",\n".join(f"   {json.dumps(run)}" for run in runs)
        blocks.append(f"  {json.dumps(program)}: [\n{inner}\n  ]")
    lines.append(",\n".join(blocks))
    lines += [" }", "}"]
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    write(build(offline="--offline" in sys.argv))
