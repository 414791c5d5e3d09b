"""Every load-test metric servetune reports, with its formula. Times are seconds unless a name
says `_ms`. Definitions follow `vllm bench serve` (../shared/reference/bench-clients.md section
2) so the numbers can stand next to its numbers; where servetune differs it says so here.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PERCENTILES = (50, 90, 95, 99)


@dataclass(frozen=True)
class Distribution:
    """Summary of one metric over many samples (the only distribution type in servetune).

    Percentiles are linear interpolations between order statistics (numpy's default method,
    the one vLLM uses). `std` is the population standard deviation, as numpy.std computes it.
    An empty sample gives None for every statistic, never 0.
    """

    count: int
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    percentiles: dict[int, float]

    @property
    def median(self) -> float | None:
        return self.percentiles.get(50)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Linear interpolation: rank = p/100 x (n - 1) between the neighbouring order statistics."""
    if not sorted_values:
        raise ValueError("percentile of an empty sample")
    rank = p / 100 * (len(sorted_values) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = rank - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def distribution(values: Iterable[float], percentiles: Sequence[int] = PERCENTILES) -> Distribution:
    data = sorted(values)
    if not data:
        return Distribution(0, None, None, None, None, {})
    mean = math.fsum(data) / len(data)
    deviations = [x - mean for x in data]
    return Distribution(
        count=len(data),
        mean=mean,
        std=math.sqrt(math.fsum(map(operator.mul, deviations, deviations)) / len(data)),
        min=data[0],
        max=data[-1],
        percentiles={p: percentile(data, p) for p in percentiles},
    )


def ttft(sent_at: float, first_content_at: float) -> float:
    """Time to first token: send -> first chunk carrying generated content.

    A chat stream's role-only first delta (`{"role": "assistant", "content": ""}`) carries no
    content and does not count; neither do empty completion texts. (vLLM's chat client counts
    the role chunk, which makes its chat TTFT near zero on servers that send it early.)
    """
    return first_content_at - sent_at


def e2el(sent_at: float, last_content_at: float) -> float:
    """End-to-end latency: send -> last chunk carrying content (usage and [DONE] ignored)."""
    return last_content_at - sent_at


def tpot(e2el_s: float, ttft_s: float, output_tokens: int) -> float | None:
    """Time per output token after the first: (E2EL - TTFT) / (output_tokens - 1).

    One value per request; undefined (None) for outputs of fewer than 2 tokens.
    """
    if output_tokens < 2:
        return None
    return (e2el_s - ttft_s) / (output_tokens - 1)


def itl_gaps(content_times: Sequence[float]) -> list[float]:
    """Inter-token latency as vLLM reports it: the gaps between consecutive content chunks.

    Pooled across requests, one value per chunk, so long outputs weigh more. With multi-token
    chunks (speculative decoding, stream intervals) a gap covers several tokens: see
    `itl_per_token`.
    """
    return [b - a for a, b in itertools.pairwise(content_times)]


def itl_per_token(gaps: Sequence[float], tokens_per_chunk: Sequence[float]) -> list[float]:
    """Per-token ITL: each chunk gap spread evenly over the tokens the later chunk carried.

    A gap g before a chunk of k tokens contributes k values of g / k. `tokens_per_chunk[i]`
    belongs to the chunk that ends gap i. Chunks with no known token count count as 1.
    """
    n = min(len(gaps), len(tokens_per_chunk))
    if list(tokens_per_chunk[:n]).count(1) == n:  # one token per chunk: the gaps themselves
        return list(gaps[:n])
    out: list[float] = []
    for gap, tokens in zip(gaps, tokens_per_chunk, strict=False):
        k = max(1, round(tokens))
        out.extend([gap / k] * k)
    return out


def throughput(count: float, duration_s: float) -> float | None:
    """count / duration; None when the duration is not positive."""
    return count / duration_s if duration_s > 0 else None


def peak_per_window(events: Iterable[tuple[float, float]], window_s: float = 1.0) -> float | None:
    """Largest sum of event weights in any aligned window of `window_s` (time, weight) pairs.

    Used for peak output tok/s (weights = tokens of a chunk at its arrival time), counting
    tokens rather than chunks (vLLM counts chunks).
    """
    buckets: defaultdict[float, float] = defaultdict(float)
    for at, weight in events:
        buckets[at // window_s] += weight
    return max(buckets.values()) / window_s if buckets else None


def peak_concurrency(intervals: Iterable[tuple[float, float]]) -> int:
    """Most requests in flight at once: a sweep over (start, end) intervals."""
    points: list[tuple[float, int]] = []
    for start, end in intervals:
        points.extend([(start, 1), (end, -1)])
    points.sort(key=lambda p: (p[0], p[1]))  # an end before a start at the same instant
    running = best = 0
    for _, delta in points:
        running += delta
        best = max(best, running)
    return best


def meets_slo(
    slo_ms: dict[str, float], ttft_s: float | None, tpot_s: float | None, e2el_s: float | None
) -> bool:
    """Goodput test for one successful request: every given SLO (ms) holds.

    As in vLLM, a request whose TPOT is undefined (1-token output) counts TPOT as 0.
    """
    values = {"ttft": ttft_s, "tpot": tpot_s if tpot_s is not None else 0.0, "e2el": e2el_s}
    for key, limit in slo_ms.items():
        value = values[key]
        if value is None or value * 1000 > limit:
            return False
    return True
