"""Fitting the step-time model to runs measured on the user's own setup.

A measured run (a servetune or `vllm bench serve` result file) says, for one configuration and
one load, what the output throughput, mean TPOT and mean TTFT were. `fit` adjusts the four
constants of `step_time.Efficiency` so that the simulation reproduces them: it minimises the sum
of squared log-ratios (predicted / measured) over every run and metric (TTFT at half weight: it
carries queueing noise), with a Nelder-Mead search over the constants' logarithms inside stated
bounds. The fitted constants then predict other loads and configurations on the same hardware.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from servetune.plan import predict, step_time
from servetune.plan.simulate import Load

METRICS: dict[str, float] = {"output_throughput": 1.0, "mean_tpot_ms": 1.0, "mean_ttft_ms": 0.5}
# (low, high) of each constant. No kernel streams HBM above ~92% of its peak or runs dense GEMMs
# above ~85% of the tensor-core peak: higher values would mean the model misses work, not speed.
BOUNDS: dict[str, tuple[float, float]] = {
    "bandwidth": (0.02, 0.92),
    "compute": (0.02, 0.85),
    "step_overhead_s": (1e-4, 0.5),
    "per_seq_s": (1e-7, 5e-3),
    "request_overhead_s": (1e-5, 2.0),
    "compute_half_tokens": (1.0, 8192.0),
    "layer_s": (1e-7, 1e-3),
    "moe_layer_s": (1e-7, 2e-3),
    # vLLM's fused-MoE kernels, tuned per shape (benchmarks/kernels/benchmark_moe.py), stream
    # expert weights at no less than half the rate of dense GEMMs at decode batch sizes
    "moe_bandwidth": (0.5, 1.0),
    "moe_4bit_bandwidth": (0.5, 1.0),
    "frontend_s": (1e-7, 2e-3),
    "mla_layer_s": (1e-7, 1e-3),
    "moe_compute": (0.02, 1.0),
    "mla_seq_s": (1e-9, 1e-4),
    "rocm": (0.05, 1.0),
    "ampere": (0.5, 2.0),
    # ROCm's GEMMs relative to `compute` (0.376): up to the ~0.85 of the peak above
    "rocm_compute": (0.5, 2.26),
    "aiter_moe_bandwidth": (0.5, 1.0),
    # fused_moe_kernel on get_default_config's tiles, relative to the tuned configs' rate
    "moe_default_bandwidth": (0.05, 2.0),
    "rocm_v0": (0.05, 1.0),
    "rocm_prefix_attention": (0.01, 1.0),
}
# Fitted on the AMD fit records alone (benchmarks/plan_accuracy.py --fit), after the others:
# the V1 releases' three, then the two of the ROCm releases before 0.8.3 on theirs
ROCM_FITTED = ("rocm", "rocm_compute", "aiter_moe_bandwidth")
ROCM_V0_FITTED = ("rocm_v0", "rocm_prefix_attention")
# What `plan --calibrate` fits on a user's own runs: the five a few runs can tell apart.
USER_FITTED = ("bandwidth", "compute", "step_overhead_s", "per_seq_s", "request_overhead_s")
CALIBRATION_PROMPTS = 300  # requests simulated per run while fitting (enough for means)
# Nelder-Mead runs, each restarted from the last one's best point with this first step (in
# natural log units: 2.0 = x7.4, so that a constant decades away from its default is reached)
SIMPLEX_STEPS = (2.0, 0.7, 0.3)
Loss = Literal["squared", "absolute"]


@dataclass(frozen=True)
class Observation:
    """One measured run: the configuration, the load it was under, the metrics measured."""

    setup: predict.Setup
    load: Load
    measured: dict[str, float]
    source: str = ""


@dataclass(frozen=True)
class Fit:
    """The fitted constants and how well they reproduce the runs they were fitted on."""

    efficiency: step_time.Efficiency
    errors: dict[str, dict[str, float]]  # source -> metric -> relative error (pred/meas - 1)
    evaluations: int


def _to_efficiency(
    x: Sequence[float], start: step_time.Efficiency, names: Sequence[str]
) -> step_time.Efficiency:
    values = {
        name: min(max(math.exp(v), BOUNDS[name][0]), BOUNDS[name][1])
        for v, name in zip(x, names, strict=True)
    }
    return replace(start, **values)


def _from_efficiency(e: step_time.Efficiency, names: Sequence[str]) -> list[float]:
    return [math.log(max(float(getattr(e, name)), 1e-9)) for name in names]


def predicted(
    obs: Observation, efficiency: step_time.Efficiency, prompts: int | None = CALIBRATION_PROMPTS
) -> dict[str, float]:
    """The metrics the simulation gives for one observation under `efficiency` (at most
    `prompts` requests of it simulated; None: all of them)."""
    setup_ = replace(obs.setup, cost=obs.setup.cost.with_efficiency(efficiency))
    load = obs.load
    if prompts is not None:
        load = replace(load, num_prompts=min(load.num_prompts, prompts))
    p = predict.summarise(predict.run(setup_, load), setup_, predict.Slo())
    return {
        "output_throughput": p.output_throughput,
        "mean_tpot_ms": p.mean_tpot_ms,
        "mean_ttft_ms": p.mean_ttft_ms,
    }


def _loss(
    observations: Sequence[Observation],
    efficiency: step_time.Efficiency,
    loss: Loss = "squared",
    prompts: int | None = CALIBRATION_PROMPTS,
) -> float:
    """Sum over runs and metrics of the weighted log-ratio, squared (a user's few runs) or
    absolute (many published runs: a median fit that a few odd runs cannot pull)."""
    total = 0.0
    for obs in observations:
        got = predicted(obs, efficiency, prompts)
        for metric, weight in METRICS.items():
            want, have = obs.measured.get(metric), got.get(metric)
            if want and have and want > 0 and have > 0 and math.isfinite(have):
                miss = abs(math.log(have / want))
                total += weight * (miss if loss == "absolute" else miss**2)
    return total


def nelder_mead(
    f: Callable[[list[float]], float], start: list[float], step: float = 0.5, iterations: int = 80
) -> tuple[list[float], int]:
    """A plain Nelder-Mead minimisation (reflection 1, expansion 2, contraction and shrink 1/2)."""
    points = [start] + [
        [v + (step if i == j else 0.0) for j, v in enumerate(start)] for i in range(len(start))
    ]
    scores = [f(p) for p in points]
    evaluations = len(points)
    for _ in range(iterations):
        order = sorted(range(len(points)), key=scores.__getitem__)
        points, scores = [points[i] for i in order], [scores[i] for i in order]
        centre = [sum(p[k] for p in points[:-1]) / (len(points) - 1) for k in range(len(start))]
        worst = points[-1]
        reflected = [c + (c - w) for c, w in zip(centre, worst, strict=True)]
        r_score = f(reflected)
        evaluations += 1
        if r_score < scores[0]:
            expanded = [c + 2 * (c - w) for c, w in zip(centre, worst, strict=True)]
            e_score = f(expanded)
            evaluations += 1
            points[-1], scores[-1] = (
                (expanded, e_score) if e_score < r_score else (reflected, r_score)
            )
        elif r_score < scores[-2]:
            points[-1], scores[-1] = reflected, r_score
        else:
            contracted = [c + 0.5 * (w - c) for c, w in zip(centre, worst, strict=True)]
            c_score = f(contracted)
            evaluations += 1
            if c_score < scores[-1]:
                points[-1], scores[-1] = contracted, c_score
            else:
                best = points[0]
                points = [best] + [
                    [b + 0.5 * (v - b) for b, v in zip(best, p, strict=True)] for p in points[1:]
                ]
                scores = [scores[0]] + [f(p) for p in points[1:]]
                evaluations += len(points) - 1
        if max(scores) - min(scores) < 1e-6:
            break
    winner = min(range(len(points)), key=scores.__getitem__)
    return points[winner], evaluations


def fit(
    observations: Sequence[Observation],
    start: step_time.Efficiency | None = None,
    names: Sequence[str] = USER_FITTED,
    loss: Loss = "squared",
    prompts: int | None = CALIBRATION_PROMPTS,
) -> Fit:
    """Constants that make the simulation reproduce the observed runs (module docstring):
    the constants `names`, the others kept as in `start`."""
    base = start or step_time.Efficiency()
    best = _from_efficiency(base, names)
    evaluations = 0

    def objective(x: list[float]) -> float:
        return _loss(observations, _to_efficiency(x, base, names), loss, prompts)

    for step in SIMPLEX_STEPS:  # a fresh simplex around the best point: out of flat valleys
        best, used = nelder_mead(objective, best, step)
        best = _from_efficiency(_to_efficiency(best, base, names), names)  # inside the bounds
        evaluations += used
    efficiency = _to_efficiency(best, base, names)
    errors = {}
    for i, obs in enumerate(observations):
        got = predicted(obs, efficiency, prompts)
        errors[obs.source or f"run {i + 1}"] = {
            m: got[m] / obs.measured[m] - 1 for m in METRICS if obs.measured.get(m)
        }
    return Fit(efficiency, errors, evaluations)
