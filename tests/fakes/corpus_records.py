"""The real corpus (tests/data/corpus/commands.json, memory.json), for the tests that hold
check and the memory estimate to its `fit` part: a record by id, and its command reviewed as the
record ran it."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from servetune.review.check import CheckOptions, Report, check_text

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
COMMANDS = CORPUS / "commands.json"
MEMORY = CORPUS / "memory.json"


@cache
def records(path: Path = COMMANDS) -> dict[str, dict[str, Any]]:
    """Every record of one corpus file, by id (both parts)."""
    loaded: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["records"]
    return {r["id"]: r for r in loaded}


def fit_record(record_id: str, path: Path = COMMANDS) -> dict[str, Any]:
    """A record of the fit part (a test of a held-out record fails here)."""
    record = records(path)[record_id]
    assert record["split"] == "fit"
    return record


def memory_record(record_id: str) -> dict[str, Any]:
    """A fit record of the memory part (vLLM's logged weights and KV cache)."""
    return fit_record(record_id, MEMORY)


def review(command: str, gpus: str | None, version: str | None) -> Report:
    """A command reviewed on these GPUs and this release, no hardware detected."""
    options = CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    return check_text(command, options)


def release(record: dict[str, Any]) -> str | None:
    """The record's vLLM release as check takes it: a version as written (`0.15.2rc1.dev93+g..`),
    else the first X.Y.Z of its prose (`0.4.0.post1 (from the banner)`)."""
    given = record.get("vllm_version")
    if not given:
        return None
    if re.fullmatch(r"v?\d+\.\d+\S*", given):
        return str(given)
    found = re.search(r"\d+\.\d+(?:\.\d+)?", str(given))
    return found.group(0) if found else None


def review_fit(record_id: str) -> Report:
    """A fit record's command reviewed with its GPUs and its release."""
    record = fit_record(record_id)
    return review(record["command"], record.get("gpus"), release(record))
