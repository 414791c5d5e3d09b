"""The limit of a window: each id from its signals, the order between them, the dominant one;
the ids and thresholds shared with tune."""

from __future__ import annotations

from dataclasses import replace
from typing import get_args

import pytest

from servetune.judge.advice import ServerLimit
from servetune.monitor.caps import Caps
from servetune.monitor.limits import LIMITS, diagnose, dominant
from servetune.monitor.window import Signals
from servetune.tune import limit as tune_limit

CAPS = Caps(max_num_seqs=64, max_num_batched_tokens=2048, source="serve-command")
CALM = Signals(
    points=10,
    seconds=20.0,
    running=8.0,
    waiting=0.0,
    kv_cache_usage=0.3,
    mean_running=8.0,
    peak_running=8.0,
    low_running=6.0,
    mean_waiting=0.0,
    peak_waiting=0.0,
    peak_kv_cache_usage=0.3,
)
QUEUE = replace(CALM, waiting=12.0, mean_waiting=12.0, peak_waiting=15.0)


def test_the_shared_ids_are_tunes() -> None:
    shared = set(get_args(ServerLimit))
    assert shared <= set(tune_limit.LIMITS)
    assert shared <= set(LIMITS)
    assert set(LIMITS) - shared == {"none", "admission", "deferred", "stalled", "unknown"}


@pytest.mark.parametrize(
    ("signals", "caps", "limit"),
    [
        (CALM, CAPS, "none"),
        (replace(CALM, running=0.0, peak_running=0.0, low_running=0.0), CAPS, "none"),
        (replace(CALM, points=0), CAPS, "unknown"),
        (replace(CALM, preemptions_per_s=0.5), CAPS, "kv-cache"),
        (replace(QUEUE, peak_kv_cache_usage=0.97), CAPS, "kv-cache"),
        (replace(QUEUE, peak_running=64.0), CAPS, "max-num-seqs"),
        (replace(QUEUE, peak_running=30.0), CAPS, "max-num-batched-tokens"),
        (replace(QUEUE, peak_running=8.0, low_running=8.0), Caps(), "max-num-seqs"),
        (QUEUE, Caps(), "unknown"),
        (replace(QUEUE, peak_running=300.0), CAPS, "unknown"),  # not this server's cap
        (replace(CALM, itl_rise=(2.0, 20.0, 8.0, 45.0)), CAPS, "compute"),
        (replace(CALM, itl_rise=(2.0, 20.0, 8.0, 22.0)), CAPS, "none"),
        (replace(QUEUE, admission_rejections_per_s=3.0, preemptions_per_s=1.0), CAPS, "admission"),
        (replace(QUEUE, mean_deferred=10.0), CAPS, "deferred"),
        (replace(QUEUE, stalled_s=75.0, preemptions_per_s=1.0), CAPS, "stalled"),
        (replace(QUEUE, stalled_s=30.0, peak_running=64.0), CAPS, "max-num-seqs"),
    ],
)
def test_each_limit(signals: Signals, caps: Caps, limit: str) -> None:
    assert diagnose(signals, caps).limit == limit


def test_evidence_and_next_step_name_the_cap() -> None:
    verdict = diagnose(replace(QUEUE, peak_running=64.0), CAPS)
    assert verdict.evidence.text() == "64 running at the cap of 64, 12 waiting, KV cache at 30%"
    assert verdict.next_step is not None
    assert verdict.next_step.text().startswith("Raise --max-num-seqs from 64 to 128")
    assert verdict.cap_confirmed is True
    unconfirmed = diagnose(replace(QUEUE, low_running=8.0), Caps())
    assert "cap unconfirmed" in unconfirmed.evidence.text()
    assert unconfirmed.cap_confirmed is False
    assert "上限未確認" in unconfirmed.evidence.text("zh-TW")


def test_the_data_parallel_engines_share_the_ceiling() -> None:
    caps = replace(CAPS, data_parallel_size=2)
    assert diagnose(replace(QUEUE, peak_running=64.0), caps).limit == "max-num-batched-tokens"
    assert diagnose(replace(QUEUE, peak_running=128.0), caps).limit == "max-num-seqs"


def test_dominant_is_the_binding_limit_that_held_longest() -> None:
    assert dominant({"none": 300.0, "kv-cache": 20.0, "max-num-seqs": 40.0}) == "max-num-seqs"
    assert dominant({"none": 300.0, "unknown": 2.0}) == "none"
    assert dominant({"unknown": 2.0}) == "unknown"
    assert dominant({"kv-cache": 20.0, "max-num-seqs": 20.0}) == "kv-cache"  # the earlier id
