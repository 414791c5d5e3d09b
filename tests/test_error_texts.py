"""What an error says is a text of `texts/` (area `errors`), never an English literal at the
raise, so the CLI can say it in the user's language: read with `ast` over the source.

- No `ServetuneError` (or subclass) is built with a string literal, an f-string or a name bound
  to one as its message or hint, nor `with_fields` with a literal template, outside `NOT_YET`.
- Every `ErrorText("key", ...)` names a text of the area; its facts are slots of the text or its
  hint, and the slots it leaves open are config fields (said as flags by the CLI).
- Every text of the area is said somewhere.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from pathlib import Path

import servetune
from servetune import texts

PACKAGE = Path(servetune.__file__).resolve().parent

# Files whose errors are still English literals: other work was changing them when the errors
# moved into `texts/`. Move theirs too, then take them off this list (a test says when). The
# files of that work that raise no error with a literal (vllm/serve_args.py,
# review/capacity.py, review/settings.py, review/rules/) are held to the rule already; an entry
# that matches no file yet (render/report*.py, cli/report.py, cli/alerts.py) is let be.
NOT_YET: tuple[str, ...] = ()

# The config fields an error may leave as a slot: the library says the field, the CLI its flag.
CONFIG_FIELDS = frozenset(
    {
        "address",
        "api_key",
        "base_url",
        "dataset_name",
        "dataset_path",
        "max_concurrency",
        "num",
        "vllm",
        "workers",
    }
)


def _matches(rel: str, entry: str) -> bool:
    return rel.startswith(entry) if entry.endswith("/") else Path(rel).match(entry)


def _sources() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.parent.name != "texts"
    ]


SOURCES = _sources()


def _error_classes(trees: list[ast.Module]) -> frozenset[str]:
    """`ServetuneError` and every class that derives from it, wherever it is defined."""
    classes = [node for tree in trees for node in ast.walk(tree)]
    known = {"ServetuneError"}
    grew = True
    while grew:
        more = {
            node.name
            for node in classes
            if isinstance(node, ast.ClassDef)
            and any(isinstance(b, ast.Name) and b.id in known for b in node.bases)
        }
        grew = not more <= known
        known |= more
    return frozenset(known)


ERRORS = _error_classes([tree for _, tree in SOURCES])


def _literal_names(tree: ast.Module) -> frozenset[str]:
    """Names the module binds to a string literal anywhere (`hint = "..."`)."""
    return frozenset(
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _is_text(node.value, frozenset())
        for target in node.targets
        if isinstance(target, ast.Name)
    )


def _is_text(node: ast.expr, names: frozenset[str]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_text(node.left, names) or _is_text(node.right, names)
    if isinstance(node, ast.IfExp):
        return _is_text(node.body, names) or _is_text(node.orelse, names)
    return isinstance(node, ast.Name) and node.id in names


def _error_call(node: ast.AST, errors: frozenset[str]) -> bool:
    """`UsageError(...)` or `UsageError.with_fields(...)` (any error class)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "with_fields":
        func = func.value
    return isinstance(func, ast.Name) and func.id in errors


def literal_messages(tree: ast.Module, errors: frozenset[str] = ERRORS) -> list[int]:
    """The lines where an error is built with a literal message or hint."""
    names = _literal_names(tree)
    found = []
    for node in ast.walk(tree):
        if _error_call(node, errors):
            assert isinstance(node, ast.Call)
            said = [*node.args[:2], *(k.value for k in node.keywords if k.arg == "hint")]
            if isinstance(node.func, ast.Name) and node.func.id == "MissingExtra":
                said = node.args[1:2]  # MissingExtra(extra, feature): the extra is a name
            if any(_is_text(arg, names) for arg in said):
                found.append(node.lineno)
    return found


def test_the_checker_sees_a_literal() -> None:
    sample = ast.parse(
        "class Mine(UsageError): ...\n"
        "HINT = 'try again'\n"
        "def f(x):\n"
        "    raise UsageError('bad')\n"
        "    raise Mine(f'bad {x}')\n"
        "    raise UsageError(ErrorText('k'), HINT)\n"
        "    raise UsageError.with_fields('{workers} bad')\n"
        "    return ServetuneError(ErrorText('k'), hint='x' if x else None)\n"
        "    raise UsageError(ErrorText('k'), ErrorText('k.hint'))\n"
        "    raise ValueError('not ours')\n"
    )
    assert {"ServetuneError", "UsageError", "HardwareError", "NotAVllmLog"} <= ERRORS
    errors = _error_classes([*(tree for _, tree in SOURCES), sample])
    assert literal_messages(sample, errors) == [4, 5, 6, 7, 8]


def _converted() -> Iterator[tuple[str, ast.Module]]:
    for rel, tree in SOURCES:
        if not any(_matches(rel, entry) for entry in NOT_YET):
            yield rel, tree


def test_no_error_says_an_english_literal() -> None:
    found = [f"{rel}:{line}" for rel, tree in _converted() for line in literal_messages(tree)]
    assert found == []


def test_the_not_yet_list_only_holds_files_with_literals_left() -> None:
    """Shrink `NOT_YET` as their errors move into `texts/`. (An entry that matches no file is
    let be: the work that changes it may not be merged yet.)"""
    done = [
        entry
        for entry in NOT_YET
        if (files := [tree for rel, tree in SOURCES if _matches(rel, entry)])
        and not any(literal_messages(tree) for tree in files)
    ]
    assert done == []


def _slots(template: str) -> set[str]:
    return {slot for _, slot, _, _ in string.Formatter().parse(template) if slot}


def _said_calls() -> Iterator[tuple[str, ast.Call]]:
    for rel, tree in SOURCES:
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Name) and func.id == "ErrorText":
                assert isinstance(node, ast.Call)
                yield rel, node


def _key(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def test_every_said_names_a_text_and_fills_it() -> None:
    table = texts.table("errors", "en")
    wrong = []
    for rel, call in _said_calls():
        key = _key(call)
        if key is None or key not in table:
            wrong.append(f"{rel}:{call.lineno}: no text {key!r}")
            continue
        if any(k.arg is None for k in call.keywords):
            continue  # ErrorText(key, **facts): nothing to read here
        facts = {k.arg for k in call.keywords if k.arg is not None}
        slots = _slots(table[key]) | _slots(table.get(f"{key}.hint", ""))
        if facts - slots:
            wrong.append(f"{rel}:{call.lineno}: {key} has no slot for {sorted(facts - slots)}")
        if slots - facts - CONFIG_FIELDS:
            wrong.append(f"{rel}:{call.lineno}: {key} needs {sorted(slots - facts)}")
    assert wrong == []


def _keys_said() -> set[str]:
    """Keys given to `ErrorText(...)`, `.other(...)` and `texts.format("errors", ...)`."""
    keys = {key for _, call in _said_calls() if (key := _key(call))}
    for _, tree in SOURCES:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            words = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if node.func.attr == "other" and words:
                keys.add(str(words[0]))
            if node.func.attr == "format" and words[:1] == ["errors"] and len(words) > 1:
                keys.add(str(words[1]))
    return keys


def test_every_text_of_the_area_is_said() -> None:
    said = _keys_said()
    unsaid = [
        key
        for key in texts.table("errors", "en")
        if key not in said and not (key.endswith(".hint") and key.removesuffix(".hint") in said)
    ]
    assert unsaid == []
