"""How long one engine step takes on a GPU: a roofline with stated efficiencies and overheads.

    step = overhead + per_seq x requests in the step
           + max(memory time, compute time) + all-reduce time (TP > 1)

- memory time = (weights read + KV read) / (bandwidth x bandwidth_efficiency). Every step reads
  the dense weights once; an MoE step reads only the experts its tokens were routed to
  (E x (1 - (1 - k/E)^T) experts per MoE layer for T tokens each choosing k of E); the KV read is
  every decoding request's context, plus the context a prefill chunk attends to.
- compute time = (2 x active parameters x tokens + attention FLOPs) / (peak x compute_efficiency),
  attention FLOPs = 4 x layers x query heads x head dim x (token, context) pairs, per TP rank.
- all-reduce time = 2 per layer, each moving tokens x hidden x 2 bytes x 2(TP-1)/TP over the
  link, plus a fixed latency per all-reduce.

Roofline alone is an upper bound; the efficiencies and overheads below are what make it a
prediction, and `plan.calibrate` fits them to measured runs (`--calibrate`).

The defaults were fitted (plan.calibrate, benchmarks/plan_accuracy.py --gpu --fit) on the
'calibration' records of tests/data/published_vllm_benchmarks.json ONLY: published `vllm bench
serve` runs of Qwen2.5-0.5B on an L4 (ai.wmx.dev), Mistral-7B on an RTX 4090
(mushfiqrahman.dev) and Qwen2-7B on an A100 80GB (github.com/dennislee22/vLLM-benchmarking), all
with vLLM V1 and CUDA graphs; the 'held-out' records there were only predicted:

- bandwidth_efficiency 0.92: the fit ran into its physical bound (calibrate.BOUNDS, 92% of the
  HBM peak); decode steps of those runs are as fast as the weights can stream, and the rest of a
  step is in the fixed overhead below.
- compute_efficiency 0.38: prefill FLOPs (weights and attention) over the dense bf16 peak,
  averaged over whole steps (GEMMs reach 60-75%; attention, norms and sampling pull it down).
- step overhead 2.4 ms: vLLM V1's per-step CPU work with CUDA graphs (scheduling, input
  preparation, sampling, output processing), the known miss of roofline-only simulators.
- per request 8 us per step: input preparation and output processing grow with the batch.
- request overhead 1.1 ms: arrival to schedulable (HTTP, tokenization), in TTFT only; only two
  calibration records have a TTFT, and fits land anywhere in 0.01-1.1 ms with the same errors.
- --enforce-eager adds EAGER_LAUNCH_S_PER_LAYER (150 us, an assumption: ~15 kernel launches of
  ~10 us per layer) per layer per step: CUDA graphs are what hide those launches.
- links: NVLink 3 (A100) 300 GB/s per direction, NVLink 4 (H100/H200) 450 GB/s, NVLink 5
  (B200) 900 GB/s; PCIe 4.0 x16 ~25 GB/s achieved, PCIe 5.0 ~50 GB/s; 8 us per all-reduce
  (vendor figures and an assumption: no published TP run was in the calibration set).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from servetune.plan.simulate import Step
from servetune.review import capacity
from servetune.review.hardware import GpuSpec
from servetune.review.model import ModelFacts
from servetune.review.settings import Settings

GB = 1e9


@dataclass(frozen=True)
class Efficiency:
    """The constants calibration fits (module docstring for the defaults and their sources)."""

    bandwidth: float = 0.92
    compute: float = 0.38
    step_overhead_s: float = 0.0024
    per_seq_s: float = 8e-6
    request_overhead_s: float = 0.0011  # arrival -> schedulable (HTTP, tokenization); in TTFT


@dataclass(frozen=True)
class Device:
    """One GPU as the step-time model sees it (peak numbers from the GPU table)."""

    bandwidth_bytes_s: float
    flops: float  # dense peak for the weights' compute type
    link_bytes_s: float  # per direction, GPU to GPU
    name: str = ""


@dataclass(frozen=True)
class Work:
    """The model's per-GPU costs under one configuration."""

    dense_weight_bytes: float  # read every step, per GPU
    expert_bytes: float  # one routed expert's weights in one layer, per GPU
    moe_layers: int
    num_experts: int
    experts_per_token: int
    active_params: float  # per GPU, per token (FLOPs = 2 x this)
    attention_flops_per_pair: float  # per (token, context token) pair, per GPU
    kv_bytes_per_token: float  # per GPU
    layers: int
    hidden: int
    tp: int


ALLREDUCE_LATENCY_S = 8e-6
# --enforce-eager: no CUDA graphs, every kernel of every layer is launched from Python each step
EAGER_LAUNCH_S_PER_LAYER = 150e-6
_NVLINK_BYTES_S = {"Ampere": 300 * GB, "Hopper": 450 * GB, "Blackwell": 900 * GB}
_PCIE_BYTES_S = {"Hopper": 50 * GB, "Blackwell": 50 * GB, "Ada Lovelace": 25 * GB}


def device(spec: GpuSpec, fp8_compute: bool = False) -> Device:
    """Peak figures of one GPU; FP8 peak when the weights run FP8 GEMMs on a GPU that has them."""
    flops = spec.bf16_dense_tflops or spec.fp16_dense_tflops or 100.0
    if fp8_compute and spec.fp8_dense_tflops:
        flops = spec.fp8_dense_tflops
    nvlink = _NVLINK_BYTES_S.get(spec.architecture, 300 * GB)
    link = nvlink if spec.nvlink else _PCIE_BYTES_S.get(spec.architecture, 25 * GB)
    return Device((spec.memory_bandwidth_gbs or 1000.0) * GB, flops * 1e12, link, spec.name)


def work(model: ModelFacts, settings: Settings, kv_bytes_per_token: int) -> Work:
    """The per-GPU bytes and FLOPs of `model` served with `settings` (`kv_bytes_per_token` per
    GPU, from check's estimate)."""
    total_bytes, params = capacity.weight_bytes(model, settings)
    world = max(settings.world_size, 1)
    experts = capacity.expert_params(model)
    bytes_per_param = total_bytes / params if params else 2.0
    expert_total = experts * bytes_per_param
    n_exp = model.num_experts or 0
    moe_layers = (model.num_layers or 0) - model.num_dense_layers if n_exp else 0
    per_expert = expert_total / (moe_layers * n_exp) / world if moe_layers and n_exp else 0.0
    k = model.experts_per_token or 0
    active = params - experts + (experts * k / n_exp if n_exp else 0)
    heads, head_dim = model.num_attention_heads or 0, model.head_dim or 0
    if model.is_mla:
        head_dim = (model.qk_nope_head_dim or 0) + (model.qk_rope_head_dim or 0)
    layers = model.num_layers or 0
    return Work(
        dense_weight_bytes=(total_bytes - expert_total) / world,
        expert_bytes=per_expert,
        moe_layers=moe_layers,
        num_experts=n_exp,
        experts_per_token=k,
        active_params=active / world,
        attention_flops_per_pair=4.0 * layers * heads * head_dim / world,
        kv_bytes_per_token=kv_bytes_per_token,
        layers=layers,
        hidden=model.hidden_size or 0,
        tp=settings.tensor_parallel_size,
    )


@dataclass(frozen=True)
class StepTime:
    """A `StepCost` for the simulator: seconds per step of one configuration on one device."""

    work: Work
    device: Device
    efficiency: Efficiency = Efficiency()
    eager: bool = False  # --enforce-eager: no CUDA graphs, more CPU time per step

    def with_efficiency(self, efficiency: Efficiency) -> StepTime:
        return replace(self, efficiency=efficiency)

    def _experts_read(self, tokens: int) -> float:
        w = self.work
        if not w.num_experts or tokens <= 0:
            return 0.0
        touched = w.num_experts * (1 - (1 - w.experts_per_token / w.num_experts) ** tokens)
        return w.moe_layers * touched * w.expert_bytes

    def parts(self, step: Step) -> tuple[float, float, float, float]:
        """(overhead, memory, compute, all-reduce) seconds of one step."""
        w, d, e = self.work, self.device, self.efficiency
        tokens = step.prefill_tokens + step.decode_seqs
        pairs = step.prefill_attention + step.decode_context
        kv_read = (step.decode_context + step.prefill_attention / max(step.prefill_tokens, 1)) * (
            w.kv_bytes_per_token
        )
        memory = (w.dense_weight_bytes + self._experts_read(tokens) + kv_read) / (
            d.bandwidth_bytes_s * e.bandwidth
        )
        compute = (2 * w.active_params * tokens + w.attention_flops_per_pair * pairs) / (
            d.flops * e.compute
        )
        comm = 0.0
        if w.tp > 1:
            moved = 2 * w.layers * tokens * w.hidden * 2 * 2 * (w.tp - 1) / w.tp
            comm = moved / d.link_bytes_s + 2 * w.layers * ALLREDUCE_LATENCY_S
        eager = EAGER_LAUNCH_S_PER_LAYER * w.layers if self.eager else 0.0
        overhead = e.step_overhead_s + eager + e.per_seq_s * step.running
        return overhead, memory, compute, comm

    def __call__(self, step: Step) -> float:
        overhead, memory, compute, comm = self.parts(step)
        return overhead + max(memory, compute) + comm
