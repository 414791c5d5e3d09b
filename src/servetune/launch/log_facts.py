"""Facts a whole log gives the diagnoses' texts: the port, the model, the parallel sizes, the
memory vLLM reported, and where memory ran out (`oom_phase`).

`diagnoses.table_hits` puts these beside the facts each message's own pattern names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from servetune.vllm import log as vllm_log

Facts = dict[str, str]

_CONTEXT = {
    "port": re.compile(r"'port': (\d+)|\bport=(\d+)|Starting vLLM .*?https?://[^\s:]+:(\d+)"),
    "model": re.compile(r"'model': '([^']+)'|\bmodel='([^']+)'|█.*\bmodel\s+(\S+)"),
    "tp": re.compile(r"tensor_parallel_size[=:] ?'?(\d+)|'tensor_parallel_size': (\d+)"),
    "world": re.compile(r"Tensor parallel size \((\d+)\) exceeds available GPUs"),
    "gpus": re.compile(r"exceeds available GPUs \((\d+)\)"),
}
# Where a traceback ran when memory ran out: frames (any release) name the phase. Sleep mode
# first: its allocator (CuMemAllocator, csrc/cumem_allocator.cpp) maps all of vLLM's memory
# again when an RL trainer wakes the engine up (`wake_up`), beside what the trainer holds.
_SLEEP_MODE = re.compile(r"\bwake_up\b|cumem_allocator|CuMemAllocator")
_OOM_PHASES = (
    ("sleep-mode", _SLEEP_MODE),
    ("repacking", re.compile(r"process_weights_after_loading|marlin_repack|repack_|_repack")),
    ("graphs", re.compile(r"capture_model|cuda_?graph|CUDAGraph|_capture\b", re.IGNORECASE)),
    ("profiling", re.compile(r"profile_run|determine_(?:num_available_blocks|available_memory)"
                             r"|_dummy_run|_dummy_sampler_run|compile_or_warm_up")),
    ("kv-cache", re.compile(r"initialize_cache|_initialize_kv_caches|initialize_from_config"
                            r"|_allocate_kv_cache|allocate_kv_cache")),
    ("loading", re.compile(r"load_model|load_weights|model_loader|make_layers|create_weights"
                           r"|_init_model|get_model")),
)  # fmt: skip
# Without frames, the last startup phase logged before the error says it.
_PHASE_BY_LABEL = {
    "loading weights": "loading",
    "weights loaded": "profiling",
    "compiling": "profiling",
    "KV cache": "graphs",
    "maximum concurrency": "graphs",
    "capturing CUDA graphs": "graphs",
}
# An accelerator's allocator ran out: torch's for CUDA and ROCm (HIP), torch_npu's for Ascend
# (`NPU out of memory. Tried to allocate ...`), torch's XPU allocator for Intel GPUs, and vLLM's
# own sleep-mode allocator (`CUDA Error: out of memory at .../csrc/cumem_allocator.cpp:62`), and
# NCCL's last error behind torch's `DistBackendError: NCCL error in: ..., unhandled cuda error`
# (`ncclUnhandledCudaError: Call to CUDA function failed.` / `Last error:` / `Cuda failure 2
# 'out of memory'`): the CUDA call NCCL made ran out of memory.
OOM = re.compile(
    r"(?:CUDA|HIP|NPU|XPU) out of memory|OutOfMemoryError|CUDA (?:driver )?error: out of memory"
    r"|CUDA Error: out of memory at \S*cumem_allocator\.cpp|Cuda failure (?:\d+ )?'out of memory'"
)


def _oom_phase(lines: Sequence[vllm_log.LogLine], *, served: bool) -> str | None:
    at = next((i for i, line in enumerate(lines) if OOM.search(line.text)), None)
    if at is None:
        return None
    if _SLEEP_MODE.search(lines[at].text):
        return "sleep-mode"  # the error line names sleep mode's allocator
    if served:
        # An engine that had started and then died: a step of its requests ran out. Its frames
        # name no startup phase whatever they hold (V1 runs every step through its
        # CUDAGraphWrapper, and data-parallel idle ranks through `_dummy_run`).
        return "serving"
    # Frames come before the error in a traceback; a paste sometimes puts them after it.
    for frames in (lines[max(0, at - 80) : at], lines[at + 1 : at + 40]):
        for name, pattern in _OOM_PHASES:  # the most specific phase first
            if any(pattern.search(frame.text) for frame in frames):
                return name
    labels = [label for line in lines[:at] if (label := vllm_log.phase(line.text))]
    for label in reversed(labels):
        for prefix, name in _PHASE_BY_LABEL.items():
            if label.startswith(prefix):
                return name
    return None


def context(lines: Sequence[vllm_log.LogLine], *, served: bool = False) -> Facts:
    """Facts from the whole log that the diagnoses' texts may need; `served` says the engine
    died after it had started serving (`oom_phase` is then `serving`)."""
    facts: Facts = {"port": "8000"}  # vllm serve's default
    for key, pattern in _CONTEXT.items():
        for line in lines:
            match = pattern.search(line.text)
            if match:
                facts[key] = next(g for g in match.groups() if g is not None)
                break
    numbers = vllm_log.reported(lines)
    if numbers.available_kv_cache_gib is not None:
        facts["available_kv"] = f"{numbers.available_kv_cache_gib:g}"
    if numbers.model_loading_gib is not None:
        facts["weights_gib"] = f"{numbers.model_loading_gib:g}"
    phase = _oom_phase(lines, served=served)
    if phase is not None:
        facts["oom_phase"] = phase
    return facts
