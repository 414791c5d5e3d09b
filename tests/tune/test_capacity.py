"""Capacity search on fake probes: grow, bisect, resolution, confidence, unreachable targets."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from servetune.measure.workload import WorkloadSpec
from servetune.tune import capacity as cap
from servetune.tune.limit import LoadSignals
from servetune.tune.trial import Targets, TrialSpec, measure


def fake_probe(true_capacity: int, seen: list[int]) -> cap.Search:
    def probe(users: int) -> cap.Probe:
        seen.append(users)
        ok = users <= true_capacity
        over = 0 if ok else 20
        misses = {"ttft": (over, 50)}
        passed, sure = cap.verdict(misses, 0, 90)
        return cap.Probe(
            users,
            0,
            50,
            0,
            {"ttft": 100.0 if ok else 900.0},
            misses,
            10.0 * users,
            users / 2,
            1.0,
            None,
            passed,
            sure,
        )

    return cap.Search(probe=probe)


def test_requests_needed_follows_the_percentile() -> None:
    assert cap.requests_needed(99) == 500
    assert cap.requests_needed(90) == 50
    assert cap.requests_needed(50) == 10


@pytest.mark.parametrize("truth", [1, 5, 8, 37, 100, 300])
def test_search_finds_the_capacity_within_its_resolution(truth: int) -> None:
    seen: list[int] = []
    found, probes = fake_probe(truth, seen).run()
    assert found.max_concurrency <= truth
    assert truth - found.max_concurrency <= max(1, math.floor(cap.RESOLUTION * truth))
    assert found.first_failing is not None and found.first_failing > truth
    assert len(probes) == len(seen) <= 2 * math.log2(truth + 8) + 2  # grow + bisect, no scan
    assert found.output_throughput == pytest.approx(10.0 * found.max_concurrency)
    assert found.sure is not None and found.sure > 0.99  # 0 vs 20 misses in 50: clear-cut


def test_targets_missed_at_one_user_give_zero() -> None:
    seen: list[int] = []
    found, _ = fake_probe(0, seen).run()
    assert found.max_concurrency == 0 and found.first_failing == 1
    assert seen == [8, 4, 2, 1]


def test_verdict_uses_the_percentile_rank_and_says_how_sure() -> None:
    # p90 over 51 values: rank 0.9 x 50 = 45, so up to 5 values may exceed the target.
    assert cap.verdict({"ttft": (5, 51)}, 0, 90)[0] is True
    assert cap.verdict({"ttft": (6, 51)}, 0, 90)[0] is False
    clear_pass = cap.verdict({"ttft": (0, 51)}, 0, 90)[1]
    edge_pass = cap.verdict({"ttft": (5, 51)}, 0, 90)[1]
    assert clear_pass > 0.99 > edge_pass > 0.3
    assert cap.verdict({"ttft": (0, 51), "tpot": (30, 51)}, 0, 90)[0] is False
    assert cap.verdict({"ttft": (0, 45)}, 6, 90)[0] is False  # failed requests miss every target


def test_binomial_cdf_matches_known_values() -> None:
    assert cap.binomial_cdf(0, 10, 0.5) == pytest.approx(1 / 1024)
    assert cap.binomial_cdf(5, 10, 0.5) == pytest.approx(638 / 1024)
    assert cap.binomial_cdf(10, 10, 0.5) == 1.0


def test_a_trial_repeats_at_its_capacity_and_names_unreachable_targets(tmp_path: Path) -> None:
    spec = TrialSpec(
        0,
        ("vllm",),
        {"--max-num-seqs": "8"},
        "m",
        WorkloadSpec(),
        "/v1/completions",
        0,
        Targets({"ttft": 400.0}),
        tmp_path,
        "vllm",
        repeats=3,
        max_num_seqs=8,
    )
    calls: list[tuple[int, int]] = []

    def prober(truth: int) -> Callable[[int, int], cap.Probe]:
        def probe(users: int, repeat: int) -> cap.Probe:
            calls.append((users, repeat))
            return _probe(users, truth, repeat)

        return probe

    result = measure(spec, prober(12))
    assert result.status == "ok" and result.capacity is not None
    assert result.capacity.max_concurrency == 12
    assert [c for c in calls if c[1] > 0] == [(12, 1), (12, 2)]  # repeats at the capacity
    assert result.limit == "max-num-seqs" and result.runs == len(calls)
    calls.clear()
    nothing = measure(spec, prober(0))
    assert nothing.status == "slo-unreachable" and nothing.limit == "slo-unreachable"
    assert all(repeat == 0 for _, repeat in calls)


def _probe(users: int, truth: int, repeat: int) -> cap.Probe:
    ok = users <= truth
    misses = {"ttft": (0 if ok else 30, 50)}
    passed, sure = cap.verdict(misses, 0, 99)
    load = LoadSignals(8, 8, 8, 20, 10, 0.4, 0)  # every slot busy, a queue, KV room
    return cap.Probe(
        users,
        repeat,
        50,
        0,
        {"ttft": 300.0},
        misses,
        100.0,
        2.0,
        1.0,
        None,
        passed,
        sure,
        load,
        0.001,
    )
