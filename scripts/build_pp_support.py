"""Which model architectures each vLLM release runs with pipeline parallelism, from its source.

    python scripts/build_pp_support.py [SDIST_DIR]   # default: .cache/vllm-sdist

Writes src/servetune/data/vllm_pp_support.json. How each release decides (read from its code):
- 0.4.x and 0.5.0: `ParallelConfig` refuses any `pipeline_parallel_size > 1` in the OpenAI server
  ("Pipeline parallelism is not supported yet"): no architecture;
- 0.5.1 to 0.6.x without the interface: `config._PP_SUPPORTED_MODELS`, a list of names
  ("Pipeline parallelism is only supported for the following architectures");
- later: the model registry's classes that implement `SupportsPP` ("Pipeline parallelism is
  not supported for this model. Supported models implement the `SupportsPP` interface"), read
  from each class's bases, followed through the classes it derives from in other model files.

The data keeps, per architecture the registry names, the runs of releases (first, last) that
register it and the runs that run it with pipeline parallelism.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from sdist_files import local_sdists, read_files, release_runs

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "servetune" / "data" / "vllm_pp_support.json"


_WANTED = re.compile(r"^[^/]+/(vllm/(?:model_executor/models|models)/[\w/]+\.py|vllm/config\.py)$")


def _files(path: Path) -> dict[str, str]:
    """The release's model code and config, by dotted module name (`vllm.config`)."""
    return {
        name.removesuffix(".py").removesuffix("/__init__").replace("/", "."): text
        for name, text in read_files(path, _WANTED).items()
    }


_MODELS = "vllm.model_executor.models"


def _registry(files: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Architecture -> (module, class) from every dict literal of the registry."""
    entries: dict[str, tuple[str, str]] = {}
    for name in (f"{_MODELS}.registry", _MODELS):
        tree = ast.parse(files.get(name, ""))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict):
                continue
            for key, value in zip(node.keys, node.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    continue
                if isinstance(value, ast.Tuple) and len(value.elts) >= 2:
                    module, cls = value.elts[0], value.elts[1]
                    if isinstance(module, ast.Constant) and isinstance(cls, ast.Constant):
                        where = str(module.value)
                        where = where if where.startswith("vllm.") else f"{_MODELS}.{where}"
                        entries[key.value] = (where, str(cls.value))
    return entries


def _classes(source: str, here: str, package: bool) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(class -> base names, imported name -> dotted module) of one module."""
    tree = ast.parse(source)
    bases: dict[str, list[str]] = {}
    imported: dict[str, str] = {}
    parts = here.split(".") if package else here.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = []
            for base in node.bases:
                if isinstance(base, ast.Name):
                    names.append(base.id)
                elif isinstance(base, ast.Attribute):
                    names.append(base.attr)
                elif isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name):
                    names.append(base.value.id)
            bases[node.name] = names
        elif isinstance(node, ast.ImportFrom):
            anchor = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                imported[alias.asname or alias.name] = module
    return bases, imported


class _Modules:
    """The release's modules, parsed on demand, and whether a class implements SupportsPP."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.packages = {name.rsplit(".", 1)[0] for name in files}
        self.parsed: dict[str, tuple[dict[str, list[str]], dict[str, str]]] = {}

    def module(self, name: str) -> tuple[dict[str, list[str]], dict[str, str]]:
        if name not in self.parsed:
            try:
                self.parsed[name] = _classes(self.files.get(name, ""), name, name in self.packages)
            except SyntaxError:
                self.parsed[name] = ({}, {})
        return self.parsed[name]

    def where(
        self, mod: str, base: str, bases: dict[str, list[str]], imported: dict[str, str]
    ) -> str | None:
        found = mod if base in bases else imported.get(base)
        if found is not None and found != mod and f"{found}.{base}" in self.files:
            return f"{found}.{base}"  # `from . import x` of a package: a module
        return found

    def has(self, mod: str, cls: str, depth: int = 0) -> bool:
        if depth > 12:
            return False
        bases, imported = self.module(mod)
        if cls not in bases and imported.get(cls, mod) != mod:
            return self.has(imported[cls], cls, depth + 1)  # re-exported from where it is defined
        for base in bases.get(cls, []):
            if base == "SupportsPP":
                return True
            found = self.where(mod, base, bases, imported)
            if found is not None and self.has(found, base, depth + 1):
                return True
        return False


def _supports_pp(files: dict[str, str]) -> set[str]:
    modules = _Modules(files)
    return {arch for arch, (mod, cls) in _registry(files).items() if modules.has(mod, cls)}


def _listed(config: str) -> set[str] | None:
    match = re.search(r"_PP_SUPPORTED_MODELS = \[(.*?)\]", config, re.DOTALL)
    return set(re.findall(r'"(\w+)"', match.group(1))) if match else None


def release_table(path: Path) -> tuple[set[str], set[str]]:
    """(architectures registered, architectures run with pipeline parallelism)."""
    files = _files(path)
    registered = set(_registry(files))
    config = files.get("vllm.config", "")
    listed = _listed(config)
    uses_interface = any("SupportsPP" in text for text in files.values())
    if listed is not None and not uses_interface:
        return registered, listed & registered | listed
    if not uses_interface:
        return registered, set()
    return registered, _supports_pp(files)


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".cache" / "vllm-sdist"
    found = local_sdists(folder)
    versions = list(found)
    tables = {v: release_table(found[v]) for v in versions}
    archs = sorted(set().union(*(registered | pp for registered, pp in tables.values())))
    data = {
        "about": __doc__.split("\n\n")[0],
        "releases": versions,
        "architectures": {
            arch: {
                "registered": release_runs(versions, [arch in tables[v][0] for v in versions]),
                "pipeline_parallel": release_runs(
                    versions, [arch in tables[v][1] for v in versions]
                ),
            }
            for arch in archs
        },
    }
    OUT.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{len(archs)} architectures over {len(versions)} releases -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
