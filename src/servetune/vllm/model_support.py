"""What each vLLM release can do with a model architecture, read from its source
(scripts/build_pp_support.py writes data/vllm_pp_support.json, scripts/build_loader_support.py
data/vllm_loader_support.json).

Registry: the architectures each release's model registry names ("Model architectures [...] are
not supported for now"); `registration` says whether a release has one and which release first
or last did.

Pipeline parallelism: releases 0.4.x and 0.5.0 refuse it for every model, 0.5.1 to 0.6.0 run it
for the architectures `config._PP_SUPPORTED_MODELS` lists, later releases for the classes that
implement `SupportsPP` ("Pipeline parallelism is not supported for this model").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from servetune import _data
from servetune.vllm.flags import version_at_least


@dataclass(frozen=True)
class PipelineSupport:
    """How one release treats pipeline parallelism for one architecture."""

    registered: bool  # the release's model registry has the architecture
    supported: bool  # and runs it over several pipeline stages
    since: str | None  # the first release after this one that supports it (None: none yet)
    lacking_since: str | None  # supported here: the newest earlier release that refused it


@cache
def _architectures() -> dict[str, dict[str, list[list[str]]]]:
    data: dict[str, dict[str, list[list[str]]]] = _data.load("vllm_pp_support.json")[
        "architectures"
    ]
    return data


def _within(version: str, runs: list[list[str]]) -> bool:
    return any(
        version_at_least(version, first) and version_at_least(last, version) for first, last in runs
    )


def _releases() -> list[str]:
    releases: list[str] = _data.load("vllm_pp_support.json")["releases"]
    return releases


def pipeline_support(architecture: str, version: str) -> PipelineSupport | None:
    """None where no known release registers `architecture` (a remote-code model)."""
    entry = _architectures().get(architecture)
    if entry is None:
        return None
    registered = _within(version, entry["registered"])
    supported = registered and _within(version, entry["pipeline_parallel"])
    later = [
        r
        for r in _releases()
        if not version_at_least(version, r) and _within(r, entry["pipeline_parallel"])
    ]
    refused_before = [
        r
        for r in _releases()
        if not version_at_least(r, version)
        and _within(r, entry["registered"])
        and not _within(r, entry["pipeline_parallel"])
    ]
    return PipelineSupport(
        registered=registered,
        supported=supported,
        since=later[0] if later else None,
        lacking_since=refused_before[-1] if refused_before else None,
    )


@dataclass(frozen=True)
class Registration:
    """Whether a release's model registry has an architecture: `registered` None where the data
    cannot say (a release between two read ones, where the architecture's run begins or ends)."""

    registered: bool | None
    first: str  # the first read release that registers it
    last: str  # the last read release that registers it


def _around(version: str, runs: list[list[str]]) -> bool | None:
    """Whether `version` lies within `runs`; for a release the data did not read (0.15.x between
    0.14.1 and 0.16.0), what the read releases on both sides agree on (None where they differ).
    Older than every read release: the oldest's answer, newer than all: the newest's."""
    releases = _releases()
    if version in releases:
        return _within(version, runs)
    before = [r for r in releases if version_at_least(version, r)]
    after = [r for r in releases if not version_at_least(version, r)]
    sides = {_within(r, runs) for r in (before[-1:] + after[:1])}
    return sides.pop() if len(sides) == 1 else None


def registration(architecture: str, version: str) -> Registration | None:
    """None where no read release registers `architecture` (a remote-code model)."""
    entry = _architectures().get(architecture)
    if entry is None or not entry["registered"]:
        return None
    runs = entry["registered"]
    return Registration(_around(version, runs), runs[0][0], runs[-1][1])


@cache
def _loaders() -> dict[str, Any]:
    data: dict[str, Any] = _data.load("vllm_loader_support.json")
    return data


# A Gemma 3 GGUF holds its text model: transformers reads it as `gemma3_text` (vLLM's rename of
# `gemma3_text` says "Gemma3 models use 'gemma3_text' in HuggingFace").
_GGUF_MODEL_TYPE = {"gemma3": "gemma3_text"}


@dataclass(frozen=True)
class GgufSupport:
    """How one release's GGUF loader treats a checkpoint's model type."""

    loader: bool | None  # the release loads GGUF in tree (None: the out-of-tree plugin decides)
    readable: bool  # its weights map finds the type's GGUF name
    since: str | None  # the first release that does (None where it never needed a rename)


def gguf_support(model_type: str, version: str) -> GgufSupport:
    """Whether `version`'s GGUF loader maps `model_type` (see build_loader_support.py)."""
    gguf = _loaders()["gguf"]
    loader_runs: list[list[str]] = gguf["loader"]
    if version_at_least(version, loader_runs[-1][1]) and version != loader_runs[-1][1]:
        return GgufSupport(None, True, None)  # the plugin's, read from no release here
    if not _within(version, loader_runs):
        return GgufSupport(False, False, loader_runs[0][0])
    kind = _GGUF_MODEL_TYPE.get(model_type, model_type)
    renamed: list[list[str]] | None = gguf["renamed_model_types"].get(kind)
    if renamed is None or _within(version, renamed):
        return GgufSupport(True, True, None)
    return GgufSupport(True, False, renamed[0][0])


def bnb_fact(fact: str, version: str) -> bool | None:
    """A bitsandbytes loader fact of `version` (`prequant_tp_refused`,
    `load_format_from_checkpoint`, `load_format_from_flag`); None once the loader left the tree
    (vllm-bnb-plugin, 0.28 on)."""
    bnb = _loaders()["bitsandbytes"]
    in_tree: list[list[str]] = bnb["in_tree"]
    if version_at_least(version, in_tree[-1][1]) and version != in_tree[-1][1]:
        return None
    return _within(version, bnb[fact])


def bnb_since(fact: str) -> str:
    """The first release where a bitsandbytes loader fact holds."""
    runs: list[list[str]] = _loaders()["bitsandbytes"][fact]
    return runs[0][0]


@cache
def transformers_fallback_since() -> str | None:
    """The first release whose registry has the Transformers backend (`TransformersModel`,
    `TransformersForCausalLM`), which an architecture the registry lacks falls back to."""
    firsts = [
        entry["registered"][0][0]
        for arch, entry in _architectures().items()
        if arch.startswith("Transformers") and entry["registered"]
    ]
    oldest = firsts[0] if firsts else None
    for first in firsts:
        if oldest is not None and not version_at_least(first, oldest):
            oldest = first
    return oldest


# The `general.architecture` llama.cpp's convert_hf_to_gguf.py writes for a transformers model
# type, where it is not the type without its underscores (`qwen2_moe` -> `qwen2moe`): the
# classes it registers under another `MODEL_ARCH` (`@ModelBase.register("Olmo2ForCausalLM",
# "Olmo3ForCausalLM") class Olmo2Model: model_arch = gguf.MODEL_ARCH.OLMO2`; Mistral as LLAMA;
# DeepSeek V2/V3 as DEEPSEEK2; Gemma 3's text model as GEMMA3; Cohere as COMMAND_R; gpt-oss
# and MiniMax-M2 with a dash; DeciLM / Nemotron-NAS as DECI).
_GGUF_FILE_ARCHITECTURE = {
    "olmo3": "olmo2",
    "mistral": "llama",
    "deepseek_v2": "deepseek2",
    "deepseek_v3": "deepseek2",
    "gemma3_text": "gemma3",
    "gemma4_text": "gemma4",
    "cohere": "command-r",
    "gpt_oss": "gpt-oss",
    "minimax_m2": "minimax-m2",
    "nemotron-nas": "deci",
}


def gguf_file_architecture(model_type: str) -> str:
    """The `general.architecture` a GGUF file of `model_type` carries."""
    return _GGUF_FILE_ARCHITECTURE.get(model_type, model_type.replace("_", ""))


@dataclass(frozen=True)
class GgufConfigReading:
    """Whether the transformers a vLLM release runs with reads a GGUF file's config: vLLM hands
    the file to transformers (`gguf_file=`), which stops on an architecture it has no table for
    ("GGUF model with architecture olmo2 is not supported yet"). See
    scripts/build_gguf_config_support.py."""

    readers: tuple[str, ...]  # the accepted transformers releases (one per minor) that read it
    accepted: tuple[str, ...]  # the transformers releases the vLLM release's requirement takes
    requirement: str  # as its requirements file writes it: `>= 4.56.0, < 5`
    first: str | None  # the first transformers release that reads it (None: none read does)

    @property
    def never(self) -> bool:
        return not self.readers

    @property
    def always(self) -> bool:
        return len(self.readers) == len(self.accepted)


@cache
def _gguf_configs() -> dict[str, Any]:
    data: dict[str, Any] = _data.load("transformers_gguf.json")
    return data


def _requirement(version: str) -> list[Any]:
    """The requirement run of vLLM release `version` (the nearest read release at or below)."""
    runs: list[list[Any]] = _gguf_configs()["vllm_requires"]
    chosen = runs[0]
    for run in runs:
        if version_at_least(version, run[0]):
            chosen = run
    return chosen


def gguf_config_reading(architecture: str, version: str) -> GgufConfigReading:
    """How the transformers releases vLLM `version` accepts treat a GGUF `architecture`."""
    data = _gguf_configs()
    releases: list[str] = data["transformers_releases"]
    _first, _last, requirement, accepted_runs = _requirement(version)
    accepted = tuple(r for r in releases if _within(r, accepted_runs))
    reading: list[list[str]] = data["architectures"].get(architecture, [])
    readers = tuple(r for r in accepted if _within(r, reading))
    return GgufConfigReading(
        readers, accepted, str(requirement), reading[0][0] if reading else None
    )
