"""The probes of a fake tune trial: a load ladder around a known capacity (half, at, one over,
double), the levels at or below it within the targets, shared by the tune and report tests."""

from __future__ import annotations

from pathlib import Path

from servetune.tune.capacity import Probe


def probes(capacity: int, result_file: Path | None = None) -> tuple[Probe, ...]:
    """Four probes; TTFT grows with the users and breaks its target past `capacity`."""
    levels = [capacity // 2, capacity, capacity + 1, 2 * capacity]
    return tuple(
        Probe(
            users,
            0,
            50,
            0,
            {"ttft": 100.0 * users / capacity, "tpot": 20.0},
            {"ttft": (0 if users <= capacity else 30, 50), "tpot": (0, 50)},
            50.0 * users,
            users / 4,
            2.0,
            None if result_file is None else str(result_file),
            users <= capacity,
            0.99,
        )
        for users in levels
    )
