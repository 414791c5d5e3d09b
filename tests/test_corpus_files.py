"""The real-world corpus holds together: every record names its source, its split is the source's
hash (so a record cannot be moved to the side where servetune does better), one source never
straddles the split, and a log's quoted root cause is a line of its file."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"
PARTS = ("commands", "logs", "memory", "runs")


def _records(part: str) -> list[dict[str, object]]:
    data: list[dict[str, object]] = json.loads(
        (CORPUS / f"{part}.json").read_text(encoding="utf-8")
    )["records"]
    return data


def _split_of(source_key: str) -> str:
    digest = int(hashlib.sha256(source_key.encode()).hexdigest(), 16)
    return "held-out" if digest % 10 < 4 else "fit"


@pytest.mark.parametrize("part", PARTS)
def test_each_record_names_its_source_and_its_split_is_the_source_hash(part: str) -> None:
    records = _records(part)
    assert records
    for rec in records:
        assert str(rec["url"]).startswith("http"), rec["id"]
        assert rec["split"] == _split_of(str(rec["source_key"])), rec["id"]


@pytest.mark.parametrize("part", PARTS)
def test_ids_are_unique(part: str) -> None:
    ids = [rec["id"] for rec in _records(part)]
    assert len(ids) == len(set(ids))


def test_one_source_falls_on_one_side_across_the_whole_corpus() -> None:
    sides: dict[str, set[object]] = defaultdict(set)
    for part in PARTS:
        for rec in _records(part):
            sides[str(rec["source_key"])].add(rec["split"])
    assert all(len(s) == 1 for s in sides.values())


def test_a_log_record_quotes_a_line_of_its_own_file() -> None:
    for rec in _records("logs"):
        text = (CORPUS / "logs" / str(rec["file"])).read_text(encoding="utf-8", errors="replace")
        assert text.strip(), rec["id"]
        if rec["root_cause"]:
            assert str(rec["root_cause"]) in text, rec["id"]
        assert rec["status"] in ("ready", "failed", "starting", "not-vllm"), rec["id"]


def test_every_log_file_belongs_to_a_record() -> None:
    named = {rec["file"] for rec in _records("logs")}
    files = {p.name for p in (CORPUS / "logs").iterdir()}
    assert files == named


def test_a_command_that_ran_names_no_cause_and_a_failed_one_names_its_family() -> None:
    for rec in _records("commands"):
        if rec["outcome"] == "ran":
            assert rec["expect"] == "ran" and not rec["cause"], rec["id"]
        else:
            assert rec["outcome"] == "failed" and rec["expect"] != "ran", rec["id"]
            assert isinstance(rec["static"], bool), rec["id"]


def test_a_memory_record_has_a_command_and_a_quote_of_what_vllm_logged() -> None:
    for rec in _records("memory"):
        assert rec["command"] and rec["quote"], rec["id"]  # gpus may be unknown: not scored
        assert isinstance(rec["logged"], dict)
        assert any(v is not None for v in rec["logged"].values()), rec["id"]
