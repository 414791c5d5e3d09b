"""The memory estimate: what is left for the KV cache on each GPU and how many sequences fit.

The estimate puts together one module per concept, each formula in one place: `weights` (bytes
by quantization method), `kv_cache` (bytes per token, per sequence, hybrid state) and
`startup_profile` (what vLLM's profiling pass keeps out of the KV cache, by release).
Sources: vLLM's KV cache specs and memory profiler (../shared/reference/vllm-rules.md section 5)
and the measured reserves in ../shared/reference/capacity-formulas.md section 2.3.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from servetune.review import pipeline_stages
from servetune.review.encoder_profile import (
    encoder_peak,
    tower_rank_extra_bytes,
    tower_weight_bytes,
)
from servetune.review.hardware import GpuSpec
from servetune.review.kv_cache import (
    compressed_pool,
    hybrid_pool,
    kv_bytes_per_sequence,
    kv_bytes_per_token_layer,
    kv_layers,
    mla_latent_cached,
    sliding_capacity,
)
from servetune.review.model import ModelFacts
from servetune.review.pipeline_stages import Stage
from servetune.review.settings import GIB, Settings, is_multimodal
from servetune.review.startup_profile import (
    CUDA_GRAPH_PROFILED_FROM,
    DEVICE_TOTAL_SPREAD_GIB,
    device_total_gib,
    forward_peak_gib,
    is_pooling,
    reserve_terms,
    sampler_copies,
    sampler_peak,
    torch_cache_factor,
)
from servetune.review.weights import expert_bytes, rank_extra_bytes, weight_bytes
from servetune.vllm.flags import version_at_least


@dataclass(frozen=True)
class Estimate:
    """Per-GPU memory picture of one vLLM instance. None marks what cannot be known (for
    example the KV cache without a GPU or `--kv-cache-memory-bytes`)."""

    params: int
    weights_gib_per_gpu: float
    kv_bytes_per_token_per_gpu: int  # one token of context across all attention layers
    kv_bytes_per_seq_per_gpu: int | None  # one sequence of max_model_len tokens
    reserve_gib_per_gpu: float  # activation peak + runtime overhead held back from the KV cache
    budget_gib_per_gpu: float | None  # memory x gpu_memory_utilization
    kv_cache_gib_per_gpu: float | None
    kv_cache_tokens: int | None
    max_concurrent_seqs_at_max_model_len: float | None
    max_model_len_that_fits: int | None  # longest context one sequence could have
    weight_bits: float  # average bits per weight as stored
    # Where this estimate is known to be rough, as ids (texts: review table "estimate-note.<id>")
    notes: tuple[str, ...] = ()
    # budget - weights - reserve before clamping at 0: negative when nothing is left for KV
    kv_available_gib_per_gpu: float | None = None
    # The same with every uncertain term at the end of its range (`Spread`): (the least, the
    # most) KV memory the evidence allows, and the longest sequence the most would hold.
    kv_available_gib_range: tuple[float, float] | None = None
    max_model_len_that_fits_optimistic: int | None = None
    # A vision model's encoder pass at startup (encoder_profile): its peak per GPU, the images it
    # ran at once, and what would be left for the KV cache without it (GiB per GPU)
    encoder_gib_per_gpu: float | None = None
    encoder_items: int | None = None
    kv_available_without_encoder_gib: float | None = None

    def to_json(self) -> dict[str, object]:
        """The estimate as `check --format json` spells it (its `estimate` object)."""
        return {
            "weights_gib_per_gpu": _round(self.weights_gib_per_gpu),
            "kv_bytes_per_token_per_gpu": self.kv_bytes_per_token_per_gpu,
            "kv_cache_gib_per_gpu": _round(self.kv_cache_gib_per_gpu),
            "kv_cache_tokens": self.kv_cache_tokens,
            "max_concurrent_seqs_at_max_model_len": _round(
                self.max_concurrent_seqs_at_max_model_len
            ),
            "reserve_gib_per_gpu": _round(self.reserve_gib_per_gpu),
            "budget_gib_per_gpu": _round(self.budget_gib_per_gpu),
            "params": self.params,
            "notes": list(self.notes),  # ids; texts under "estimate-note.<id>" in review texts
        }


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


_MULTIMODAL_ENCODER_GIB = 2.0
# MoE profiling peaks above the dense arithmetic: 2 GiB per GPU for Qwen3-235B-A22B-FP8 at TP 4
# and 8192 tokens (vllm#21348); none seen for gpt-oss (vllm#23278, vllm#27508).
_MOE_EXTRA_GIB = 2.5


def _pessimistic_extra(model: ModelFacts) -> float:
    """What the known misses can take beyond the central reserve (GiB per GPU): an encoder
    whose profile is modelled is in the reserve's range instead."""
    extra = _MOE_EXTRA_GIB if model.is_moe else 0.0
    unmodelled = is_multimodal(model) and not (model.vision and model.vision.profiled)
    return extra + (_MULTIMODAL_ENCODER_GIB if unmodelled else 0.0)


def _notes(
    model: ModelFacts, settings: Settings, version: str | None, *, release_known: bool = True
) -> tuple[str, ...]:
    notes: list[str] = []
    quant = model.quantization
    if quant is not None and quant.method == "mxfp4":
        notes.append("mxfp4-padding")
    if quant is not None and quant.method in ("awq", "gptq", "compressed-tensors", "gguf"):
        notes.append("group-quant-layout")
    if model.is_mla and not mla_latent_cached(model, settings, version):
        notes.append("mla-full-kv")
    if model.is_moe:
        notes.append("moe-activation")
    if model.vision is not None and model.vision.profiled:
        notes.append("encoder-profile")
    elif is_multimodal(model):
        notes.append("multimodal-encoder")
    if model.is_encoder:
        notes.append("encoder-no-kv")
    elif not is_pooling(model, settings):
        copies = sampler_copies(version, settings.flashinfer_sampler)
        if copies.central - copies.low > 1.0:
            notes.append("sampler-flashinfer")
    return (*notes, *_release_notes(model, settings, version if release_known else None))


def _release_notes(model: ModelFacts, settings: Settings, version: str | None) -> list[str]:
    """Notes on what the release (None: not given, the newest assumed) changes in the profile."""
    if version is None:
        return ["release-unknown-unchunked"] if _unchunked_would_hold_more(model, settings) else []
    # CUDA graphs move the result by about a GiB: worth saying when the budget is near full.
    if not settings.enforce_eager and settings.gpu_memory_utilization >= 0.95:
        profiled = version_at_least(version, CUDA_GRAPH_PROFILED_FROM)
        return ["cuda-graphs-estimated" if profiled else "cuda-graphs-outside"]
    return []


# A forward peak this much larger (GiB per GPU) is worth a note.
_UNCHUNKED_NOTE_GIB = 1.0


def _unchunked_would_hold_more(model: ModelFacts, settings: Settings) -> bool:
    """Without a release the estimate takes the newest defaults (chunked prefill); V0 before
    0.8 profiled a whole max_model_len prompt when it did not chunk (up to 32K tokens, and above
    it before 0.5.3): true when that forward pass would hold back over a GiB more."""
    length, budget = settings.max_model_len, settings.max_num_batched_tokens
    if not (settings.chunked_prefill and length and budget and length > budget):
        return False
    now = forward_peak_gib(model, settings, budget)
    return forward_peak_gib(model, settings, length) - now > _UNCHUNKED_NOTE_GIB


def _longest_fitting(
    model: ModelFacts, settings: Settings, budget: int, version: str | None = None
) -> int:
    """The longest sequence whose KV fits in `budget` bytes (binary search over lengths)."""
    low, high = 0, max(settings.max_model_len or 0, 1) * 4
    while low < high:
        mid = (low + high + 1) // 2
        if kv_bytes_per_sequence(model, settings, mid, version) <= budget:
            low = mid
        else:
            high = mid - 1
    block = settings.block_size
    return low // block * block if low >= block else low


def _kv_capacity(
    model: ModelFacts,
    settings: Settings,
    kv_bytes: float,
    per_token: int,
    version: str | None = None,
) -> tuple[int, float | None, int | None]:
    """(KV tokens, sequences at max_model_len, longest sequence that fits) for a KV pool."""
    block, length = settings.block_size, settings.max_model_len
    per_seq = kv_bytes_per_sequence(model, settings, length, version) if length else None
    pool = hybrid_pool(model, settings, version)
    compressed = compressed_pool(model, settings)
    concurrency: float | None
    if pool is not None and length:
        tokens, concurrency = pool.capacity(int(kv_bytes), length, version)
    elif compressed is not None and length:
        tokens, concurrency = compressed.capacity(int(kv_bytes), length)
    elif per_seq and model.sliding_layers and length:
        tokens, concurrency = sliding_capacity(model, settings, kv_bytes, length, version)
    else:
        tokens = int(kv_bytes // (per_token * block)) * block
        concurrency = tokens / length if length else None
    # vLLM's block pool holds one block back (the null block); its admission check plans
    # against the rest (vllm/v1/core/kv_cache_utils.py, 0.32: "Reserve the null block").
    usable = int(kv_bytes) - per_token * block
    fits = _longest_fitting(model, settings, usable, version) if length else None
    return tokens, concurrency, fits


@dataclass(frozen=True)
class _Memory:
    """The per-GPU memory sums one estimate is made of (GiB)."""

    weights: float
    reserve: float
    budget: float | None
    available: float | None
    available_range: tuple[float, float] | None


def _memory(
    model: ModelFacts,
    settings: Settings,
    memory_gib: float | None,
    version: str | None,
    weights: float,
    *,
    gpu: GpuSpec | None = None,
    stage: Stage | None = None,
) -> _Memory:
    """Weights (GiB per GPU), reserve and budget, and what is left for the KV cache: its central
    value and its range with every uncertain term at one end (group-quant layouts +-3% of the
    weights). `stage` is the pipeline stage these figures are for (None: every GPU alike)."""
    platform = gpu.platform if gpu is not None else "cuda"
    capability = gpu.capability if gpu is not None else None
    ends = {"last_stage": stage.last, "first_stage": stage.first} if stage is not None else {}
    terms = reserve_terms(model, settings, version, platform, capability, **ends).values()
    reserve = sum(t.central for t in terms)
    if not memory_gib:
        return _Memory(weights, reserve, None, None, None)
    total = device_total_gib(memory_gib, gpu)
    util = settings.gpu_memory_utilization
    budget = total * util
    quant = model.quantization
    layout = 0.03 if quant is not None and quant.method not in _EXACT_LAYOUTS else 0.0
    most = (total + DEVICE_TOTAL_SPREAD_GIB) * util - weights * (1 - layout)
    most -= sum(t.low for t in terms)
    least = (total - DEVICE_TOTAL_SPREAD_GIB) * util - weights * (1 + layout)
    least -= sum(t.high for t in terms) + _pessimistic_extra(model)
    return _Memory(weights, reserve, budget, budget - weights - reserve, (least, most))


@dataclass(frozen=True)
class _Staged:
    """The memory of the stage that binds, and how its KV memory converts to what an even
    split's per-GPU layers (`kv_layers`) would hold: `scale` for its blocks, `check_scale` for
    the one-sequence check (which 0.14 to 0.16 make against every layer of the model)."""

    memory: _Memory
    scale: float
    check_gib: float | None
    check_scale: float


def _staged_memory(
    model: ModelFacts,
    settings: Settings,
    version: str | None,
    total_bytes: int,
    *,
    memory_gib: float | None,
    gpu: GpuSpec | None,
    cards: Sequence[GpuSpec],
) -> _Staged:
    """Pipeline parallel: each stage's weights on its own cards, and the stage whose KV memory
    holds the fewest tokens (vLLM gives every stage the smallest stage's blocks)."""
    found = pipeline_stages.stages(
        model, settings, total_bytes, cards=cards, gpu=gpu, version=version
    )
    even = -(-(model.num_layers or 1) // settings.pipeline_parallel_size)
    sized = [
        (
            stage,
            _memory(
                model,
                settings,
                stage.gpu.memory_gib if stage.gpu else memory_gib,
                version,
                stage.weight_bytes_per_gpu / GIB,
                gpu=stage.gpu,
                stage=stage,
            ),
        )
        for stage in found
    ]
    known = [(stage, mem) for stage, mem in sized if mem.available is not None]
    if not known:
        stage, mem = max(sized, key=lambda pair: pair[1].weights)
        return _Staged(mem, 1.0, None, 1.0)
    stage, mem = min(known, key=lambda pair: (pair[1].available or 0.0) / max(pair[0].layers, 1))
    scale = even / max(stage.layers, 1)
    if pipeline_stages.merged_check(version):
        least = min(m.available or 0.0 for _, m in known)
        return _Staged(mem, scale, least, even / max(model.num_layers or 1, 1))
    return _Staged(mem, scale, None, scale)


_EXACT_LAYOUTS = ("fp8", "fbgemm_fp8", "mxfp4")  # stored bytes known to the byte


def estimate(
    model: ModelFacts,
    settings: Settings,
    memory_gib: float | None,
    *,
    version: str | None = None,
    gpu: GpuSpec | None = None,
    release_known: bool = True,
    cards: Sequence[GpuSpec] = (),
) -> Estimate | None:
    """The per-GPU memory estimate, or None when the model's shape is not known well enough.

    `memory_gib` is the card's nominal memory (`device_total_gib` turns it into what the driver
    reports for `gpu`, CUDA's or ROCm's); `version` (the vLLM release) decides the sampler's
    warm-up, whether CUDA graphs count against the budget and how DeepSeek's MLA is cached;
    `release_known` False says it was assumed (the newest), which the notes weigh. `cards` are
    a mixed machine's GPUs in order: with pipeline parallelism each stage runs on its own."""
    if not (model.hidden_size and model.num_layers and model.head_dim):
        return None
    total_bytes, params = weight_bytes(model, settings)
    per_token = kv_layers(model, settings) * kv_bytes_per_token_layer(model, settings, version)
    staged: _Staged | None = None
    if settings.pipeline_parallel_size > 1:
        staged = _staged_memory(
            model, settings, version, total_bytes, memory_gib=memory_gib, gpu=gpu, cards=cards
        )
        mem = staged.memory
    else:
        weights = (
            (total_bytes + tower_weight_bytes(model, settings)) / settings.tensor_parallel_size
            + rank_extra_bytes(model, settings, version)
            + tower_rank_extra_bytes(model, settings)
        ) / GIB
        if settings.expert_parallel and settings.data_parallel_size > 1:
            # Expert parallelism spreads the routed experts over every DP x TP rank (vLLM's
            # FusedMoE: ep_size = dp_size x tp_size); the rest is replicated per DP rank.
            experts = expert_bytes(model, settings)
            share = 1 - 1 / settings.data_parallel_size
            weights -= experts * share / settings.tensor_parallel_size / GIB
        # `--cpu-offload-gb`: that many GiB of each GPU's weights live in CPU memory instead
        # (the loader's `maybe_offload_to_cpu` moves parameters until the budget is spent)
        weights = max(0.0, weights - settings.cpu_offload_gib)
        mem = _memory(model, settings, memory_gib, version, weights, gpu=gpu)
    # A stage's KV memory as the even split's per-GPU layers would count it (`_Staged`)
    scale = staged.scale if staged is not None else 1.0
    length = settings.max_model_len
    if settings.kv_cache_memory_bytes is not None:
        kv_bytes: float | None = float(settings.kv_cache_memory_bytes)
    else:
        kv_bytes = None if mem.available is None else max(0.0, mem.available * GIB)
    tokens = concurrency = fits = optimistic = None
    if kv_bytes is not None and per_token:
        tokens, concurrency, fits = _kv_capacity(
            model, settings, kv_bytes * scale, per_token, version
        )
        check_scale, shift = scale, 0.0
        if staged is not None and settings.kv_cache_memory_bytes is None:
            check_scale = staged.check_scale
            if staged.check_gib is not None and mem.available is not None:
                shift = staged.check_gib - mem.available
                checked = max(0.0, staged.check_gib * GIB) * check_scale
                fits = _kv_capacity(model, settings, checked, per_token, version)[2]
        if mem.available_range is not None and settings.kv_cache_memory_bytes is None:
            most = max(0.0, (mem.available_range[1] + shift) * GIB) * check_scale
            optimistic = _kv_capacity(model, settings, most, per_token, version)[2]
        concurrency, fits, optimistic = _one_engine(
            model, settings, per_token, version, (kv_bytes * scale, concurrency, fits, optimistic)
        )
    per_seq = (
        kv_bytes_per_sequence(model, settings, length, version) if length and per_token else None
    )
    if per_seq is not None:
        per_seq = int(per_seq / scale)
    per_token = int(per_token / scale)
    # Nothing left for the KV cache: say so, the figures are a shortfall (vLLM refuses to start).
    no_room = mem.available is not None and mem.available <= 0
    short = ("no-kv-memory",) if no_room and settings.kv_cache_memory_bytes is None else ()
    encoder = _encoder_facts(model, settings, version, mem)
    return Estimate(
        params=params,
        weights_gib_per_gpu=mem.weights,
        kv_bytes_per_token_per_gpu=per_token,
        kv_bytes_per_seq_per_gpu=per_seq,
        reserve_gib_per_gpu=mem.reserve,
        budget_gib_per_gpu=mem.budget,
        kv_cache_gib_per_gpu=None if kv_bytes is None or not per_token else kv_bytes / GIB,
        kv_cache_tokens=tokens,
        max_concurrent_seqs_at_max_model_len=concurrency,
        max_model_len_that_fits=fits,
        weight_bits=8 * total_bytes / params if params else 0.0,
        notes=_notes(model, settings, version, release_known=release_known) + short,
        kv_available_gib_per_gpu=mem.available,
        kv_available_gib_range=mem.available_range,
        max_model_len_that_fits_optimistic=optimistic,
        encoder_gib_per_gpu=encoder[0],
        encoder_items=encoder[1],
        kv_available_without_encoder_gib=encoder[2],
    )


def _one_engine(
    model: ModelFacts,
    settings: Settings,
    per_token: int,
    version: str | None,
    figures: tuple[float, float | None, int | None, int | None],
) -> tuple[float | None, int | None, int | None]:
    """(sequences at max_model_len, longest sequence, its optimistic bound) on one of V0's
    pipeline virtual engines (`Settings.kv_engines`), each holding 1/PP of the KV blocks: the
    longest sequence scales with the blocks (a token costs the same on every engine). The
    figures as given where one engine holds them all."""
    pool, concurrency, fits, optimistic = figures
    engines = settings.kv_engines
    if engines <= 1:
        return concurrency, fits, optimistic
    concurrency = _kv_capacity(model, settings, pool / engines, per_token, version)[1]
    block = settings.block_size

    def share(length: int | None) -> int | None:
        return None if length is None else length // block // engines * block

    return concurrency, share(fits), share(optimistic)


def _encoder_facts(
    model: ModelFacts, settings: Settings, version: str | None, mem: _Memory
) -> tuple[float | None, int | None, float | None]:
    """(the encoder pass's peak, its images, what the KV cache would have without it)."""
    peak = encoder_peak(model, settings, version)
    if peak is None:
        return None, None, None
    cached = torch_cache_factor(version)
    without = None
    if mem.available is not None:
        tokens = settings.max_num_batched_tokens or max(settings.max_model_len or 0, 2048)
        forward = forward_peak_gib(model, settings, tokens, version) * cached
        sampler = sampler_peak(model, settings, version).central * cached
        activation = reserve_terms(model, settings, version)["activation"].central
        without = mem.available + activation - max(forward, sampler)
    return peak.pass_gib * cached, peak.items, without
