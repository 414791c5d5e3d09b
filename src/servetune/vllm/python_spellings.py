"""A vLLM server start spelled in Python or in vLLM's own log, turned into `vllm serve` words.

Forms read (`serve_command.tokens_from_text` tries them after the shell forms):
- the offline API and the engine classes: `LLM(model="...", tensor_parallel_size=2, ...)`,
  `EngineArgs(...)`, `AsyncEngineArgs(...)`: each keyword is an `EngineArgs` field, and vLLM's
  parser makes each field the flag of the same name with dashes (`EngineArgs.add_cli_args`), so
  `tensor_parallel_size=2` is `--tensor-parallel-size 2`;
- an argv list a launcher script builds: `cmd = ["vllm", "serve", MODEL, "--port", str(PORT)]`;
- V1's `non-default args: {...}` log line (0.8 and later), and the engine config line every
  release logs at startup (`Initializing an LLM engine (v0.5.4) with config: model='...', ...`).

Values are read as Python reads them: literals (True/False/None, numbers, strings, dicts), names
bound by an assignment earlier in the text, `str(X)`, `int(X)` and `json.dumps(X)` of those. A
value the text does not give (a name assigned nowhere) is left out with its flag: the review
then assumes the flag's default, as it does for a flag not written.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import tokenize
from collections.abc import Mapping

from servetune.vllm import flags as vllm_flags

__all__ = ["argv_list", "config_line", "engine_call", "flag_words", "logged_args"]


class _Unknown(Exception):
    """A value the text does not give."""


def _value(node: ast.expr, names: Mapping[str, object]) -> object:
    """What a Python expression of a launcher script is, from literals and known names."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise _Unknown(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _value(node.operand, names)
        if isinstance(operand, int | float):
            return -operand
        raise _Unknown(ast.unparse(node))
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(item, names) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _value(key, names): _value(item, names)
            for key, item in zip(node.keys, node.values, strict=True)
            if key is not None
        }
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _called(ast.unparse(node.func), _value(node.args[0], names), node)
    raise _Unknown(ast.unparse(node))


def _called(function: str, value: object, node: ast.expr) -> object:
    """`str(X)`, `int(X)`, `float(X)`, `json.dumps(X)` of a known value."""
    if function == "str":
        return str(value)
    if function == "json.dumps":
        return json.dumps(value)
    if function in ("int", "float") and isinstance(value, str | int | float):
        return int(value) if function == "int" else float(value)
    raise _Unknown(ast.unparse(node))


def _matching(text: str, start: int) -> int | None:
    """Where the bracket opened at `start` closes (Python's tokenizer skips strings and
    comments), or None where the text ends first."""
    depth = 0
    lines = text[start:].splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    try:
        for token in tokenize.generate_tokens(io.StringIO(text[start:]).readline):
            if token.type != tokenize.OP or token.string not in "()[]{}":
                continue
            depth += 1 if token.string in "([{" else -1
            if depth == 0:
                row, column = token.start
                return start + offsets[row - 1] + column
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _expression(text: str, start: int, opening: int) -> ast.expr | None:
    """The Python expression from `start` to the bracket that closes the one at `opening`."""
    end = _matching(text, opening)
    if end is None:
        return None
    try:
        return ast.parse(text[start : end + 1].strip(), mode="eval").body
    except SyntaxError:
        return None


_ASSIGNMENT = re.compile(r"^[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*=(?!=)[ \t]*", re.MULTILINE)


def _names(text: str) -> dict[str, object]:
    """Names a script binds to values it spells (`MODEL = "org/x"`, `spec = {...}`), in order:
    a later assignment may use an earlier name."""
    names: dict[str, object] = {}
    for match in _ASSIGNMENT.finditer(text):
        start = match.end()
        if start < len(text) and text[start] in "([{":
            end = _matching(text, start)
            source = text[start : end + 1] if end is not None else ""
        else:
            source = text[start:].split("\n", 1)[0]
        try:
            node = ast.parse(source.strip(), mode="eval").body
            names[match.group("name")] = _value(node, names)
        except (SyntaxError, _Unknown, ValueError, TypeError):
            continue
    return names


def flag_words(flag: str, value: object) -> list[str]:
    """The words vLLM's parser takes for one setting: a switch alone (`--no-` for False), a
    list as one word per item, a dict as its JSON; nothing for None."""
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + flag.removeprefix("--")]
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [flag, *(str(item) for item in value)] if value else []
    if isinstance(value, dict):
        return [flag, json.dumps(value)]
    return [flag, str(value)]


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


# --- LLM(...), EngineArgs(...), AsyncEngineArgs(...) ------------------------------------------

_ENGINE_CALL = re.compile(r"(?<![\w.])(?:vllm\.)?(?:LLM|AsyncEngineArgs|EngineArgs)\s*\(")


def engine_call(text: str) -> list[str] | None:
    """`vllm serve` words for the first `LLM(...)` / `EngineArgs(...)` call that names a model.
    `LLM`'s first positional argument is the model; its keywords are `EngineArgs` fields."""
    names = _names(text)
    for match in _ENGINE_CALL.finditer(text):
        node = _expression(text, match.start(), match.end() - 1)
        if not isinstance(node, ast.Call):
            continue
        settings: dict[str, object] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                continue  # `**kwargs`: not spelled here
            try:
                settings[keyword.arg] = _value(keyword.value, names)
            except _Unknown:
                continue
        if node.args and "model" not in settings:
            with contextlib.suppress(_Unknown):
                settings["model"] = _value(node.args[0], names)
        model = settings.pop("model", None)
        if isinstance(model, str):
            words = ["vllm", "serve", model]
            for key, value in settings.items():
                words.extend(flag_words(_flag(key), value))
            return words
    return None


# --- an argv list: ["vllm", "serve", ...] -----------------------------------------------------

_ARGV_START = re.compile(
    r"""\[\s*(?:["'](?:\S*/)?vllm["']\s*,\s*["']serve["']|["']python[0-9.]*["']\s*,\s*["']-m["'])"""
)


def argv_list(text: str) -> list[str] | None:
    """The words of a Python argv list that starts a vLLM server (`subprocess.run([...])`).
    A word the script computes from a name it does not bind stays as written (`str(PORT)`)."""
    names = _names(text)
    for match in _ARGV_START.finditer(text):
        node = _expression(text, match.start(), match.start())
        if not isinstance(node, ast.List):
            continue
        words: list[str] = []
        for item in node.elts:
            try:
                value = _value(item, names)
            except _Unknown:
                value = ast.unparse(item)
            words.append(value if isinstance(value, str) else json.dumps(value))
        return words
    return None


# --- vLLM's startup log -----------------------------------------------------------------------

# vLLM 0.8 and later log the arguments it was started with as a Python dict, one line:
# `INFO 07-09 02:56:25 [api_utils.py:273] non-default args: {'model_tag': 'Qwen/Qwen3-8B', ...}`.
# Users paste that line (or the whole log) as often as the command itself.
_LOGGED_ARGS = re.compile(r"non-default args: (?P<dict>\{.*)$", re.MULTILINE)


_OBJECT_REPR = re.compile(r"\b[A-Z]\w*\(")


def _objects_as_strings(text: str) -> str:
    """Objects logged by their repr (`'pooler_config': PoolerConfig(pooling_type='LAST', ...)`)
    as strings, so the entries after them still read; an unclosed one is left as it is."""
    out: list[str] = []
    start = 0
    for match in _OBJECT_REPR.finditer(text):
        if match.start() < start:
            continue
        depth, end = 0, None
        for index in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                end = index + 1
                break
        if end is None:
            break
        out.extend((text[start : match.start()], repr(text[match.start() : end])))
        start = end
    return "".join(out) + text[start:]


def _literal_dict(text: str) -> dict[str, object] | None:
    """The dict a logged line spells, or its longest whole-entry prefix when the paste cut the
    line short (`..., 'reaso` ends a copied excerpt)."""
    text = _objects_as_strings(text)
    candidates = [text] + [text[:cut] + "}" for cut in _entry_ends(text)]
    for candidate in candidates:
        try:
            value = ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict) and all(isinstance(key, str) for key in value):
            return value
    return None


def _entry_ends(text: str) -> list[int]:
    """Where an entry of a top-level dict may end (before `, '`), last first."""
    return [match.start() for match in re.finditer(r", '", text)][::-1]


def logged_args(text: str) -> list[str] | None:
    """`vllm serve` words rebuilt from vLLM's own `non-default args: {...}` log line."""
    match = _LOGGED_ARGS.search(text)
    logged = _literal_dict(match.group("dict").strip()) if match else None
    if logged is None:
        return None
    words = ["vllm", "serve"]
    # An offline LLM(...) run logs its model as `model` alone, with no `model_tag`.
    model = logged.pop("model_tag", None) or logged.get("model")
    if isinstance(model, str):
        words.append(model)
        if logged.get("model") == model:
            del logged["model"]
    for key, value in logged.items():
        words.extend(flag_words(_flag(key), value))
    return words


# `INFO ... llm_engine.py:237] Initializing an LLM engine (v0.5.4) with config: model='x', ...`
# (V1: `Initializing a V1 LLM engine (v0.8.5) with config: ...`). The config's own names, where
# they are not the flag's: `max_seq_len` is --max-model-len's value, `device_config` --device's.
_CONFIG_LINE = re.compile(
    r"Initializing an? (?:V1 )?LLM engine (?:\([^)]*\) )?with config: (.*)$", re.MULTILINE
)
_CONFIG_NAMES = {"max_seq_len": "max_model_len", "device_config": "device"}
_CONFIG_ENTRY = re.compile(r"(?:^|[,\s]\s*)(?P<key>[a-z_]+)=")
# `api_server.py] args: Namespace(host=None, port=8001, ..., model='x', ...)`: the parsed
# arguments every release before 0.8 logged (elided with `...` where pasted in part).
_NAMESPACE_LINE = re.compile(r"args: Namespace\((.*?)\)?\s*$", re.MULTILINE)
_ELIDED = re.compile(r"[,\s]*\.\.\.[,\s]*$")


def _config_entries(body: str) -> dict[str, str]:
    """`key=value` entries at the top level of the line (values may hold commas in brackets)."""
    entries: dict[str, str] = {}
    starts = list(_CONFIG_ENTRY.finditer(body))
    for number, match in enumerate(starts):
        end = starts[number + 1].start() if number + 1 < len(starts) else len(body)
        entries[match.group("key")] = body[match.end() : end]
    merged: dict[str, str] = {}
    for key, value in entries.items():
        balanced = value.count("(") == value.count(")") and value.count("{") == value.count("}")
        if balanced:
            merged[key] = _ELIDED.sub("", value.strip()).rstrip(",").strip()
    return merged


def _config_value(raw: str) -> object:
    """A logged config value: a Python literal, `torch.bfloat16`, `LoadFormat.AUTO`, a bare word."""
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        pass
    if re.fullmatch(r"torch\.\w+", raw):
        return raw.removeprefix("torch.")
    if re.fullmatch(r"[A-Z]\w*\.\w+", raw):
        return raw.rpartition(".")[2].lower()
    return raw if re.fullmatch(r"[\w.-]+", raw) else None


def config_line(text: str) -> list[str] | None:
    """`vllm serve` words from the engine config line vLLM logs at startup, or from the
    `args: Namespace(...)` line of releases before 0.8."""
    match = _CONFIG_LINE.search(text) or _NAMESPACE_LINE.search(text)
    return _state_words(_config_entries(match.group(1))) if match else None


def _state_words(entries: dict[str, str]) -> list[str] | None:
    """The words for a dump of every setting: the entries that are flags of some release (the
    rest are derived state: `seed`, `device_config`...). A dump lists defaults too: a False
    switch and a None value are the release's default, and a list is only
    `--served-model-name`'s (the others are JSON-typed flags a list would misspell)."""
    model = _config_value(entries.pop("model_tag", "") or entries.pop("model", ""))
    entries.pop("model", None)
    if not isinstance(model, str) or not model:
        return None
    words = ["vllm", "serve", model]
    for key, raw in entries.items():
        flag = _flag(_CONFIG_NAMES.get(key, key))
        value = _config_value(raw)
        if value is None or value is False or not vllm_flags.known_in_some_release(flag):
            continue
        if isinstance(value, list | tuple | dict) and flag != "--served-model-name":
            continue
        if flag == "--tokenizer" and value == model:
            continue
        words.extend(flag_words(flag, value))
    return words
