"""The paired comparison of two graders' results on the same questions.

Each question answered by both servers falls in one cell of a 2x2 table: both right (a), only
before right (b), only after right (c), both wrong (d); n = a + b + c + d.

- difference (percentage points) = 100 x (c - b) / n: after's accuracy minus before's on the
  same questions.
- interval: the Agresti-Min adjusted Wald interval for a paired difference of proportions
  (Agresti & Min, Statistics in Medicine 2005): add 1/2 to each cell, then
  d' = (c' - b') / n',  se = sqrt((b' + c') - (c' - b')^2 / n') / n',  d' +/- z se.
  The adjustment keeps the interval honest when no question differs (a plain Wald interval would
  shrink to zero width on ten identical answers).
- verdict: `worse` when the interval lies below 0, `better` when above, `no-detectable-loss` when
  its lower end is above -tolerance, else `insufficient-data`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

Verdict = Literal["no-detectable-loss", "worse", "better", "insufficient-data"]
CONFIDENCE = 0.95


@dataclass(frozen=True)
class PairedTable:
    """Counts of the 2x2 table over questions both servers answered."""

    both_right: int
    only_before: int
    only_after: int
    both_wrong: int

    @property
    def n(self) -> int:
        return self.both_right + self.only_before + self.only_after + self.both_wrong

    @property
    def agreement(self) -> float | None:
        """Share of questions both graded alike (both right or both wrong)."""
        return None if self.n == 0 else (self.both_right + self.both_wrong) / self.n


@dataclass(frozen=True)
class PairedDifference:
    """After minus before in percentage points, with its interval and verdict."""

    difference_pct_points: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: Verdict
    questions_to_settle: int | None


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def paired_difference(
    table: PairedTable, tolerance_pct_points: float, confidence: float = CONFIDENCE
) -> PairedDifference:
    """The difference, its Agresti-Min interval, the verdict, and (when undecided) about how many
    questions in all would settle it at the discordance seen so far."""
    n = table.n
    if n == 0:
        return PairedDifference(None, None, None, "insufficient-data", None)
    z = _z(confidence)
    b, c = table.only_before + 0.5, table.only_after + 0.5
    n_adj = n + 2.0
    diff_adj = (c - b) / n_adj
    se = math.sqrt(max((b + c) - (c - b) ** 2 / n_adj, 0.0)) / n_adj
    low, high = 100 * (diff_adj - z * se), 100 * (diff_adj + z * se)
    difference = 100 * (table.only_after - table.only_before) / n
    verdict = _verdict(low, high, tolerance_pct_points)
    settle = None
    if verdict == "insufficient-data":
        settle = questions_to_settle(table, tolerance_pct_points, z)
    return PairedDifference(round(difference, 4), round(low, 4), round(high, 4), verdict, settle)


def _verdict(low: float, high: float, tolerance: float) -> Verdict:
    if high < 0:
        return "worse"
    if low > 0:
        return "better"
    if low > -tolerance:
        return "no-detectable-loss"
    return "insufficient-data"


def questions_to_settle(table: PairedTable, tolerance: float, z: float) -> int | None:
    """Questions (in all) at which the interval would exclude -tolerance (or 0, for a loss larger
    than the tolerance), if the shares seen so far held. None when nothing would settle it."""
    n = table.n
    # The discordant share, kept away from 0 so that an all-agree sample still asks for a size.
    discordant = (table.only_before + table.only_after + 1) / (n + 2)
    diff = (table.only_after - table.only_before) / n
    spread = math.sqrt(max(discordant - diff**2, 1e-9))
    margin = (diff + tolerance / 100) if diff > -tolerance / 100 else -diff
    if margin <= 0:
        return None
    return max(n + 1, math.ceil((z * spread / margin) ** 2))
