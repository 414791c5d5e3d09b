"""vLLM's periodic stats lines (vllm/log.py), on real excerpts of several releases
(tests/data/monitor/README.md says where each comes from), and the caps a startup log prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from servetune.monitor import caps
from servetune.vllm.log import StatsLine, read_lines, reported, stats_lines

LOGS = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"


def _lines(data: Path, name: str) -> list[StatsLine]:
    return stats_lines((data / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("v0-pending.log", 1),
        ("v0-one-request.log", 6),
        ("v0-busy-no-queue.log", 5),
        ("v1-pasted-together.log", 3),
        ("v1-busy-no-queue.log", 6),
        ("v1-queue-kv-room.log", 5),
        ("v1-kv-full-queue.log", 5),
        ("v1-cache-full.log", 1),
        ("v1-docker-timestamps.log", 4),
        ("v1-cpu-s390x.log", 5),
        ("v1-idle-spec-decode.log", 2),
    ],
)
def test_every_stats_line_of_every_excerpt(data: Path, name: str, count: int) -> None:
    found = _lines(data, name)
    assert len(found) == count
    assert all(line.stamp is not None for line in found)


def test_v0_pending_swapped_and_the_cpu_cache(data: Path) -> None:
    (line,) = _lines(data, "v0-pending.log")
    assert line == StatsLine(
        stamp="02-28 21:48:18",
        engine=None,
        prompt_tokens_per_s=0.0,
        generation_tokens_per_s=44.9,
        running=2,
        waiting=3,  # V0's "Pending"
        kv_cache_usage=82.1 / 100,
        swapped=0,
        cpu_kv_cache_usage=0.0,
    )


def test_v1_engine_lines_behind_docker_and_process_prefixes(data: Path) -> None:
    first = _lines(data, "v1-docker-timestamps.log")[0]
    assert (first.stamp, first.engine, first.running, first.waiting) == (
        "05-12 08:01:39",
        "000",
        9,
        0,
    )
    assert first.prompt_tokens_per_s == 6335.3
    assert first.swapped is None and first.preemptions is None


def test_two_lines_pasted_onto_one_keep_their_own_stamps(data: Path) -> None:
    stamps = [line.stamp for line in _lines(data, "v1-pasted-together.log")]
    assert stamps == ["07-28 06:40:59", "07-28 06:41:09", "07-28 06:41:19"]


def test_no_stats_in_other_lines(data: Path) -> None:
    assert stats_lines((LOGS / "cpu-0.32-ready-then-sigterm.log").read_text()) == []


def test_the_caps_a_startup_log_prints() -> None:
    text = (LOGS / "cpu-0.32-batched-below-seqs.log").read_text(encoding="utf-8")
    said = reported(read_lines(text))
    assert (said.max_num_seqs, said.max_num_batched_tokens) == (512, 256)
    found = caps.from_log(text)
    assert (found.max_num_seqs, found.source) == (512, "log")
    ready = (LOGS / "cpu-0.32-ready-then-sigterm.log").read_text(encoding="utf-8")
    assert caps.from_log(ready).max_model_len == 1024
