"""What each vLLM release can do with a model architecture, read from its source
(scripts/build_pp_support.py writes data/vllm_pp_support.json).

Pipeline parallelism: releases 0.4.x and 0.5.0 refuse it for every model, 0.5.1 to 0.6.0 run it
for the architectures `config._PP_SUPPORTED_MODELS` lists, later releases for the classes that
implement `SupportsPP` ("Pipeline parallelism is not supported for this model").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

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
