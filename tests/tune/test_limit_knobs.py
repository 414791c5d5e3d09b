"""Which limit a failing probe's /metrics point to, and which knob move each limit asks for."""

from __future__ import annotations

import pytest

from servetune.errors import UsageError
from servetune.measure.server_metrics import MetricsSample
from servetune.tune import knobs
from servetune.tune.limit import LoadSignals, diagnose, signals


def load(running: float, waiting: float, kv: float, preempted: float = 0) -> LoadSignals:
    return LoadSignals(10, running, running, waiting, waiting, kv, preempted)


def limit_of(signals_: LoadSignals | None, users: int = 30, lag: float | None = 0.001) -> str:
    return diagnose(
        signals_, users=users, max_num_seqs=32, client_lag_p99_s=lag, tightest_slo_s=0.05
    )


def test_each_limit_from_its_signature() -> None:
    assert limit_of(load(20, 10, 0.99, preempted=3)) == "kv-cache"
    assert limit_of(load(20, 10, 1.0)) == "kv-cache"  # full cache, a queue, free slots
    assert limit_of(load(32, 8, 0.6)) == "max-num-seqs"
    assert limit_of(load(12, 20, 0.4)) == "max-num-batched-tokens"
    assert limit_of(load(12, 20, 0.95)) == "kv-cache"  # waiting for blocks, not for budget
    assert limit_of(load(32, 0.5, 0.6)) == "compute"  # a request now and then between steps
    assert limit_of(None) == "compute"
    assert limit_of(load(32, 0.5, 0.6), lag=0.02) == "client"  # 20 ms lag vs a 50 ms target
    assert limit_of(load(12, 20, 0.4), lag=0.02) == "max-num-batched-tokens"  # server evidence
    assert limit_of(None, lag=0.02) == "client"
    # More users than slots: the cap holds requests back even when the gauges look calm or
    # read nothing (requests shorter than the scrape interval).
    assert limit_of(load(32, 0.2, 0.3), users=40) == "max-num-seqs"
    assert limit_of(load(0, 0, 0), users=40) == "max-num-seqs"
    assert limit_of(load(0, 0, 0), users=20) == "compute"


def test_signals_summarize_samples() -> None:
    samples = [
        MetricsSample(0.0, 4, 0, 0.2, 5),
        MetricsSample(0.5, 8, 4, 0.9, 7),
        MetricsSample(1.0, None, None, None, None),
    ]
    s = signals(samples)
    assert (s.peak_running, s.mean_running, s.mean_waiting) == (8, 6, 2)
    assert (s.peak_kv_cache_usage, s.preemptions, s.samples) == (0.9, 2, 3)


def test_step_walks_the_candidates() -> None:
    values = ("256", "512", "2048")
    assert knobs.step(values, "512", "up") == "2048"
    assert knobs.step(values, "64", "up") == "256"  # below the list: its first value
    assert knobs.step(values, "256", "down") is None
    assert knobs.step(("auto", "fp8"), "auto", "up") == "fp8"


def test_moves_start_with_what_the_limit_points_to() -> None:
    flags = {knobs.SEQS: "256", knobs.BATCHED: "256", knobs.UTIL: "0.9", knobs.KV_DTYPE: "auto"}
    values = {
        knobs.SEQS: ("32", "64", "256"),
        knobs.BATCHED: ("256", "512", "1024"),
        knobs.UTIL: ("0.9", "0.95"),
        knobs.KV_DTYPE: ("auto", "fp8"),
    }
    first = {
        limit: knobs.moves(limit, flags, values)[0]
        for limit in ("max-num-batched-tokens", "kv-cache", "max-num-seqs", "failed-start")
    }
    assert (first["max-num-batched-tokens"].flag, first["max-num-batched-tokens"].value) == (
        knobs.BATCHED,
        "512",
    )
    assert (first["kv-cache"].flag, first["kv-cache"].value) == (knobs.UTIL, "0.95")
    failed = knobs.moves("failed-start", {**flags, knobs.UTIL: "0.95"}, values)[0]
    assert (failed.flag, failed.value) == (knobs.UTIL, "0.9")
    every = knobs.moves("kv-cache", flags, values)
    assert len({(m.flag, m.value) for m in every}) == len(every)  # no move twice
    assert {m.flag for m in every} == set(values)  # then every knob's neighbours
    assert knobs.moves("client", flags, values)[0].why == "exploring"


def test_parse_knob() -> None:
    assert knobs.parse_knob("max-num-seqs=64,128") == ("--max-num-seqs", ("64", "128"))
    assert knobs.parse_knob("--kv-cache-dtype=auto,fp8")[0] == "--kv-cache-dtype"
    for bad in ("max-num-seqs", "=1,2", "max-num-seqs="):
        with pytest.raises(UsageError):
            knobs.parse_knob(bad)


def test_the_trial_limit_is_the_failing_probes_majority() -> None:
    from pathlib import Path

    from servetune.measure.workload import WorkloadSpec
    from servetune.tune.capacity import Probe
    from servetune.tune.trial import Targets, TrialSpec, _limit

    spec = TrialSpec(
        0,
        ("vllm",),
        {},
        "m",
        WorkloadSpec(),
        "/v1/completions",
        0,
        Targets({"ttft": 400.0}),
        Path(),
        "vllm",
        max_num_seqs=32,
    )

    def probe(users: int, signals_: LoadSignals | None) -> Probe:
        return Probe(
            users,
            0,
            50,
            0,
            {"ttft": 900.0},
            {"ttft": (30, 50)},
            None,
            None,
            1.0,
            None,
            False,
            0.99,
            signals_,
            0.001,
        )

    thin = probe(30, None)  # a probe whose /metrics samples were lost: "compute" alone
    starved = [probe(u, load(12, 20, 0.4)) for u in (32, 36)]
    assert _limit(spec, [thin, *starved]) == "max-num-batched-tokens"
    assert _limit(spec, [thin, probe(32, load(12, 20, 0.4))]) == "compute"  # a tie: lowest load
