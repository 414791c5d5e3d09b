"""The paired interval and the verdicts of `servetune quality`."""

from __future__ import annotations

import random

import pytest

from servetune.quality.stats import PairedTable, paired_difference


def test_identical_answers_on_few_questions_are_insufficient_and_say_how_many_would_settle() -> (
    None
):
    result = paired_difference(PairedTable(7, 0, 0, 3), tolerance_pct_points=2)
    assert result.difference_pct_points == 0
    assert result.ci_low is not None and result.ci_low < -2 < 0 < (result.ci_high or 0)
    assert result.verdict == "insufficient-data"
    assert result.questions_to_settle is not None and result.questions_to_settle > 10


def test_identical_answers_on_many_questions_show_no_detectable_loss() -> None:
    result = paired_difference(PairedTable(800, 0, 0, 200), tolerance_pct_points=2)
    assert result.verdict == "no-detectable-loss"
    assert result.ci_low is not None and -2 < result.ci_low < 0


def test_a_clear_loss_is_worse_and_a_clear_gain_better() -> None:
    worse = paired_difference(PairedTable(150, 40, 5, 5), tolerance_pct_points=2)
    assert worse.verdict == "worse"
    assert worse.difference_pct_points == pytest.approx(-17.5)
    assert worse.ci_high is not None and worse.ci_high < 0
    better = paired_difference(PairedTable(150, 5, 40, 5), tolerance_pct_points=2)
    assert better.verdict == "better"


def test_no_questions_answered_is_insufficient_with_nulls() -> None:
    result = paired_difference(PairedTable(0, 0, 0, 0), 2)
    assert (result.difference_pct_points, result.ci_low, result.ci_high) == (None, None, None)
    assert result.verdict == "insufficient-data"


def test_the_interval_covers_the_true_difference_about_95_percent_of_the_time() -> None:
    """Simulated pairs with a known true difference of -3 points: coverage near 95%."""
    rng = random.Random(7)
    n, trials, covered = 300, 400, 0
    for _ in range(trials):
        cells = [0, 0, 0, 0]  # both right, only before, only after, both wrong
        for _ in range(n):
            u = rng.random()
            cells[0 if u < 0.70 else 1 if u < 0.75 else 2 if u < 0.77 else 3] += 1
        result = paired_difference(PairedTable(*cells), 2)
        assert result.ci_low is not None and result.ci_high is not None
        covered += result.ci_low <= -3.0 <= result.ci_high
    assert 0.91 <= covered / trials <= 0.99
