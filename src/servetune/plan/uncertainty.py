"""How far off a prediction may be: an 80% interval from the held-out residuals of its group.

For each accuracy group (dense TP1, dense TP>1, MoE, AMD: `accuracy.kind_of`) and metric, the
10th and 90th percentiles of measured / predicted over the `held-out` records of the published
corpus (benchmarks/plan_accuracy.py --gpu prints them, "80% intervals") bound the measured
value of a new run of that group with 80% odds: predicted x low .. predicted x high. A
calibrated prediction (`plan --calibrate` on the user's own runs) is held to the calibration's
own largest error instead. Held-out records set only these widths, never a constant of the
model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from servetune.plan import accuracy, predict

# (low, high) factors on the prediction, per group and metric: the 10th and 90th percentiles
# of measured / predicted over the held-out records (benchmarks/plan_accuracy.py --gpu).
# A group with fewer than 5 held-out values of a metric borrows the widest group's factors.
_WIDEST = {  # a group with fewer than MIN_VALUES held-out figures of a metric: the widest
    "output_throughput": (0.38, 1.67),
    "mean_tpot_ms": (0.60, 3.12),
    "mean_ttft_ms": (0.26, 4.18),
}
FACTORS: dict[str, dict[str, tuple[float, float]]] = {
    "dense TP1": {
        "output_throughput": (0.73, 1.19),
        "mean_tpot_ms": (0.91, 1.83),
        "mean_ttft_ms": (0.65, 1.24),
    },
    "MoE": {
        "output_throughput": (0.38, 1.22),
        "mean_tpot_ms": (0.88, 2.80),
        "mean_ttft_ms": (0.76, 4.18),
    },
    "AMD": {
        "output_throughput": (0.57, 1.67),
        "mean_tpot_ms": (0.60, 3.12),
        "mean_ttft_ms": (0.26, 1.72),
    },
    "dense TP>1": {  # 34 held-out figures from two sources (vLLM 0.5.4 and 0.8.3 clusters)
        "output_throughput": (0.62, 1.06),
        "mean_tpot_ms": (0.76, 1.47),
        "mean_ttft_ms": (0.16, 0.98),
    },
}
COVERAGE = 0.80
MIN_VALUES = 5


@dataclass(frozen=True)
class Interval:
    """Where the measured value of one metric should fall, with `COVERAGE` odds."""

    low: float
    high: float

    def holds(self, value: float) -> bool:
        return self.low <= value <= self.high


def interval(
    kind: str, metric: str, predicted: float, calibrated_error: float | None = None
) -> Interval | None:
    """The 80% interval of one predicted figure of a configuration of group `kind`."""
    if not math.isfinite(predicted) or predicted <= 0:
        return None
    if calibrated_error is not None:
        spread = 1 + abs(calibrated_error)
        return Interval(predicted / spread, predicted * spread)
    low, high = FACTORS.get(kind, _WIDEST).get(metric, _WIDEST["output_throughput"])
    return Interval(predicted * low, predicted * high)


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def factors(cases: Sequence[accuracy.Case]) -> dict[str, dict[str, tuple[float, float]]]:
    """The (low, high) factors of each group and metric from measured / predicted over
    `cases` (the held-out records): the table `FACTORS` is this, rounded."""
    ratios: dict[str, dict[str, list[float]]] = {}
    for case in cases:
        for metric, error in accuracy.errors(case).items():
            if math.isfinite(error) and error > -1:
                ratios.setdefault(case.kind, {}).setdefault(metric, []).append(1 / (1 + error))
    tail = (1 - COVERAGE) / 2
    return {
        kind: {
            metric: (_quantile(values, tail), _quantile(values, 1 - tail))
            for metric, values in by_metric.items()
            if len(values) >= MIN_VALUES
        }
        for kind, by_metric in ratios.items()
    }


# the interval of each SLO target's figure: its own metric's factors (E2EL grows like TPOT)
_TARGET_METRIC = {"ttft": "mean_ttft_ms", "tpot": "mean_tpot_ms", "e2el": "mean_tpot_ms"}


def intervals(
    kind: str, prediction: predict.Prediction, calibrated_error: float | None = None
) -> dict[str, Interval]:
    """The 80% interval of each headline figure of a prediction (metric -> interval)."""
    figures = {
        "output_throughput": prediction.output_throughput,
        "mean_tpot_ms": prediction.mean_tpot_ms,
        "mean_ttft_ms": prediction.mean_ttft_ms,
    }
    out = {}
    for metric, value in figures.items():
        got = interval(kind, metric, value, calibrated_error)
        if got is not None:
            out[metric] = got
    return out


def verdict(
    outcome: predict.Outcome, slo: predict.Slo, kind: str, calibrated_error: float | None = None
) -> predict.Verdict | None:
    """The verdict, "marginal" too when a target sits inside its figure's 80% interval: the
    model cannot tell that it is met or missed."""
    if outcome.verdict is None or outcome.verdict == "marginal":
        return outcome.verdict
    p = outcome.prediction
    pairs = {
        "ttft": (p.slo_ttft_ms, slo.ttft_ms),
        "tpot": (p.slo_tpot_ms, slo.tpot_ms),
        "e2el": (p.slo_e2el_ms, slo.e2el_ms),
    }
    for key, (got, target) in pairs.items():
        if got is None or target is None:
            continue
        bounds = interval(kind, _TARGET_METRIC[key], got, calibrated_error)
        if bounds is not None and bounds.holds(target):
            return "marginal"
    return outcome.verdict
