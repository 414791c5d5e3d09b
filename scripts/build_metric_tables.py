"""Build servetune's table of vLLM's /metrics names by release from vLLM's own sources
(src/servetune/data/vllm_metrics.json).

Run from the repository root: `python scripts/build_metric_tables.py [--offline]`.

1. Fetch: the sdist of every release from 0.6.0 to the newest, into .cache/vllm-sdist/ (the same
   cache and checks as scripts/build_flag_tables.py, which this script reuses).
2. Read: every Python file under vllm/ is parsed with `ast` (vLLM is never imported); a metric
   is a call to a Prometheus class (`prometheus_client.Gauge`, `self._counter_cls`,
   `Histogram`...) whose `name` is a `vllm:` string (or a local variable holding one). Its kind
   comes from the class called. A metric registered only under `if ...show_hidden_metrics` is
   *hidden* (scraped only with `--show-hidden-metrics-for-version`).
3. Engines: files under vllm/engine/ are the V0 engine's (counted only while
   vllm/engine/llm_engine.py is the V0 engine, not the alias to V1 that 0.11+ ship), files under
   a `v1/` folder the V1 engine's, the others (the API server's) both.
4. Write: for each metric, its kind and the runs of consecutive releases it exists in, per
   engine; a release without an sdist (0.15.x) is listed under "fallbacks" with the newest older
   release, whose names stand in for it.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_flag_tables as flag_tables  # the sdist cache, release order and runs

ROOT = flag_tables.ROOT
OUTPUT = ROOT / "src" / "servetune" / "data" / "vllm_metrics.json"
V1_DEFAULT_FROM = "0.8.0"  # VLLM_USE_V1 defaults to on from 0.8.0 (vllm/envs.py)
KINDS = ("gauge", "counter", "histogram")
V0_ENGINE = re.compile(r"^class LLMEngine\b", re.MULTILINE)  # 0.11+ ship an alias to V1's


def _kind(call: ast.Call) -> str | None:
    callee = ast.unparse(call.func).lower()
    return next((k for k in KINDS if k in callee), None)


NAME = re.compile(r"^vllm:[a-z0-9_]+$")


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.match(node.value):
        return node.value
    return None


def _strings(tree: ast.Module) -> dict[str, str]:
    """Names (`name = "vllm:..."`, class attributes `SAVE = "vllm:..."`) holding a metric name."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and (value := _named(node.value)) is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = value
    return found


def _name_of(call: ast.Call, strings: dict[str, str]) -> str | ast.expr | None:
    """The metric name a call passes: a string, or the expression it is computed by."""
    arg = next((k.value for k in call.keywords if k.arg == "name"), None)
    if arg is None and call.args:
        arg = call.args[0]
    if isinstance(arg, ast.Name) and arg.id in strings:
        return strings[arg.id]
    if isinstance(arg, ast.Attribute) and arg.attr in strings:
        return strings[arg.attr]
    return _named(arg) if isinstance(arg, ast.Constant) else arg


def _hidden_nodes(tree: ast.Module) -> set[int]:
    """The nodes inside an `if` on show_hidden_metrics (by id)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "hidden" in ast.unparse(node.test):
            for stmt in node.body:
                hidden.update(id(n) for n in ast.walk(stmt))
    return hidden


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    yield from (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef))


def _computed_kind(scope: ast.AST, strings: dict[str, str]) -> str | None:
    """The one kind of metric a function builds from computed names (`name=name` in a loop
    over a table of names), if it builds only one kind that way."""
    kinds = {
        _kind(node)
        for node in ast.walk(scope)
        if isinstance(node, ast.Call) and isinstance(_name_of(node, strings), ast.expr)
    }
    kinds.discard(None)
    return kinds.pop() if len(kinds) == 1 else None


def metrics_in(text: str) -> Iterator[tuple[str, str, bool]]:
    """(name, kind, hidden) of each metric one file defines; kind "unknown" for a `vllm:` name
    the file holds but whose class could not be read (defined through a table or a helper)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    strings, hidden = _strings(tree), _hidden_nodes(tree)
    seen: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name, kind = _name_of(node, strings), _kind(node)
            if isinstance(name, str) and kind is not None:
                seen.add(name)
                yield name, kind, id(node) in hidden
    inferred: dict[str, str] = {}
    for scope in _scopes(tree):
        kind = _computed_kind(scope, strings)
        for node in ast.walk(scope):
            name = _named(node)
            if name is not None and name not in seen and kind is not None:
                inferred[name] = kind
    for node in ast.walk(tree):
        name = _named(node)
        if name is not None and name not in seen:
            seen.add(name)
            yield name, inferred.get(name, "unknown"), id(node) in hidden


def _engines_of(path: str, has_v0: bool) -> tuple[str, ...]:
    if path.startswith("vllm/engine/"):
        return ("v0",) if has_v0 else ()
    if "/v1/" in path or path.startswith("vllm/v1/"):
        return ("v1",)
    return ("v0", "v1") if has_v0 else ("v1",)


def scraped(name: str, kind: str) -> str:
    """The name Prometheus scrapes: prometheus_client adds `_total` to a counter's name (and
    strips one given), so V0's `vllm:num_preemptions_total` and V1's `vllm:num_preemptions` are
    one series."""
    return name.removesuffix("_total") + "_total" if kind == "counter" else name


def read_release(sources: dict[str, str]) -> dict[str, dict[str, object]]:
    """{name: {"kind": k, "engines": {engine: "live"|"hidden"}, "source": path}} of one release."""
    engine = sources.get("vllm/engine/llm_engine.py", "")
    has_v0 = V0_ENGINE.search(engine) is not None
    found: dict[str, dict[str, object]] = {}
    for path, text in sorted(sources.items()):
        if "vllm:" not in text or path.startswith(("vllm/benchmarks/", "vllm/v1/metrics/reader")):
            continue
        defined = list(metrics_in(text))
        if all(kind == "unknown" for _, kind, _ in defined):
            continue  # names only mentioned (a router reading a gauge), not defined
        for name, kind, hidden in defined:
            key = scraped(name, kind)
            entry = found.setdefault(key, {"kind": kind, "engines": {}, "source": path})
            if entry["kind"] == "unknown" and kind != "unknown":
                entry.update(kind=kind, source=path)
            engines: dict[str, str] = entry["engines"]  # type: ignore[assignment]
            for e in _engines_of(path, has_v0):
                if engines.get(e) != "live":
                    engines[e] = "hidden" if hidden else "live"
    return found


def build(offline: bool) -> dict[str, object]:
    sdists = flag_tables.fetch(offline)
    releases = flag_tables._all_releases(flag_tables._index(offline=True))
    tables: dict[str, dict[str, dict[str, object]]] = {}
    missing: list[str] = []
    for version in releases:
        if version not in sdists:
            missing.append(version)
            continue
        tables[version] = read_release(flag_tables.read_sources(sdists[version]))
        print(f"{version}: {len(tables[version])} metrics")
    key = flag_tables.release_key
    fallbacks: dict[str, str] = {}
    for version in missing:
        fallbacks[version] = max((v for v in tables if key(v) < key(version)), key=key)
        print(f"{version}: no sdist; the names of {fallbacks[version]} stand in")
    return _data(tables, fallbacks)


def _data(
    tables: dict[str, dict[str, dict[str, object]]], fallbacks: dict[str, str]
) -> dict[str, object]:
    order = sorted(tables, key=flag_tables.release_key)
    newest = {n: e for v in order for n, e in tables[v].items()}
    metrics: dict[str, dict[str, object]] = {}
    for name in sorted(newest):
        having: dict[str, list[str]] = {}
        for version in order:
            engines = tables[version].get(name, {}).get("engines", {})
            for engine, state in engines.items():  # type: ignore[attr-defined]
                key = engine if state == "live" else f"{engine}-hidden"
                having.setdefault(key, []).append(version)
        runs = flag_tables._spans({v: [k for k, vs in having.items() if v in vs] for v in order})
        metrics[name] = {
            "kind": newest[name]["kind"],
            "source": newest[name]["source"],
            **{key: runs[key] for key in sorted(runs)},
        }
    return {
        "releases": order,
        "v1_default_from": V1_DEFAULT_FROM,
        "fallbacks": fallbacks,
        "metrics": metrics,
    }


def write(data: dict[str, object]) -> None:
    """One metric per line: reviewable diffs."""
    lines = ["{"]
    items = list(data.items())
    for number, (key, value) in enumerate(items):
        comma = "," if number < len(items) - 1 else ""
        if isinstance(value, dict) and key == "metrics":
            inner = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            lines.append(f" {json.dumps(key)}: {{\n" + ",\n".join(inner) + f"\n }}{comma}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write(build(offline="--offline" in sys.argv[1:]))
