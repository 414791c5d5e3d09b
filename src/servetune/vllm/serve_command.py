"""Turn a `vllm serve` command, in any of the forms people paste, into a `ServeCommand`.

Forms understood: `vllm serve MODEL ...`, `vllm serve --model MODEL ...`, `vllm serve` alone (vLLM's
default model), `python -m vllm.entrypoints.openai.api_server --model MODEL ...`,
`python3 path/to/api_server.py ...`, `docker run ... vllm/vllm-openai[:tag] ...`, with
`--config file.yaml` merged in (the command line wins). Flags are read as vLLM's parser reads them:
unambiguous prefixes of long flags (`--gpu-memory-util`), `--json-flag.key value` (0.9+), `-O3`.
Text may carry `\\` continuations, shell prompts and blog debris around the command.
Problems that vLLM itself would reject (unknown or removed flags, a Unicode dash) are recorded as
`ParseIssue`s for the rules to report, never raised.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from servetune.errors import CommandParseError
from servetune.vllm import flags as vllm_flags

ArgValue = str | bool | tuple[str, ...]
CommandForm = Literal["vllm-serve", "api-server", "docker"]
IssueKind = Literal[
    "dash-typo",
    "unknown-flag",
    "removed-flag",
    "flag-too-new",
    "bool-flag-value",
    "missing-value",
    "invalid-value",
    "config-unreadable",
    "ambiguous-flag",
    "default-model",
    "model-required",
]

# Characters that word processors and chat UIs substitute for "-".
UNICODE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_SHELL_STOPS = {"|", "||", "&&", ";", "&"}
_PREFIX_WORDS = {"sudo", "nohup", "exec", "time", "env", "command"}
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_API_SERVER_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")
_API_SERVER_SCRIPT = re.compile(r"(^|/)api_server\.py$")
_FALSE_WORDS = {"false", "no", "0", "off"}
_TRUE_WORDS = {"true", "yes", "1", "on", *_FALSE_WORDS}
_DOCKER_VALUE_FLAGS = {
    "-e", "--env", "-p", "--publish", "-v", "--volume", "--name", "--gpus", "--ipc", "--shm-size",
    "--runtime", "--entrypoint", "-w", "--workdir", "--network", "--net", "--mount", "--env-file",
    "-u", "--user", "--device", "--restart", "--cpus", "--memory", "-m", "--ulimit", "--label",
    "-l", "--platform", "--pull", "--hostname", "-h", "--cap-add", "--security-opt", "--add-host",
}  # fmt: skip


@dataclass(frozen=True)
class ParseIssue:
    """Something in the command that vLLM would refuse or that servetune could not read."""

    kind: IssueKind
    token: str  # the text as written
    flag: str | None = None  # the flag it concerns (canonical spelling when known)
    detail: str | None = None  # e.g. the corrected spelling, a suggestion, a reason
    removal: vllm_flags.Removal | None = None


@dataclass(frozen=True)
class ServeCommand:
    """A parsed `vllm serve` command.

    `args` maps canonical long flags (`--tensor-parallel-size`) to the value as written (strings),
    True/False for switches, or a tuple for multi-value options. Values from a `--config` file are
    merged under the command line's.
    """

    model: str | None
    args: Mapping[str, ArgValue]
    version: str  # the vLLM flag table used (a known release)
    version_source: str = "newest known release"  # where `version` came from, in words
    form: CommandForm = "vllm-serve"
    prefix: tuple[str, ...] = ("vllm", "serve")  # tokens before the vLLM arguments
    model_positional: bool = True
    order: tuple[str, ...] = ()  # canonical flags in the order written (config ones first)
    from_config: frozenset[str] = frozenset()
    env: Mapping[str, str] = field(default_factory=dict)
    model_default: bool = False  # no model named: `model` is the release's default model
    image_tag: str | None = None  # docker image tag, e.g. "v0.8.5"
    docker_gpus: str | None = None  # docker's --gpus value
    issues: tuple[ParseIssue, ...] = ()

    def has(self, flag: str) -> bool:
        return flag in self.args

    def text(self, flag: str) -> str | None:
        value = self.args.get(flag)
        if value is None or isinstance(value, bool):
            return None
        return " ".join(value) if isinstance(value, tuple) else value

    def switch(self, flag: str) -> bool | None:
        value = self.args.get(flag)
        return value if isinstance(value, bool) else None

    def integer(self, flag: str) -> int | None:
        """The flag's value as vLLM reads integers (`32k` = 32000, `32K` = 32768); None if unset."""
        raw = self.text(flag)
        return None if raw is None else parse_int(raw)

    def number(self, flag: str) -> float | None:
        raw = self.text(flag)
        if raw is None:
            return None
        try:
            return float(raw)
        except ValueError:
            return None


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


# --- text to tokens ---------------------------------------------------------------------------


def _logical_lines(text: str) -> list[str]:
    """Join `\\` (and PowerShell backtick / cmd `^`) continuations into logical lines."""
    lines: list[str] = []
    current = ""
    for raw in text.replace("\r\n", "\n").split("\n"):
        stripped = raw.rstrip()
        if stripped.endswith(("\\", "`", "^")) and not stripped.endswith("\\\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    if current:
        lines.append(current)
    return lines


_START = re.compile(
    r"(?:^|\s|[$#>]\s*)((?:[A-Za-z_][A-Za-z0-9_]*=\S+\s+)*"
    r"(?:sudo\s+|nohup\s+|exec\s+)*"
    r"(?:\S*/)?(?:vllm\s+serve\b|python[0-9.]*\s+-m\s+vllm\.entrypoints|"
    r"python[0-9.]*\s+\S*api_server\.py\b|docker\s+run\b))"
)


def tokens_from_text(text: str) -> list[str]:
    """Find the command in pasted text and split it into shell words.

    The command is the first logical line that starts a vLLM server; prompts (`$ `), blog
    captions and other lines around it are ignored.
    """
    for line in _logical_lines(text):
        match = _START.search(line)
        if match is None:
            continue
        command = line[match.start(1) :]
        command = command.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
        try:
            return shlex.split(command, comments=True)
        except ValueError as exc:
            raise CommandParseError(
                f"cannot split the command into words: {exc}",
                "check that every quote in the command is closed",
            ) from exc
    raise CommandParseError(
        "no `vllm serve` command found in the text",
        "the text must contain a line starting with `vllm serve`, "
        "`python -m vllm.entrypoints.openai.api_server` or `docker run ... vllm/vllm-openai`",
    )


# --- tokens to the vLLM argument list ---------------------------------------------------------


@dataclass(frozen=True)
class _Located:
    form: CommandForm
    prefix: tuple[str, ...]
    args: tuple[str, ...]
    env: dict[str, str]
    image_tag: str | None
    docker_gpus: str | None


def _cut_at_shell_operators(tokens: Sequence[str]) -> list[str]:
    kept: list[str] = []
    for token in tokens:
        if token in _SHELL_STOPS or token.startswith((">", "1>", "2>", "&>")):
            break
        kept.append(token)
    return kept


def _strip_leading(tokens: list[str]) -> tuple[list[str], dict[str, str]]:
    env: dict[str, str] = {}
    while tokens and (tokens[0] in _PREFIX_WORDS or _ENV_ASSIGNMENT.match(tokens[0])):
        head = tokens.pop(0)
        if "=" in head and head not in _PREFIX_WORDS:
            key, _, value = head.partition("=")
            env[key] = value
    return tokens, env


def _locate_docker(tokens: list[str], env: dict[str, str]) -> _Located:
    gpus: str | None = None
    index = 2
    while index < len(tokens):
        token = tokens[index]
        if not token.startswith("-"):
            break
        name, has_equals, value = token.partition("=")
        if name in _DOCKER_VALUE_FLAGS and not has_equals:
            value = tokens[index + 1] if index + 1 < len(tokens) else ""
            index += 1
        if name == "--gpus":
            gpus = value
        if name in ("-e", "--env") and "=" in value:
            key, _, val = value.partition("=")
            env[key] = val
        index += 1
    if index >= len(tokens):
        raise CommandParseError(
            "the docker command names no image", "give the vLLM image, e.g. vllm/vllm-openai:latest"
        )
    image = tokens[index]
    tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else None
    rest = tokens[index + 1 :]
    prefix = tuple(tokens[: index + 1])
    if rest[:2] == ["vllm", "serve"]:
        prefix, rest = (*prefix, "vllm", "serve"), rest[2:]
    return _Located("docker", prefix, tuple(rest), env, tag, gpus)


def _locate(tokens: Sequence[str]) -> _Located:
    words, env = _strip_leading(_cut_at_shell_operators(tokens))
    if len(words) >= 2 and Path(words[0]).name == "vllm" and words[1] == "serve":
        return _Located("vllm-serve", tuple(words[:2]), tuple(words[2:]), env, None, None)
    is_python = len(words) >= 2 and Path(words[0]).name.startswith("python")
    if is_python and words[1] == "-m" and words[2:3] and words[2] in _API_SERVER_MODULES:
        return _Located("api-server", tuple(words[:3]), tuple(words[3:]), env, None, None)
    if is_python and _API_SERVER_SCRIPT.search(words[1]):
        return _Located("api-server", tuple(words[:2]), tuple(words[2:]), env, None, None)
    if len(words) >= 2 and Path(words[0]).name == "docker" and words[1] == "run":
        return _locate_docker(list(words), env)
    if words and Path(words[0]).name == "vllm":
        raise CommandParseError(
            f"`vllm {words[1] if len(words) > 1 else ''}` is not `vllm serve`",
            "servetune reviews server launches: `vllm serve MODEL [flags]`",
        )
    if words and words[0].startswith("-"):
        # Bare flags (a `serve` argv without the program name): read them as `vllm serve` args.
        return _Located("vllm-serve", ("vllm", "serve"), tuple(words), env, None, None)
    raise CommandParseError(
        f"not a vLLM server command: {' '.join(words[:3])!r}",
        "expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...` "
        "or `docker run ... vllm/vllm-openai ...`",
    )


# --- the vLLM argument list -------------------------------------------------------------------


@dataclass
class _Builder:
    version: str
    args: dict[str, ArgValue] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    issues: list[ParseIssue] = field(default_factory=list)
    model: str | None = None
    model_positional: bool = False
    model_default: bool = False
    serve: bool = False  # the command line says `serve` (vLLM 0.9.0 then hides `--model`)
    model_word: bool = False  # `--model` written as its own word (not `--model=X`)
    model_first: bool = False  # the model is the first word after `vllm serve`

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


def _check_value(builder: _Builder, spec: vllm_flags.FlagSpec, value: str, token: str) -> None:
    type_name = spec.type_name or ""
    bad = False
    if "human_readable_int" in type_name:
        bad = parse_int(value) is None and not (type_name.endswith("or_auto") and value == "auto")
    elif type_name.endswith("int]") or type_name == "int":
        bad = re.match(r"^-?\d+$", value) is None
    elif type_name.endswith("float]") or type_name == "float":
        bad = re.match(r"^-?(\d+\.?\d*|\.\d+)([eE]-?\d+)?$", value) is None
    if spec.choices and value not in spec.choices:
        bad = True
    if bad:
        builder.issues.append(
            ParseIssue("invalid-value", f"{token} {value}", spec.canonical, value)
        )


def _take_value(
    builder: _Builder, tokens: Sequence[str], index: int, token: str
) -> tuple[str | None, int]:
    if index < len(tokens) and _looks_like_value(tokens[index]):
        return tokens[index], index + 1
    builder.issues.append(ParseIssue("missing-value", token))
    return None, index


def _read_known(
    builder: _Builder,
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
            if vllm_flags.version_at_least(builder.version, "0.8.0"):
                # 0.6's StoreBoolean took `=False`; BooleanOptionalAction (0.8+) refuses values.
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
    if spec.kind == "list":
        values = [value]
        while index < len(tokens) and _looks_like_value(tokens[index]):
            values.append(tokens[index])
            index += 1
        builder.set(spec.canonical, tuple(values))
        return index
    _check_value(builder, spec, value, token)
    builder.set(spec.canonical, value)
    return index


def _read_unknown(
    builder: _Builder, tokens: Sequence[str], index: int, token: str, inline: str | None
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


def _read_args(builder: _Builder, tokens: Sequence[str], allow_positional: bool) -> None:
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
            else:
                builder.issues.append(ParseIssue("unknown-flag", token, None, "stray value"))
            continue
        index = _read_option(builder, tokens, index, token)


def _read_option(builder: _Builder, tokens: Sequence[str], index: int, token: str) -> int:
    """Read one option (and its value) the way vLLM's parser of `builder.version` would."""
    name, has_equals, inline_text = _spell_short_o(token, tokens, index, builder.version).partition(
        "="
    )
    inline = inline_text if has_equals else None
    builder.model_word |= vllm_flags.normalize(name) == "--model" and inline is None
    if "." in name:
        done = _read_dotted(builder, tokens, index, name, inline)
        if done is not None:
            return done
    lookup = vllm_flags.lookup(name, builder.version)
    if lookup is not None and builder.serve:
        lookup = (
            None if vllm_flags.hidden_from_serve(lookup.spec.canonical, builder.version) else lookup
        )
    if lookup is None:
        matches = vllm_flags.prefix_matches(name, builder.version, serve=builder.serve)
        if len(matches) > 1:
            return _read_ambiguous(builder, tokens, index, name, inline, matches=matches)
        if matches:
            lookup = vllm_flags.lookup(matches[0], builder.version)
    if lookup is None:
        return _read_unknown(builder, tokens, index, name, inline)
    return _read_known(
        builder, lookup=lookup, tokens=tokens, index=index, token=name, inline=inline
    )


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
    builder: _Builder, tokens: Sequence[str], index: int, name: str, inline: str | None
) -> int | None:
    """`--compilation-config.mode 3`: one key of a JSON option (vLLM 0.9+); None if not that."""
    base, _, path = name.partition(".")
    if not path or not vllm_flags.version_at_least(builder.version, vllm_flags.DOTTED_SINCE):
        return None
    lookup = vllm_flags.lookup(base, builder.version)
    matches = vllm_flags.prefix_matches(base, builder.version)
    if lookup is None and len(matches) == 1:
        lookup = vllm_flags.lookup(matches[0], builder.version)
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
    builder: _Builder,
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


# --- `--config file.yaml` --------------------------------------------------------------------


def _config_tokens(data: Mapping[str, object], version: str) -> list[str]:
    """Spell YAML keys as the flags vLLM would insert for them."""
    tokens: list[str] = []
    for key, value in data.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            tokens.append(flag)
        elif value is False:
            if vllm_flags.version_at_least(version, "0.33.0"):
                tokens.append("--no-" + flag[2:])
            # Before 0.33 vLLM silently dropped `false` values from config files.
        elif value is None:
            continue
        elif isinstance(value, list):
            tokens.append(flag)
            tokens.extend(str(v) for v in value)
        elif isinstance(value, dict):
            tokens.extend([flag, json.dumps(value)])
        else:
            tokens.extend([flag, str(value)])
    return tokens


def _load_config(path_text: str, base_dir: Path | None) -> Mapping[str, object] | str:
    """The YAML mapping, or a reason why it cannot be read."""
    import yaml

    path = Path(path_text).expanduser()
    if not path.is_absolute() and base_dir is not None and not path.exists():
        path = base_dir / path
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    except yaml.YAMLError as exc:
        return f"{path} is not valid YAML: {str(exc).splitlines()[0]}"
    if not isinstance(data, dict):
        return f"{path} does not hold a mapping of flag names to values"
    return data


# --- entry points -----------------------------------------------------------------------------


def parse_tokens(
    tokens: Sequence[str], *, version: str | None = None, config_dir: Path | None = None
) -> ServeCommand:
    """Parse shell words of a server command. `version` picks the flag table (default: newest)."""
    located = _locate(tokens)
    table, source = _pick_version(version, located.image_tag)
    builder = _Builder(version=table, serve=_says_serve(located))
    allow_positional = located.form != "api-server"
    _read_args(builder, located.args, allow_positional)
    cli_args, cli_order = dict(builder.args), list(builder.order)
    from_config: set[str] = set()
    config_path = builder.args.get("--config")
    if isinstance(config_path, str):
        loaded = _load_config(config_path, config_dir)
        if isinstance(loaded, str):
            builder.issues.append(ParseIssue("config-unreadable", config_path, "--config", loaded))
        else:
            config_builder = _Builder(version=table, serve=builder.serve)
            _read_args(config_builder, _config_tokens(loaded, table), allow_positional=False)
            model = loaded.get("model")
            if builder.model is None and isinstance(model, str):
                builder.model, builder.model_positional = model, False
            from_config = set(config_builder.args) - set(cli_args)
            builder.issues.extend(config_builder.issues)
            builder.args = {**config_builder.args, **cli_args}
            builder.order = [f for f in config_builder.order if f in from_config] + cli_order
    _check_model(builder, located)
    return ServeCommand(
        model=builder.model,
        args=dict(builder.args),
        version=table,
        version_source=source,
        form=located.form,
        prefix=located.prefix,
        model_positional=builder.model_positional,
        order=tuple(builder.order),
        from_config=frozenset(from_config),
        env=located.env,
        model_default=builder.model_default,
        image_tag=located.image_tag,
        docker_gpus=located.docker_gpus,
        issues=tuple(builder.issues),
    )


def _says_serve(located: _Located) -> bool:
    return located.form == "vllm-serve" or located.prefix[-2:] == ("vllm", "serve")


def _check_model(builder: _Builder, located: _Located) -> None:
    """Where `vllm serve` refuses how the model was given (by release); with no model at all,
    vLLM serves its default model, which the review then covers."""
    offending = _model_refusal(builder) if _says_serve(located) else None
    if offending is not None:
        builder.issues.append(ParseIssue("model-required", offending, "--model", builder.model))
        if offending == "vllm serve":
            return
    if builder.model is None:
        builder.model, builder.model_default = vllm_flags.default_model(builder.version), True
        builder.issues.append(ParseIssue("default-model", "vllm serve", "--model", builder.model))


def _model_refusal(builder: _Builder) -> str | None:
    """What `vllm serve` of this release refuses about the model: the word it names, or None."""
    version = builder.version
    if not vllm_flags.version_at_least(version, vllm_flags.MODEL_TAG_OPTIONAL_SINCE):
        return None if builder.model_positional else "vllm serve"
    if builder.model_word and not vllm_flags.version_at_least(
        version, vllm_flags.MODEL_FLAG_ACCEPTED_SINCE
    ):
        return "--model"
    by_flag = builder.model is not None and not builder.model_positional
    named = builder.model_first or by_flag or "--config" in builder.args
    if (
        not named
        and "--served-model-name" in builder.args
        and vllm_flags.version_at_least(version, vllm_flags.SERVED_NAME_NEEDS_MODEL_SINCE)
    ):
        return "--served-model-name"
    return None


def parse_text(
    text: str, *, version: str | None = None, config_dir: Path | None = None
) -> ServeCommand:
    """Parse a command pasted as text (continuations, prompts and surrounding junk allowed)."""
    return parse_tokens(tokens_from_text(text), version=version, config_dir=config_dir)


def _pick_version(requested: str | None, image_tag: str | None) -> tuple[str, str]:
    """(flag table, where the version came from in words, as reports show it)."""
    if requested is not None:
        return vllm_flags.table_for(requested), "--vllm-version"
    if image_tag and re.match(r"^v?\d+\.\d+", image_tag):
        return vllm_flags.table_for(image_tag), f"docker image tag {image_tag}"
    installed = vllm_flags.installed_vllm_version()
    if installed:
        return vllm_flags.table_for(installed), "installed vllm package"
    return vllm_flags.newest_version(), "newest known release"


def render(command: ServeCommand, args: Mapping[str, ArgValue], order: Sequence[str]) -> str:
    """Spell a command line (one flag per line, `\\` continuations) from a prefix and args."""
    parts = [" ".join(shlex.quote(t) for t in command.prefix)]
    if command.model is not None and not command.model_default:
        model = shlex.quote(command.model)
        parts[0] += f" {model}" if command.model_positional else f" --model {model}"
    for flag in order:
        if flag not in args:
            continue
        value = args[flag]
        if value is True:
            parts.append(flag)
        elif value is False:
            parts.append("--no-" + flag.removeprefix("--"))
        elif isinstance(value, tuple):
            parts.append(" ".join([flag, *(shlex.quote(v) for v in value)]))
        else:
            parts.append(f"{flag} {shlex.quote(value)}")
    return " \\\n  ".join(parts)
