"""How far `plan`'s predictions are from measured runs: the relative error per metric, and its
median and worst over a set of runs.

A case is one measured run: a configuration (`predict.Setup`), the load it ran under, and the
metrics measured (output throughput tok/s, mean TPOT ms, mean TTFT ms). Published `vllm bench
serve` results are read from a JSON file (tests/data/published_vllm_benchmarks.json) of records:

    {"id": str, "source": URL, "group": "calibration" | "held-out",
     "gpus": "1xH100-80GB", "vllm_version": "0.6.0", "command": "vllm serve MODEL [flags]",
     "workload": {"input_len": int, "output_len": int, "num_prompts": int,
                  "max_concurrency": int | null, "request_rate": float | null,
                  "range_ratio": float, "output_range_ratio": float (optional)},
     "measured": {"output_throughput": float, "mean_tpot_ms": float, "mean_ttft_ms": float},
     "kv_cache_gib": float (optional: the KV cache the server reported), "notes": str}

Metrics a record does not give are left out of its errors. Used by benchmarks/plan_accuracy.py
and by the test that keeps the uncalibrated error from growing.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from servetune.plan import calibrate, predict, step_time
from servetune.plan.simulate import Load
from servetune.review.check import CheckOptions, Report, check_text

METRICS = ("output_throughput", "mean_tpot_ms", "mean_ttft_ms")


@dataclass(frozen=True)
class Case:
    """One measured run, ready to predict."""

    name: str
    setup: predict.Setup
    load: Load
    measured: dict[str, float]
    group: str = "held-out"
    source: str = ""
    kind: str = ""  # dense TP1, dense TP>1, MoE, AMD (`kind_of`)
    corrected: tuple[str, ...] = ()  # the check errors plan fixed to answer (rule ids)
    assumed_command: bool = False  # the source published no command: vLLM's defaults assumed
    assumed_lengths: bool = False  # no lengths published: ShareGPT's (plan.sharegpt) assumed

    def observation(self) -> calibrate.Observation:
        return calibrate.Observation(self.setup, self.load, self.measured, self.name)


def errors(
    case: Case, efficiency: step_time.Efficiency | None = None, prompts: int | None = None
) -> dict[str, float]:
    """Relative error (predicted / measured - 1) of each measured metric of `case`."""
    obs = case.observation()
    if prompts is not None:
        obs = replace(obs, load=replace(obs.load, num_prompts=min(prompts, obs.load.num_prompts)))
    got = calibrate.predicted(obs, efficiency or case.setup.cost.efficiency, prompts=None)
    return {m: got[m] / v - 1 for m in METRICS if (v := case.measured.get(m)) and v > 0}


@dataclass(frozen=True)
class Spread:
    """The median and worst absolute relative error of one metric, over `count` runs."""

    median: float
    worst: float
    count: int


def spread(per_case: Iterable[dict[str, float]]) -> dict[str, Spread]:
    """Median and worst |error| of each metric over the cases that measured it."""
    table = list(per_case)
    out = {}
    for metric in METRICS:
        values = [abs(e[metric]) for e in table if metric in e and math.isfinite(e[metric])]
        if values:
            out[metric] = Spread(statistics.median(values), max(values), len(values))
    return out


KINDS = ("dense TP1", "dense TP>1", "MoE", "AMD")


def kind_of(report: Report) -> str:
    """The accuracy group a configuration falls in: AMD GPUs first (their kernels and links are
    their own), then mixture-of-experts models, then dense ones by tensor parallelism."""
    spec = report.hardware.spec if report.hardware else None
    if spec is not None and spec.platform == "rocm":
        return "AMD"
    if report.model is not None and report.model.is_moe:
        return "MoE"
    return "dense TP1" if report.settings.world_size == 1 else "dense TP>1"


def by_kind(cases: Sequence[Case]) -> dict[str, list[Case]]:
    """The cases of each accuracy group, in `KINDS` order (empty groups left out)."""
    return {k: got for k in KINDS if (got := [c for c in cases if c.kind == k])}


def every_kind(cases: Sequence[Case]) -> dict[str, list[Case]]:
    """The cases of every accuracy group in `KINDS` order, empty ones too (a group no record
    falls in is a gap a table should show), then "all"."""
    return {**{k: [c for c in cases if c.kind == k] for k in KINDS}, "all": list(cases)}


def _load(workload: dict[str, object]) -> Load:
    def num(key: str) -> float | None:
        value = workload.get(key)
        return float(value) if isinstance(value, int | float) else None

    concurrency, rate = num("max_concurrency"), num("request_rate")
    prompts = int(num("num_prompts") or 1000)
    return Load(
        input_len=int(num("input_len") or 0),
        output_len=int(num("output_len") or 0),
        num_prompts=prompts,
        concurrency=int(concurrency) if concurrency else (None if rate else prompts),
        request_rate=rate,
        range_ratio=num("range_ratio") or 0.0,
        output_range_ratio=num("output_range_ratio"),
    )


def _with_reported_kv(setup_: predict.Setup, report: Report, gib: object) -> predict.Setup:
    """The KV cache the source's server reported, instead of check's estimate."""
    est = report.estimate
    if not isinstance(gib, int | float) or est is None or not est.kv_bytes_per_token_per_gpu:
        return setup_
    tokens = int(gib * 2**30 / est.kv_bytes_per_token_per_gpu)
    return replace(setup_, limits=replace(setup_.limits, kv_cache_tokens=tokens))


def published_cases(path: Path) -> list[Case]:
    """The records of a published-results file, each checked and set up as `plan` would."""
    records = json.loads(path.read_text(encoding="utf-8"))["records"]
    cases = []
    for rec in records:
        options = CheckOptions(
            gpus=rec["gpus"], vllm_version=rec.get("vllm_version"), detect_hardware=False
        )
        report = check_text(rec["command"], options)
        measured = {m: float(v) for m in METRICS if (v := rec["measured"].get(m)) is not None}
        group, source = rec.get("group", "held-out"), rec.get("source", "")
        setup_ = _with_reported_kv(predict.setup(report), report, rec.get("kv_cache_gib"))
        load = _load(rec["workload"])
        cases.append(Case(rec["id"], setup_, load, measured, group, source, kind_of(report)))
    return cases


def in_group(cases: Sequence[Case], group: str) -> list[Case]:
    return [c for c in cases if c.group == group]
