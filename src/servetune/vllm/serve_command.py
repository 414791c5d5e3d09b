"""Turn a `vllm serve` command, in any of the forms people paste, into a `ServeCommand`.

Forms understood: `vllm serve MODEL ...`, `vllm serve --model MODEL ...`, `vllm serve` alone (vLLM's
default model), `python -m vllm.entrypoints.openai.api_server --model MODEL ...` (interpreter
options such as `python -O -u -m` skipped), `python -m vllm.entrypoints.cli.main serve ...`,
`python3 path/to/api_server.py ...`, `docker run ... vllm/vllm-openai[:tag] ...`, the offline
benchmarks that build an engine from its flags (`python benchmarks/benchmark_throughput.py ...`,
`vllm bench throughput|latency ...`: `bench_args`), with `--config file.yaml` merged in (the
command line wins). Flags are read as vLLM's parser reads them:
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, Literal

from servetune.errors import CommandParseError
from servetune.texts import Area, ErrorText, Sentence
from servetune.vllm import bench_args, python_spellings
from servetune.vllm import flags as vllm_flags
from servetune.vllm.serve_args import (
    UNICODE_DASHES,
    ArgValue,
    Builder,
    IssueKind,
    ParseIssue,
    parse_int,
    read_args,
)

__all__ = [
    "UNICODE_DASHES",
    "ArgValue",
    "IssueKind",
    "ParseIssue",
    "ServeCommand",
    "parse_int",
    "parse_text",
    "parse_tokens",
    "render",
    "tokens_from_text",
]

CommandForm = Literal["vllm-serve", "api-server", "docker", "bench"]
_SHELL_STOPS = {"|", "||", "&&", ";", "&"}
_PREFIX_WORDS = {"sudo", "nohup", "exec", "time", "env", "command"}
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_API_SERVER_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")
_API_SERVER_SCRIPT = re.compile(r"(^|/)api_server\.py$")
_CLI_MODULE = "vllm.entrypoints.cli.main"  # `python -m vllm.entrypoints.cli.main serve` (0.7.3+)
# CPython's own options before the program: `-O`, `-u`, `-OO`, `-W ignore`, `-X dev`, `-um MOD`,
# `-mMOD` (its getopt: letters combine, `-m`/`-c`/`-W`/`-X` take the rest of the word or the next).
_PYTHON_OPTION = re.compile(r"^-(?P<letters>[bBdEhiIOPqRsStuvVx]*)(?P<takes>[mcWX]?)(?P<rest>.*)$")
# Every `docker run` option that takes a value (docker's own reference, `docker run --help`, and
# podman's additions): the word after it is the option's, not the image. Options not listed are
# docker's booleans (`--privileged`, `--rm`, `-it`...). Sorted, one table: docker's, not vLLM's.
_DOCKER_VALUE_FLAG_WORDS = """
    -a --add-host --annotation --attach --blkio-weight --blkio-weight-device -c --cap-add
    --cap-drop --cgroup-parent --cgroupns --cidfile --cpu-count --cpu-percent --cpu-period
    --cpu-quota --cpu-rt-period --cpu-rt-runtime --cpu-shares --cpus --cpuset-cpus --cpuset-mems
    --detach-keys --device --device-cgroup-rule --device-read-bps --device-read-iops
    --device-write-bps --device-write-iops --dns --dns-option --dns-search --domainname -e
    --entrypoint --env --env-file --expose --gpus --group-add --health-cmd --health-interval
    --health-retries --health-start-interval --health-start-period --health-timeout -h --hooks-dir
    --hostname --io-maxbandwidth --io-maxiops --ip --ip6 --ipc --isolation --kernel-memory -l
    --label --label-file --link --link-local-ip --log-driver --log-opt -m --mac-address --memory
    --memory-reservation --memory-swap --memory-swappiness --mount --name --net --net-alias
    --network --network-alias --oom-score-adj -p --pid --pids-limit --platform --pod --publish
    --pull --restart --runtime --security-opt --shm-size --stop-signal --stop-timeout
    --storage-opt --sysctl --tmpfs -u --ulimit --user --userns --uts -v --volume --volume-driver
    --volumes-from -w --workdir
"""
_DOCKER_VALUE_FLAGS = frozenset(_DOCKER_VALUE_FLAG_WORDS.split())
# Container programs whose `run` takes docker's options.
_CONTAINER_RUNNERS = frozenset({"docker", "podman", "nerdctl"})
# Images whose entrypoint is vLLM's server already (vllm/vllm-openai, -rocm, -cpu...): words after
# the image are its arguments. Any other image (rocm/vllm, a CUDA base, one's own) runs the
# command written after it, as docker's CMD.
_VLLM_ENTRYPOINT_IMAGE = re.compile(r"^(?:[\w.-]+(?::\d+)?/)?vllm/vllm-openai[\w-]*(?::|@|$)")
# A vLLM release inside a tag that says more: `rocm6.3.1_mi300_ubuntu22.04_py3.12_vllm_0.6.6`.
_TAG_VERSION = re.compile(r"(?:^|[_-])vllm[_-]?v?(?P<version>\d+\.\d+(?:\.\d+)?)")


class VersionSource(Sentence):
    """Where the vLLM version came from, as the check report says it (`review` texts)."""

    __slots__ = ()
    area: ClassVar[Area] = "review"


_NEWEST = VersionSource("version.newest")


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
    version_origin: VersionSource = _NEWEST  # where `version` came from
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
    mounts: tuple[tuple[str, str], ...] = ()  # docker `-v HOST:CONTAINER`: (container, host)
    # The release as given (flag, image tag, installed package), where `version` is the table
    # that stands for it (`0.4.0.post1` is read with 0.4.1's); None where the newest is assumed.
    given_version: str | None = None

    @property
    def model_on_host(self) -> str | None:
        """The model's path on the host where it lies in a mounted folder (`-v
        /root/gpt-oss-120b:/model` and `vllm serve /model`), whose name says the model; else
        the model as written."""
        model = self.model
        for container, host in sorted(self.mounts, key=lambda m: -len(m[0])):
            inside = container.rstrip("/")
            if model and inside and (model == inside or model.startswith(inside + "/")):
                return host.rstrip("/") + model[len(inside) :]
        return model

    @property
    def release_known(self) -> bool:
        """Whether the release was given (flag, image tag, installed package), not assumed to
        be the newest: judgements that differ by release are only certain when it was."""
        return self.version_origin != _NEWEST

    @property
    def version_source(self) -> str:
        """Where `version` came from, in English words (`version_origin.text(lang)`: in any)."""
        return self.version_origin.text()

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


# --- text to tokens ---------------------------------------------------------------------------


def _logical_lines(text: str) -> list[str]:
    """Join `\\` (and PowerShell backtick / cmd `^`) continuations into logical lines. A pasted
    terminal session prints the shell's continuation prompt (`> `) before each continued line:
    it is the shell's, not a redirection."""
    lines: list[str] = []
    current = ""
    for raw in text.replace("\r\n", "\n").split("\n"):
        stripped = raw.rstrip()
        if current and re.match(r"^\s*> ", stripped):
            stripped = stripped.lstrip().removeprefix("> ")
        if stripped.endswith(("\\", "`", "^")) and not stripped.endswith("\\\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    if current:
        lines.append(current)
    return lines


_PYTHON_OPTIONS = r"python[0-9.]*(?:\s+-[bBdEiIOPqRsStuvx]*(?:[WX]\s*\S+)?(?=\s))*"
_START = re.compile(
    r"(?:^|\s|[$#>]\s*)((?:[A-Za-z_][A-Za-z0-9_]*=\S+\s+)*"
    r"(?:sudo\s+|nohup\s+|exec\s+)*"
    r"(?:\S*/)?(?:vllm\s+(?:serve|bench\s+(?:throughput|latency))\b|"
    rf"{_PYTHON_OPTIONS}\s+-[bBdEiIOPqRsStuvx]*m\s*vllm\.entrypoints|"
    rf"{_PYTHON_OPTIONS}\s+\S*(?:api_server|benchmark_throughput|benchmark_latency)\.py\b|"
    r"(?:docker|podman|nerdctl)\s+run\b))"
)


# Markdown emphasis around a flag as pasted from a rendered page: `**_--max-num-seqs 1_**`.
_MARKDOWN_EMPHASIS = re.compile(
    r"(?<!\S)(?P<open>[*_]{1,3})(?P<inner>--?[A-Za-z][^*\n]*?)(?P<close>[*_]{1,3})(?!\S)"
)
_ASSIGNMENT_LINE = re.compile(
    r"^\s*(?P<export>export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$"
)
_VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


def _unwrapped(command: str, following: Sequence[str]) -> str:
    """The command with the lines a paste wrapped it onto (a shell would not join them; the
    writer's terminal or page broke them): a line that starts with a flag, or one after a line
    that ends with a flag and that goes on with flags. A terminal wraps inside a word: where
    the flag and the next line's first word make a flag vLLM has (`--trust-remote-c` + `ode`),
    they are one word."""
    for line in following:
        stripped = line.strip()
        words = command.split()
        last = words[-1] if words else ""
        head = stripped.split()[0] if stripped else ""
        flag_first = re.match(r"^--?[A-Za-z]", stripped) is not None
        value_first = last.startswith("--") and "=" not in last and " --" in f" {stripped}"
        if not stripped or not (flag_first or value_first):
            break
        glued = value_first and vllm_flags.known_in_some_release(last + head)
        command = f"{command}{stripped}" if glued else f"{command} {stripped}"
    return command


@dataclass(frozen=True)
class _Shell:
    """What the lines before the command set: shell variables, and those `export`ed (which
    the server's process inherits as its environment)."""

    variables: dict[str, str]
    exported: dict[str, str]


def _assignments(lines: Sequence[str]) -> _Shell:
    """`export NAME=value` / `NAME=value` lines before the command, as the shell would set
    them (quotes removed: `opts="--seed=0 --block-size=32"` is one value)."""
    variables: dict[str, str] = {}
    exported: dict[str, str] = {}
    for line in lines:
        match = _ASSIGNMENT_LINE.match(line)
        if match is None:
            continue
        try:
            words = shlex.split(match.group("value"), comments=True)
        except ValueError:
            continue
        if len(words) > 1:  # `NAME=value program ...` runs a program: not an assignment line
            continue
        name, value = match.group("name"), words[0] if words else ""
        variables[name] = value
        if match.group("export"):
            exported[name] = value
    return _Shell(variables, exported)


def _plain(value: str) -> bool:
    """A value the shell splits into words as shlex would (no quotes or escapes inside)."""
    return not any(char in value for char in "'\"\\$`")


def _expanded_text(command: str, variables: Mapping[str, str]) -> str:
    """The command with `$NAME` / `${NAME}` of plain values filled in before the shell splits
    it: an unquoted `${opts}` becomes several words, a quoted `"$MODEL"` stays one."""

    def value(match: re.Match[str]) -> str:
        known = variables.get(match.group("braced") or match.group("bare") or "")
        return known if known is not None and _plain(known) else match.group(0)

    return _VARIABLE.sub(value, command) if variables else command


def _expanded(words: list[str], variables: Mapping[str, str]) -> list[str]:
    """The words with the other `$NAME` / `${NAME}` set by an earlier line filled in."""
    if not variables:
        return words

    def value(match: re.Match[str]) -> str:
        name = match.group("braced") or match.group("bare")
        return variables.get(name, match.group(0))

    return [_VARIABLE.sub(value, word) for word in words]


def _with_exports(words: list[str], exported: Mapping[str, str]) -> list[str]:
    """The words with the variables exported before them set in the server's environment
    (`export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` on the line before `vllm serve`). A container
    does not inherit the host's: `docker run` keeps its own `-e`."""
    head = _strip_leading(list(words))[0]
    if not exported or (head and Path(head[0]).name in _CONTAINER_RUNNERS):
        return words
    return [f"{name}={value}" for name, value in exported.items()] + words


def _split(command: str) -> list[str]:
    command = command.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    command = _MARKDOWN_EMPHASIS.sub(r"\g<inner>", command)
    try:
        return shlex.split(command, comments=True)
    except ValueError as exc:
        raise CommandParseError(ErrorText("command.unsplittable", reason=exc)) from exc


def tokens_from_text(text: str) -> list[str]:
    """Find the command in pasted text and split it into shell words.

    The command is the first logical line that starts a vLLM server; prompts (`$ `), blog
    captions and other lines around it are ignored. Without one: vLLM's logged arguments, a
    compose file or Kubernetes manifest, a Dockerfile, a Python start (`python_spellings`), or
    the arguments alone that a container template gives vLLM's image.
    """
    lines = _logical_lines(text)
    for number, line in enumerate(lines):
        match = _START.search(line)
        if match is None:
            continue
        shell = _assignments(lines[:number])
        command = _unwrapped(line[match.start(1) :], lines[number + 1 :])
        words = _split(_expanded_text(command, shell.variables))
        return _with_exports(_expanded(words, shell.variables), shell.exported)
    written = (
        python_spellings.logged_args(text)
        or python_spellings.config_line(text)
        or _from_manifest(text)
        or _from_dockerfile(text)
        or python_spellings.argv_list(text)
        or python_spellings.engine_call(text)
        or _arguments_alone(lines)
    )
    if written is not None:
        return written
    raise CommandParseError(ErrorText("command.none"))


_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def _arguments_alone(lines: Sequence[str]) -> list[str] | None:
    """The arguments a container template passes to vLLM's image (its entrypoint is the
    server): `--model X --port 8000`, `MODEL --flags`, or `vllm/vllm-openai:TAG MODEL --flags`
    as a RunPod template or a `docker run` summary writes them. The first line that has text
    decides; any other first word is no server start."""
    for number, line in enumerate(lines):
        stripped = re.sub(r"^\s*[$#>]\s+", "", line).strip()
        if stripped:
            try:
                words = _split(_unwrapped(stripped, lines[number + 1 :]))
            except CommandParseError:
                return None
            return _as_arguments(words)
    return None


def _as_arguments(words: list[str]) -> list[str] | None:
    # A shell reads `(` as an operator, not a word: what follows is the writer's prose.
    cut = [index for index, word in enumerate(words) if word.startswith("(")]
    words = words[: cut[0]] if cut else words
    if words and words[0].startswith("--"):
        return words
    if words and is_vllm_image(words[0]):
        return ["docker", "run", *words]
    # The `vllm` program's own argv, as an image's entrypoint gets it or a launcher logs it
    # (GPUStack: "Run vllm with arguments: serve MODEL --flags").
    if len(words) > 1 and words[0] == "serve":
        return ["vllm", *words]
    if len(words) > 1 and _HUB_ID.match(words[0]) and words[1].startswith("--"):
        return ["vllm", "serve", *words]
    return None


# --- the server as a container spec: docker compose, Kubernetes, a Dockerfile ----------------


def _words(value: object) -> list[str]:
    """A compose/Kubernetes `command` or `args`: a list of words, or one string a shell splits."""
    if isinstance(value, list):
        return [str(item) for item in value if item is not None]
    if isinstance(value, str):
        try:
            return shlex.split(value, comments=True)
        except ValueError:
            return value.split()
    return []


def _environment(spec: Mapping[str, object]) -> list[str]:
    """`-e K=V` words from compose's `environment` (list or mapping) or Kubernetes' `env`."""
    env = spec.get("environment", spec.get("env"))
    pairs: list[str] = []
    if isinstance(env, dict):
        pairs = [f"{key}={value}" for key, value in env.items() if value is not None]
    elif isinstance(env, list):
        for item in env:
            if isinstance(item, dict) and "name" in item and item.get("value") is not None:
                pairs.append(f"{item['name']}={item['value']}")
            elif isinstance(item, str) and "=" in item:
                pairs.append(item)
    return [word for pair in pairs for word in ("-e", pair)]


def _containers(node: object) -> list[Mapping[str, object]]:
    """Every mapping in a manifest that describes a container: one with an image and/or the
    words it runs."""
    found: list[Mapping[str, object]] = []
    if isinstance(node, dict):
        if any(key in node for key in ("command", "args", "entrypoint")):
            found.append(node)
        for value in node.values():
            found.extend(_containers(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_containers(item))
    return found


def _container_tokens(spec: Mapping[str, object]) -> list[str]:
    """The container as the `docker run` it amounts to. Compose's `entrypoint` and Kubernetes'
    `command` replace the image's entrypoint; compose's `command` and Kubernetes' `args` are
    what it runs (the words after the image). Without an image, vLLM's own is assumed: the
    words are then its entrypoint's arguments."""
    kubernetes = "args" in spec or "env" in spec
    override = _words(spec.get("command") if kubernetes else spec.get("entrypoint"))
    runs = _words(spec.get("args") if kubernetes else spec.get("command"))
    image = spec.get("image")
    words = [*override, *runs]
    return ["docker", "run", *_environment(spec), str(image or "vllm/vllm-openai"), *words]


def _from_manifest(text: str) -> list[str] | None:
    """The vLLM container of a docker compose file or a Kubernetes manifest (or an excerpt of
    one): its image, environment and the words it runs."""
    import textwrap

    import yaml

    try:
        documents = list(yaml.safe_load_all(textwrap.dedent(text.replace("\t", "  "))))
    except yaml.YAMLError:
        return None
    for spec in (c for document in documents for c in _containers(document)):
        tokens = _container_tokens(spec)
        image = tokens[len(tokens) - len(_words(spec.get("args") or spec.get("command"))) - 1]
        if "vllm" in " ".join(tokens[2:]).lower() or "vllm" in image.lower():
            return tokens
    return None


_DOCKERFILE_FROM = re.compile(r"^FROM\s+(?:--\S+\s+)*(?P<image>\S+)", re.MULTILINE | re.IGNORECASE)
_DOCKERFILE_RUN = re.compile(
    r"^(?P<kind>CMD|ENTRYPOINT)\s+(?P<body>\[.*?\])", re.MULTILINE | re.DOTALL
)


def _from_dockerfile(text: str) -> list[str] | None:
    """A Dockerfile's `ENTRYPOINT [...]` and `CMD [...]` (exec form) on its `FROM` image."""
    found: dict[str, list[str]] = {}
    for match in _DOCKERFILE_RUN.finditer(text):
        lines = match.group("body").replace("\\\n", "\n").splitlines()
        body = "\n".join(line for line in lines if not line.strip().startswith("#"))
        try:
            words = json.loads(body)
        except ValueError:
            continue
        if isinstance(words, list):
            found[match.group("kind").upper()] = [str(word) for word in words]
    if not found:
        return None
    image = _DOCKERFILE_FROM.search(text)
    words = [*found.get("ENTRYPOINT", []), *found.get("CMD", [])]
    return ["docker", "run", image.group("image") if image else "vllm/vllm-openai", *words]


# --- tokens to the vLLM argument list ---------------------------------------------------------


@dataclass(frozen=True)
class _Located:
    form: CommandForm
    prefix: tuple[str, ...]
    args: tuple[str, ...]
    env: dict[str, str]
    image_tag: str | None
    docker_gpus: str | None
    repeated_entrypoint: bool = False  # `docker run IMAGE vllm serve ...` without --entrypoint
    extra_serve: str | None = None  # `docker run IMAGE serve MODEL ...`: the image
    mounts: tuple[tuple[str, str], ...] = ()
    bench: str | None = None  # the offline benchmark program (`bench_args.PROGRAMS`)
    image: str | None = None  # the docker image, tag included


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


def _docker_options(
    tokens: list[str], env: dict[str, str], mounts: list[tuple[str, str]]
) -> tuple[int, str | None, bool]:
    """Read `docker run`'s own options: (index of the image, --gpus, whether --entrypoint);
    `-e` into `env`, `-v HOST:CONTAINER` into `mounts` as (container, host)."""
    gpus: str | None = None
    entrypoint = False
    index = 2
    while index < len(tokens) and tokens[index].startswith("-"):
        name, has_equals, value = tokens[index].partition("=")
        if name in _DOCKER_VALUE_FLAGS and not has_equals:
            value = tokens[index + 1] if index + 1 < len(tokens) else ""
            index += 1
        if name == "--gpus":
            gpus = value
        entrypoint = entrypoint or name == "--entrypoint"
        if name in ("-e", "--env") and "=" in value:
            key, _, val = value.partition("=")
            env[key] = val
        if name in ("-v", "--volume") and value.count(":") >= 1:
            host, _, container = value.partition(":")
            mounts.append((container.partition(":")[0], host))
        index += 1
    return index, gpus, entrypoint


def _after_image(rest: list[str]) -> list[str] | None:
    """The server command written after the image (`vllm serve ...`, `python3 -m ...`, or either
    inside `bash -c "..."`), or None when the words are arguments to the image's entrypoint."""
    if len(rest) >= 3 and Path(rest[0]).name in ("bash", "sh") and rest[1] in ("-c", "-lc"):
        rest = shlex.split(rest[2], comments=True) if _START.search(rest[2]) else rest
    words = _strip_leading(_cut_at_shell_operators(rest))[0]
    if len(words) < 2:
        return None
    if Path(words[0]).name == "vllm" and words[1] in ("serve", "bench"):
        return rest
    program = _python_program(words)
    if program is None:
        return None
    _, name, module = program
    if module or _API_SERVER_SCRIPT.search(name) or Path(name).name in bench_args.PROGRAMS:
        return rest
    return None


def _python_program(words: Sequence[str]) -> tuple[int, str, bool] | None:
    """`python [options] -m MODULE ...` or `python [options] SCRIPT ...`: (index of the first
    word after the module or script, the module or script, whether a module); None for another
    program, `python -c CODE` or a bare interpreter."""
    if not words or not Path(words[0]).name.startswith("python"):
        return None
    index = 1
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        option = _PYTHON_OPTION.match(words[index])
        takes = option.group("takes") if option else ""
        rest = option.group("rest") if option else ""
        if takes == "c":
            return None
        if takes == "m":
            if rest:
                return index + 1, rest, True
            return (index + 2, words[index + 1], True) if index + 1 < len(words) else None
        index += 2 if takes in ("W", "X") and not rest else 1
    return (index + 1, words[index], False) if index < len(words) else None


def is_vllm_image(image: str) -> bool:
    """Whether `image` is one of vLLM's own (vllm/vllm-openai and its -rocm, -cpu... kin)."""
    return _VLLM_ENTRYPOINT_IMAGE.match(image) is not None


def image_version(tag: str | None, image: str | None = None) -> str | None:
    """The vLLM release an image tag names: `v0.8.5`, `0.9.1`, `rocm6.3.1_..._vllm_0.6.6`.

    A bare version names vLLM's release only on an image of vLLM's (`vllm/vllm-openai`,
    `rocm/vllm`, any repository named for vLLM): on another project's image (`llm-d-rocm:v0.6.0`)
    it is that project's version. A tag that spells `vllm_X.Y` names it on any image."""
    if not tag:
        return None
    if re.match(r"^v?\d+\.\d+", tag):
        repository = (image or "").rpartition(":")[0].rpartition("/")[2]
        return tag if image is None or "vllm" in repository.lower() else None
    found = _TAG_VERSION.search(tag)
    return found.group("version") if found else None


def _locate_docker(tokens: list[str], env: dict[str, str]) -> _Located:
    found: list[tuple[str, str]] = []
    index, gpus, entrypoint = _docker_options(tokens, env, found)
    mounts = tuple(found)
    if index >= len(tokens):
        raise CommandParseError(ErrorText("command.no-image"))
    image = tokens[index]
    tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else None
    prefix = tuple(tokens[: index + 1])
    inner = _after_image(tokens[index + 1 :])
    rest = tokens[index + 1 :]
    if inner is None and not entrypoint and len(rest) >= 2 and rest[0] == "serve":
        # `serve` alone is no program: the image's entrypoint is vLLM's server (`vllm serve`,
        # the API server module before 0.11.1), which takes `serve` for the model and the
        # model for an extra positional ('unrecognized arguments'). Read what follows it.
        args = tuple(rest[1:])
        return _Located(
            "docker", prefix, args, env, tag, gpus, extra_serve=image, mounts=mounts, image=image
        )
    if inner is None:
        return _Located("docker", prefix, tuple(rest), env, tag, gpus, mounts=mounts, image=image)
    located = _locate(inner)
    # vLLM's own images already run the server (their entrypoint), so `vllm serve` after the
    # image reaches vLLM as two stray words: 'unrecognized arguments' unless --entrypoint
    # replaced it. Other images run what follows them.
    repeated = (
        located.form in ("vllm-serve", "bench")
        and _VLLM_ENTRYPOINT_IMAGE.match(image) is not None
        and not entrypoint
    )
    return _Located(
        "docker",
        prefix + located.prefix,
        located.args,
        env | located.env,
        tag,
        gpus,
        repeated,
        mounts=mounts,
        bench=located.bench,
        image=image,
    )


def _vllm_cli(words: Sequence[str], start: int, env: dict[str, str]) -> _Located | None:
    """`serve ...` or `bench throughput|latency ...` from `words[start]` on (the words of vLLM's
    CLI after `vllm` or `python -m vllm.entrypoints.cli.main`)."""
    sub = words[start : start + 1]
    if sub == ["serve"]:
        prefix, args = tuple(words[: start + 1]), tuple(words[start + 1 :])
        return _Located("vllm-serve", prefix, args, env, None, None)
    program = " ".join(words[start : start + 2])
    if sub == ["bench"] and program in bench_args.PROGRAMS:
        prefix, args = tuple(words[: start + 2]), tuple(words[start + 2 :])
        return _Located("bench", prefix, args, env, None, None, bench=program)
    return None


def _locate_python(words: Sequence[str], env: dict[str, str]) -> _Located | None:
    """A Python start of vLLM's server, CLI or an offline benchmark script."""
    program = _python_program(words)
    if program is None:
        return None
    end, name, module = program
    prefix, args = tuple(words[:end]), tuple(words[end:])
    if module and name in _API_SERVER_MODULES:
        return _Located("api-server", prefix, args, env, None, None)
    if module and name == _CLI_MODULE:
        return _vllm_cli(words, end, env)
    if not module and _API_SERVER_SCRIPT.search(name):
        return _Located("api-server", prefix, args, env, None, None)
    if not module and Path(name).name in bench_args.PROGRAMS:
        return _Located("bench", prefix, args, env, None, None, bench=Path(name).name)
    return None


def _locate(tokens: Sequence[str]) -> _Located:
    words, env = _strip_leading(_cut_at_shell_operators(tokens))
    cli = _vllm_cli(words, 1, env) if words and Path(words[0]).name == "vllm" else None
    located = cli or _locate_python(words, env)
    if located is not None:
        return located
    if len(words) >= 2 and Path(words[0]).name in _CONTAINER_RUNNERS and words[1] == "run":
        return _locate_docker(list(words), env)
    if words and Path(words[0]).name == "vllm":
        sub = words[1] if len(words) > 1 else ""
        raise CommandParseError(ErrorText("command.not-serve", sub=sub))
    if words and words[0].startswith("-"):
        # Bare flags (a `serve` argv without the program name): read them as `vllm serve` args.
        return _Located("vllm-serve", ("vllm", "serve"), tuple(words), env, None, None)
    raise CommandParseError(ErrorText("command.not-vllm", words=" ".join(words[:3])))


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
    table, source, given = _pick_version(version, located.image_tag, located.image)
    located, refused = _bench_words(located, table)
    serve = _says_serve(located, table)
    builder = Builder(version=table, serve=serve, dev_build=vllm_flags.is_dev_build(given))
    builder.demo_server = vllm_flags.DEMO_SERVER_MODULE in located.prefix
    builder.issues.extend(ParseIssue("unknown-flag", flag, flag) for flag in refused)
    if located.repeated_entrypoint:
        builder.issues.append(ParseIssue("unknown-flag", "vllm serve", None, "image entrypoint"))
    if located.extra_serve is not None:
        kind: IssueKind = "extra-positional-after-entrypoint"
        builder.issues.append(ParseIssue(kind, "serve", None, located.extra_serve))
    allow_positional = serve
    read_args(builder, located.args, allow_positional)
    cli_args, cli_order = dict(builder.args), list(builder.order)
    from_config: set[str] = set()
    config_path = builder.args.get("--config")
    if isinstance(config_path, str):
        loaded = _load_config(config_path, config_dir)
        if isinstance(loaded, str):
            builder.issues.append(ParseIssue("config-unreadable", config_path, "--config", loaded))
        else:
            config_builder = Builder(
                version=table,
                serve=builder.serve,
                dev_build=builder.dev_build,
                plugins=builder.plugins,
            )
            read_args(config_builder, _config_tokens(loaded, table), allow_positional=False)
            model = loaded.get("model")
            if builder.model is None and isinstance(model, str):
                builder.model, builder.model_positional = model, False
            from_config = set(config_builder.args) - set(cli_args)
            builder.issues.extend(config_builder.issues)
            builder.args = {**config_builder.args, **cli_args}
            builder.order = [f for f in config_builder.order if f in from_config] + cli_order
    _check_model(builder, release_known=source != _NEWEST)
    return ServeCommand(
        model=builder.model,
        args=dict(builder.args),
        version=table,
        version_origin=source,
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
        mounts=located.mounts,
        given_version=given if source != _NEWEST else None,
    )


def _bench_words(located: _Located, version: str) -> tuple[_Located, list[str]]:
    """An offline benchmark's own words moved into the prefix (kept, not reviewed), and the
    options its release refuses; other forms as they are."""
    found = bench_args.options(located.bench, version) if located.bench else None
    if found is None:
        return located, []

    def engine_flag(flag: str) -> bool:
        return vllm_flags.lookup(flag, version) is not None

    own, engine, refused = bench_args.split_words(found, located.args, engine_flag)
    return replace(located, prefix=located.prefix + tuple(own), args=tuple(engine)), refused


def _says_serve(located: _Located, version: str) -> bool:
    """Whether vLLM's `serve` subcommand reads the arguments (not the bare API server module)."""
    if located.bench is not None:
        return False
    if located.form == "docker" and located.prefix[-2:] != ("vllm", "serve"):
        return vllm_flags.version_at_least(version, vllm_flags.IMAGE_RUNS_SERVE_SINCE)
    return located.form == "vllm-serve" or located.prefix[-2:] == ("vllm", "serve")


def _check_model(builder: Builder, *, release_known: bool = True) -> None:
    """Where `vllm serve` refuses how the model was given (by release); with no model at all,
    vLLM serves its default model, which the review then covers. Where the release is not
    known, `--model` alone, which every release before 0.11.1 refuses, is said as such."""
    offending = _model_refusal(builder) if builder.serve else None
    if offending is not None:
        builder.issues.append(ParseIssue("model-required", offending, "--model", builder.model))
        if offending == "vllm serve":
            return
    elif builder.serve and not release_known and builder.model and not builder.model_positional:
        older = replace(builder, version=_BEFORE_MODEL_FLAG)
        if _model_refusal(older) is not None:
            since = vllm_flags.MODEL_FLAG_ACCEPTED_SINCE
            issue = ParseIssue("model-required", "--model", "--model", builder.model, before=since)
            builder.issues.append(issue)
    if builder.model is None:
        builder.model, builder.model_default = vllm_flags.default_model(builder.version), True
        builder.issues.append(ParseIssue("default-model", "vllm serve", "--model", builder.model))


_BEFORE_MODEL_FLAG = "0.11.0"  # the last release that refuses `vllm serve --model X`


def _model_refusal(builder: Builder) -> str | None:
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


def _pick_version(
    requested: str | None, image_tag: str | None, image: str | None = None
) -> tuple[str, VersionSource, str]:
    """(flag table, where the version came from as reports show it, the version as given)."""
    if requested is not None:
        source = _stand_in(VersionSource("version.flag"), requested)
        return vllm_flags.table_for(requested), source, requested
    from_image = image_version(image_tag, image)
    if image_tag and from_image:
        source = VersionSource("version.image", tag=image_tag)
        return vllm_flags.table_for(from_image), _stand_in(source, from_image), from_image
    installed = vllm_flags.installed_vllm_version()
    if installed:
        source = VersionSource("version.installed")
        return vllm_flags.table_for(installed), _stand_in(source, installed), installed
    return vllm_flags.newest_version(), _NEWEST, vllm_flags.newest_version()


def _stand_in(source: VersionSource, version: str) -> VersionSource:
    """Say so when the release has no published source and another release's flags stand in."""
    table = vllm_flags.fallback_for(version)
    if table is None:
        return source
    return VersionSource(
        "version.stand-in", source=source, version=version.removeprefix("v"), table=table
    )


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
