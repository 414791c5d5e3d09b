"""Calibration recovers constants it was not told, from runs simulated with them."""

from __future__ import annotations

import pytest

from servetune.plan import calibrate, predict, step_time
from servetune.plan.simulate import Load
from servetune.review.check import CheckOptions, check_text


def _setup() -> predict.Setup:
    report = check_text(
        "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096",
        CheckOptions(gpus="1xA100-80GB", vllm_version="0.33.0"),
    )
    return predict.setup(report)


def test_nelder_mead_finds_the_minimum_of_a_bowl() -> None:
    best, evaluations = calibrate.nelder_mead(
        lambda x: (x[0] - 1) ** 2 + (x[1] + 2) ** 2, [0.0, 0.0]
    )
    assert best == pytest.approx([1.0, -2.0], abs=1e-2)
    assert evaluations < 200


def test_a_fit_reproduces_runs_made_with_hidden_constants_and_predicts_a_new_load() -> None:
    hidden = step_time.Efficiency(
        bandwidth=0.45, compute=0.35, step_overhead_s=0.009, per_seq_s=4e-5
    )
    base = _setup()

    def measured(load: Load) -> dict[str, float]:
        """What a run made with the hidden constants would report."""
        return calibrate.predicted(calibrate.Observation(base, load, {}), hidden)

    loads = [Load(1000, 200, 300, concurrency=4), Load(1000, 200, 300, concurrency=48)]
    observations = [
        calibrate.Observation(base, load, measured(load), f"c{load.concurrency}") for load in loads
    ]
    fitted = calibrate.fit(observations)
    assert fitted.efficiency != step_time.Efficiency()
    for errors in fitted.errors.values():
        assert abs(errors["output_throughput"]) < 0.05
        assert abs(errors["mean_tpot_ms"]) < 0.05
    held_out = Load(1000, 200, 300, concurrency=16)
    got = calibrate.predicted(calibrate.Observation(base, held_out, {}), fitted.efficiency)
    want = measured(held_out)
    assert got["output_throughput"] == pytest.approx(want["output_throughput"], rel=0.1)
    assert got["mean_tpot_ms"] == pytest.approx(want["mean_tpot_ms"], rel=0.1)
