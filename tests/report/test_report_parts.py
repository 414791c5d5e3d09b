"""The report's pieces on their own: tick values, CDF points, tokens/s and requests in flight
over a run, vLLM's time stamps across a new year, the rebuilt command lines, and a tune
directory read back."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

from servetune.judge.runs import load_side
from servetune.render.report_bench import cdf_points, in_flight, token_rate
from servetune.render.report_postmortem import Clock, when
from servetune.render.report_runs import Request, measured_at, provenance
from servetune.render.report_svg import nice_ticks, tick_text
from servetune.render.report_tune import load_tune


def test_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0, 97) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(-106.5, 45.2, 6) == [-150, -100, -50, 0, 50]
    assert nice_ticks(5, 5) == [5, 6, 7, 8, 9, 10]  # one value: a range around it, not a crash
    assert [tick_text(v) for v in (0, 0.25, 12.0, 5000.0)] == ["0", "0.25", "12", "5,000"]
    assert tick_text(0.5, percent=True) == "50%"


def test_cdf_points_are_few_ordered_and_end_at_one() -> None:
    values = [i / 1000 for i in range(5000)]
    points = cdf_points(values)
    assert len(points) <= 302 and points[-1] == (4999.0, 1.0)
    assert all(a[0] <= b[0] and a[1] < b[1] for a, b in itertools.pairwise(points))
    assert cdf_points([]) == ()


def test_tokens_per_second_and_requests_in_flight_follow_the_requests() -> None:
    one = Request(sent_s=0.0, ttft_s=1.0, e2el_s=3.0, itls_s=(1.0, 1.0), output_tokens=3)
    two = Request(sent_s=1.0, ttft_s=0.5, e2el_s=1.0, itls_s=(), output_tokens=2)
    rate = token_rate([one, two], bins=3)
    assert sum(r for _, r in rate) * 1.0 == pytest.approx(5)  # 5 tokens over 3 one-second bins
    assert in_flight([one, two]) == ((0.0, 0.0), (0.0, 1.0), (1.0, 2.0), (2.0, 1.0), (3.0, 0.0))
    unsent = Request(sent_s=None, ttft_s=0.1, e2el_s=0.2, itls_s=(), output_tokens=1)
    assert token_rate([unsent]) == () and in_flight([unsent]) == ((0.0, 0.0),)


def test_vllm_stamps_cross_a_new_year_and_seconds_lose_a_negative_zero() -> None:
    clock = Clock()
    first, second = clock.seconds("12-31 23:59:59"), clock.seconds("01-01 00:00:01")
    assert first is not None and second is not None and second - first == 2
    assert clock.seconds("not a stamp") is None and clock.seconds(True) is None
    assert when(-0.0) == "0" and when(10.319) == "10.319" and when(None) == "?"


def test_measured_at_reads_the_files_date() -> None:
    assert measured_at("20260101-093000") == "2026-01-01 09:30:00"
    assert measured_at("yesterday") == "yesterday" and measured_at(None) is None


def test_the_bench_command_is_rebuilt_without_defaults(data: Path, tmp_path: Path) -> None:
    doc = json.loads((data / "before" / "run-1.json").read_text(encoding="utf-8"))
    doc["servetune"]["config"]["duration_s"] = 30.0
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    found = provenance(load_side([path]).runs[0], doc)
    bench = found.commands[0]
    assert bench.startswith("servetune bench --base-url http://127.0.0.1:")
    assert "--duration 30" in bench and "--num-prompts" not in bench  # they exclude each other
    assert "--endpoint" not in bench and "--burstiness" not in bench  # defaults left out
    assert "--ignore-eos" in bench and found.rebuilt


def test_a_tune_directory_without_its_trial_files_reads_from_tune_json(tune_dir: Path) -> None:
    full = load_tune(tune_dir)
    shutil.rmtree(tune_dir / "trials")
    bare = load_tune(tune_dir)
    assert [t.flags for t in bare.trials] == [t.flags for t in full.trials]
    assert [t.status for t in bare.trials] == [t.status for t in full.trials]
    assert bare.best is not None and full.best is not None
    assert bare.best.index == full.best.index and not bare.best.probes
    assert bare.config.targets == full.config.targets
    assert bare.commands == full.commands
