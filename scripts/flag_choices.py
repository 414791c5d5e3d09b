"""The values each `vllm serve` option accepts in one release, read statically (never imported).

Used by build_flag_tables.py. What is read:
- `choices=` of an `add_argument` call: literal lists and tuples, `[*CONSTANT, None]`, module-level
  constants (a list, a dict's keys, a `Literal[...]` alias), `get_args(SomeLiteral)`,
  `[f.value for f in SomeEnum]`, and the registries whose choices are the registered names
  (`list(ReasoningParserManager.reasoning_parsers)`, `ToolParserManager.tool_parsers.keys()`);
- options generated from config dataclasses: the `Literal[...]` in the field's type, as that
  release's `get_kwargs` turns it into argparse choices (from the release whose
  `literal_to_kwargs` writes `metavar`, a Literal beside `str` gives no choices), and the edits
  `add_cli_args` makes (`kwargs["x"]["choices"] = ...`, `.remove(...)`, `+= [...]`);
- values vLLM checks after parsing, where argparse has no choices (VALIDATED): quantization
  methods, KV-cache dtypes, reasoning and tool-call parsers (their registries).

Anything else gives None: unknown, so servetune must not refuse a value there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

Choices = list[str]

# Registries whose registered names are a flag's valid values.
REGISTRY_OF = {
    "--reasoning-parser": "ReasoningParserManager",
    "--tool-call-parser": "ToolParserManager",
}
MANAGERS = {"reasoning_parsers": "ReasoningParserManager", "tool_parsers": "ToolParserManager"}
QUANTIZATION = "vllm/model_executor/layers/quantization/__init__.py"


def _scalar(value: object) -> str:
    """How a choice reads on the command line (None: the word `None`, which vLLM maps to unset)."""
    return "None" if value is None else str(value)


class ChoiceReader:
    """Resolves choice expressions in one release's sources (parsed lazily, file by file)."""

    def __init__(self, texts: dict[str, str], trees: dict[str, ast.Module]) -> None:
        self.texts = texts
        self.trees = dict(trees)
        self._registries: dict[str, Choices | None] = {}
        self.unresolved: list[str] = []  # expressions that could not be read (for --debug)
        self.metavar_for_str = "metavar" in self._function_text("literal_to_kwargs")

    # --- sources ------------------------------------------------------------------------------

    def tree(self, path: str) -> ast.Module | None:
        if path not in self.trees and path in self.texts:
            try:
                self.trees[path] = ast.parse(self.texts[path])
            except SyntaxError:
                return None
        return self.trees.get(path)

    def _function_text(self, name: str) -> str:
        for path, text in self.texts.items():
            if path.endswith("arg_utils.py") and f"def {name}(" in text:
                tree = self.tree(path)
                for node in ast.walk(tree) if tree else []:
                    if isinstance(node, ast.FunctionDef) and node.name == name:
                        return ast.unparse(node)
        return ""

    def _defined_in(self, name: str, near: str | None) -> list[str]:
        """Files that assign `name` at module level: `near` first, then the file `near` imports it
        from, then any other."""
        pattern = re.compile(rf"^{re.escape(name)}\s*(:[^=\n]*)?=", re.MULTILINE)
        order: list[str] = []
        if near:
            order.append(near)
            order.extend(self._import_source(name, near))
        found = [p for p in order if p in self.texts and pattern.search(self.texts[p])]
        others = sorted(p for p, t in self.texts.items() if p not in found and pattern.search(t))
        return found + others

    def _import_source(self, name: str, path: str) -> list[str]:
        tree = self.tree(path)
        modules: list[str] = []
        for node in tree.body if tree else []:
            named = isinstance(node, ast.ImportFrom) and node.module
            if named and any(alias.name == name for alias in node.names):
                base = node.module.replace(".", "/")
                modules += [f"{base}.py", f"{base}/__init__.py"]
        return modules

    def constant(self, name: str, near: str | None) -> tuple[str, ast.expr] | None:
        """The value a module-level `name = ...` assigns, and its file."""
        for path in self._defined_in(name, near):
            tree = self.tree(path)
            for stmt in tree.body if tree else []:
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in stmt.targets
                ):
                    return path, stmt.value
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and stmt.target.id == name
                    and stmt.value is not None
                ):
                    return path, stmt.value
        return None

    def enum_values(self, name: str, near: str | None, attr: str) -> Choices | None:
        """`[f.value for f in SomeEnum]` (or `.name`): the members of class `name`."""
        pattern = re.compile(rf"^class {re.escape(name)}\b", re.MULTILINE)
        paths = ([near] if near else []) + sorted(self.texts)
        for path in paths:
            if path not in self.texts or not pattern.search(self.texts[path]):
                continue
            tree = self.tree(path)
            for node in tree.body if tree else []:
                if isinstance(node, ast.ClassDef) and node.name == name:
                    return self._members(node, attr)
        return None

    @staticmethod
    def _members(node: ast.ClassDef, attr: str) -> Choices | None:
        values: Choices = []
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if not isinstance(target, ast.Name) or target.id.startswith("_"):
                    continue
                if attr == "name":
                    values.append(target.id)
                elif isinstance(stmt.value, ast.Constant):
                    values.append(_scalar(stmt.value.value))
                else:
                    return None  # enum.auto() and the like
        return values or None

    # --- registries ---------------------------------------------------------------------------

    def registry(self, manager: str) -> Choices | None:
        """Every name registered with `manager` (decorators, lazy registrations, lazy dicts)."""
        if manager not in self._registries:
            self._registries[manager] = self._read_registry(manager)
        return self._registries[manager]

    def _read_registry(self, manager: str) -> Choices | None:
        names: set[str] = set()
        for path in sorted(self.texts):
            text = self.texts[path]
            if f"{manager}.register_module(" not in text and "register_lazy_module(" not in text:
                continue
            tree = self.tree(path)
            if tree is None:
                continue
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and self._registers_with(node, manager)):
                    continue
                found = self._registered_names(node, tree, path)
                if found is None:
                    self.unresolved.append(f"{path}: {ast.unparse(node)[:80]}")
                    return None
                names.update(found)
        return sorted(names) or None

    @staticmethod
    def _registers_with(node: ast.Call, manager: str) -> bool:
        return (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in ("register_module", "register_lazy_module")
            and ast.unparse(node.func.value).split(".")[-1] == manager
        )

    def _registered_names(self, call: ast.Call, tree: ast.Module, path: str) -> Choices | None:
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        name = call.args[0] if call.args else keywords.get("name") or keywords.get("module_name")
        if name is None:
            module = keywords.get("module")
            return [module.id] if isinstance(module, ast.Name) else None
        if isinstance(name, ast.Name):
            # `for name, (...) in _PARSERS_TO_REGISTER.items(): register_lazy_module(name, ...)`
            for loop in (n for n in ast.walk(tree) if isinstance(n, ast.For)):
                bound = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
                if name.id in bound and any(n is call for n in ast.walk(loop)):
                    return self.values(loop.iter, path)
            return None
        return self.values(name, path) if not isinstance(name, ast.Constant) else [name.value]

    # --- expressions --------------------------------------------------------------------------

    def values(
        self,
        node: ast.expr,
        path: str | None,
        local: Callable[[str], ast.expr | None] | None = None,
    ) -> Choices | None:
        """The strings an expression of choices stands for, or None when it cannot be read."""
        found = self._values(node, path, local, depth=0)
        if found is None:
            self.unresolved.append(f"{path}: {ast.unparse(node)[:80]}")
        return found

    def _values(  # noqa: C901, PLR0911 -- one case per expression form
        self,
        node: ast.expr,
        path: str | None,
        local: Callable[[str], ast.expr | None] | None,
        depth: int,
    ) -> Choices | None:
        if depth > 8:
            return None
        again = lambda n, p=path: self._values(n, p, local, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return [_scalar(node.value)]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self._concat(
                [again(e.value if isinstance(e, ast.Starred) else e) for e in node.elts]
            )
        if isinstance(node, ast.Dict):
            keys = [
                again(k) if k is not None else again(v)
                for k, v in zip(node.keys, node.values, strict=True)
            ]
            return self._concat(keys)
        manager = self._manager(node)
        if manager:
            return self.registry(manager)
        if isinstance(node, ast.Name):
            bound = local(node.id) if local else None
            if bound is not None:
                return self._values(bound, path, None, depth + 1)
            defined = self.constant(node.id, path)
            return again(defined[1], defined[0]) if defined else None
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] == "Literal":
            inner = node.slice
            elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return self._concat([again(e) for e in elts])
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
            return self._concat([again(node.left), again(node.right)])
        if isinstance(node, ast.Call):
            return self._call_values(node, again)
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            element, loop = node.elt, node.generators[0]
            if (
                isinstance(element, ast.Attribute)
                and element.attr in ("value", "name")
                and isinstance(loop.iter, ast.Name)
                and not loop.ifs
            ):
                return self.enum_values(loop.iter.id, path, element.attr)
        return None

    @staticmethod
    def _call_values(node: ast.Call, again: Callable[[ast.expr], Choices | None]) -> Choices | None:
        called = ast.unparse(node.func)
        if (
            called in ("list", "sorted", "tuple", "set", "get_args", "typing.get_args")
            and node.args
        ):
            found = again(node.args[0])
            return sorted(found) if found is not None and called == "sorted" else found
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in ("keys", "items")
            and not node.args
        ):
            return again(node.func.value)
        return None

    @staticmethod
    def _manager(node: ast.expr) -> str | None:
        """`ReasoningParserManager.reasoning_parsers`, `X.tool_parsers.keys()`,
        `X.list_registered()`."""
        text = ast.unparse(node)
        for attribute, manager in MANAGERS.items():
            if re.search(rf"\b{manager}\.({attribute}|list_registered\(\))", text):
                return manager
        return None

    @staticmethod
    def _concat(parts: list[Choices | None]) -> Choices | None:
        if any(p is None for p in parts):
            return None
        merged: Choices = []
        for part in parts:
            merged.extend(v for v in part or [] if v not in merged)
        return merged

    # --- dataclass fields ---------------------------------------------------------------------

    def annotation_literals(
        self, annotation: ast.expr, path: str | None
    ) -> tuple[Choices | None, set[str]]:
        """(the values of the Literal parts of a field's type, the other parts' names)."""
        literals: Choices = []
        others: set[str] = set()
        seen = 0
        for part in self._union_parts(annotation, path, depth=0):
            if (
                isinstance(part, ast.Subscript)
                and ast.unparse(part.value).split(".")[-1] == "Literal"
            ):
                found = self._values(part, path, None, 0)
                if found is None:
                    return None, others
                literals.extend(v for v in found if v not in literals)
                seen += 1
            else:
                others.add(ast.unparse(part))
        return (literals if seen else None), others

    def _union_parts(  # noqa: PLR0911 -- one case per annotation form
        self, node: ast.expr, path: str | None, depth: int
    ) -> list[ast.expr]:
        if depth > 6:
            return [node]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._union_parts(node.left, path, depth + 1) + self._union_parts(
                node.right, path, depth + 1
            )
        if isinstance(node, ast.Subscript):
            head = ast.unparse(node.value).split(".")[-1]
            if head in ("Optional", "Union"):
                inner = node.slice
                elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
                parts = [p for e in elts for p in self._union_parts(e, path, depth + 1)]
                return parts + ([ast.Constant(None)] if head == "Optional" else [])
            return [node]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a quoted annotation: "CacheDType | str"
            try:
                return self._union_parts(ast.parse(node.value, mode="eval").body, path, depth + 1)
            except SyntaxError:
                return [node]
        if isinstance(node, ast.Name) and node.id[:1].isupper():
            defined = self.constant(node.id, path)
            if defined and isinstance(defined[1], (ast.Subscript, ast.BinOp)):
                return self._union_parts(defined[1], defined[0], depth + 1)
        return [node]

    def field_choices(self, annotation: ast.expr | None, path: str | None) -> Choices | None:
        """The choices release's get_kwargs gives a config field (None: no choices)."""
        if annotation is None:
            return None
        literals, others = self.annotation_literals(annotation, path)
        if literals is None or "bool" in others:
            return None
        if "str" in others and self.metavar_for_str:
            return None  # `Literal[...] | str`: a metavar, any value passes the parser
        if others & {"None", "NoneType"}:
            literals = [*literals, "None"] if "None" not in literals else literals
        return literals

    def arg_utils(self) -> str:
        return self.texts.get("vllm/engine/arg_utils.py", "")
