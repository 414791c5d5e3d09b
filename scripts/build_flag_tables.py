"""Build servetune's vLLM flag tables (src/servetune/data/vllm_flags.json) from vLLM's own sources.

Run from the repository root: `python scripts/build_flag_tables.py [--offline]`.

1. Fetch: the source distribution (sdist) of every vLLM release from 0.6.0 to the newest is
   downloaded from the package index into .cache/vllm-sdist/ (gitignored, checked against the
   index's sha256). Wheels are never fetched (hundreds of MB each).
2. Read: the `vllm serve` argument definitions are read statically with `ast` (vLLM is never
   imported): vllm/engine/arg_utils.py, the OpenAI server's cli_args.py, the `serve` subcommand and
   the config dataclasses newer releases generate flags from.
3. Write: one table per release, plus the argument details of 0.33.0 taken from the reference dump
   of the real parser (../shared/reference/vllm-flags/serve-args-0.33.0.json).

Releases without an sdist on the index are listed under "missing" with the table used instead.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import tarfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "vllm-sdist"
INDEX_URL = "https://pypi.org/simple/vllm/"
FIRST, LAST = (0, 6, 0), (0, 33, 99)


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


def read_sources(path: Path) -> dict[str, str]:
    """The Python files under vllm/ of one sdist, by path relative to the project root."""
    sources: dict[str, str] = {}
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/", 1)
            if len(parts) < 2 or not parts[1].startswith("vllm/") or not member.isfile():
                continue
            if not parts[1].endswith(".py"):
                continue
            handle = archive.extractfile(member)
            if handle is not None:
                sources[parts[1]] = handle.read().decode("utf-8", errors="replace")
    return sources


# --- reading the argument definitions -----------------------------------------------------------


@dataclass
class Option:
    """One `vllm serve` option as a release's source defines it."""

    names: list[str]  # option strings as written (long and short)
    kind: str = "value"  # value | bool | store_true | list
    serve_hidden: bool = False  # left out when the command line says `serve` (0.9.0's --model)


@dataclass
class Release:
    """The parsed sources of one release: classes by name, files by path."""

    trees: dict[str, ast.Module]
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for tree in self.trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, node)

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
    return Release(trees)


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
    for name in sorted(targets):
        deleted, extra = _class_edits(release, _bases_and_self(release, name))
        for key, annotation in release.fields(name):
            if key in deleted:
                continue
            kind = _annotation_kind(annotation) or "value"
            options.append(Option([*extra.get(key, []), "--" + key.replace("_", "-")], kind))
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
    for keyword in call.keywords:
        if keyword.arg is None and isinstance(keyword.value, ast.Subscript):
            path = _subscript_path(keyword.value)
            owner = _kwargs_sources(func).get(ast.unparse(keyword.value.value))
            if owner and path:
                annotations = dict(release.fields(owner))
                return _annotation_kind(annotations.get(path[0]))
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
                kind = _kind_of_call(node, _field_kind(release, func, node))
                options.append(Option(names, kind, serve_hidden=node in hidden))
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


def flag_table(options: list[Option]) -> list[str]:
    return sorted({name for option in options for name in option.names} - {"-h", "--help"})


# --- the data file ---------------------------------------------------------------------------

REFERENCE = ROOT.parent / "shared" / "reference" / "vllm-flags"
OUTPUT = ROOT / "src" / "servetune" / "data" / "vllm_flags.json"


def release_key(version: str) -> tuple[int, ...]:
    """0.6.1 < 0.6.1.post1 < 0.6.2; 0.9.0 < 0.9.0.1."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?", version)
    if match is None:
        raise ValueError(version)
    return tuple(int(part or 0) for part in match.groups())


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
                for name in (n for o in options if o.serve_hidden for n in o.names):
                    hidden.setdefault(name, []).append(version)
                kinds.update({n: o.kind for o in options for n in o.names if n.startswith("--")})
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


def build(offline: bool = False) -> dict[str, object]:
    built = build_tables(offline)
    tables: dict[str, list[str]] = built["tables"]  # type: ignore[assignment]
    options = current_options()
    kinds: dict[str, str] = built["kinds"]  # type: ignore[assignment]
    return {
        "releases": sorted(tables, key=release_key),
        "fallbacks": built["fallbacks"],
        "sources": {v: s for v, s in built["sources"].items() if s != "sdist"},  # type: ignore[attr-defined]
        "flags": _spans(tables),
        "hidden_from_serve": built["hidden_from_serve"],
        "options": options,
        "old_kinds": {f: k for f, k in sorted(kinds.items()) if f not in options},
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
    path = next(CACHE.glob(f"vllm-{version}.tar.gz"))
    table = flag_table(serve_options(parse_release(read_sources(path))))
    print("\n".join(table))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--debug"]:
        _debug(sys.argv[2])
    else:
        write(build(offline="--offline" in sys.argv))
