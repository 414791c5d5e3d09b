"""How long one engine step takes on a GPU: a roofline with stated efficiencies and overheads.

    GPU  = max(memory time, compute time) + communication + kernel floors (+ launches)
    CPU  = overhead + per_seq x requests in the step
    step = GPU + CPU, never less than the API server's frontend_s x requests (it streams every
           running request's token each step, beside the engine)

- memory time = (dense weights + routed experts read + KV read) / (bandwidth x efficiency).
  Every step reads the dense weights once (attention, shared experts, dense layers, the
  embeddings' lm_head); an MoE step reads only the experts its tokens were routed to
  (`parallel.touched`, and `parallel.ep_max_touched` under expert parallelism), at the fused
  MoE kernels' own streaming efficiency (`moe_bandwidth` x `bandwidth`); the KV read is every
  decoding request's context plus the context a prefill chunk attends to.
- compute time = (2 x active parameters x tokens + attention FLOPs) / (peak x efficiency(T)),
  efficiency(T) = compute x T / (T + compute_half_tokens): GEMMs of few rows (small prefill
  chunks, small batches) leave the tensor cores idle. Attention FLOPs per (token, context)
  pair and layer: 4 x heads x head_dim (QK^T and PV), per TP rank; MLA (DeepSeek V2/V3/R1,
  Kimi K2; vllm/v1/attention/backends/mla/common.py) prefills as MHA with QK head dim
  nope + rope and V head dim v_head_dim, and decodes as MQA over the latent (the absorbed
  W_UK/W_UV path): 2 x heads x ((kv_lora_rank + rope) + kv_lora_rank) per pair.
- attention FLOPs run at the BF16 peak (`Device.attention_flops`) even where FP8 checkpoints
  run their GEMMs at the FP8 peak: the prefill kernels (FlashAttention 3 / FlashInfer, and
  MLA's prefill as MHA in vllm/v1/attention/backends/mla/common.py) compute in the query's
  BF16. 32k-token prompts of DeepSeek-R1 on 8 H200 (FP8) were predicted to prefill 1.65x
  faster than measured with attention at the FP8 peak.
- communication (`plan.parallel`): two ring all-reduces of tokens x hidden per layer at TP > 1,
  and with DP > 1 and expert parallelism the all-to-all dispatch and combine of each MoE layer.
- pipeline parallelism (`--pipeline-parallel-size`, vLLM's way over several nodes): a step's
  tokens pass the stages in turn, so its bytes and FLOPs are one stage's TP GPUs' summed over
  the stages (the model over TP GPUs), plus one hop of tokens x hidden between each two stages
  over the nodes' network (`parallel.INTERNODE_BYTES_S`). The microbatches vLLM keeps in flight
  (one per stage) are not simulated: a memory-bound step lasts about as long for half the
  batch, so users / step time is the throughput either way; a compute-bound one is
  predicted slow. Kimi-K2 FP8 at 16 users on two nodes of 8 H200 (planned TP 8 x PP 2, the
  record publishing no command): TPOT 38 ms against 58 measured (29 at TP 16).
- kernel floors: each layer's kernels take a minimum time whatever the batch (norms, rotary,
  routing, quantizing activations, small GEMM tiles): `layer_s` per layer, `moe_layer_s` more
  per MoE layer (router, top-k, token sorting, two grouped GEMMs, combine).
- CUDA graphs: vLLM V1 captures graphs for batches up to min(2 x max_num_seqs, 512) tokens
  (vllm/config/scheduler.py `cuda_graph_sizes`, 0.10-0.17; `max_cudagraph_capture_size` later);
  a larger step, and every step under --enforce-eager, launches each kernel from Python:
  EAGER_LAUNCH_S_PER_LAYER per layer. V0 (before 0.8, `settings.v0_engine`) replays a graph
  for a decode-only step alone (vllm/worker/model_runner.py `_use_captured_graph`:
  `decode_only and ... batch_size <= max captured`), of at most 256 requests before 0.6.0 and
  max_num_seqs from it (`predict.graph_capture_max`): every step carrying a prompt chunk runs
  eagerly. No constant: dstack's Llama-3.1-405B FP8 on 8 H100 (0.6.3, 512-token chunks at
  saturation) go from +28% to +10% on output throughput, mean TPOT from -6% to +10%; their
  TTFT rises (+72-115% to +103-450%): the uniform ShareGPT stand-in (plan.sharegpt) has no
  long tail of replies, which in the measured runs drains the queue early (mean TTFT 0.19 of
  the run at 1000/s against 0.42 predicted).
- async scheduling (default from vLLM 0.14: vllm/config/vllm.py enables it "unless there is an
  incompatible option"; `--async-scheduling` before) is known per configuration, but CPU and
  GPU time still add: the fit records on 0.23 pay the whole per-step overhead.

The constants of `Efficiency` were fitted (benchmarks/plan_accuracy.py --gpu --fit, Nelder-Mead
on absolute log errors: a median fit) on the `fit` records ONLY of tests/data/corpus/runs.json and
tests/data/published_vllm_benchmarks.json ('calibration' there): dense single-GPU runs on L4,
RTX 4090, A100 and H100 (Qwen2.5-0.5B, Mistral-7B, Qwen2-7B, Qwen3-14B) and MoE runs of
gpt-oss-20b/120b (A100, H100, TP 1-4), DeepSeek-R1 and V3.2, GLM-4.6 and GLM-4.5-Air (H200,
H100, TP 4-8), MiniMax-M2.5 (H100, TP/EP 4-8); the ROCm constants on the AMD fit records
alone. Left out of the fit (benchmarks/plan_accuracy.py NOT_FITTED): the two Kimi-K2-Thinking
records (1,000 requests at 100/s into a KV cache check puts at 28k tokens: preemption storms,
not step time) and InferenceX's experimental Qwen3.5-397B runs (a work-in-progress folder
whose runs are 2-7x slower than any other H200 run). Held-out
records were only predicted and are read as scores by group. What each default stands for:

- bandwidth 0.92: dense weight streaming at decode runs into its physical bound (92% of HBM).
- compute 0.376 of the tensor-core peak; compute_half_tokens 1.2: the fit found no GEMM-size
  effect the per-layer floors do not already carry.
- step_overhead 0.49 ms, per request 95 us per step: vLLM V1's per-step CPU work (scheduling,
  input preparation, sampling, output processing) and its growth with the batch; the growth is
  what the 1,000-user ShareGPT runs on H100/H200 (max_num_seqs 1024 from 0.11) pay most.
- request overhead 32 ms: arrival to schedulable (HTTP, chat template, tokenization), in TTFT.
- layer_s 37 us, moe_layer_s 45 us: the kernel floors above (DeepSeek-R1 at 4 users on 8 H200:
  61 layers x ~80 us of the 19 ms TPOT).
- moe_bandwidth 0.5: fused-MoE weight streaming relative to dense GEMMs for the Triton
  family (BF16/FP16/FP8 experts through fused_moe_kernel), at its lower bound
  (calibrate.BOUNDS: vLLM's tuned fused-MoE kernels stream at least half as fast).
- mla_layer_s 113 us per MLA layer, mla_seq_s 2.93 us per decoding request per MLA layer:
  the absorbed decode path runs more kernels per layer than GQA attention (q_a/q_b
  projections and their norms, the W_UK and W_UV batched matmuls around the latent decode
  kernel: vllm/v1/attention/backends/mla/common.py, forward_decode) and works per request
  (splits over each request's latent blocks). Fitted together on the 9 MLA fit records
  (DeepSeek-R1 and V3.2 on 8 H200 and 8 H20, DeepSeek-V2-Lite on A100, R1 on 8 MI300X;
  Kimi-K2-Thinking left out as below): R1 at 4 users 19.6 ms against 19.4 measured (12.0
  without), at 1,000 ShareGPT users 276 against 227 (143 without). Left: 32k-token prompts
  on MLA still predicted ~40% fast (the prefill's up-projection of the cached latent,
  `_compute_prefill_context`, is not modelled yet).
- moe_4bit_bandwidth 1.0: the same share for the 4-bit expert kernels (`moe_kernel`: MXFP4
  through triton_kernels' matmul_ogs on Hopper, fused_marlin_moe below SM90, FlashInfer on
  Blackwell; INT4 WNA16 through fused_marlin_moe). One constant for the family, fitted alone
  on its 14 fit records (gpt-oss-20b/120b on H100 and A100, TP 1-4): it runs to its bound
  (1.0; 25% median error at 0.5, 17% at 1.0), where the Triton family (BF16/FP8 experts,
  fused_moe_kernel) refitted alone on its 9 non-MLA fit records (GLM-4.6/4.5-Air, MiniMax-M2.5,
  Qwen3-30B-A3B FP8) stays at 0.5 (GLM-4.6 at 4 users on 8 H200: +2% at 0.5, +27% at 1.0).
  The experts' bytes are their own (`weights.expert_bytes`: 4.25-bit MXFP4 with its padding),
  not the checkpoint's average with its BF16 attention and embeddings. On ROCm the MXFP4
  experts take `moe_bandwidth` (CDNA 3 has no FP4 units; the MI300X fit records of gpt-oss-120b
  are predicted 14-27% fast at 1.0, 8-13% slow at 0.5). Marlin's INT4 MoE has no fit record:
  it shares the family's value unfitted.
- moe_compute 1.0: the routed experts' GEMMs at the dense rate (a knob `--fit` may move; not
  fitted away from 1 yet).
- frontend_s 47 us: the API server's time per streamed request per step, a floor under the
  step; with these constants the engine's own per-request time is the larger.
- ampere 1.5: Ampere's tensor cores reach 1.5x the `compute` fraction of their datasheet peak
  that Hopper's do (large BF16 GEMMs run near 90% of A100's 312 TFLOPS, well under 75% of
  H100's 989; prefill and big decode batches are GEMMs). Fitted alone on the ten fit records on
  one A100 (Qwen2-7B, Qwen3-14B, gpt-oss-20b, DeepSeek-V2-Lite), which every other constant
  predicted 20-40% slow: 1.498.
- rocm 1.0: ROCm kernels on MI300X reach the NVIDIA-fitted efficiencies (the fit runs to the
  bound). FP8 checkpoints run FP8 GEMMs on CDNA 3/4 (`predict.fp8_gemms`: gfx94x/gfx95x,
  vllm/platforms/rocm.py supports_fp8) at the FP8 peak, as on Ada/Hopper.
- rocm_compute 1.41: CDNA's GEMMs from 0.8.3 (hipBLASLt, AITER) reach 1.41x the `compute`
  fraction of their datasheet peak (0.53 of it): fitted with `rocm` and `aiter_moe_bandwidth`
  on the 14 AMD fit records of 0.8.3 on (benchmarks/plan_accuracy.py NO_TTFT_FIT: the
  MI325X records' TTFT is left out, their first prompt is cached by bench's test request).
- aiter_moe_bandwidth 1.0: AITER's fused MoE (`predict.aiter_moe`: VLLM_ROCM_USE_AITER=1)
  streams the experts at the dense rate (its bound; Qwen3-235B FP8 on 4 MI325X at 16-32 users:
  TPOT +31-77% at the Triton family's 0.5, within 26% at 1.0).
- rocm_v0 0.344: a ROCm release before 0.8.3 (`predict.ROCM_V0_BEFORE`: no custom all-reduce,
  the V0 ROCm backend, no AITER) reaches 0.344 of that. A per-release efficiency, not a
  mechanism: no kernel-level source was found for how far those builds fall short, so it was
  fitted alone (with the next constant) on its six fit records only, dstack's Llama-3.1-405B
  on 8 MI300X with 0.6.3 ROCm builds (BF16 10,000-token prompts; FP8 ShareGPT at 16-1000/s,
  whose prefill-first V0 scheduling `simulate` now follows), which the NVIDIA-fitted constants
  predicted 2-4.5x fast (output throughput).
- rocm_prefix_attention 0.053: chunked prefill on those releases attends through V0's Triton
  prefix-prefill kernel (vllm/attention/ops/prefix_prefill.py via
  `PagedAttention.forward_prefix`; ROCm's flash attention is not called when chunked prefill
  is on, and the kernel "is showing poor performance": vllm-project/vllm#11146, which stopped
  0.6.5 auto-enabling chunked prefill on ROCm), at 0.053 of the attention rate. 0.6.3 turns
  chunked prefill on with a 512-token budget for a context over 32k (Llama-3.1's 131,072), so
  a 10,000-token prompt attends in 20 chunks: 12.3 s measured alone, 2.7 s predicted without
  this term. Fitted with rocm_v0; the value (~1% of the BF16 peak in all) is what those
  records say, no kernel benchmark confirms it.
- moe_default_bandwidth 1.0 (neutral for now): fused_moe_kernel (the "triton" family) where
  the release ships no tuned tile config for the experts' shape on the GPU (`plan.moe_configs`,
  the data built from every sdist's fused_moe/configs) runs `get_default_config`'s one tile
  shape. Fitted jointly with `moe_bandwidth` on the 11 non-MLA Triton fit records (7 on the
  default config: GLM-4.6 on 8 H200, GLM-4.5-Air on 4 H100, MiniMax-M2.5 EP on 4 and 8 H100;
  4 tuned: Qwen3-30B-A3B FP8 on 2 H100 PCIe, Qwen3-Next on 4 B200; MiniMax-M2 on 4 H20-3e and
  Kimi-K2 on 16 H800 at 1/s left out, misses the step time cannot carry): tuned configs stream
  at the dense rate (moe_bandwidth 1.0, its bound) and the default at 0.50 of it, i.e.
  today's 0.5 is the default config's rate, which most of the records `moe_bandwidth` was
  fitted on run. Qwen3-30B-A3B then goes from +21-24% to +1-4% on TPOT, the default-config
  records stay as they are. Not switched on here: `moe_bandwidth` also carries the MLA records
  (fitted with mla_layer_s / mla_seq_s) and ROCm's MXFP4 experts, so the split wants the whole
  refit (benchmarks/plan_accuracy.py --fit includes this constant); fitted alone with
  `moe_bandwidth` at 0.5 it comes to 0.70, which moves MiniMax-M2.5 at EP 8 from +23% to +41%
  on TPOT.
- DeepSeek-V3.2's sparse attention (plan.sparse_attention) adds no constant: its top-k window,
  the heads padded to 64 per GPU and the replicated FP8 indexer are FLOPs and bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from servetune.plan import parallel, sparse_attention
from servetune.plan.simulate import Step
from servetune.review import weights
from servetune.review.hardware import GpuSpec
from servetune.review.model import ModelFacts
from servetune.review.settings import Settings

GB = 1e9


@dataclass(frozen=True)
class Efficiency:
    """The constants calibration fits (module docstring for the defaults and their sources).
    `plan --calibrate` fits the first five; the benchmark's `--fit` fits them all."""

    bandwidth: float = 0.92
    compute: float = 0.376
    step_overhead_s: float = 0.00049
    per_seq_s: float = 95e-6
    request_overhead_s: float = 0.032  # arrival -> schedulable (HTTP, tokenization); in TTFT
    compute_half_tokens: float = 1.2
    layer_s: float = 37e-6
    moe_layer_s: float = 45e-6
    moe_bandwidth: float = 0.5
    mla_layer_s: float = 113e-6  # more per MLA attention layer (the latent path's kernels)
    moe_compute: float = 1.0  # fused-MoE grouped GEMMs' share of the dense GEMMs' rate
    moe_4bit_bandwidth: float = 1.0  # the 4-bit expert kernels' `moe_bandwidth` (MXFP4, Marlin)
    mla_seq_s: float = 2.93e-6  # per decoding request per MLA layer (the latent decode kernels)
    frontend_s: float = 47e-6
    rocm: float = 1.0
    ampere: float = 1.5  # tensor-core rate on Ampere relative to the fitted `compute`
    rocm_v0: float = 0.344  # ROCm releases before 0.8.3: their kernels' share of `rocm`
    rocm_prefix_attention: float = 0.053  # V0's Triton prefix-prefill kernel on ROCm, of `compute`
    rocm_compute: float = 1.41  # ROCm's GEMMs: their share of `compute` (hipBLASLt, AITER)
    aiter_moe_bandwidth: float = 1.0  # AITER's fused MoE (VLLM_ROCM_USE_AITER=1): `moe_bandwidth`
    moe_default_bandwidth: float = 1.0  # fused_moe_kernel on its default config, of the tuned


@dataclass(frozen=True)
class Device:
    """One GPU as the step-time model sees it (peak numbers from the GPU table)."""

    bandwidth_bytes_s: float
    flops: float  # dense peak for the weights' compute type
    link_bytes_s: float  # per direction, GPU to GPU
    name: str = ""
    link_latency_s: float = parallel.ALLREDUCE_LATENCY_S["nvlink"]
    rocm: bool = False
    ampere: bool = False
    attention_flops: float = 0.0  # the attention kernels' peak (BF16; 0: as `flops`)
    fp8_flops: float = 0.0  # the FP8 peak (DSA's indexer scores in FP8; 0: as `attention_flops`)


@dataclass(frozen=True)
class Work:
    """The model's per-GPU costs under one configuration."""

    dense_weight_bytes: float  # read every step, per GPU
    expert_bytes: float  # one routed expert's weights in one layer, whole (all GPUs)
    moe_layers: int
    num_experts: int
    experts_per_token: int
    active_params: float  # per GPU, per token (FLOPs = 2 x this)
    attention_flops_per_pair: float  # prefill, per (token, context token) pair, per GPU
    kv_bytes_per_token: float  # per GPU
    layers: int
    hidden: int
    tp: int
    decode_flops_per_pair: float = 0.0  # decode (0: as prefill)
    moe_shards: int = 1  # GPUs the experts are spread over (TP x DP)
    expert_parallel: bool = False  # whole experts per GPU (--enable-expert-parallel)
    dp: int = 1  # data-parallel engines stepping together
    mla_layers: int = 0  # layers of multi-head latent attention (DeepSeek V2/V3/R1, Kimi K2)
    expert_active_params: float = 0.0  # the routed experts' part of active_params, per GPU
    moe_kernel: str = "triton"  # the experts' kernel family (`moe_kernel`)
    pp: int = 1  # pipeline stages a step passes through in turn (`--pipeline-parallel-size`)
    # DeepSeek-V3.2's sparse attention (plan.sparse_attention): the top-k a query attends (0:
    # dense), the indexer's FP8 FLOPs per (token, earlier token) and K cache bytes per token
    sparse_topk: int = 0
    indexer_flops_per_pair: float = 0.0
    index_bytes_per_token: float = 0.0


# Checkpoint formats whose experts run through 4-bit weight-only MoE kernels (`moe_kernel`)
_MXFP4_METHODS = ("mxfp4", "modelopt_fp4")
_WNA16_METHODS = (
    "gptq",
    "gptq_marlin",
    "awq",
    "awq_marlin",
    "auto-round",
    "auto_round",
    "moe_wna16",
)


def moe_kernel(model: ModelFacts) -> str:
    """The kernel family that runs the routed experts of `model` as vLLM picks it by format
    (0.10-0.17): "4bit" for MXFP4 experts (vllm/model_executor/layers/quantization/mxfp4.py,
    get_mxfp4_backend: triton_kernels' matmul_ogs on Hopper and ROCm, FlashInfer on Blackwell,
    fused_marlin_moe below SM90) and INT4 WNA16 ones (GPTQ/AWQ through fused_marlin_moe);
    "triton" for BF16/FP16 and FP8/INT8 experts (fused_moe.py's fused_moe_kernel, with the
    tuned configs per E, N and GPU under fused_moe/configs)."""
    quant = model.quantization
    if quant is None:
        return "triton"
    if quant.method in _MXFP4_METHODS or quant.scheme == "NVFP4":
        return "4bit"
    if quant.method in _WNA16_METHODS or (quant.method == "compressed-tensors" and quant.bits == 4):
        return "4bit"
    return "triton"


EAGER_LAUNCH_S_PER_LAYER = 150e-6  # ~15 kernel launches of ~10 us per layer (an assumption)
CUDA_GRAPH_MAX_TOKENS = 512  # vLLM's default capture sizes stop at min(2 x max_num_seqs, 512)


def device(spec: GpuSpec, fp8_compute: bool = False) -> Device:
    """Peak figures of one GPU; FP8 peak when the weights run FP8 GEMMs on a GPU that has them."""
    half = spec.bf16_dense_tflops or spec.fp16_dense_tflops or 100.0
    flops = spec.fp8_dense_tflops if fp8_compute and spec.fp8_dense_tflops else half
    kind, link = parallel.link(spec)
    return Device(
        (spec.memory_bandwidth_gbs or 1000.0) * GB,
        flops * 1e12,
        link,
        spec.name,
        link_latency_s=parallel.ALLREDUCE_LATENCY_S[kind],
        rocm=spec.platform == "rocm",
        ampere=spec.platform == "cuda" and spec.architecture == "Ampere",
        attention_flops=half * 1e12,
        fp8_flops=(spec.fp8_dense_tflops or half) * 1e12,
    )


def _attention_flops(model: ModelFacts, tp: int) -> tuple[float, float]:
    """(prefill, decode) attention FLOPs per (token, context token) pair, per GPU."""
    layers, heads = model.num_layers or 0, model.num_attention_heads or 0
    if model.is_mla:
        rope, nope = model.qk_rope_head_dim or 0, model.qk_nope_head_dim or 0
        latent, v_dim = model.kv_lora_rank or 0, model.v_head_dim or nope
        prefill = 2.0 * layers * heads * ((nope + rope) + v_dim) / tp
        decode = 2.0 * layers * heads * ((latent + rope) + latent) / tp
        return prefill, decode
    per_pair = 4.0 * layers * heads * (model.head_dim or 0) / tp
    return per_pair, per_pair


def work(
    model: ModelFacts,
    settings: Settings,
    kv_bytes_per_token: int,
    expert_parallel: bool = False,
    sparse: sparse_attention.Sparse | None = None,
) -> Work:
    """The per-GPU bytes and FLOPs of `model` served with `settings` (`kv_bytes_per_token` per
    GPU, from check's estimate; `sparse`: its sparse attention's costs, where it has one)."""
    total_bytes, params = weights.weight_bytes(model, settings)
    pp = max(settings.pipeline_parallel_size, 1)
    # a step's tokens pass every pipeline stage in turn: the bytes and FLOPs per step are those
    # of one stage's GPUs (TP of them) summed over the stages, i.e. the model over TP GPUs
    world = max(settings.world_size // pp, 1)
    dp = max(settings.data_parallel_size, 1)
    experts = weights.expert_params(model)
    expert_total = float(min(weights.expert_bytes(model, settings), total_bytes))
    n_exp = model.num_experts or 0
    moe_layers = (model.num_layers or 0) - model.num_dense_layers if n_exp else 0
    per_expert = expert_total / (moe_layers * n_exp) if moe_layers and n_exp else 0.0
    k = model.experts_per_token or 0
    active = params - experts + (experts * k / n_exp if n_exp else 0)
    prefill_pair, decode_pair = _attention_flops(model, settings.tensor_parallel_size)
    if sparse is not None:
        prefill_pair, decode_pair = sparse.prefill_flops_per_pair, sparse.decode_flops_per_pair
    return Work(
        dense_weight_bytes=(total_bytes - expert_total) / world,
        expert_bytes=per_expert,
        moe_layers=moe_layers,
        num_experts=n_exp,
        experts_per_token=k,
        active_params=active / world,
        attention_flops_per_pair=prefill_pair,
        kv_bytes_per_token=kv_bytes_per_token * pp,  # check's is one stage's layers
        layers=model.num_layers or 0,
        hidden=model.hidden_size or 0,
        tp=settings.tensor_parallel_size,
        decode_flops_per_pair=decode_pair,
        moe_shards=world * dp,
        expert_parallel=expert_parallel and world * dp > 1,
        dp=dp,
        mla_layers=(model.num_layers or 0) if model.is_mla else 0,
        expert_active_params=(experts * k / n_exp if n_exp else 0.0) / world,
        moe_kernel=moe_kernel(model),
        pp=pp,
        sparse_topk=sparse.topk if sparse else 0,
        indexer_flops_per_pair=sparse.indexer_flops_per_pair if sparse else 0.0,
        index_bytes_per_token=sparse.index_bytes_per_token if sparse else 0.0,
    )


@dataclass(frozen=True)
class StepTime:
    """A `StepCost` for the simulator: seconds per step of one configuration on one device."""

    work: Work
    device: Device
    efficiency: Efficiency = Efficiency()
    eager: bool = False  # --enforce-eager: no CUDA graphs, more CPU time per step
    async_scheduling: bool = False
    graph_max_tokens: int = CUDA_GRAPH_MAX_TOKENS
    rocm_v0: bool = False  # a ROCm release before 0.8.3 (`predict.rocm_v0`)
    prefix_prefill_kernel: bool = False  # ROCm V0 chunked prefill's Triton kernel (`rocm_v0`)
    aiter_moe: bool = False  # the experts run AITER's fused MoE (`predict.aiter_moe`)
    graphs_decode_only: bool = False  # V0: graphs for decode-only steps alone (`graphed`)
    moe_tuned: bool | None = None  # a tuned fused-MoE config ships for the experts (moe_configs)

    def with_efficiency(self, efficiency: Efficiency) -> StepTime:
        return replace(self, efficiency=efficiency)

    def _experts_read(self, tokens: int) -> float:
        """Bytes of routed experts the busiest GPU reads in one step of `tokens` tokens (the
        DP engines' tokens all reach the MoE layer)."""
        w = self.work
        if not w.num_experts or tokens <= 0:
            return 0.0
        seen = tokens * w.dp
        if w.expert_parallel:
            per_gpu = parallel.ep_max_touched(
                w.num_experts, w.experts_per_token, seen, w.moe_shards
            )
            return w.moe_layers * per_gpu * w.expert_bytes
        hit = parallel.touched(w.num_experts, w.experts_per_token, seen)
        return w.moe_layers * hit * w.expert_bytes / w.moe_shards

    def _comm(self, tokens: int) -> float:
        w, d = self.work, self.device
        size = tokens * w.hidden * 2  # bf16 activations
        allreduce = parallel.ring_allreduce_s(size, w.tp, d.link_bytes_s, d.link_latency_s)
        comm = 2 * w.layers * allreduce
        if w.dp > 1 and w.expert_parallel:  # dispatch + combine per MoE layer
            routed = size * w.experts_per_token
            a2a = parallel.all_to_all_s(routed, w.moe_shards, d.link_bytes_s, d.link_latency_s)
            comm += 2 * w.moe_layers * a2a
        if w.pp > 1:  # each stage hands its activations to the next (across nodes)
            hop = size / parallel.INTERNODE_BYTES_S + parallel.INTERNODE_LATENCY_S
            comm += (w.pp - 1) * hop
        return comm

    def floors(self, step: Step) -> float:
        """The kernel floors of one step, and the launches when it runs without CUDA graphs."""
        w, e = self.work, self.efficiency
        floors = e.layer_s * w.layers + e.moe_layer_s * w.moe_layers
        floors += (e.mla_layer_s + e.mla_seq_s * step.decode_seqs) * w.mla_layers
        if not self.graphed(step):
            floors += EAGER_LAUNCH_S_PER_LAYER * w.layers
        return floors

    def graphed(self, step: Step) -> bool:
        """Whether the step replays a captured CUDA graph. V1 (piecewise graphs, attention
        outside them) up to `graph_max_tokens` tokens whatever the mix; V0 a decode-only step
        of at most `graph_max_tokens` requests, and every step with a prompt chunk eagerly."""
        if self.eager:
            return False
        if self.graphs_decode_only:
            return step.prefill_tokens == 0 and step.decode_seqs <= self.graph_max_tokens
        return step.prefill_tokens + step.decode_seqs <= self.graph_max_tokens

    def _attended(self, step: Step) -> tuple[float, float]:
        """(prompt, decode) attention pairs of a step: every earlier token, or under sparse
        attention the top-k at most (the simulator's capped sums; a step built without them,
        as static batching's, capped as a whole)."""
        topk = self.work.sparse_topk
        if not topk:
            return step.prefill_attention, step.decode_context
        prefill = step.prefill_window_pairs or min(
            step.prefill_attention, step.prefill_tokens * topk
        )
        decode = step.decode_window_context or min(step.decode_context, step.decode_seqs * topk)
        return prefill, decode

    def parts(self, step: Step) -> tuple[float, float, float, float]:
        """(CPU overhead, memory, compute, communication) seconds of one step."""
        w, d, e = self.work, self.device, self.efficiency
        scale = e.rocm if d.rocm else 1.0
        if self.rocm_v0:
            scale *= e.rocm_v0
        tokens = step.prefill_tokens + step.decode_seqs
        prefill_pairs, decode_pairs = self._attended(step)
        kv_read = (decode_pairs + step.prefill_attention / max(step.prefill_tokens, 1)) * (
            w.kv_bytes_per_token
        )
        kv_read += step.decode_context * w.index_bytes_per_token
        bandwidth = d.bandwidth_bytes_s * e.bandwidth * scale
        memory = (w.dense_weight_bytes + kv_read) / bandwidth
        # ROCm's MXFP4 experts (CDNA 3: triton_kernels' generic path, no FP4 units) stream as
        # the Triton family's do: the four gpt-oss-120b fit records on one MI300X say so
        four_bit = w.moe_kernel == "4bit" and not d.rocm
        moe_share = e.moe_4bit_bandwidth if four_bit else e.moe_bandwidth
        if self.aiter_moe:
            moe_share = e.aiter_moe_bandwidth
        elif w.moe_kernel == "triton" and self.moe_tuned is False:
            moe_share *= e.moe_default_bandwidth  # get_default_config's one tile shape
        memory += self._experts_read(tokens) / (bandwidth * moe_share)
        decode_pair = w.decode_flops_per_pair or w.attention_flops_per_pair
        # the routed experts' GEMMs run at the fused-MoE kernels' own rate (`moe_compute`)
        dense_params = w.active_params - w.expert_active_params
        gemm = 2 * (dense_params + w.expert_active_params / e.moe_compute) * tokens
        attention = w.attention_flops_per_pair * prefill_pairs + decode_pair * decode_pairs
        if d.ampere:  # Ampere's GEMMs reach more of their datasheet peak than Hopper's
            scale *= e.ampere
        if d.rocm and not self.rocm_v0:  # CDNA's GEMMs from 0.8.3 (V0's own: `rocm_v0`)
            scale *= e.rocm_compute
        efficiency = e.compute * scale * tokens / (tokens + e.compute_half_tokens)
        # attention runs in BF16 whatever the weights (FP8 GEMMs' peak is not attention's)
        if self.prefix_prefill_kernel:
            attention /= e.rocm_prefix_attention
        seconds = gemm / d.flops + attention / (d.attention_flops or d.flops)
        if w.indexer_flops_per_pair:  # DSA's indexer scores every earlier token, in FP8
            indexer = w.indexer_flops_per_pair * (step.prefill_attention + step.decode_context)
            seconds += indexer / (d.fp8_flops or d.attention_flops or d.flops)
        compute = seconds / efficiency if tokens else 0.0
        overhead = e.step_overhead_s + e.per_seq_s * step.running
        return overhead, memory, compute, self._comm(tokens)

    def __call__(self, step: Step) -> float:
        overhead, memory, compute, comm = self.parts(step)
        gpu = max(memory, compute) + comm + self.floors(step)
        # CPU and GPU time add up even with async scheduling: the fit records on 0.23 (L4,
        # async by default) still pay the whole per-step overhead; what async scheduling
        # overlaps (scheduling) is a small part of it next to sampling and output handling
        return max(gpu + overhead, self.efficiency.frontend_s * step.running)
