"""What vLLM's startup profile keeps out of the KV cache, release by release: the activation peak
of the dummy forward and the sampler warm-up, non-torch memory, CUDA graphs, and the total memory
the device reports."""

from __future__ import annotations

from dataclasses import dataclass

from servetune.review.encoder_profile import ENCODER_SPREAD, encoder_peak
from servetune.review.hardware import GpuSpec
from servetune.review.model import ModelFacts
from servetune.review.settings import GIB, Settings
from servetune.vllm.flags import version_at_least

# --- what vLLM's profiler keeps out of the KV cache ----------------------------------------------
# vLLM sizes the KV cache at startup (V0 `worker.determine_num_available_blocks`, V1
# `gpu_worker.determine_available_memory`, every release): budget = total memory x
# --gpu-memory-utilization (the card's total, not what is free: memory other processes hold
# comes out of vLLM's share, and from 0.9 a start with less free than the budget is refused),
# minus the weights, the torch peak of one profiling pass, the memory that is not torch's
# (CUDA context, cuBLAS, NCCL) and, from 0.21, an estimate of CUDA graph memory. The profiling
# pass is a dummy forward at the step's token budget followed by a sampler warm-up at
# max_num_seqs dummy requests (`profile_run`, `_dummy_sampler_run`); a pooling model runs its
# pooler instead of the sampler. Each term below is a `Spread`: the central value the estimate
# uses and the range the evidence allows, which `kv-cache-too-small` weighs.


@dataclass(frozen=True)
class Spread:
    """One term of the estimate in GiB: the central value and the plausible range around it."""

    low: float
    central: float
    high: float

    def scaled(self, factor: float) -> Spread:
        return Spread(self.low * factor, self.central * factor, self.high * factor)


# The sampler warm-up, counted in logits-sized float32 copies (max_num_seqs x vocab x 4 B):
# - the sort-based top-k/top-p (V0, and V1's PyTorch path up to 0.16): bf16 logits 0.5 + float32
#   logits 1 + sorted values 1 + int64 indices 2 + the input index 2 + the radix sort's double
#   buffers 3 = 9.5; vLLM logged 9.4 to 9.7 such copies, 0.7 to 0.11 (1.39 GiB Qwen2.5-1.5B and
#   1.42 GiB Qwen2.5-7B-AWQ at 256 sequences, vllm#12529, vllm#13882; 4.76 Llama-8B, 5.56
#   Qwen3-0.6B, 5.64 Qwen3-32B and 7.38 GiB gpt-oss-20b at 1024 on H100, capacity-formulas 2.3).
# - from 0.17 the PyTorch path masks top-k/top-p in place with Triton (a cached buffer of one
#   row per SM) and from 0.21 FlashInfer's sampler is the default with the native path warmed up
#   after it ("Also warm forward_native"): bf16 logits 0.5 + float32 logits 1 + probabilities 1 +
#   the exponential noise 1 = 3.5 copies either way, plus the Triton buffer.
# - 0.8.0 to 0.11.0 use FlashInfer's sampler when FlashInfer is installed and
#   VLLM_USE_FLASHINFER_SAMPLER is not 0 (topk_topp_sampler.py: `is not False`): vLLM's Docker
#   image installs it in every release, a pip install only with the `vllm[flashinfer]` extra
#   (0.10.1 to 0.11.0) or by hand; from 0.11.1 `flashinfer-python` is a dependency of the CUDA
#   wheel but the sampler is opt-in (VLLM_USE_FLASHINFER_SAMPLER=1) until 0.21. FlashInfer's
#   sampler holds 3.5 copies, the sort 9.6. `Settings.flashinfer_sampler` says which runs; where
#   the command cannot say (a pip install, 0.8.0 to 0.11.0) 9.6 is taken (vllm#27508,
#   gpt-oss-120b on 0.11.0, matched it) and 3.5 is the low end.
_SORT_COPIES = Spread(9.0, 9.6, 9.8)
_FUSED_COPIES = Spread(3.0, 3.5, 4.0)
_TRITON_SAMPLER_FROM = "0.17.0"
_FLASHINFER_SAMPLER_FROM = "0.8.0"  # V1's sampler runs FlashInfer's where settings say so
_FLASHINFER_OPTIONAL_UNTIL = "0.11.1"  # before: a pip install may or may not have FlashInfer
_TRITON_BUFFER_ROWS = 132  # one row per SM (H100: 132), cached across calls
# The forward pass at the step's token budget, from what vLLM's layers allocate (LlamaMLP,
# LlamaDecoderLayer, every release): while down_proj writes its output (hidden) the residual
# stream and the layer's input (2 x hidden) and the MLP's gate_up (2 x I/tp) and activation
# (I/tp) outputs are alive: 3 x hidden + 3 x I/tp values per token, the layer's peak (attention's
# q, k, v and output are narrower). Llama-3.1-8B: 110.6 KB a token, as vLLM 0.6 logged at 20000
# and 29000 tokens (2.07 and 2.99 GiB, vllm#10517).
_FORWARD_HIDDEN = 3
_FORWARD_MLP = 3
# Marlin kernels (GPTQ and AWQ on sm80+) copy their input into `a_tmp` (M x K) on every call
# before 0.8.0 (gptq_marlin.cu; from 0.8.0 only with act order): one more I/tp at down_proj.
_MARLIN_COPY_UNTIL = "0.8.0"
_MARLIN_METHODS = ("gptq", "gptq_marlin", "awq", "awq_marlin", "auto-round", "auto_round")
_MARLIN_MIN_CAPABILITY = 80
# fused_moe (MoE layers, fused_experts_impl) allocates per token of a chunk of
# VLLM_FUSED_MOE_CHUNK_SIZE (32768) tokens: intermediate_cache1 (topk x 2I/tp, gate_up),
# intermediate_cache2 (topk x I/tp, the activation) and intermediate_cache3 (topk x hidden, the
# weighted outputs). Before 0.8.0 all three are separate; from 0.8.0 cache1 and cache3 share one
# buffer (`cache13`, topk x max(2I/tp, hidden)). DeepGEMM (FP8 block) is off by default there
# (VLLM_USE_DEEP_GEMM=0 through 0.9.2); the FP8 path's quantized inputs (1 byte a value) and
# moe_align_block_size's sorted ids are under a percent of it. Qwen3-235B-A22B-FP8 at TP 4,
# 8192 tokens: 8 x (4096 + 384) x 2 B = 0.55 GiB, below the sampler warm-up (5.6 GiB at 1024
# sequences): this term does not explain vllm#21348's 2 GiB smaller KV cache.
_MOE_CHUNK_TOKENS = 32768
_MOE_SHARED_CACHE_FROM = "0.8.0"
# Before 0.6.4 the profiler took the peak as the drop in free memory since the worker started
# (worker.py `init_gpu_memory - free_gpu_memory`) without emptying torch's cache first: what the
# caching allocator reserved, not what was allocated at once. Replaying a decoder layer's
# allocations through a best-fit, split-and-coalesce allocator reserves 1.14 to 1.19 x the
# allocated peak (Llama 8B to 405B).
_TORCH_CACHE_FROM = "0.6.4"
_TORCH_CACHE_FACTOR = 1.16
_FORWARD_SPREAD = (0.8, 1.2)
# Non-torch memory: 0.13-0.14 GiB at TP 1 and 0.55 GiB at TP 2 on H100 (llm-d), 0.16 GiB on an
# H100 in 0.6.6 (vllm#12126), 0.33 GiB per rank at PP 2 (vllm#14452).
_NON_TORCH_TP1 = Spread(0.1, 0.15, 0.3)
_NON_TORCH_MULTI = Spread(0.3, 0.6, 0.9)
# ROCm holds more outside torch (the HIP runtime, hipBLASLt's workspaces): 0.34 and 0.44 GiB on
# one Radeon PRO W7900 in 0.6.4 (llmtracker); 6.07 GiB was logged on an MI300X at 4096
# sequences with 20 scheduler steps, an outlier the range leaves out.
_NON_TORCH_ROCM_TP1 = Spread(0.2, 0.4, 0.7)
# Before 0.6.4 the drop in free memory also counts what ROCm loads and allocates after the worker
# started: RCCL's buffers (set up after `init_gpu_memory` was read) and the BLAS libraries'
# kernels and workspaces loaded by the first GEMM of the profile run. Llama-2-7B on MI300X in
# 0.6.3 (llmtracker) left 2.50 GiB at TP 1 and 5.72 GiB at TP 8 between the budget, the weights and
# the KV cache, of which the activation peak is 0.3 to 0.4 GiB.
_NON_TORCH_ROCM_EARLY = Spread(1.5, 2.1, 2.6)
_NON_TORCH_ROCM_EARLY_MULTI = Spread(4.0, 5.4, 6.5)
# CUDA graphs are profiled into the budget since vLLM 0.21 (`profile_cudagraph_memory`, logged
# "Estimated CUDA graph memory"). Graphs are captured for batch sizes up to
# min(2 x max_num_seqs x (1 + speculative tokens), 512) (config/vllm.py) and share one memory
# pool, which grows with the largest: 0.14 GiB at max-num-seqs 2 (club-3090#1139, 0.27.1) and
# 0.17 GiB (club-3090#127); llm-d measured -0.45 to +1.03 GiB after capture at 1024 sequences.
CUDA_GRAPH_PROFILED_FROM = "0.21.0"
_CUDA_GRAPH_BASE_GIB = 0.1
_CUDA_GRAPH_LARGEST_GIB = 0.4  # added at a largest capture size of 512
_CUDA_GRAPH_MAX_CAPTURE = 512
_CUDA_GRAPH_SPREAD = (0.0, 2.0)  # llm-d's -0.45 GiB: capture can even free memory
# What CUDA reports as a card's total varies by a tenth of a GiB around `device_total_gib`
# (79.11 to 79.33 GiB for 80 GB A100/H100 cards).
DEVICE_TOTAL_SPREAD_GIB = 0.12


def _marlin_input_copy(model: ModelFacts, version: str | None, capability: int | None) -> bool:
    quant = model.quantization
    if quant is None or quant.method.lower() not in _MARLIN_METHODS:
        return False
    if capability is not None and capability < _MARLIN_MIN_CAPABILITY:
        return False
    return version is not None and not version_at_least(version, _MARLIN_COPY_UNTIL)


def _forward_values_per_token(
    model: ModelFacts, settings: Settings, tokens: int, version: str | None, capability: int | None
) -> float:
    """Activation values alive at the dummy forward's peak, per token of the step."""
    tp = settings.tensor_parallel_size
    hidden = model.hidden_size or 0
    if model.is_encoder:  # BERT-style MLPs have two matrices, not three (no gate)
        return _FORWARD_HIDDEN * hidden + 2 * (model.intermediate_size or 0) / tp
    dense = (model.dense_intermediate_size or model.intermediate_size or 0) / tp
    widest = _FORWARD_MLP * dense if not model.is_moe else 0.0
    if _marlin_input_copy(model, version, capability):
        widest += dense
    if model.is_moe and model.experts_per_token and model.moe_intermediate_size:
        chunk = min(tokens, _MOE_CHUNK_TOKENS) / tokens if tokens else 1.0
        gate_up, act = 2 * model.moe_intermediate_size / tp, model.moe_intermediate_size / tp
        shared = version is None or version_at_least(version, _MOE_SHARED_CACHE_FROM)
        per_expert = (max(gate_up, hidden) if shared else gate_up + hidden) + act
        widest = max(widest, model.experts_per_token * per_expert * chunk)
    return _FORWARD_HIDDEN * hidden + widest


def forward_peak_gib(
    model: ModelFacts,
    settings: Settings,
    tokens: int,
    version: str | None = None,
    capability: int | None = None,
) -> float:
    """The torch peak of the dummy forward at `tokens` tokens, per GPU (GiB)."""
    values = _forward_values_per_token(model, settings, tokens, version, capability)
    return tokens * values * _activation_bytes(settings) / GIB


def _activation_bytes(settings: Settings) -> int:
    return 4 if settings.dtype == "float32" else 2


def torch_cache_factor(version: str | None) -> float:
    """What the profiled peak counts per allocated byte: torch's cached reservation before
    0.6.4, the allocated peak itself from then on."""
    if version is not None and not version_at_least(version, _TORCH_CACHE_FROM):
        return _TORCH_CACHE_FACTOR
    return 1.0


def sampler_copies(version: str | None, flashinfer: bool | None = None) -> Spread:
    """Logits-sized float32 copies the sampler warm-up holds at its peak, in this release (no
    release: the sort-based sampler of releases before 0.17). `flashinfer`: whether FlashInfer's
    sampler runs (`Settings.flashinfer_sampler`); None where the command does not say."""
    if version is None or not version_at_least(version, _TRITON_SAMPLER_FROM):
        if version and version_at_least(version, _FLASHINFER_SAMPLER_FROM):
            if flashinfer is not None:
                return _FUSED_COPIES if flashinfer else _SORT_COPIES
            if not version_at_least(version, _FLASHINFER_OPTIONAL_UNTIL):
                return Spread(_FUSED_COPIES.low, _SORT_COPIES.central, _SORT_COPIES.high)
        return _SORT_COPIES
    return _FUSED_COPIES


def sampler_peak(model: ModelFacts, settings: Settings, version: str | None = None) -> Spread:
    """The sampler's share of the profiling peak (GiB): max_num_seqs x vocab x 4 B x the copies
    of `sampler_copies`, plus Triton's cached buffer from 0.17; none for a pooling model."""
    if is_pooling(model, settings):
        return Spread(0.0, 0.0, 0.0)
    logits = settings.max_num_seqs * (model.vocab_size or 0) * 4 / GIB
    peak = sampler_copies(version, settings.flashinfer_sampler).scaled(logits)
    if version and version_at_least(version, _TRITON_SAMPLER_FROM):
        rows = min(settings.max_num_seqs, _TRITON_BUFFER_ROWS) / settings.max_num_seqs
        buffer = rows * logits
        return Spread(peak.low, peak.central + buffer, peak.high + buffer)
    return peak


def sampler_peak_gib(model: ModelFacts, settings: Settings, version: str | None = None) -> float:
    """The central value of `sampler_peak`."""
    return sampler_peak(model, settings, version).central


def cuda_graph_capture_max(settings: Settings) -> int:
    """The largest batch vLLM captures a CUDA graph for (0.11+: min(2 x max_num_seqs, 512))."""
    return min(2 * settings.max_num_seqs, _CUDA_GRAPH_MAX_CAPTURE)


def cuda_graph_gib(settings: Settings, version: str | None) -> Spread:
    """CUDA graph memory counted against the budget: none before 0.21 (captured after the KV
    cache is sized) or with --enforce-eager; else a base plus a part growing with the largest
    capture size."""
    if settings.enforce_eager or not version:
        return Spread(0.0, 0.0, 0.0)
    if not version_at_least(version, CUDA_GRAPH_PROFILED_FROM):
        return Spread(0.0, 0.0, 0.0)
    share = cuda_graph_capture_max(settings) / _CUDA_GRAPH_MAX_CAPTURE
    central = _CUDA_GRAPH_BASE_GIB + _CUDA_GRAPH_LARGEST_GIB * share
    low, high = _CUDA_GRAPH_SPREAD
    return Spread(central * low, central, central * high)


def non_torch_gib(settings: Settings, platform: str = "cuda", version: str | None = None) -> Spread:
    """Memory outside torch's allocator (CUDA/HIP context, cuBLAS/hipBLASLt, NCCL buffers)."""
    if (
        platform == "rocm"
        and version is not None
        and not version_at_least(version, _TORCH_CACHE_FROM)
    ):
        return _NON_TORCH_ROCM_EARLY_MULTI if settings.world_size > 1 else _NON_TORCH_ROCM_EARLY
    if settings.world_size > 1:
        return _NON_TORCH_MULTI
    return _NON_TORCH_ROCM_TP1 if platform == "rocm" else _NON_TORCH_TP1


def reserve_terms(
    model: ModelFacts,
    settings: Settings,
    version: str | None = None,
    platform: str = "cuda",
    capability: int | None = None,
    *,
    last_stage: bool = True,
    first_stage: bool = True,
) -> dict[str, Spread]:
    """The memory vLLM's profiler keeps out of the KV cache besides the weights, per GPU, term
    by term: `activation` (the largest of the forward pass at max_num_batched_tokens, the
    sampler warm-up at max_num_seqs and a vision model's encoder pass, as torch's cache holds
    them before 0.6.4), `non_torch`
    and `cuda_graphs`. `capability` (the GPU's, 80 for an A100) decides the kernels used.
    With pipeline parallelism only the last stage samples (`profile_run`: `is_last_rank`) and
    only the first runs the vision encoder: `last_stage` / `first_stage` say which one this is."""
    tokens = settings.max_num_batched_tokens or max(settings.max_model_len or 0, 2048)
    cached = torch_cache_factor(version)
    forward = forward_peak_gib(model, settings, tokens, version, capability) * cached
    low, high = _FORWARD_SPREAD
    sampler = sampler_peak(model, settings, version).scaled(cached if last_stage else 0.0)
    # A vision model's encoder pass comes first; what it keeps (embeddings, cross-attention
    # states) is still alive during the decoder's forward (encoder_profile).
    encoder = encoder_peak(model, settings, version) if first_stage else None
    kept = encoder.kept_gib * cached if encoder else 0.0
    enc = encoder.pass_gib * cached if encoder else 0.0
    enc_low, enc_high = ENCODER_SPREAD
    activation = Spread(
        max(forward * low + kept, sampler.low, enc * enc_low),
        max(forward + kept, sampler.central, enc),
        max(forward * high + kept, sampler.high, enc * enc_high),
    )
    non_torch = non_torch_gib(settings, platform, version)
    graphs = cuda_graph_gib(settings, version)
    return {"activation": activation, "non_torch": non_torch, "cuda_graphs": graphs}


def reserve_gib(model: ModelFacts, settings: Settings, version: str | None = None) -> float:
    """The central reserve per GPU: the sum of `reserve_terms`."""
    return sum(term.central for term in reserve_terms(model, settings, version).values())


# What ROCm's hipMemGetInfo reports as a card's total, as vLLM logged it (`total_gpu_memory`):
# an Instinct card nearly all of its HBM (MI300X: 191.98 GiB of 192), a Radeon PRO W7900 much
# less than its 48 GB (44.98 GiB in 0.4.1 and in 0.6.4; llmtracker's MI300X and W7900 pages).
_ROCM_REPORTED_GIB = {"MI300X": 191.98, "Radeon-PRO-W7900": 44.98}
_ROCM_HELD_BACK_GIB = 0.02


# What CUDA reports as the total (cudaMemGetInfo: vLLM's `total_gpu_memory`, torch's "total
# capacity") on datacenter cards whose ECC or reserved memory puts them well under the formula in
# `device_total_gib`. nvidia-smi's "MiB total" counts a few hundred MiB more than this on the same
# card (0.43 to 0.60 GiB in the pairs below), so only vLLM's and torch's own figures are used.
_CUDA_REPORTED_GIB = {
    # vLLM 0.7.2 logged total_gpu_memory (44.39GiB) on an L40 whose nvidia-smi showed 46068MiB
    # (44.99 GiB), one public log (stored index id 60430572081)
    "L40": 44.39,
    # L40S: nvidia-smi 46068 MiB as the L40 (modal-labs/modal-client#2797, akash-network/
    # provider-configs#99); vLLM logged 44.39 GiB ("44.4 GiB total per L40S", stored id
    # 53675711166) and 44.31 GiB on 0.7.2 (vllm-project/vllm#15196)
    "L40S": 44.39,
    # A10: vLLM 0.7.2 logged total_gpu_memory (22.06GiB), the same author's nvidia-smi shows
    # 23028MiB (22.49 GiB) (stored id 60663571995, beside 60430572081)
    "A10": 22.06,
    # L4: torch's "GPU 0 has a total capacity of 21.96 GiB" in vLLM OOMs on L4 (Cloud Run and
    # SageMaker logs, stored ids 66663408882, 59058689281); nvidia-smi 23034MiB (modal-labs/
    # modal-client#2797, NVIDIA/TensorRT-LLM#2398)
    "L4": 21.96,
    # T4: vLLM 0.7.2 logged total_gpu_memory (14.56GiB) on a Colab "Tesla T4" (stored id
    # 55765941562); torch "total capacty of 14.58 GiB" (datawhalechina/self-llm#162);
    # nvidia-smi 15360MiB (modal-labs/modal-client#2797)
    "T4": 14.56,
    # A40 (an A40-48Q vGPU profile): total_gpu_memory=47.74GiB, vLLM 0.6.4.post1
    # (vllm-project/vllm#11230, fit record vllm-11230-qwen25-72b-gptq-a40-v064post1)
    "A40": 47.74,
}


def device_total_gib(nominal_gib: float, gpu: GpuSpec | None = None) -> float:
    """The memory the driver reports for a card (what gpu_memory_utilization multiplies): a
    little under its nominal size. CUDA: the figure logged for the card (`_CUDA_REPORTED_GIB`),
    else a fit on vLLM's logged `total_gpu_memory`: 79.11 to 79.33 GiB for 80 GB A100/H100
    cards, 23.58 GiB for an RTX 3090 (vllm#10517); ROCm: the figure logged for the card, else
    the nominal size less 20 MiB (`_ROCM_REPORTED_GIB`)."""
    if gpu is not None and gpu.platform == "rocm":
        return _ROCM_REPORTED_GIB.get(gpu.name, nominal_gib - _ROCM_HELD_BACK_GIB)
    # the logged figure holds for the card's own memory, not for a size the user gave instead
    if gpu is not None and gpu.name in _CUDA_REPORTED_GIB and nominal_gib == gpu.memory_gib:
        return _CUDA_REPORTED_GIB[gpu.name]
    return nominal_gib * (1 - 0.0047) - 0.42


def is_pooling(model: ModelFacts, settings: Settings) -> bool:
    """Served with a pooler: an embedding, reranking or classification architecture, or any
    model run with `--runner pooling` / `--task embed|score|classify`."""
    return model.is_pooling or settings.pooling
