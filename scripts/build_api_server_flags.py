"""The options of vLLM's demo server, `python -m vllm.entrypoints.api_server`, by release.

    python scripts/build_api_server_flags.py [SDIST_DIR]   # default: .cache/vllm-sdist

Writes src/servetune/data/vllm_api_server_flags.json. vllm/entrypoints/api_server.py (0.4 to
0.24; gone from 0.25) builds its own parser under `if __name__ == "__main__":`: a few options of
its own (`--host`, `--port`, `--ssl-*`, `--root-path`, `--log-level`...) and then
`AsyncEngineArgs.add_cli_args(parser)`, the engine's options. None of the OpenAI server's
(`--lora-modules`, `--chat-template`, `--served-model-name` before the engine had it, the tool
and reasoning parsers...): that server's cli_args.py is not read by this one, so they stop it
with "api_server.py: error: unrecognized arguments". The engine's options are read as
build_flag_tables.py reads them, from vllm/engine/arg_utils.py and the config classes alone.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from build_flag_tables import RELEVANT, _spelling, flag_table, parse_release, serve_options
from sdist_files import local_sdists, read_files, release_runs

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "servetune" / "data" / "vllm_api_server_flags.json"
_SOURCES = re.compile(r"^[^/]+/(vllm/.*\.py)$")
_DEMO = "vllm/entrypoints/api_server.py"
# What the engine's options are read from: build_flag_tables' files less the OpenAI server's.
_ENGINE = re.compile(r"^vllm/(engine/arg_utils\.py|config\.py|config/.*\.py)$")


def own_options(text: str) -> dict[str, str]:
    """The option strings the demo's own `parser.add_argument` calls give, with their kind
    (`store_true`, else `value`: none has choices)."""
    names: dict[str, str] = {}
    for node in ast.walk(ast.parse(text)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            continue
        action = next((ast.unparse(k.value) for k in node.keywords if k.arg == "action"), "")
        kind = "store_true" if "store_true" in action else "value"
        for arg in node.args:
            if isinstance(arg, ast.Constant) and str(arg.value).startswith("--"):
                names[_spelling(str(arg.value))] = kind
    return names


def demo_flags(sources: dict[str, str]) -> tuple[set[str], dict[str, str]] | None:
    """(every option the release's demo server accepts, its own ones with their kinds); None
    where the release has no demo server."""
    text = sources.get(_DEMO)
    if text is None or "AsyncEngineArgs.add_cli_args" not in text:
        return None
    engine = {p: t for p, t in sources.items() if _ENGINE.match(p) and RELEVANT.match(p)}
    own = own_options(text)
    return set(own) | set(flag_table(serve_options(parse_release(engine)))), own


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".cache" / "vllm-sdist"
    tables: dict[str, set[str]] = {}
    kinds: dict[str, str] = {}
    own: dict[str, set[str]] = {}
    for version, path in local_sdists(folder).items():
        found = demo_flags(read_files(path, _SOURCES))
        if found is not None:
            tables[version], own[version] = found[0], set(found[1])
            kinds.update(found[1])
    releases = list(tables)
    names = sorted(set().union(*tables.values()))
    lines = ["{", f' "about": {json.dumps(__doc__.split(chr(10) * 2)[0])},']
    lines.append(f' "releases": {json.dumps(releases)},')

    def runs(having: dict[str, set[str]], name: str) -> list[list[str]]:
        return release_runs(releases, [name in having[v] for v in releases])

    inner = [f"  {json.dumps(n)}: {json.dumps(runs(tables, n))}" for n in names]
    lines.append(' "flags": {\n' + ",\n".join(inner) + "\n },")
    inner = [
        f"  {json.dumps(n)}: {json.dumps([k, runs(own, n)])}" for n, k in sorted(kinds.items())
    ]
    lines.append(' "own": {\n' + ",\n".join(inner) + "\n }")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(names)} flags over releases {releases[0]}-{releases[-1]} -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
