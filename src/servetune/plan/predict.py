"""One configuration under one load: the prediction, what bounds it, and whether it meets the
targets. The configuration is what `check` understood of a serve command on some GPUs; the load
is closed-loop users or open-loop arrivals, as `bench` sends them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from servetune.errors import UsageError
from servetune.measure import metrics
from servetune.plan import moe_configs, sparse_attention, step_time
from servetune.plan.simulate import Limits, Load, SimResult, simulate_continuous, simulate_static
from servetune.review.capacity import Estimate
from servetune.review.check import Report
from servetune.review.hardware import GpuSpec
from servetune.review.settings import Settings, v0_engine
from servetune.texts import ErrorText
from servetune.vllm.flags import version_at_least

Bound = Literal[
    "kv-cache",
    "max-num-seqs",
    "max-num-batched-tokens",
    "compute",
    "memory-bandwidth",
    "interconnect",
]
Verdict = Literal["meets", "fails", "marginal"]
SLO_KEYS = ("ttft", "tpot", "itl", "e2el")
MARGINAL = 0.10  # within 10% of a target
SEARCH_CAP = 4096  # the most users the capacity search tries


@dataclass(frozen=True)
class Slo:
    """Latency targets in ms on one percentile (p99 unless said); None: no target."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2el_ms: float | None = None
    percentile: int = 99

    @property
    def empty(self) -> bool:
        return self.ttft_ms is None and self.tpot_ms is None and self.e2el_ms is None


@dataclass(frozen=True)
class Prediction:
    """The contract's `prediction` object."""

    output_throughput: float
    request_throughput: float
    mean_ttft_ms: float
    p99_ttft_ms: float
    mean_tpot_ms: float
    p99_tpot_ms: float
    mean_e2el_ms: float
    kv_cache_tokens: int | None
    max_concurrency_meeting_slo: int | None
    qps_per_gpu: float | None
    # what the SLO percentile of each metric is (p99 by default; kept for the verdict)
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    slo_e2el_ms: float | None = None


@dataclass(frozen=True)
class Setup:
    """A configuration ready to simulate."""

    report: Report
    limits: Limits
    cost: step_time.StepTime
    gpus: int
    replicas: int = 1  # data-parallel engines: each takes its share of the load


def _kv_tokens(est: Estimate, settings: Settings) -> int | None:
    """The KV cache tokens to simulate. Where check's central estimate leaves no KV memory but
    the most its evidence allows does (check then only warns, and the server may start:
    gpt-oss-120b on one H100 ran 1,000 ShareGPT users at its 32k default), plan on that end
    of the range rather than on a cache that holds nothing and predicts no output.

    A server that runs holds one full-length sequence at least: vLLM refuses to start when
    its KV cache cannot (V1's `check_enough_kv_cache_memory`, "To serve at least one request
    with the model's max seq len"; V0's "larger than the maximum number of tokens that can be
    stored in KV cache"), so where check only warns that it may not, the server planned is
    the one that started, with `--max-model-len` tokens of cache."""
    tokens = est.kv_cache_tokens
    most = est.kv_available_gib_range[1] if est.kv_available_gib_range else 0.0
    if tokens == 0 and most > 0 and est.kv_bytes_per_token_per_gpu > 0:
        tokens = int(most * 2**30 / est.kv_bytes_per_token_per_gpu)
    length = settings.max_model_len
    if tokens is not None and length and not settings.max_model_len_auto:
        return max(tokens, length)
    return tokens


def setup(report: Report, efficiency: step_time.Efficiency | None = None) -> Setup:
    """The simulator's view of a checked command; raises when the model or GPU is unknown."""
    model, machine, est, s = report.model, report.hardware, report.estimate, report.settings
    if model is None:
        raise UsageError(ErrorText("plan.model-unknown", model=repr(report.command.model)))
    if machine is None or machine.spec is None or est is None:
        raise UsageError(ErrorText("plan.gpu-unknown"))
    fp8 = s.quantization == "fp8" or (model.quantization and model.quantization.method == "fp8")
    device = step_time.device(machine.spec, fp8_compute=bool(fp8) and fp8_gemms(machine.spec))
    args = report.command.args
    pads = sparse_attention.padding(
        model, s.tensor_parallel_size, s.kv_cache_dtype, report.command.version,
        machine.spec.capability,
    )  # fmt: skip
    sparse = sparse_attention.costs(model, s.tensor_parallel_size, pads)
    cost = step_time.StepTime(
        step_time.work(
            model,
            s,
            est.kv_bytes_per_token_per_gpu,
            bool(args.get("--enable-expert-parallel")),
            sparse,
        ),
        device,
        efficiency or step_time.Efficiency(),
        eager=s.enforce_eager,
        async_scheduling=async_scheduling(report),
        graph_max_tokens=graph_capture_max(report),
        graphs_decode_only=v0_engine(report.command),
        moe_tuned=moe_tuned(report),
        rocm_v0=rocm_v0(report),
        prefix_prefill_kernel=rocm_prefix_prefill(report),
        aiter_moe=aiter_moe(report),
    )
    limits = Limits(
        max_num_seqs=s.max_num_seqs,
        max_num_batched_tokens=s.max_num_batched_tokens or 8192,
        kv_cache_tokens=_kv_tokens(est, s),
        block_size=s.block_size,
        chunked_prefill=s.chunked_prefill,
        prefix_caching=prefix_caching(report),
        prefill_first=not s.chunked_prefill and v0_engine(report.command),
        attention_window=sparse.topk if sparse else None,
    )
    return Setup(report, limits, cost, max(s.gpus_needed, 1), max(s.data_parallel_size, 1))


# ROCm's FP8 GEMMs (vllm/platforms/rocm.py `supports_fp8`: gfx94x, gfx95x, gfx12x; FP8
# checkpoints run torch._scaled_mm / hipBLASLt in e4m3fnuz on gfx94x from 0.6: quantization/
# fp8.py normalize_e4m3fn_to_e4m3fnuz) run at the FP8 peak as NVIDIA's from SM 8.9 do
_ROCM_FP8_GFX = ("gfx94", "gfx95", "gfx12")


def fp8_gemms(spec: GpuSpec) -> bool:
    """Whether FP8 weights run FP8 GEMMs on this GPU (Ada/Hopper/Blackwell; MI300/MI325/MI350)."""
    if spec.platform == "rocm":
        return any((spec.gfx_target or "").startswith(gfx) for gfx in _ROCM_FP8_GFX)
    return (spec.capability or 0) >= 89


# The ROCm releases whose efficiency is their own (step_time.Efficiency.rocm_v0): before 0.8.3
# vLLM ran no kernel of its own for the TP all-reduce on AMD (vllm/config.py ParallelConfig,
# 0.6-0.8.2: "Disabled the custom all-reduce kernel because it is not supported on AMD GPUs";
# vllm/platforms/rocm.py `use_custom_allreduce` enables it on MI300 from 0.8.3), ran the V0
# engine's ROCm attention backend and no AITER kernels.
ROCM_V0_BEFORE = "0.8.3"


def _rocm_before(report: Report, release: str) -> bool:
    machine = report.hardware
    rocm = machine is not None and machine.spec is not None and machine.spec.platform == "rocm"
    version = report.command.version
    return rocm and not version_at_least(version, release)


def rocm_v0(report: Report) -> bool:
    """Whether the command runs a ROCm release before 0.8.3 (`ROCM_V0_BEFORE`)."""
    return _rocm_before(report, ROCM_V0_BEFORE)


def rocm_prefix_prefill(report: Report) -> bool:
    """Whether prompt chunks attend through V0's Triton prefix-prefill kernel: chunked prefill
    on ROCm under the V0 ROCm backend (vllm/attention/backends/rocm_flash_attn.py, 0.6-0.8:
    a prefill with cached context goes to `PagedAttention.forward_prefix`, i.e.
    vllm/attention/ops/prefix_prefill.py; ROCm's flash attention "is not getting called when
    chunked prefill is enabled", and the kernel "is showing poor performance":
    vllm-project/vllm#11146, which stopped 0.6.5 auto-enabling chunked prefill on ROCm)."""
    return _rocm_before(report, ROCM_V0_BEFORE) and report.settings.chunked_prefill


def _env_on(report: Report, name: str, default: bool) -> bool:
    raw = report.command.env.get(name)
    return default if raw is None else raw.strip().lower() in ("1", "true")


def aiter_moe(report: Report) -> bool:
    """Whether the routed experts run AITER's fused MoE: on ROCm from 0.8.3 with
    VLLM_ROCM_USE_AITER=1 (off by default) and VLLM_ROCM_USE_AITER_MOE (on by default)
    (vllm/envs.py; vllm/model_executor/layers/fused_moe/rocm_aiter_fused_moe.py), for the
    experts fused_moe_kernel would run (BF16, FP8: `step_time.moe_kernel` "triton")."""
    model = report.model
    if model is None or not model.is_moe or _rocm_before(report, ROCM_V0_BEFORE):
        return False
    machine = report.hardware
    if machine is None or machine.spec is None or machine.spec.platform != "rocm":
        return False
    if step_time.moe_kernel(model) != "triton":
        return False
    aiter = _env_on(report, "VLLM_ROCM_USE_AITER", default=False)
    return aiter and _env_on(report, "VLLM_ROCM_USE_AITER_MOE", default=True)


# V0's CUDA graphs (vllm/worker/model_runner.py `_use_captured_graph`, 0.4-0.10): a step replays
# a graph only when it is decode-only (no prompt tokens) with at most the largest captured batch:
# 256 requests before 0.6.0 (`_BATCH_SIZES_TO_CAPTURE` = [1, 2, 4] + 8 x 1..32), from 0.6.0
# max_num_seqs rounded up to a multiple of 8 (`_get_max_graph_batch_size`, sizes to 8192)
V0_GRAPHS_UP_TO_MAX_NUM_SEQS = "0.6.0"
V0_GRAPH_MAX_BATCH = 256


def graph_capture_max(report: Report) -> int:
    """The most tokens (V1) or requests (V0: decode-only steps) a captured graph runs."""
    s = report.settings
    if not v0_engine(report.command):
        return min(2 * s.max_num_seqs, step_time.CUDA_GRAPH_MAX_TOKENS)
    if not version_at_least(report.command.version, V0_GRAPHS_UP_TO_MAX_NUM_SEQS):
        return V0_GRAPH_MAX_BATCH
    return min(-(-s.max_num_seqs // 8) * 8, 8192)


def moe_tuned(report: Report) -> bool | None:
    """Whether the release ships a tuned fused-MoE config for the experts' shape on this GPU
    (plan.moe_configs); None where that is not known (not an MoE model, the GPU not named)."""
    model, machine, s = report.model, report.hardware, report.settings
    if model is None or not model.is_moe or machine is None or machine.spec is None:
        return None
    ep = bool(report.command.args.get("--enable-expert-parallel"))
    shape = moe_configs.shape(
        model, s.tensor_parallel_size, s.data_parallel_size, ep, s.quantization
    )
    if shape is None:
        return None
    return moe_configs.tuned(shape, machine.spec.name, report.command.version)


ASYNC_SCHEDULING_FROM = "0.14.0"  # vllm/config/vllm.py: on unless an option rules it out


PREFIX_CACHING_FROM = "0.8.0"  # the V1 engine, on by default; V0 had it off


def prefix_caching(report: Report) -> bool:
    """Whether the engine keeps freed blocks' hashes (so a preempted request gets its prefix
    back): `--enable-prefix-caching` / `--no-enable-prefix-caching` as given, else on from the
    V1 engine (vllm/engine/arg_utils.py: V1 defaults enable_prefix_caching to True)."""
    args = report.command.args
    if args.get("--no-enable-prefix-caching") is True:
        return False
    given = args.get("--enable-prefix-caching")
    if isinstance(given, bool):
        return given
    return version_at_least(report.command.version, PREFIX_CACHING_FROM)


def async_scheduling(report: Report) -> bool:
    """Whether the engine overlaps scheduling with the GPU: `--async-scheduling` (or
    `--no-async-scheduling`) as given, else vLLM's default by release."""
    given = report.command.args.get("--async-scheduling")
    if isinstance(given, bool):
        return given
    if report.command.args.get("--no-async-scheduling") is True:
        return False
    return version_at_least(report.command.version, ASYNC_SCHEDULING_FROM)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _percentile(values: Sequence[float], p: int) -> float:
    return metrics.percentile(sorted(values), p) if values else math.nan


def summarise(sim: SimResult, setup_: Setup, slo: Slo) -> Prediction:
    """The prediction's numbers from one simulated run (no capacity search)."""
    reqs = sim.requests
    duration = sim.duration_s or math.nan
    ttft = [1000 * (r.first_token - r.arrival) for r in reqs]
    tpot = [
        1000 * (r.finish - r.first_token) / (r.output_len - 1) for r in reqs if r.output_len > 1
    ]
    e2el = [1000 * (r.finish - r.arrival) for r in reqs]
    p = slo.percentile
    engines = setup_.replicas  # the simulated engine is one of this many alike
    return Prediction(
        output_throughput=engines * sum(r.output_len for r in reqs) / duration,
        request_throughput=engines * len(reqs) / duration,
        mean_ttft_ms=_mean(ttft),
        p99_ttft_ms=_percentile(ttft, 99),
        mean_tpot_ms=_mean(tpot),
        p99_tpot_ms=_percentile(tpot, 99),
        mean_e2el_ms=_mean(e2el),
        kv_cache_tokens=setup_.limits.kv_cache_tokens,
        max_concurrency_meeting_slo=None,
        qps_per_gpu=None,
        slo_ttft_ms=_percentile(ttft, p),
        slo_tpot_ms=_percentile(tpot, p) if tpot else 0.0,
        slo_e2el_ms=_percentile(e2el, p),
    )


def verdict(prediction: Prediction, slo: Slo) -> Verdict | None:
    """`fails` when a target is missed, `marginal` when within 10% of one, else `meets`."""
    if slo.empty:
        return None
    pairs = [
        (prediction.slo_ttft_ms, slo.ttft_ms),
        (prediction.slo_tpot_ms, slo.tpot_ms),
        (prediction.slo_e2el_ms, slo.e2el_ms),
    ]
    ratios = [got / target for got, target in pairs if target is not None and got is not None]
    if any(math.isnan(r) or r > 1 for r in ratios):
        return "fails"
    return "marginal" if any(r > 1 - MARGINAL for r in ratios) else "meets"


def share(load: Load, replicas: int) -> Load:
    """One data-parallel engine's share of the load (vLLM's DP front end spreads requests
    over the engines): 1/replicas of the users or of the arrival rate, and of the requests."""
    if replicas <= 1:
        return load
    prompts = max(1, load.num_prompts // replicas)
    if load.concurrency is not None:
        users = max(1, load.concurrency // replicas)
        return replace(load, concurrency=users, num_prompts=prompts)
    rate = load.request_rate / replicas if load.request_rate else None
    return replace(load, request_rate=rate, num_prompts=prompts)


def run(setup_: Setup, load: Load) -> SimResult:
    """One engine under its share of the load (`summarise` adds the engines' throughputs)."""
    delay = setup_.cost.efficiency.request_overhead_s
    mine = share(load, setup_.replicas)
    return simulate_continuous(mine, setup_.limits, setup_.cost, admit_delay_s=delay)


def run_static(setup_: Setup, load: Load) -> SimResult:
    delay = setup_.cost.efficiency.request_overhead_s
    mine = share(load, setup_.replicas)
    return simulate_static(mine, setup_.limits, setup_.cost, admit_delay_s=delay)


def _probe_load(load: Load, users: int) -> Load:
    """A closed-loop load of `users`, with enough requests for a stable p99."""
    count = min(max(150, 4 * users), 1500)
    return replace(load, concurrency=users, request_rate=None, num_prompts=count)


def _meets(setup_: Setup, load: Load, users: int, slo: Slo) -> tuple[bool, Prediction]:
    sim = run(setup_, _probe_load(load, users))
    prediction = summarise(sim, setup_, slo)
    return verdict(prediction, slo) in ("meets", "marginal"), prediction


def capacity(setup_: Setup, load: Load, slo: Slo) -> tuple[int | None, Prediction | None]:
    """The most closed-loop users whose latencies meet every target (grow x2, then bisect), and
    the prediction there; (None, None) when even one user misses."""
    ok, at_one = _meets(setup_, load, 1, slo)
    if not ok:
        return None, None
    good, good_pred, bad = 1, at_one, None
    while bad is None and good < SEARCH_CAP:
        trial = min(good * 2, SEARCH_CAP)
        ok, pred = _meets(setup_, load, trial, slo)
        if ok:
            good, good_pred = trial, pred
        else:
            bad = trial
    while bad is not None and bad - good > max(1, good // 32):
        mid = (good + bad) // 2
        ok, pred = _meets(setup_, load, mid, slo)
        if ok:
            good, good_pred = mid, pred
        else:
            bad = mid
    return good, good_pred


def bound(setup_: Setup, sim: SimResult) -> Bound:
    """What limits the configuration under this load (the contract's `bound`)."""
    limits = setup_.limits
    kv_full = sim.kv_peak_fraction is not None and sim.kv_peak_fraction >= 0.95
    if sim.preemptions > 0 or (kv_full and sim.queued_with_free_seats > 0.1):
        return "kv-cache"
    if sim.peak_running >= limits.max_num_seqs and sim.peak_waiting > 0:
        return "max-num-seqs"
    if sim.budget_full_fraction > 0.5 and sim.queued_with_free_seats > 0.1:
        return "max-num-batched-tokens"
    if sim.mean_step is None:
        return "memory-bandwidth"
    _, memory, compute, comm = setup_.cost.parts(sim.mean_step)
    if comm > max(memory, compute):
        return "interconnect"
    return "compute" if compute > memory else "memory-bandwidth"


@dataclass(frozen=True)
class Outcome:
    """Everything `plan` says about one configuration under one load."""

    prediction: Prediction
    verdict: Verdict | None
    bound: Bound
    sim: SimResult


def predict(setup_: Setup, load: Load, slo: Slo) -> Outcome:
    """Simulate the load, name the bound, and (with targets) search the capacity."""
    sim = run(setup_, load)
    prediction = summarise(sim, setup_, slo)
    if not slo.empty:
        users, at_capacity = capacity(setup_, load, slo)
        qps = at_capacity.request_throughput / setup_.gpus if at_capacity else None
        prediction = replace(prediction, max_concurrency_meeting_slo=users, qps_per_gpu=qps)
    return Outcome(prediction, verdict(prediction, slo), bound(setup_, sim), sim)
