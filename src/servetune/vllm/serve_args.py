"""How vLLM's own parser reads a `serve` argument list, release by release.

`read_args` fills a `Builder` from the words after `vllm serve` (or the API server module): known
flags with their values, switches, unambiguous prefixes of long flags (argparse's default, kept by
vLLM: `--gpu-memory-util`), `-p` for the one short option it starts, `-qawq`, `-O3`,
`--json-flag.key value` (0.9+), `--no-x` twins. What vLLM would refuse becomes a `ParseIssue`
for the review rules, never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from servetune.vllm import flags as vllm_flags

ArgValue = str | bool | tuple[str, ...]
IssueKind = Literal[
    "dash-typo",
    "unknown-flag",
    "unquoted-json",
    "removed-flag",
    "flag-too-new",
    "bool-flag-value",
    "missing-value",
    "invalid-value",
    "config-unreadable",
    "ambiguous-flag",
    "default-model",
    "model-required",
    "flag-without-dashes",
    "extra-positional-after-entrypoint",
]

# Characters that word processors and chat UIs substitute for "-".
UNICODE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_FALSE_WORDS = {"false", "no", "0", "off"}


def _reads_as_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


_TRUE_WORDS = {"true", "yes", "1", "on", *_FALSE_WORDS}


@dataclass(frozen=True)
class ParseIssue:
    """Something in the command that vLLM would refuse or that servetune could not read."""

    kind: IssueKind
    token: str  # the text as written
    flag: str | None = None  # the flag it concerns (canonical spelling when known)
    detail: str | None = None  # e.g. the corrected spelling, a suggestion, a reason
    removal: vllm_flags.Removal | None = None
    choices: tuple[str, ...] | None = None  # invalid-value: what this release accepts instead
    # Refused only by releases before this one, while the release reviewed is not known (the
    # newest is assumed): a warning for the user who may run an older one.
    before: str | None = None


_SUFFIX = re.compile(r"^(-?\d+(?:\.\d+)?)([kKmMgGtT]?)$")


def parse_int(raw: str) -> int | None:
    """Read an integer the way vLLM 0.33 does: lower-case suffixes are powers of 1000, upper-case
    of 1024 (`32k` = 32000, `32K` = 32768). Returns None for text that is not such a number."""
    match = _SUFFIX.match(raw.strip())
    if not match:
        return None
    number, suffix = match.groups()
    if not suffix:
        return int(number) if "." not in number else None
    power = "kmgt".index(suffix.lower()) + 1
    base = 1000 if suffix.islower() else 1024
    return int(float(number) * base**power)


@dataclass
class Builder:
    """What the argument list says so far, as release `version` reads it."""

    version: str
    args: dict[str, ArgValue] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    issues: list[ParseIssue] = field(default_factory=list)
    model: str | None = None
    model_positional: bool = False
    model_default: bool = False
    serve: bool = False  # the command line says `serve` (vLLM 0.9.0 then hides `--model`)
    plugins: frozenset[str] = frozenset()  # plugin flags the command gives (PLUGIN_FLAGS)
    dev_build: bool = False  # a `.devN` build of main: its choices are not known
    model_word: bool = False  # `--model` written as its own word (not `--model=X`)
    model_first: bool = False  # the model is the first word after `vllm serve`
    demo_server: bool = False  # `python -m vllm.entrypoints.api_server`: its own parser

    def set(self, flag: str, value: ArgValue) -> None:
        if flag == "--model":
            self.model = value if isinstance(value, str) else None
            return
        self.args[flag] = value
        if flag in self.order:
            self.order.remove(flag)
        self.order.append(flag)


def _fix_dash(token: str) -> str | None:
    """`–quantization` / `—tp` / `−−x` -> the ASCII spelling, or None if no Unicode dash leads."""
    stripped = token.lstrip(UNICODE_DASHES + "-")
    lead = token[: len(token) - len(stripped)]
    if not lead or not any(ch in UNICODE_DASHES for ch in lead):
        return None
    # An en/em dash usually replaced "--"; a single-letter-ish name means a short alias ("-tp").
    return ("-" if len(stripped.split("=")[0]) <= 3 else "--") + stripped


def _looks_like_value(token: str) -> bool:
    if not token.startswith("-"):
        return True
    return re.match(r"^-\d", token) is not None


# A shell expansion left in a value (`"${VLLM_MAX_MODEL_LEN:-20480}"`, `$PORT`, `$(nproc)`):
# the shell fills it in from an environment we do not see before vLLM reads it.
_SHELL_EXPANSION = re.compile(r"\$(?:\{|\(|[A-Za-z_])")


def _check_value(builder: Builder, spec: vllm_flags.FlagSpec, value: str, token: str) -> None:
    if _SHELL_EXPANSION.search(value):
        return
    type_name = spec.type_name or ""
    bad = False
    if "human_readable_int" in type_name:
        bad = parse_int(value) is None and not (type_name.endswith("or_auto") and value == "auto")
    elif type_name.endswith("int]") or type_name == "int":
        bad = re.match(r"^-?\d+$", value) is None
    elif type_name.endswith("float]") or type_name == "float":
        bad = re.match(r"^-?(\d+\.?\d*|\.\d+)([eE]-?\d+)?$", value) is None
    elif ("loads" in type_name or type_name.startswith("JSON")) and value[:1] in "{[":
        # argparse hands the value to json.loads, which refuses anything but JSON
        bad = not _reads_as_json(value)
    # The release's own choices; a plugin file may register names beyond its registry.
    refused = (
        not builder.dev_build
        and bool(spec.choices)
        and value not in (spec.choices or ())
        and vllm_flags.PLUGIN_FLAGS.get(spec.canonical) not in builder.plugins
    )
    if bad or refused:
        issue = ParseIssue("invalid-value", f"{token} {value}", spec.canonical, value)
        builder.issues.append(replace(issue, choices=spec.choices) if refused else issue)


# The KV connectors each release registers (`KVConnectorFactory.register_connector` in
# distributed/kv_transfer/kv_connector/factory.py, 0.7.0-0.33.0): another name stops vLLM with
# "Unsupported connector type" unless `kv_connector_module_path` loads it from a module.
_KV_CONNECTORS: dict[str, tuple[tuple[str, str], ...]] = {
    "DecodeBenchConnector": (("0.11.1", "99.0"),),
    "ExampleConnector": (("0.13.0", "99.0"),),
    "ExampleHiddenStatesConnector": (("0.17.0", "99.0"),),
    "FlexKVConnectorV1": (("0.18.0", "99.0"),),
    "HF3FSKVConnector": (("0.20.0", "99.0"),),
    "HiSparseConnector": (("0.30.0", "99.0"),),
    "LMCacheConnector": (("0.8.0", "0.10.0"),),
    "LMCacheConnectorV1": (("0.8.5", "99.0"),),
    "LMCacheMPConnector": (("0.11.1", "99.0"),),
    "MoRIIOConnector": (("0.14.0", "99.0"),),
    "MooncakeConnector": (("0.7.0", "0.10.0"), ("0.13.0", "99.0")),
    "MooncakeStoreConnector": (("0.8.3", "0.10.0"), ("0.21.0", "99.0")),
    "MultiConnector": (("0.9.0", "99.0"),),
    "NixlConnector": (("0.9.0", "99.0"),),
    "NixlPullConnector": (("0.24.0", "99.0"),),
    "NixlPushConnector": (("0.24.0", "99.0"),),
    "OffloadingConnector": (("0.11.0", "99.0"),),
    "P2pNcclConnector": (("0.9.2", "0.23.0"),),
    "PyNcclConnector": (("0.7.0", "0.10.0"),),
    "SharedStorageConnector": (("0.8.5", "0.12.0"),),
    "SimpleCPUOffloadConnector": (("0.19.0", "99.0"),),
}


def kv_connectors(version: str) -> tuple[str, ...]:
    """The connector names release `version` registers."""
    at_least = vllm_flags.version_at_least
    return tuple(
        name
        for name, runs in _KV_CONNECTORS.items()
        if any(at_least(version, first) and at_least(last, version) for first, last in runs)
    )


def _check_kv_connector(builder: Builder, value: str, token: str) -> None:
    try:
        config = json.loads(value)
    except ValueError:
        return
    if not isinstance(config, dict) or config.get("kv_connector_module_path"):
        return
    name = config.get("kv_connector")
    known = kv_connectors(builder.version)
    if isinstance(name, str) and known and name not in known and not builder.dev_build:
        issue = ParseIssue("invalid-value", f"{token} {value}", "--kv-transfer-config", name)
        builder.issues.append(replace(issue, choices=known))


def _take_value(
    builder: Builder, tokens: Sequence[str], index: int, token: str
) -> tuple[str | None, int]:
    if index < len(tokens) and _looks_like_value(tokens[index]):
        return tokens[index], index + 1
    builder.issues.append(ParseIssue("missing-value", token))
    return None, index


# Switches declared `action=StoreBoolean, nargs="?"` (arg_utils.py, 0.5.3-0.8.4), which take
# `True`/`False` as a value; `get_kwargs` made them `BooleanOptionalAction` in 0.8.5, which
# refuses one. {flag: first release with StoreBoolean}.
_STORE_BOOLEAN = {
    "--enable-chunked-prefill": "0.5.3",
    "--disable-logprobs-during-spec-decoding": "0.5.5",
    "--multi-step-stream-outputs": "0.6.0",
    "--disable-chunked-mm-input": "0.8.4",
}
_STORE_BOOLEAN_UNTIL = "0.8.5"


def _refuses_a_value(flag: str, version: str) -> bool:
    """Whether `version` refuses `flag VALUE` for a switch. Releases before 0.8 are left
    unjudged, as they were (their store_true switches are not read per release here)."""
    if not vllm_flags.version_at_least(version, "0.8.0"):
        return False
    since = _STORE_BOOLEAN.get(flag)
    takes_one = since is not None and vllm_flags.version_at_least(version, since)
    return not (takes_one and not vllm_flags.version_at_least(version, _STORE_BOOLEAN_UNTIL))


def _read_known(
    builder: Builder,
    *,
    lookup: vllm_flags.Lookup,
    tokens: Sequence[str],
    index: int,
    token: str,
    inline: str | None,
) -> int:
    spec = lookup.spec
    if spec.kind in ("bool", "store_true"):
        if inline is not None or (
            index < len(tokens) and tokens[index].lower() in _TRUE_WORDS and spec.kind == "bool"
        ):
            written = inline if inline is not None else tokens[index]
            if _refuses_a_value(spec.canonical, builder.version):
                issue = ParseIssue("bool-flag-value", f"{token} {written}", spec.canonical)
                builder.issues.append(issue)
            index += 0 if inline is not None else 1
            # Review what the writer meant (`=False` means off); the rule reports the spelling.
            meant_off = written.lower() in _FALSE_WORDS
            builder.set(spec.canonical, lookup.negated == meant_off)
            return index
        builder.set(spec.canonical, not lookup.negated)
        return index
    if inline is not None:
        value: str | None = inline
    else:
        value, index = _take_value(builder, tokens, index, token)
    if value is None:
        return index
    if inline is None and _open_braces(value) > 0:
        value, index = _rejoin_json(builder, tokens, index, token, value=value, flag=spec.canonical)
    if spec.kind == "list":
        values = [value]
        while index < len(tokens) and _looks_like_value(tokens[index]):
            values.append(tokens[index])
            index += 1
        builder.set(spec.canonical, tuple(values))
        return index
    _check_value(builder, spec, value, token)
    if spec.canonical == "--kv-transfer-config":
        _check_kv_connector(builder, value, token)
    builder.set(spec.canonical, value)
    return index


def _open_braces(text: str) -> int:
    return text.count("{") - text.count("}") if text.startswith("{") else 0


_BARE_WORD = re.compile(r"(?<![\w.\-])([A-Za-z_][\w.\-/]*)(?![\w.\-/])")


def _as_json(words: str) -> str | None:
    """The JSON that an unquoted object once was: the shell took its quotes away
    (`{method: mtp, num_speculative_tokens: 2}`), so every bare word is quoted again; None
    where it still does not read as a JSON object."""
    quoted = _BARE_WORD.sub(
        lambda m: m.group(1) if m.group(1) in ("true", "false", "null") else f'"{m.group(1)}"',
        words,
    )
    try:
        loaded = json.loads(quoted)
    except ValueError:
        return None
    return json.dumps(loaded) if isinstance(loaded, dict) else None


def _rejoin_json(
    builder: Builder, tokens: Sequence[str], index: int, token: str, *, value: str, flag: str
) -> tuple[str, int]:
    """A JSON value written without shell quotes: the shell splits it at its spaces and vLLM
    sees the rest as stray words ('unrecognized arguments'). The words up to the closing
    brace are the value; the issue carries the JSON they spell, quoted, as the fix."""
    end, depth = index, _open_braces(value)
    while end < len(tokens) and depth > 0:
        depth += tokens[end].count("{") - tokens[end].count("}")
        end += 1
    if depth != 0:
        return value, index
    words = " ".join([value, *tokens[index:end]])
    fixed = _as_json(words)
    builder.issues.append(ParseIssue("unquoted-json", f"{token} {words}", flag, fixed))
    return fixed or words, end


def _read_unknown(
    builder: Builder, tokens: Sequence[str], index: int, token: str, inline: str | None
) -> int:
    flag = vllm_flags.normalize(token)
    removal = vllm_flags.removal(flag, builder.version)
    if removal is None:
        guess = _suggest_flag(flag, builder.version)
        builder.issues.append(ParseIssue("unknown-flag", token, flag, guess))
    elif removal.first_seen is not None:
        builder.issues.append(ParseIssue("flag-too-new", token, flag, removal=removal))
    else:
        builder.issues.append(ParseIssue("removed-flag", token, flag, removal=removal))
    spec = vllm_flags.spec_any_version(flag)
    if inline is not None:
        builder.set(flag, inline)
    elif spec.kind in ("bool", "store_true") or flag.startswith("--no-"):
        builder.set(flag, True)
    elif index < len(tokens) and _looks_like_value(tokens[index]):
        builder.set(flag, tokens[index])
        index += 1
    else:
        builder.set(flag, True)
    return index


def _suggest_flag(flag: str, version: str) -> str | None:
    from servetune._did_you_mean import suggest

    return suggest(flag, vllm_flags.suggestions(version), cutoff=0.7)


def read_args(builder: Builder, tokens: Sequence[str], allow_positional: bool) -> None:
    written = {vllm_flags.normalize(t.partition("=")[0]) for t in tokens}
    builder.plugins |= written & set(vllm_flags.PLUGIN_FLAGS.values())
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        fixed = _fix_dash(token)
        if fixed is not None:
            builder.issues.append(ParseIssue("dash-typo", token, fixed.split("=")[0], fixed))
            token = fixed
        if not token.startswith("-") or re.match(r"^-\d", token):
            if allow_positional and builder.model is None:
                # argparse takes the positional model anywhere between the options.
                builder.model, builder.model_positional = token, True
                builder.model_first = not builder.args
            elif not _read_undashed(builder, token):
                builder.issues.append(ParseIssue("unknown-flag", token, None, "stray value"))
            continue
        index = _read_option(builder, tokens, index, token)


_UNDASHED = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+)(?:=(?P<value>.*))?$")


def _read_undashed(builder: Builder, token: str) -> bool:
    """A stray word that spells one of the release's flags without its dashes
    (`trust_remote_code=True`, `max-model-len=4096`): argparse takes it for an extra positional
    ('unrecognized arguments'). Read as the flag the writer meant; False if it is not one."""
    match = _UNDASHED.match(token)
    if match is None:
        return False
    flag = vllm_flags.normalize("--" + match.group("name"))
    lookup = vllm_flags.lookup(flag, builder.version)
    value = match.group("value")
    if lookup is None or lookup.negated:
        return False
    spec = lookup.spec
    if spec.kind in ("bool", "store_true"):
        if value is not None and value.lower() not in _TRUE_WORDS:
            return False
        on = value is None or value.lower() not in _FALSE_WORDS
        fixed = spec.canonical if on else "--no-" + spec.canonical.removeprefix("--")
        builder.issues.append(ParseIssue("flag-without-dashes", token, spec.canonical, fixed))
        builder.set(spec.canonical, on)
        return True
    if not value or spec.kind == "list":
        return False
    fixed = f"{spec.canonical} {value}"
    builder.issues.append(ParseIssue("flag-without-dashes", token, spec.canonical, fixed))
    builder.set(spec.canonical, value)
    return True


def _read_option(builder: Builder, tokens: Sequence[str], index: int, token: str) -> int:
    """Read one option (and its value) the way vLLM's parser of `builder.version` would."""
    name, has_equals, inline_text = _spell_short_o(token, tokens, index, builder.version).partition(
        "="
    )
    inline = inline_text if has_equals else None
    builder.model_word |= vllm_flags.normalize(name) == "--model" and inline is None
    if builder.demo_server and vllm_flags.normalize(name) in vllm_flags.demo_server_own(
        builder.version
    ):
        return _read_demo_own(builder, tokens, index, name, inline)
    if "." in name:
        done = _read_dotted(builder, tokens, index, name, inline)
        if done is not None:
            return done
    lookup, matches = _find(builder, name)
    if len(matches) > 1:
        return _read_ambiguous(builder, tokens, index, name, inline, matches=matches)
    if lookup is None and inline is None:
        name, inline, lookup = _attached_value(builder, name)
    if lookup is None:
        return _read_unknown(builder, tokens, index, name, inline)
    if builder.demo_server and not _demo_server_has(builder, name, lookup.spec.canonical):
        issue = ParseIssue("unknown-flag", name, lookup.spec.canonical, _DEMO_SERVER)
        builder.issues.append(issue)
    return _read_known(
        builder, lookup=lookup, tokens=tokens, index=index, token=name, inline=inline
    )


_DEMO_SERVER = "demo server"  # ParseIssue detail: a flag the demo server's parser lacks


def _read_demo_own(
    builder: Builder, tokens: Sequence[str], index: int, name: str, inline: str | None
) -> int:
    """One of the demo server's own options (`--host`, `--log-level`): a switch or a value its
    parser takes as a string or an integer, without `vllm serve`'s choices for the same name."""
    flag = vllm_flags.normalize(name)
    if vllm_flags.demo_server_own(builder.version)[flag] == "store_true":
        builder.set(flag, True)
        return index
    value = inline
    if value is None:
        value, index = _take_value(builder, tokens, index, name)
    if value is not None:
        builder.set(flag, value)
    return index


def _demo_server_has(builder: Builder, name: str, canonical: str) -> bool:
    """Whether the demo server's parser of the release takes the option (`--config` is read by
    FlexibleArgumentParser itself, before any parser's options)."""
    own = vllm_flags.demo_server_flags(builder.version)
    return canonical == "--config" or vllm_flags.normalize(name) in own or canonical in own


def _find(builder: Builder, name: str) -> tuple[vllm_flags.Lookup | None, tuple[str, ...]]:
    """The option `name` is in this release, else the flags it abbreviates (argparse prefixes)."""
    lookup = vllm_flags.lookup(name, builder.version)
    if lookup is not None and builder.serve:
        hidden = vllm_flags.hidden_from_serve(lookup.spec.canonical, builder.version)
        lookup = None if hidden else lookup
    if lookup is not None:
        return lookup, ()
    matches = vllm_flags.prefix_matches(name, builder.version, serve=builder.serve)
    if len(matches) == 1:
        return vllm_flags.lookup(matches[0], builder.version), matches
    return None, matches


def _attached_value(
    builder: Builder, name: str
) -> tuple[str, str | None, vllm_flags.Lookup | None]:
    """`-qawq`: a one-letter option with its value attached (name, value, lookup)."""
    if name[1:2] in ("-", "") or len(name) <= 2:
        return name, None, None
    lookup = vllm_flags.lookup(name[:2], builder.version)
    return (name[:2], name[2:], lookup) if lookup else (name, None, None)


def _spell_short_o(token: str, tokens: Sequence[str], index: int, version: str) -> str:
    """`-O3`, `-O=3`, `-O 3` as the release reads them: `-O 3` before 0.12, then
    `--optimization-level 3` (`-O.key=v` stays a dotted `-O`)."""
    if not token.startswith("-O") or token[2:3] == ".":
        return token
    level = token[2:].removeprefix("=")
    new = vllm_flags.version_at_least(version, vllm_flags.OPTIMIZATION_LEVEL_SINCE)
    name = "--optimization-level" if new else "-O"
    if level:
        return f"{name}={level}"
    following = tokens[index] if index < len(tokens) else ""
    return name if not new or following in ("0", "1", "2", "3") else token


def _read_dotted(
    builder: Builder, tokens: Sequence[str], index: int, name: str, inline: str | None
) -> int | None:
    """`--compilation-config.mode 3`: one key of a JSON option (vLLM 0.9+); None if not that."""
    base, _, path = name.partition(".")
    if not path or not vllm_flags.version_at_least(builder.version, vllm_flags.DOTTED_SINCE):
        return None
    lookup, _ = _find(builder, base)
    if lookup is None or lookup.spec.kind != "value":
        return None
    value: str | None = inline
    if value is None:
        value, index = _take_value(builder, tokens, index, name)
    if value is not None:
        current = builder.args.get(lookup.spec.canonical)
        builder.set(lookup.spec.canonical, _merge_json(current, path.split("."), value))
    return index


def _merge_json(current: ArgValue | None, keys: list[str], value: str) -> str:
    """Add `keys = value` to the JSON object `current` holds (a fresh one if none)."""
    merged = _json_object(current)
    try:
        parsed: object = json.loads(value)
    except ValueError:
        parsed = value
    node = merged
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[keys[-1]] = parsed
    return json.dumps(merged)


def _json_object(text: ArgValue | None) -> dict[str, object]:
    if not isinstance(text, str):
        return {}
    try:
        loaded = json.loads(text)
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _read_ambiguous(
    builder: Builder,
    tokens: Sequence[str],
    index: int,
    name: str,
    inline: str | None,
    *,
    matches: tuple[str, ...],
) -> int:
    """A prefix of several flags: vLLM refuses it; skip its value so the rest still reads."""
    builder.issues.append(ParseIssue("ambiguous-flag", name, name, ", ".join(matches)))
    takes_value = any(
        vllm_flags.spec_any_version(m).kind not in ("bool", "store_true") for m in matches
    )
    if inline is None and takes_value and index < len(tokens) and _looks_like_value(tokens[index]):
        index += 1
    return index
