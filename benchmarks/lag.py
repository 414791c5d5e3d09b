"""Measuring a load-test client from the outside: send lag against an ideal schedule, CPU share.

Used by bench_client.py. The lag of a client's sends is measured where the requests arrive (the
stub stamps each POST with `time.perf_counter`), the same way for every client.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Sequence

SAMPLE_EVERY_S = 0.05


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def send_lags(arrivals: Sequence[float], rate: float) -> list[float]:
    """Each arrival's lag behind an evenly spaced schedule placed as early as the data allow:
    arrivals a_i sorted, offsets o_i = (i + 1) / rate, origin t0 = min(a_i - o_i),
    lag_i = a_i - (t0 + o_i). Sorted."""
    ordered = sorted(arrivals)
    offsets = [(i + 1) / rate for i in range(len(ordered))]
    t0 = min(a - o for a, o in zip(ordered, offsets, strict=True))
    return sorted(a - (t0 + o) for a, o in zip(ordered, offsets, strict=True))


class CpuSampler:
    """Samples a CPU clock (seconds) every SAMPLE_EVERY_S in a thread, with perf_counter stamps."""

    def __init__(self, read: Callable[[], float]) -> None:
        self._read = read
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            try:
                self.samples.append((time.perf_counter(), self._read()))
            except (OSError, ValueError):  # the process or thread is gone
                return
            if self._stop.wait(SAMPLE_EVERY_S):
                return

    def cpu_at(self, t: float) -> float:
        """The clock at t, linearly interpolated between samples."""
        samples = list(self.samples)
        if not samples:
            return 0.0
        if t <= samples[0][0]:
            return samples[0][1]
        for (t0, c0), (t1, c1) in itertools.pairwise(samples):
            if t0 <= t <= t1:
                return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c1
        return samples[-1][1]

    def share(self, start: float, end: float) -> float:
        """CPU seconds per wall second (1.0 = one core) between start and end."""
        if end <= start:
            return 0.0
        return (self.cpu_at(end) - self.cpu_at(start)) / (end - start)

    def peak(self, since: float, window_s: float = 1.0) -> float:
        """The highest share over any window_s-long stretch after `since`."""
        stamps = [t for t, _ in self.samples if t >= since]
        if not stamps:
            return 0.0
        ends = [t for t in stamps if t + window_s <= stamps[-1]] or stamps[:1]
        return max(self.share(t, min(t + window_s, stamps[-1])) for t in ends)


def thread_cpu_reader(name: str) -> Callable[[], float]:
    """The CPU clock of this process's thread called `name`."""
    thread = next(t for t in threading.enumerate() if t.name == name)
    if thread.ident is None:
        raise RuntimeError(f"thread {name!r} is not running")
    clock = time.pthread_getcpuclockid(thread.ident)
    return lambda: time.clock_gettime(clock)
