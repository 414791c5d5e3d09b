"""`check` on server commands people posted in public issue threads (tests/data/real_commands.json).

Each entry records what vLLM did with the command. Where vLLM refused it, check must name that
cause; where vLLM's parser took it, check must not invent a command-line error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.review.check import CheckOptions, check_text

DATA = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "real_commands.json").read_text("utf-8")
)
COMMANDS = DATA["commands"]
# Findings about the command line itself (what vLLM's parser refuses).
COMMAND_LINE_RULES = {
    "dash-typo",
    "unknown-flag",
    "removed-flag",
    "bool-flag-value",
    "missing-value",
    "invalid-value",
    "model-required",
}


def _check(entry: dict[str, object], tmp_path: Path) -> set[str]:
    command = str(entry["command"])
    files: dict[str, str] = entry.get("files", {})  # type: ignore[assignment]
    for index, (name, text) in enumerate(files.items()):
        local = tmp_path / f"{index}-{Path(name).name}"
        local.write_text(text, encoding="utf-8")
        command = command.replace(name, str(local))
    options = CheckOptions(
        gpus=entry["gpus"],  # type: ignore[arg-type]
        vllm_version=str(entry["vllm_version"]),
        detect_hardware=False,
    )
    report = check_text(command, options)
    return {f.rule for f in report.findings if f.severity == "error"}


def test_the_collection_has_its_sources() -> None:
    assert len(COMMANDS) >= 15
    for entry in COMMANDS:
        assert str(entry["url"]).startswith("https://github.com/")
        assert entry["expect"] and entry["vllm_said"]


@pytest.mark.parametrize(
    "entry", COMMANDS, ids=[f"{n}-{e['url'].rsplit('/', 2)[-1]}" for n, e in enumerate(COMMANDS)]
)
def test_check_agrees_with_what_vllm_did(entry: dict[str, object], tmp_path: Path) -> None:
    errors = _check(entry, tmp_path)
    expect = str(entry["expect"])
    if expect == "ran":
        assert errors == set()
    elif expect == "parsed":
        assert errors & COMMAND_LINE_RULES == set()
    else:
        assert expect in errors, (entry["url"], errors)
