"""The values vLLM will actually run with: the command's flags, else vLLM's own defaults.

vLLM picks several defaults from its release and the GPU (../shared/reference/vllm-rules.md
section 4); this module mirrors those choices so the review sees what the server will see.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Literal

from servetune.review.hardware import GpuSpec, Hardware
from servetune.review.model import FLOAT16_REFUSED, ModelFacts
from servetune.review.sentence import Sentence
from servetune.vllm import bench_args
from servetune.vllm.flags import version_at_least
from servetune.vllm.serve_command import ServeCommand

Dtype = Literal["bfloat16", "float16", "float32"]
_DTYPE_FLAG = {
    "bfloat16": "bfloat16",
    "half": "float16",
    "float16": "float16",
    "float": "float32",
    "float32": "float32",
}
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
GIB = 1024**3
DEFAULT_BLOCK_SIZE = 16  # EngineArgs.block_size on GPUs, every release from 0.4


class Reason(Sentence):
    """How vLLM chose a default, as the check report says it (`review` texts, `default.*`)."""

    __slots__ = ()


@dataclass(frozen=True)
class Settings:
    """Effective serving settings. `user_set` holds the canonical flags the command sets;
    `defaults` explains, per flag, how vLLM chose a value the command left out."""

    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    quantization: str | None
    dtype_flag: str  # as given, "auto" by default
    dtype: Dtype | None  # resolved; None when the checkpoint's dtype is unknown
    kv_cache_dtype: str
    max_model_len: int | None  # None: unknown model and no flag
    max_model_len_auto: bool  # `--max-model-len auto` / -1: vLLM fits it to memory
    max_num_seqs: int
    max_num_batched_tokens: int | None
    chunked_prefill: bool
    gpu_memory_utilization: float
    kv_cache_memory_bytes: int | None
    enforce_eager: bool
    block_size: int
    user_set: frozenset[str] = frozenset()
    defaults: dict[str, Reason] = field(default_factory=dict)
    pooling: bool = False  # `--runner pooling`, `--task embed|score|classify|reward`...
    # Speculative decoding: tokens proposed per step and the method (`mtp` adds the checkpoint's
    # own MTP layers, which keep a KV cache of their own); 0 / None without it
    speculative_tokens: int = 0
    speculative_method: str | None = None
    prefix_caching: bool | None = None  # the flag as given; None: the release's default
    images_per_prompt: int = 1  # `--limit-mm-per-prompt` image=N (vLLM's default: 1)
    expert_parallel: bool = False  # `--enable-expert-parallel`: experts split over DP x TP
    # Decoder layers per pipeline stage as VLLM_PP_LAYER_PARTITION sets them; None: vLLM's split
    pp_layer_partition: tuple[int, ...] | None = None
    # Whether V1's top-k/top-p sampler runs FlashInfer's kernels (`_flashinfer_sampler`); None:
    # the command cannot say (a pip install of 0.8.0 to 0.11.0, where FlashInfer is optional)
    flashinfer_sampler: bool | None = None
    cpu_offload_gib: float = 0.0  # `--cpu-offload-gb`: weights per GPU kept in CPU memory
    mamba_ssm_cache_dtype: str = "auto"  # `--mamba-ssm-cache-dtype`: a Mamba2 state's dtype
    # V0's pipeline parallelism runs one virtual engine per stage, each on its own share of the
    # KV blocks, and checks max_model_len against one share (`v0_pipeline_engines`); 1 elsewhere
    kv_engines: int = 1

    @property
    def world_size(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def gpus_needed(self) -> int:
        return self.world_size * self.data_parallel_size


# `--task` values (to 0.10) and `--runner`/`--convert` values (0.10+) that serve a pooler.
_POOLING_TASKS = frozenset(
    {"embed", "embedding", "score", "classify", "reward", "rerank", "pooling"}
)


def _speculative(command: ServeCommand) -> tuple[int, str | None]:
    """(tokens proposed per step, method) from `--speculative-config` (JSON, or the Python dict
    vLLM's "non-default args" line prints) or the old `--num-speculative-tokens`."""
    raw = command.text("--speculative-config")
    config: object = None
    if raw:
        try:
            config = json.loads(raw)
        except ValueError:
            try:
                config = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                config = None
    if isinstance(config, dict):
        tokens = config.get("num_speculative_tokens")
        method = config.get("method")
        count = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0
        return count, str(method) if method else None
    return command.integer("--num-speculative-tokens") or 0, None


_IMAGE_LIMIT = re.compile(r"""["']?image["']?\s*[:=]\s*(\d+)""")


def _images_per_prompt(command: ServeCommand) -> int:
    """The image count of `--limit-mm-per-prompt`, spelt `image=12,video=0` (to 0.9) or as JSON
    (`{"image": 12}`); 1, vLLM's default, when it is not given; none with
    `--language-model-only` (0.17+), which leaves the vision tower out."""
    if command.switch("--language-model-only"):
        return 0
    found = _IMAGE_LIMIT.search(command.text("--limit-mm-per-prompt") or "")
    return int(found.group(1)) if found else 1


def _pooling(command: ServeCommand) -> bool:
    return any(
        (command.text(flag) or "").lower() in _POOLING_TASKS
        for flag in ("--task", "--runner", "--convert")
    )


_V1_DEFAULTS_FROM = "0.8.0"
_UNCHUNKED_FLOOR = 2048  # without chunked prefill: max(max_model_len, 2048) tokens a step


def _v0_batch_defaults(version: str) -> tuple[int, int, Reason]:
    """V0 (vllm/config.py SchedulerConfig): 256 sequences on every GPU, and with chunked prefill
    512 tokens a step (2048 from 0.6.5); the per-GPU usage-context defaults came with V1 as the
    default engine in 0.8."""
    chunk = 2048 if version_at_least(version, "0.6.5") else 512
    return chunk, 256, Reason("default.batch.v0", version=version)


# VLLM_USE_V1=0 runs the V0 engine in the releases that still ship it (0.8 to 0.10)
_V0_REMOVED = "0.11.0"


def _v0_asked(command: ServeCommand) -> bool:
    version = command.version
    if command.env.get("VLLM_USE_V1", "").strip() != "0":
        return False
    return version_at_least(version, _V1_DEFAULTS_FROM) and not version_at_least(
        version, _V0_REMOVED
    )


def v0_engine(command: ServeCommand) -> bool:
    """Whether the command runs vLLM's V0 engine: every release before 0.8, and 0.8 to 0.10
    under VLLM_USE_V1=0 (its scheduler, its KV cache manager, its CUDA graphs)."""
    return not version_at_least(command.version, _V1_DEFAULTS_FROM) or _v0_asked(command)


def batch_defaults(version: str, gpu: GpuSpec | None) -> tuple[int, int, Reason]:
    """(max_num_batched_tokens, max_num_seqs, why) for `vllm serve` on this release and GPU."""
    if not version_at_least(version, _V1_DEFAULTS_FROM):
        return _v0_batch_defaults(version)
    return _v1_batch_defaults(version, gpu)


def _v1_batch_defaults(version: str, gpu: GpuSpec | None) -> tuple[int, int, Reason]:
    """V1's usage-context defaults for `vllm serve` (vllm/engine/arg_utils.py), release by
    release: 0.8.0 to 0.8.3 run 1024 sequences on every GPU and 8192 tokens a step on a card
    named H100 or H200 (2048 elsewhere); 0.8.4 gives a card so named 1024 sequences and 8192
    tokens, every other 256 and 2048; from 0.8.5 the card's memory decides (70 GiB or more),
    from 0.9.0 an A100 excepted."""
    if not version_at_least(version, "0.8.5"):
        return _v1_by_name(version, gpu)
    if gpu is None:
        return 2048, 256, Reason("default.batch.unknown-gpu")
    memory = gpu.memory_gib
    if version_at_least(version, "0.33.0") and memory >= 160:
        return 16384, 1024, Reason("default.batch.160gib", version=version)
    if not version_at_least(version, "0.9.0"):
        return _v1_by_memory(version, gpu)
    if memory >= 70 and "a100" not in gpu.name.lower():
        return 8192, 1024, Reason("default.batch.70gib-not-a100", version=version, gpu=gpu.name)
    return 2048, 256, Reason("default.batch.gpu", version=version, gpu=gpu.name)


def _v1_by_memory(version: str, gpu: GpuSpec) -> tuple[int, int, Reason]:
    """0.8.5 to 0.8.x: 70 GiB or more, whatever the card."""
    if gpu.memory_gib >= 70:
        return 8192, 1024, Reason("default.batch.70gib", version=version)
    return 2048, 256, Reason("default.batch.gpu", version=version, gpu=gpu.name)


def _v1_by_name(version: str, gpu: GpuSpec | None) -> tuple[int, int, Reason]:
    """0.8.0 to 0.8.4: the device name decides (`"h100" in name or "h200" in name`)."""
    every_gpu_seqs = 1024 if not version_at_least(version, "0.8.4") else 256
    if gpu is None:
        return 2048, every_gpu_seqs, Reason("default.batch.unknown-gpu")
    name = gpu.name.lower()
    if "h100" in name or "h200" in name:
        return 8192, 1024, Reason("default.batch.gpu", version=version, gpu=gpu.name)
    return 2048, every_gpu_seqs, Reason("default.batch.gpu", version=version, gpu=gpu.name)


def is_multimodal(model: ModelFacts) -> bool:
    """Vision-language checkpoints: vLLM also profiles their encoder, which the text-only
    arithmetic leaves out, and V0 did not chunk their prefills by default."""
    arch = model.architecture or ""
    return arch.endswith("ForConditionalGeneration") or arch == "InternVLChatModel"


# V0 (vllm/engine/arg_utils.py) turned chunked prefill on by itself from 0.5.3, above 32K tokens
# of context on a GPU, unless the model slides its window or a draft model, LoRA, prefix caching
# (until 0.6.1) or, from 0.6.2, a multimodal model is served; from 0.6.5 not on ROCm nor for a
# pooling model either.
_LONG_CONTEXT = 32768
_V0_AUTO_CHUNK_FROM = "0.5.3"


def _v0_auto_chunked(
    command: ServeCommand, model: ModelFacts | None, gpu: GpuSpec | None, max_model_len: int
) -> bool:
    version = command.version
    if max_model_len <= _LONG_CONTEXT or not version_at_least(version, _V0_AUTO_CHUNK_FROM):
        return False
    if model is not None and model.sliding_window:
        return False
    if "--speculative-model" in command.args or command.switch("--enable-lora"):
        return False
    if command.switch("--enable-prefix-caching") and not version_at_least(version, "0.6.1"):
        return False
    if model is not None and is_multimodal(model) and version_at_least(version, "0.6.2"):
        return False
    later = version_at_least(version, "0.6.5")
    on_rocm = gpu is not None and gpu.platform == "rocm"
    pooling = _pooling(command) or (model is not None and model.is_pooling)
    return not (later and (on_rocm or pooling))


def _bench_program(command: ServeCommand) -> str | None:
    """The offline benchmark a command runs (`benchmark_throughput.py`, `bench latency`)."""
    if command.form != "bench":
        return None
    words = [word.rsplit("/", 1)[-1] for word in command.prefix]
    pairs = [" ".join(words[i : i + 2]) for i in range(len(words))]
    return next((w for w in (*words, *pairs) if w in bench_args.PROGRAMS), None)


def _bench_passes_own_flags(command: ServeCommand) -> bool:
    """Whether the command is an offline benchmark script that builds its engine from options
    of its own (0.6.3 and before): it passes `enable_chunked_prefill=args.enable_chunked_prefill`,
    a store_true option (False unless given), so V0 never turns chunked prefill on by itself
    (benchmarks/benchmark_throughput.py and benchmark_latency.py, 0.5.3 to 0.6.3)."""
    program = _bench_program(command)
    found = bench_args.options(program, command.version) if program else None
    return found is not None and not found.engine_args


def _chunked_prefill(
    command: ServeCommand,
    max_model_len: int | None,
    model: ModelFacts | None = None,
    gpu: GpuSpec | None = None,
) -> tuple[bool, Reason | None]:
    version = command.version
    flag = command.switch("--enable-chunked-prefill")
    if not version_at_least(version, "0.8.0"):
        if flag is not None:
            return flag, None
        if _bench_passes_own_flags(command):
            return False, None
        auto = max_model_len is not None and _v0_auto_chunked(command, model, gpu, max_model_len)
        return auto, Reason("default.chunked.v0")
    if not version_at_least(version, "0.15.0"):
        return True, Reason("default.chunked.v1", version=version)
    if flag is not None:
        return flag, None
    return True, Reason("default.chunked.on")


def resolve_dtype(  # noqa: PLR0911 - one return per row of vLLM's auto-dtype decision table
    command: ServeCommand, model: ModelFacts | None, gpu: GpuSpec | None
) -> tuple[Dtype | None, Reason | None]:
    """The compute dtype vLLM will use, and a note when `auto` chose it."""
    flag = (command.text("--dtype") or "auto").lower()
    if flag in _DTYPE_FLAG:
        return _DTYPE_FLAG[flag], None  # type: ignore[return-value]
    checkpoint = model.dtype if model else None
    if checkpoint is None:
        return None, None
    capability = gpu.capability if gpu else None
    modern = version_at_least(command.version, "0.11.0")
    if checkpoint == "float32":
        if modern and (capability is None or capability >= 80):
            return "bfloat16", Reason("default.dtype.float32-bf16")
        if model is not None and model.model_type == "gemma2":
            return "bfloat16", Reason("default.dtype.gemma2")
        return "float16", Reason("default.dtype.float32-fp16")
    if checkpoint == "bfloat16" and modern and capability is not None and capability < 80:
        if model is not None and model.model_type in FLOAT16_REFUSED:
            return "float32", Reason("default.dtype.float32-only")
        return "float16", Reason("default.dtype.no-bf16")
    return checkpoint, Reason("default.dtype.checkpoint")  # type: ignore[return-value]


def _model_len(
    command: ServeCommand, model: ModelFacts | None, defaults: dict[str, Reason]
) -> tuple[int | None, bool]:
    """(max-model-len, whether `auto`/-1 asked vLLM to pick the longest that fits)."""
    raw_len = command.text("--max-model-len")
    auto_len = raw_len is not None and raw_len.strip().lower() in ("auto", "-1")
    max_model_len = None if auto_len else command.integer("--max-model-len")
    if max_model_len is None and model is not None and model.max_model_len is not None:
        max_model_len = model.max_model_len
        defaults["--max-model-len"] = Reason("default.max-model-len", key=str(model.max_len_key))
    return max_model_len, auto_len


def _batch(
    command: ServeCommand,
    gpu: GpuSpec | None,
    max_model_len: int | None,
    chunked: bool,
    defaults: dict[str, Reason],
) -> tuple[int, int | None]:
    """(max-num-seqs, max-num-batched-tokens) as vLLM of the command's release settles them."""
    default_mbt, default_seqs, why = batch_defaults(command.version, gpu)
    if _v0_asked(command):
        default_mbt, default_seqs, why = _v0_batch_defaults(command.version)
    seqs = command.integer("--max-num-seqs")
    mbt = command.integer("--max-num-batched-tokens")
    if seqs is None:
        seqs = default_seqs
        defaults["--max-num-seqs"] = why
    if mbt is None:
        mbt = default_mbt
        if not chunked:
            # without chunking a whole prompt must fit in one step
            mbt = max(max_model_len or 0, mbt, _UNCHUNKED_FLOOR)
        if max_model_len is not None:
            mbt = min(seqs * max_model_len, mbt)
        defaults["--max-num-batched-tokens"] = why
    if "--max-num-seqs" not in command.args and mbt is not None:
        seqs = min(seqs, mbt)
    return seqs, mbt


def resolve(command: ServeCommand, model: ModelFacts | None, hardware: Hardware | None) -> Settings:
    """Effective settings for `command` on `hardware` with `model`."""
    gpu = hardware.spec if hardware else None
    version = command.version
    defaults: dict[str, Reason] = {}
    max_model_len, auto_len = _model_len(command, model, defaults)
    chunked, why_chunked = _chunked_prefill(command, max_model_len, model, gpu)
    if why_chunked:
        defaults["--enable-chunked-prefill"] = why_chunked
    seqs, mbt = _batch(command, gpu, max_model_len, chunked, defaults)

    dtype, why_dtype = resolve_dtype(command, model, gpu)
    if why_dtype:
        defaults["--dtype"] = why_dtype

    util_default = 0.92 if version_at_least(version, "0.20.0") else 0.9
    util = command.number("--gpu-memory-utilization")
    if util is None:
        util = util_default
        defaults["--gpu-memory-utilization"] = Reason(
            "default.gpu-memory-utilization", version=version
        )

    speculative = _speculative(command)
    return Settings(
        tensor_parallel_size=command.integer("--tensor-parallel-size") or 1,
        pipeline_parallel_size=command.integer("--pipeline-parallel-size") or 1,
        data_parallel_size=command.integer("--data-parallel-size") or 1,
        quantization=(command.text("--quantization") or "").lower() or None,
        dtype_flag=command.text("--dtype") or "auto",
        dtype=dtype,
        kv_cache_dtype=command.text("--kv-cache-dtype") or "auto",
        max_model_len=max_model_len,
        max_model_len_auto=auto_len,
        max_num_seqs=seqs,
        max_num_batched_tokens=mbt,
        chunked_prefill=chunked,
        gpu_memory_utilization=util,
        kv_cache_memory_bytes=command.integer("--kv-cache-memory-bytes"),
        enforce_eager=bool(command.switch("--enforce-eager")),
        block_size=command.integer("--block-size") or DEFAULT_BLOCK_SIZE,
        user_set=frozenset(command.args),
        defaults=defaults,
        pooling=_pooling(command),
        speculative_tokens=speculative[0],
        speculative_method=speculative[1],
        prefix_caching=command.switch("--enable-prefix-caching"),
        images_per_prompt=_images_per_prompt(command),
        expert_parallel=bool(command.switch("--enable-expert-parallel")),
        pp_layer_partition=_pp_partition(command),
        flashinfer_sampler=_flashinfer_sampler(command),
        cpu_offload_gib=max(0.0, command.number("--cpu-offload-gb") or 0.0),
        mamba_ssm_cache_dtype=(command.text("--mamba-ssm-cache-dtype") or "auto").lower(),
        kv_engines=v0_pipeline_engines(command),
    )


# vLLM's CUDA image (not -rocm, -cpu...), which installs FlashInfer in every release (its
# docker/Dockerfile); a pip install pulls `flashinfer-python` in from 0.11.1 (requirements/cuda.txt)
_VLLM_CUDA_IMAGE = re.compile(r"^(?:[\w.-]+(?::\d+)?/)?vllm/vllm-openai(?::|@|$)")


def _flashinfer_sampler(command: ServeCommand) -> bool | None:
    """Whether V1's top-k/top-p sampler runs FlashInfer's (topk_topp_sampler.py, by release):
    0.8.0 to 0.11.0 where FlashInfer is installed unless VLLM_USE_FLASHINFER_SAMPLER=0; 0.11.1
    to 0.20 only with VLLM_USE_FLASHINFER_SAMPLER=1; from 0.21 unless it is 0. FlashInfer is
    installed in vLLM's image; a pip install of 0.8.0 to 0.11.0 has it only if added (None)."""
    raw = command.env.get("VLLM_USE_FLASHINFER_SAMPLER", "").strip()
    flag = bool(int(raw)) if raw.lstrip("-").isdigit() else None  # vLLM: bool(int(value))
    if version_at_least(command.version, "0.21.0"):
        return flag is not False
    if version_at_least(command.version, "0.11.1"):
        return flag is True
    if flag is not None:
        return flag
    image = command.form == "docker" and any(_VLLM_CUDA_IMAGE.match(w) for w in command.prefix)
    return True if image else None


# V1 serves pipeline parallelism from 0.8.0 only on Ray until 0.9.0 (arg_utils.py
# `_is_v1_supported_oracle`: 0.8.0-0.8.2 fall back to V0 for any PP, 0.8.3-0.8.5 for "Pipeline
# Parallelism without Ray distributed executor"; 0.9.0 adds mp and external_launcher).
_V1_PP_RAY_FROM, _V1_PP_ANY_FROM = "0.8.3", "0.9.0"
# From 0.8.0 V0's start check holds max_model_len to one virtual engine's blocks (worker.py
# `raise_if_cache_size_invalid`: block_size x (num_gpu_blocks // pipeline_parallel_size)); the
# engines have split them since 0.5.1 (cache_engine.py: num_gpu_blocks //= pp).
_V0_PP_CHECK_FROM = "0.8.0"


def v0_pipeline_engines(command: ServeCommand) -> int:
    """How many V0 virtual engines the start check splits the KV blocks among: the pipeline
    parallel size where V0 runs a pipeline in a release whose check splits them, else 1."""
    pp = command.integer("--pipeline-parallel-size") or 1
    version = command.version
    if pp <= 1 or not version_at_least(version, _V0_PP_CHECK_FROM):
        return 1
    if version_at_least(version, _V0_REMOVED):
        return 1
    ray = (command.text("--distributed-executor-backend") or "").lower() == "ray"
    v1_runs_it = version_at_least(version, _V1_PP_ANY_FROM) or (
        ray and version_at_least(version, _V1_PP_RAY_FROM)
    )
    return pp if _v0_asked(command) or not v1_runs_it else 1


def _pp_partition(command: ServeCommand) -> tuple[int, ...] | None:
    """VLLM_PP_LAYER_PARTITION (`16,32`) as the command's environment sets it."""
    text = command.env.get("VLLM_PP_LAYER_PARTITION", "")
    parts = [part.strip() for part in text.split(",")]
    if not text or not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)
