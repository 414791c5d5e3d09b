"""plan's error against published vLLM benchmark results stays within what was measured.

tests/data/published_vllm_benchmarks.json holds results copied from public sources (each record
has its URL). The default step-time constants were fitted on the 'calibration' records only;
the 'held-out' records were never used for fitting. These tests predict every record with the
defaults (pure simulation, no timing) and fail when the error grows past the figures
benchmarks/plan_accuracy.py measured and the README quotes (a little margin for seeds).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from servetune.plan import accuracy

DATA = Path(__file__).resolve().parents[1] / "data" / "published_vllm_benchmarks.json"

# median / worst |relative error| measured with the defaults (README "Plan", accuracy), + margin
HELD_OUT_LIMITS = {
    "output_throughput": (0.092, 0.533),
    "mean_tpot_ms": (0.252, 0.369),
}
CALIBRATION_LIMITS = {
    "output_throughput": (0.058, 0.128),
    "mean_tpot_ms": (0.064, 0.101),
}
MARGIN = 0.03


@pytest.fixture(scope="module")
def cases() -> list[accuracy.Case]:
    return accuracy.published_cases(DATA)


def _spread(cases: list[accuracy.Case], group: str) -> dict[str, accuracy.Spread]:
    return accuracy.spread(accuracy.errors(c) for c in accuracy.in_group(cases, group))


def test_every_record_names_its_source_and_a_group(cases: list[accuracy.Case]) -> None:
    assert len(cases) >= 20
    assert all(c.source.startswith("https://") for c in cases)
    assert {c.group for c in cases} == {"calibration", "held-out"}
    assert len(accuracy.in_group(cases, "held-out")) >= len(cases) // 2


@pytest.mark.parametrize(
    ("group", "limits"),
    [("held-out", HELD_OUT_LIMITS), ("calibration", CALIBRATION_LIMITS)],
)
def test_the_uncalibrated_error_stays_within_what_was_measured(
    cases: list[accuracy.Case], group: str, limits: dict[str, tuple[float, float]]
) -> None:
    spread = _spread(cases, group)
    for metric, (median, worst) in limits.items():
        assert spread[metric].median <= median + MARGIN, (metric, spread[metric])
        assert spread[metric].worst <= worst + MARGIN, (metric, spread[metric])


def test_an_error_is_signed_and_relative(cases: list[accuracy.Case]) -> None:
    case = cases[0]
    doubled = accuracy.Case(
        case.name, case.setup, case.load, {k: 2 * v for k, v in case.measured.items()}
    )
    plain, halved = accuracy.errors(case), accuracy.errors(doubled)
    for metric, error in plain.items():
        assert halved[metric] == pytest.approx((1 + error) / 2 - 1)
