"""Build servetune's vLLM flag tables (src/servetune/data/vllm_flags.json) from vLLM's own sources.

Run from the repository root: `python scripts/build_flag_tables.py [--offline]`.

1. Fetch: the source distribution (sdist) of every vLLM release from 0.4.0 to the newest is
   downloaded from the package index into .cache/vllm-sdist/ (gitignored, checked against the
   index's sha256). Wheels are never fetched (hundreds of MB each).
2. Read: the `vllm serve` argument definitions are read statically with `ast` (vLLM is never
   imported): vllm/engine/arg_utils.py, the OpenAI server's cli_args.py (0.4.x and 0.5.x: the
   `python -m vllm.entrypoints.openai.api_server` parser, `vllm serve` from 0.5.2), the `serve`
   subcommand and the config dataclasses newer releases generate flags from; and each value
   option's choices in that release (flag_choices.py).
3. Write: one table per release, each flag's choices per release (runs of releases with the same
   choices), plus the argument details of 0.33.0 taken from the reference dump of the real parser
   (../shared/reference/vllm-flags/serve-args-0.33.0.json).

Releases without an sdist on the index are listed under "missing" with the table used instead.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from flag_choices import QUANTIZATION, REGISTRY_OF, ChoiceReader
from sdist_files import read_files, release_key

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "vllm-sdist"
INDEX_URL = "https://pypi.org/simple/vllm/"
FIRST, LAST = (0, 4, 0), (0, 33, 99)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("post", maxsplit=1)[0]))


def _index(offline: bool) -> list[dict[str, object]]:
    path = CACHE / "index.json"
    if not offline or not path.exists():
        request = urllib.request.Request(
            INDEX_URL, headers={"Accept": "application/vnd.pypi.simple.v1+json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            path.write_bytes(response.read())
    files: list[dict[str, object]] = json.loads(path.read_text(encoding="utf-8"))["files"]
    return files


def sdist_version(filename: str) -> str | None:
    match = re.match(r"^vllm-(\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)\.tar\.gz$", filename)
    return match.group(1) if match else None


def fetch(offline: bool = False) -> dict[str, Path]:
    """Every release's sdist in range, downloaded once: {version: path}."""
    CACHE.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    for entry in _index(offline):
        name = str(entry["filename"])
        version = sdist_version(name)
        if version is None or not FIRST <= version_key(version)[:3] <= LAST:
            continue
        target = CACHE / name
        if not target.exists():
            if offline:
                continue
            print(f"downloading {name} ({int(str(entry.get('size', 0))) / 1e6:.1f} MB)")
            with urllib.request.urlopen(str(entry["url"]), timeout=300) as response:
                data = response.read()
            want = dict(entry["hashes"]).get("sha256")  # type: ignore[call-overload]
            if want and hashlib.sha256(data).hexdigest() != want:
                raise SystemExit(f"{name}: sha256 mismatch")
            target.write_bytes(data)
        found[version] = target
    return found


_SOURCES = re.compile(r"^[^/]+/(vllm/.*\.py)$")


def read_sources(path: Path) -> dict[str, str]:
    """The Python files under vllm/ of one sdist, by path relative to the project root."""
    return read_files(path, _SOURCES)


# --- reading the argument definitions -----------------------------------------------------------


@dataclass
class Option:
    """One `vllm serve` option as a release's source defines it."""

    names: list[str]  # option strings as written (long and short)
    kind: str = "value"  # value | bool | store_true | list
    serve_hidden: bool = False  # left out when the command line says `serve` (0.9.0's --model)
    choices: list[str] | None = None  # the values the release accepts (None: any, or unknown)
    literals: list[str] | None = None  # the Literal part of its config field's type, if any
    explicit: bool = False  # its kind is written in add_argument (not inferred from a type)


@dataclass
class Release:
    """The parsed sources of one release: classes by name, files by path."""

    trees: dict[str, ast.Module]
    texts: dict[str, str] = field(default_factory=dict)  # every vllm/*.py, for choices
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    path_of: dict[int, str] = field(default_factory=dict)  # id(class or function) -> its file
    reader: ChoiceReader = field(init=False)

    def __post_init__(self) -> None:
        for path, tree in self.trees.items():
            for node in ast.walk(tree):
                if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                    self.path_of[id(node)] = path
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, node)
        self.reader = ChoiceReader(self.texts, self.trees)

    def fields(self, name: str) -> list[tuple[str, ast.expr]]:
        """Dataclass fields of class `name` and its bases, in definition order."""
        node = self.classes.get(name)
        if node is None:
            return []
        found: list[tuple[str, ast.expr]] = []
        for base in node.bases:
            if isinstance(base, ast.Name):
                found.extend(self.fields(base.id))
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if "ClassVar" in ast.unparse(stmt.annotation) or stmt.target.id.startswith("_"):
                    continue
                found = [f for f in found if f[0] != stmt.target.id]
                found.append((stmt.target.id, stmt.annotation))
        return found


RELEVANT = re.compile(
    r"^vllm/(engine/arg_utils\.py|entrypoints/.*cli_args\.py|entrypoints/cli/serve\.py|"
    r"scripts\.py|config\.py|config/.*\.py|entrypoints/openai/.*args.*\.py)$"
)


def parse_release(sources: dict[str, str]) -> Release:
    trees = {}
    for path, text in sources.items():
        if RELEVANT.match(path):
            trees[path] = ast.parse(text)
    return Release(trees, sources)


def _functions(tree: ast.AST) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def _serve_functions(release: Release) -> list[ast.FunctionDef]:
    """Functions whose add_argument calls define `vllm serve` options."""
    chosen: list[ast.FunctionDef] = []
    for path, tree in release.trees.items():
        for func in _functions(tree):
            if (
                (func.name == "make_arg_parser" and "run_batch" not in path)
                or (func.name == "add_cli_args" and path.endswith(("arg_utils.py", "cli_args.py")))
                or (func.name == "subparser_init" and path.endswith("cli/serve.py"))
                or (path == "vllm/scripts.py" and func.name == "main")
            ):
                chosen.append(func)
    return chosen


def _receiver(call: ast.Call) -> str:
    func = call.func
    return ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""


def _kind_of_call(call: ast.Call, field_kind: str | None) -> str:
    keywords = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}
    action = keywords.get("action", "")
    if "store_true" in action or "store_false" in action:
        return "store_true"
    if "BooleanOptionalAction" in action or "StoreBoolean" in action:
        return "bool"
    if keywords.get("nargs", "").strip("'\"") in ("+", "*"):
        return "list"
    if keywords.get("type", "") in ("bool",):
        return "bool"
    return field_kind or "value"


def _annotation_kind(annotation: ast.expr | None) -> str | None:
    if annotation is None:
        return None
    text = ast.unparse(annotation)
    if re.fullmatch(r"(Optional\[)?bool\]?( \| None)?", text):
        return "bool"
    if re.match(r"^(Optional\[)?(list|List)\[", text):
        return "list"
    return "value"


def _owner_class(release: Release, func: ast.FunctionDef) -> ast.ClassDef | None:
    for node in release.classes.values():
        if func in node.body:
            return node
    return None


def _subclasses(release: Release, name: str) -> set[str]:
    found = {name}
    changed = True
    while changed:
        changed = False
        for cls in release.classes.values():
            bases = {ast.unparse(b) for b in cls.bases}
            if cls.name not in found and bases & found:
                found.add(cls.name)
                changed = True
    return found


def _called_with_add_cli_args(release: Release) -> set[str]:
    """Classes whose add_cli_args the serve parser calls (`FrontendArgs.add_cli_args(parser)`)."""
    names: set[str] = set()
    for func in _serve_functions(release):
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_cli_args"
                and isinstance(node.func.value, ast.Name)
            ):
                names.add(node.func.value.id)
    return names


def _kwargs_sources(func: ast.FunctionDef) -> dict[str, str]:
    """`x_kwargs = get_kwargs(SomeConfig)` -> {"x_kwargs": "SomeConfig"} (cls stays "cls")."""
    found: dict[str, str] = {}
    for node in ast.walk(func):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        called = ast.unparse(call.func)
        if called.endswith("get_kwargs") and call.args:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = ast.unparse(call.args[0])
    return found


def _class_edits(release: Release, names: set[str]) -> tuple[set[str], dict[str, list[str]]]:
    """Fields these classes' methods delete from their kwargs, and extra flags they attach."""
    deleted: set[str] = set()
    extra: dict[str, list[str]] = {}
    for name in names:
        cls = release.classes.get(name)
        if cls is None:
            continue
        for node in ast.walk(cls):
            if isinstance(node, ast.Delete):
                for target in node.targets:
                    key = _single_key(target)
                    if key:
                        deleted.add(key)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
                for target in node.targets:
                    path = _subscript_path(target)
                    if len(path) == 2 and path[1] == "flags":
                        extra[path[0]] = [
                            e.value for e in node.value.elts if isinstance(e, ast.Constant)
                        ]
    return deleted, extra


def _subscript_path(node: ast.expr) -> list[str]:
    path: list[str] = []
    while isinstance(node, ast.Subscript):
        if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return []
        path.insert(0, node.slice.value)
        node = node.value
    return path


def _single_key(target: ast.expr) -> str | None:
    path = _subscript_path(target)
    return path[0] if len(path) == 1 else None


def _dynamic_options(
    release: Release, func: ast.FunctionDef, call: ast.Call, classes: set[str]
) -> list[Option]:
    """Expand `add_argument(f"--{key.replace('_', '-')}", **value)` over the class's fields."""
    sources = _kwargs_sources(func)
    loop = next(
        (
            n
            for n in ast.walk(func)
            if isinstance(n, ast.For) and any(c is call for c in ast.walk(n))
        ),
        None,
    )
    if loop is None:
        return []
    iterated = ast.unparse(loop.iter).removesuffix(".items()")
    source = sources.get(iterated, "cls")
    if source == "cls":
        owner = _owner_class(release, func)
        targets = {c for c in classes if owner and c in _subclasses(release, owner.name)}
    else:
        targets = {source}
    options: list[Option] = []
    edits = _choice_edits(func)
    for name in sorted(targets):
        deleted, extra = _class_edits(release, _bases_and_self(release, name))
        near = release.path_of.get(id(release.classes.get(name)))
        for key, annotation in release.fields(name):
            if key in deleted:
                continue
            kind = _annotation_kind(annotation) or "value"
            option = Option([*extra.get(key, []), "--" + key.replace("_", "-")], kind)
            option.literals = release.reader.annotation_literals(annotation, near)[0]
            option.choices = _edited(
                release,
                release.reader.field_choices(annotation, near),
                edits.get((iterated, key), []),
                near,
                _locals(func),
            )
            options.append(option)
    return options


def _bases_and_self(release: Release, name: str) -> set[str]:
    found = {name}
    cls = release.classes.get(name)
    for base in cls.bases if cls else []:
        if isinstance(base, ast.Name):
            found |= _bases_and_self(release, base.id)
    return found


def _field_kind(release: Release, func: ast.FunctionDef, call: ast.Call) -> str | None:
    """The kind of `**model_kwargs["max_model_len"]` from ModelConfig's annotation."""
    found = _kwargs_field(release, func, call)
    return _annotation_kind(found[2]) if found else None


def _kwargs_field(
    release: Release, func: ast.FunctionDef, call: ast.Call
) -> tuple[str, str, ast.expr | None, str | None] | None:
    """`**model_kwargs["max_model_len"]`: (kwargs variable, field, its annotation, class file)."""
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is None and isinstance(value, ast.Dict):
            # `**{**cache_kwargs["mamba_cache_mode"], "default": None}`
            value = next(
                (v for k, v in zip(value.keys, value.values, strict=True) if k is None), value
            )
        if keyword.arg is None and isinstance(value, ast.Subscript):
            path = _subscript_path(value)
            variable = ast.unparse(value.value)
            owner = _kwargs_sources(func).get(variable)
            if owner and path:
                annotations = dict(release.fields(owner))
                near = release.path_of.get(id(release.classes.get(owner)))
                return variable, path[0], annotations.get(path[0]), near
    return None


# --- choices ---------------------------------------------------------------------------------

Edit = tuple[str, ast.expr | None]  # (set | extend | append | remove | clear, the expression)


def _locals(func: ast.FunctionDef) -> Callable[[str], ast.expr | None]:
    """A function's local names -> the expression last assigned to them."""
    assigned: dict[str, ast.expr] = {}
    nodes = [n for n in ast.walk(func) if isinstance(n, ast.Assign)]
    for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
        for target in node.targets:
            if isinstance(target, ast.Name):
                assigned[target.id] = node.value
    return assigned.get


def _choices_key(node: ast.expr) -> tuple[str, str] | None:
    """`x_kwargs["field"]["choices"]` -> ("x_kwargs", "field")."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript)):
        return None
    inner = node.value
    if (
        isinstance(node.slice, ast.Constant)
        and node.slice.value == "choices"
        and isinstance(inner.value, ast.Name)
        and isinstance(inner.slice, ast.Constant)
        and isinstance(inner.slice.value, str)
    ):
        return inner.value.id, inner.slice.value
    return None


def _choice_edits(scope: ast.AST) -> dict[tuple[str, str], list[Edit]]:
    """What a function does to its kwargs' choices, in source order."""
    edits: dict[tuple[str, str], list[Edit]] = {}
    nodes: list[tuple[ast.stmt | ast.expr, list[ast.expr], str, ast.expr | None]] = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            nodes.append((node, node.targets, "set", node.value))
        elif isinstance(node, ast.AugAssign):
            nodes.append((node, [node.target], "extend", node.value))
        elif isinstance(node, ast.Delete):
            nodes.append((node, node.targets, "clear", None))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("remove", "append", "extend")
            and node.args
        ):
            nodes.append((node, [node.func.value], node.func.attr, node.args[0]))
    for _node, targets, op, value in sorted(nodes, key=lambda n: (n[0].lineno, n[0].col_offset)):
        for target in targets:
            key = _choices_key(target)
            if key:
                edits.setdefault(key, []).append((op, value))
    return edits


def _edited(
    release: Release,
    start: list[str] | None,
    edits: list[Edit],
    path: str | None,
    local: Callable[[str], ast.expr | None],
) -> list[str] | None:
    """Choices after a function's edits (None as soon as one cannot be read)."""
    current = start
    for op, expr in edits:
        if op == "clear" or expr is None:
            current = None
            continue
        value = current if _choices_key(expr) else release.reader.values(expr, path, local)
        if value is None:
            return None
        if op == "set":
            current = value
        elif op == "remove":
            current = [c for c in current or [] if c not in value]
        else:
            current = [*(current or []), *(v for v in value if v not in (current or []))]
    return current


def _call_choices(
    release: Release, func: ast.FunctionDef, call: ast.Call
) -> tuple[list[str] | None, list[str] | None]:
    """(the choices of an explicit add_argument call, the Literal part of its field's type)."""
    path = release.path_of.get(id(func))
    keyword = next((k.value for k in call.keywords if k.arg == "choices"), None)
    if keyword is not None:
        return release.reader.values(keyword, path, _locals(func)), None
    found = _kwargs_field(release, func, call)
    if found is None or found[2] is None:
        return None, None
    variable, name, annotation, near = found
    literals = release.reader.annotation_literals(annotation, near)[0]
    start = release.reader.field_choices(annotation, near)
    edits = _choice_edits(func).get((variable, name), [])
    return _edited(release, start, edits, path, _locals(func)), literals


def _validated(release: Release, option: Option) -> list[str] | None:
    """Values vLLM checks after parsing where argparse has no choices (flag_choices.VALIDATED)."""
    names = set(option.names)
    reader = release.reader
    for flag, manager in REGISTRY_OF.items():
        if flag in names:
            found = reader.registry(manager)
            if found is not None and flag == "--reasoning-parser":
                # 0.33's parse_reasoning_parser: `none` means no parser
                found = found + (["none"] if "parse_reasoning_parser" in reader.arg_utils() else [])
            return found
    if "--quantization" in names:
        constant = reader.constant("QUANTIZATION_METHODS", QUANTIZATION)
        methods = reader.values(constant[1], constant[0]) if constant else None
        return [*methods, "None"] if methods is not None and "None" not in methods else methods
    if "--kv-cache-dtype" in names:
        return option.literals
    return None


def serve_options(release: Release) -> list[Option]:
    """Every option `vllm serve` of this release accepts (positional model_tag excluded)."""
    classes = _called_with_add_cli_args(release)
    options: list[Option] = []
    for func in _serve_functions(release):
        hidden = _hidden_from_serve(func)
        for node in ast.walk(func):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
            ):
                continue
            if func.name == "main" and "serve" not in _receiver(node):
                continue
            names = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and str(a.value).startswith("-")
            ]
            if any(isinstance(a, ast.JoinedStr) for a in node.args):
                options.extend(_dynamic_options(release, func, node, classes))
            elif names:
                field_kind = _field_kind(release, func, node)
                kind = _kind_of_call(node, field_kind)
                choices, literals = _call_choices(release, func, node)
                explicit = field_kind is None or kind != field_kind
                options.append(Option(names, kind, node in hidden, choices, literals, explicit))
    for option in options:
        if option.kind != "value":
            option.choices = None
        elif option.choices is None:
            option.choices = _validated(release, option)
    return options


_NOT_FOR_SERVE = re.compile(r"""['"]serve['"] not in sys\.argv""")


def _hidden_from_serve(func: ast.FunctionDef) -> set[ast.AST]:
    """Calls under `if 'serve' not in sys.argv[1:] ...:` (vLLM 0.9.0 hid --model from serve)."""
    hidden: set[ast.AST] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.If) and _NOT_FOR_SERVE.search(ast.unparse(node.test)):
            for stmt in node.body:
                hidden.update(ast.walk(stmt))
    return hidden


def _spelling(name: str) -> str:
    """`--max-seq_len-to-capture` (0.4.x) as servetune reads every long flag: dashes only."""
    return "--" + name[2:].replace("_", "-") if name.startswith("--") else name


def flag_table(options: list[Option]) -> list[str]:
    names = {_spelling(name) for option in options for name in option.names}
    return sorted(names - {"-h", "--help"})


def choice_table(options: list[Option]) -> dict[str, list[str]]:
    """Each long spelling of a value option -> the values this release accepts (read ones only)."""
    table: dict[str, list[str]] = {}
    for option in options:
        if option.choices is None:
            continue
        for name in option.names:
            if name.startswith("--"):
                table[_spelling(name)] = option.choices
    return table


# --- the data file ---------------------------------------------------------------------------

# ../shared/reference beside the main checkout (a worktree sits one level deeper: ../../shared).
REFERENCE = next(
    (p / "shared" / "reference" / "vllm-flags" for p in ROOT.parents if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "reference" / "vllm-flags",
)
OUTPUT = ROOT / "src" / "servetune" / "data" / "vllm_flags.json"


def _reference_tables() -> dict[str, list[str]]:
    """Flag inventories of real wheels (hand-verified; used where an sdist is missing)."""
    tables: dict[str, list[str]] = {}
    for path in sorted(REFERENCE.glob("*-flags.txt")):
        lines = path.read_text(encoding="utf-8").split()
        tables[path.name.removesuffix("-flags.txt")] = sorted(set(lines) - {"-h", "--help"})
    return tables


def _all_releases(index: list[dict[str, object]]) -> list[str]:
    """Every release in range that the index lists (any file), oldest first."""
    versions = set()
    for entry in index:
        match = re.match(
            r"^vllm-(\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)[-.]", str(entry["filename"])
        )
        if match and FIRST <= release_key(match.group(1))[:3] <= LAST:
            versions.add(match.group(1))
    return sorted(versions, key=release_key)


def build_tables(offline: bool) -> dict[str, object]:
    """Tables per release, kinds of flags, and which releases fell back to which table."""
    sdists = fetch(offline)
    reference = _reference_tables()
    tables: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    release_kinds: dict[str, dict[str, str]] = {}
    choices: dict[str, dict[str, list[str]]] = {}
    sources: dict[str, str] = {}
    fallbacks: dict[str, str] = {}
    hidden: dict[str, list[str]] = {}
    for version in _all_releases(_index(offline=True)):
        if version in sdists:
            options = serve_options(parse_release(read_sources(sdists[version])))
            if not options:
                print(f"{version}: no serve options found in the sdist")
            else:
                tables[version] = flag_table(options)
                sources[version] = "sdist"
                choices[version] = choice_table(options)
                for name in (n for o in options if o.serve_hidden for n in o.names):
                    hidden.setdefault(_spelling(name), []).append(version)
                own = {_spelling(n): o.kind for o in options for n in o.names if n[:2] == "--"}
                release_kinds[version] = {
                    _spelling(n): o.kind for o in options if o.explicit for n in o.names
                }
                kinds.update(own)
                continue
        if version in reference:
            tables[version] = reference[version]
            sources[version] = "wheel inventory (../shared/reference/vllm-flags)"
            print(f"{version}: no usable sdist; using the reference wheel inventory")
        else:
            fallbacks[version] = ""
    for version in list(fallbacks):
        stand_in = _nearest(version, list(tables))
        fallbacks[version] = stand_in
        print(f"{version}: no usable sdist; reviewed with the {stand_in} table")
    return {
        "tables": tables,
        "kinds": kinds,
        "release_kinds": release_kinds,
        "choices": choices,
        "sources": sources,
        "fallbacks": fallbacks,
        "hidden_from_serve": hidden,
    }


def _nearest(version: str, known: list[str]) -> str:
    """The same minor's closest table, else the newest older one."""
    same_minor = [v for v in known if release_key(v)[:2] == release_key(version)[:2]]
    pool = same_minor or [v for v in known if release_key(v) < release_key(version)]
    return min(pool, key=lambda v: abs(release_key(v)[2] - release_key(version)[2]))


def _spans(tables: dict[str, list[str]]) -> dict[str, list[list[str]]]:
    """Each flag -> inclusive [first, last] runs of consecutive releases that have it."""
    order = sorted(tables, key=release_key)
    spans: dict[str, list[list[str]]] = {}
    for flag in sorted({f for t in tables.values() for f in t}):
        runs: list[list[str]] = []
        previous_had = False
        for version in order:
            has = flag in tables[version]
            if has and previous_had:
                runs[-1][1] = version
            elif has:
                runs.append([version, version])
            previous_had = has
        spans[flag] = runs
    return spans


def _current_kind(entry: dict[str, object]) -> str:
    kind = str(entry["type"])
    if kind.startswith("bool"):
        return "bool"
    if kind.startswith("flag"):
        return "store_true"
    if entry.get("nargs") in ("+", "*"):
        return "list"
    return "value"


def _json_scalar(text: str) -> object:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (int, float, str, bool)) else None


def current_options() -> dict[str, dict[str, object]]:
    """Types, defaults, choices and spellings of the newest release, from its real parser's dump."""
    options: dict[str, dict[str, object]] = {}
    for entry in json.loads((REFERENCE / "serve-args-0.33.0.json").read_text(encoding="utf-8")):
        opts = [o.strip() for o in str(entry["opts"]).split(",")]
        if not opts[0].startswith("-"):
            continue
        kind = _current_kind(entry)
        negatives = [o for o in opts[1:] if kind == "bool" and o.startswith("--")]
        options[opts[0]] = {
            "kind": kind,
            "type": entry["type"],
            "aliases": [o for o in opts[1:] if o not in negatives],
            "negatives": negatives,
            "default": _json_scalar(str(entry["default"])),
            "choices": entry.get("choices"),
            "deprecated": bool(entry.get("deprecated")),
        }
    return options


def _choice_runs(
    choices: dict[str, dict[str, list[str]]], order: list[str]
) -> dict[str, list[list[object]]]:
    """Each flag -> [first, last, choices] runs of consecutive releases with the same choices
    (a release whose choices for it were not read breaks the run and has none)."""
    runs: dict[str, list[list[object]]] = {}
    for flag in sorted({f for table in choices.values() for f in table}):
        flag_runs: list[list[object]] = []
        previous: list[str] | None = None
        for version in order:
            values = choices.get(version, {}).get(flag)
            if values is not None and values == previous:
                flag_runs[-1][1] = version
            elif values is not None:
                flag_runs.append([version, version, values])
            previous = values
        runs[flag] = flag_runs
    return runs


def _kind_changes(
    release_kinds: dict[str, dict[str, str]], current: dict[str, str], order: list[str]
) -> dict[str, list[list[str]]]:
    """Flags whose kind in a release differs from the kind servetune uses for every release (0.33's
    real parser, else the newest release that has them): [first, last, kind] runs. Only kinds the
    release's add_argument call writes out (action, nargs) count: one inferred from a config
    field's type annotation is a guess that 0.33's parser may contradict. A store_true switch that
    became a bool (`--x/--no-x`) reads the same, so only value/switch/list changes are kept."""
    changes: dict[str, list[list[str]]] = {}
    for flag, kind in sorted(current.items()):
        runs: list[list[str]] = []
        previous = None
        for version in order:
            own = release_kinds.get(version, {}).get(flag)
            differs = own is not None and _reads_as(own) != _reads_as(kind)
            if differs and own == previous:
                runs[-1][1] = version
            elif differs and own is not None:
                runs.append([version, version, own])
            previous = own if differs else None
        if runs:
            changes[flag] = runs
    return changes


def _reads_as(kind: str) -> str:
    return "switch" if kind in ("bool", "store_true") else kind


def compare_with_dump(choices: dict[str, list[str]]) -> list[str]:
    """Where the source reader's 0.33.0 choices differ from the real parser's dump (printed)."""
    lines: list[str] = []
    dumped = {
        flag: [str(c) for c in entry["choices"]]  # type: ignore[union-attr]
        for flag, entry in current_options().items()
        if entry.get("choices")
    }
    for flag in sorted(set(choices) | set(dumped)):
        read, real = choices.get(flag), dumped.get(flag)
        if read is None:
            lines.append(f"{flag}: not read from the source (the parser lists {len(real or [])})")
        elif real is None:
            lines.append(
                f"{flag}: {len(read)} values vLLM checks after parsing (no argparse choices)"
            )
        elif set(read) != set(real):
            extra, lacking = sorted(set(read) - set(real)), sorted(set(real) - set(read))
            lines.append(f"{flag}: read {extra}, parser {lacking}")
    return lines


def build(offline: bool = False) -> dict[str, object]:
    built = build_tables(offline)
    tables: dict[str, list[str]] = built["tables"]  # type: ignore[assignment]
    options = current_options()
    kinds: dict[str, str] = built["kinds"]  # type: ignore[assignment]
    order = sorted(tables, key=release_key)
    choices: dict[str, dict[str, list[str]]] = built["choices"]  # type: ignore[assignment]
    for line in compare_with_dump(choices.get(order[-1], {})):
        print(f"{order[-1]} choices vs the parser dump: {line}")
    used = {f: str(o["kind"]) for f, o in options.items()}
    used.update({f: k for f, k in kinds.items() if f not in options})
    kind_changes = _kind_changes(built["release_kinds"], used, order)  # type: ignore[arg-type]
    print(f"kinds that differ by release: {kind_changes}")
    return {
        "releases": order,
        "fallbacks": built["fallbacks"],
        "sources": {v: s for v, s in built["sources"].items() if s != "sdist"},  # type: ignore[attr-defined]
        "flags": _spans(tables),
        "hidden_from_serve": built["hidden_from_serve"],
        "options": {f: {k: v for k, v in o.items() if k != "choices"} for f, o in options.items()},
        "old_kinds": {f: k for f, k in sorted(kinds.items()) if f not in options},
        "kind_changes": kind_changes,
        "choices": _choice_runs(choices, order),
    }


def write(data: dict[str, object]) -> None:
    """One flag (or release list) per line: reviewable diffs, modest size."""
    lines = ["{"]
    items = list(data.items())
    for number, (key, value) in enumerate(items):
        comma = "," if number < len(items) - 1 else ""
        if isinstance(value, dict) and value:
            inner = [
                f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items()
            ]
            lines.append(f" {json.dumps(key)}: {{\n" + ",\n".join(inner) + f"\n }}{comma}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size:,} bytes)")


def _debug(version: str) -> None:
    """Print one release's table, then each value flag's choices and what could not be read."""
    path = next(CACHE.glob(f"vllm-{version}.tar.gz"))
    release = parse_release(read_sources(path))
    options = serve_options(release)
    print("\n".join(flag_table(options)))
    print("\nchoices:")
    for flag, choices in sorted(choice_table(options).items()):
        print(f"  {flag}: {' '.join(choices)}")
    for text in release.reader.unresolved:
        print(f"  not read: {text}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--debug"]:
        _debug(sys.argv[2])
    else:
        write(build(offline="--offline" in sys.argv))
