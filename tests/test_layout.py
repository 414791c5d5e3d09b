"""The layout's import rules (README, Development: "The layout"), read from the source with `ast`.

Each folder of `src/servetune/` may import only the folders listed for it (lazy imports inside
functions and `TYPE_CHECKING` imports count too); the shared top-level modules (`errors`,
`_data`, `_did_you_mean`, the package root for `__version__`) are open to every folder but
`texts/`, which imports nothing of servetune. Nothing imports the `vllm` or `torch` packages:
servetune talks to vLLM over HTTP and as a process.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import servetune

PACKAGE = Path(servetune.__file__).resolve().parent
SHARED = frozenset({"", "errors", "_data", "_did_you_mean"})  # "": the package root
FLOWS = frozenset(
    {"vllm", "review", "launch", "measure", "judge", "quality", "plan", "tune", "monitor"}
)

# folder (or top-level module) -> what it may import besides itself and SHARED
ALLOWED: dict[str, frozenset[str]] = {
    "vllm": frozenset({"texts"}),
    "review": frozenset({"vllm", "texts"}),
    "launch": frozenset({"vllm", "review", "texts"}),
    "measure": frozenset({"vllm", "texts"}),
    "judge": frozenset({"vllm", "review", "launch", "measure", "quality", "texts"}),
    "quality": frozenset({"vllm", "measure", "texts"}),
    "plan": frozenset({"vllm", "review", "measure", "judge", "texts"}),  # judge: reads results
    "tune": frozenset({"vllm", "review", "launch", "measure", "judge", "plan", "texts"}),
    "monitor": frozenset({"vllm", "review", "measure", "judge", "texts"}),
    "texts": frozenset(),
    "render": FLOWS | {"texts"},
    "cli": FLOWS | {"texts", "render"},
    # top-level modules
    "__init__": FLOWS,  # the public API re-exports the flows' entry points
    "__main__": frozenset({"cli"}),
    "errors": frozenset(),
    "_data": frozenset(),
    "_did_you_mean": frozenset(),
}
NEVER = ("vllm", "torch")  # third-party top-level packages servetune must not import


def _owner(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every absolute import in the file; `from servetune import x`
    gives `servetune.x`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "servetune":
                found += [(node.lineno, f"servetune.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def _target(module: str) -> str:
    """The folder or top-level module of servetune an import reaches ("" for the root)."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    is_part = (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()
    return name if name and is_part else ""


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_folder_and_top_level_module_has_a_rule() -> None:
    owners = {_owner(path) for path in _sources()}
    assert owners - set(ALLOWED) == set(), "add the new folder to ALLOWED and to the README"
    assert {"vllm", "review", "launch", "measure", "judge", "texts", "render", "cli"} <= owners


def test_imports_follow_the_layout() -> None:
    wrong: list[str] = []
    for path in _sources():
        owner = _owner(path)
        allowed = ALLOWED[owner] | {owner} | (SHARED if owner != "texts" else frozenset())
        for line, module in _imports(path):
            where = f"{path.relative_to(PACKAGE)}:{line}"
            if module.startswith("."):
                wrong.append(f"{where}: relative import {module} (write servetune.<folder>...)")
            elif module.split(".")[0] == "servetune" and _target(module) not in allowed:
                wrong.append(f"{where}: {owner}/ imports {module}")
    assert wrong == []


@pytest.mark.parametrize("package", NEVER)
def test_nothing_imports_vllm_or_torch(package: str) -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {module}"
        for path in _sources()
        for line, module in _imports(path)
        if module.split(".")[0] == package
    ]
    assert found == []


def test_the_checker_sees_what_it_must_reject(tmp_path: Path) -> None:
    """The rules bite: a folder of servetune, a lazy import and the root package are all read."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from servetune import texts\nimport torch.nn\n\n"
        "def f():\n    from servetune.cli.main import main\n    import vllm\n",
        encoding="utf-8",
    )
    modules = [module for _, module in _imports(sample)]
    assert modules == ["servetune.texts", "torch.nn", "servetune.cli.main", "vllm"]
    assert [_target(m) for m in ("servetune.texts", "servetune.cli.main", "servetune")] == [
        "texts",
        "cli",
        "",
    ]
    assert "cli" not in ALLOWED["render"] and "cli" not in ALLOWED["judge"]


def test_text_tables_are_read_only_through_the_lookup() -> None:
    """`servetune.texts.get/format/has/table`, never `servetune.texts.review_en` and the like:
    the lookup is what keeps a zh-TW table unloaded until a zh-TW text is asked for."""
    tests = PACKAGE.parents[1] / "tests"
    found = [
        f"{path}:{line}: {module}"
        for path in [*_sources(), *sorted(tests.rglob("*.py"))]
        if _owner_of_any(path) != "texts"
        for line, module in _imports(path)
        if module.startswith("servetune.texts.")
    ]
    assert found == []


def _owner_of_any(path: Path) -> str:
    return _owner(path) if path.is_relative_to(PACKAGE) else "tests"
