"""Whether vLLM's Triton fused-MoE kernel runs a tuned tile config for a deployment, or the
default one (data: src/servetune/data/vllm_moe_configs.json, scripts/build_moe_configs.py).

vllm/model_executor/layers/fused_moe/fused_moe.py (`try_get_optimal_moe_config`,
`get_config_file_name`) looks for `E=<E>,N=<N>,device_name=<GPU>[,dtype=<dtype>]
[,block_shape=[<n>,<k>]].json` under fused_moe/configs: E the experts one GPU holds
(`w2.shape[0]`), N one expert's intermediate size on that GPU (`w2.shape[2]`), the GPU as torch
names it. Without a file `get_default_config` gives one tile shape for every batch size, and
vLLM warns "Using default MoE config. Performance might be sub-optimal!".

- E: all the experts, or E / (TP x DP) of them under `--enable-expert-parallel`
  (fused_moe/config.py FusedMoEParallelConfig: EP over all TP x DP GPUs);
- N: moe_intermediate_size / (TP x DP) without expert parallelism (the experts are split over
  every GPU), the whole of it with;
- dtype: "fp8_w8a8" for FP8 experts (an FP8 checkpoint, or `--quantization fp8`), "int8_w8a8"
  for INT8 W8A8; none for BF16/FP16. An FP8 checkpoint (`quant_method: fp8`) is taken as
  block-quantized [128, 128]: every FP8 MoE checkpoint of the catalog is (DeepSeek, Qwen3,
  GLM, MiniMax: `weight_block_size`); `--quantization fp8` quantizes per tensor (no block).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servetune import _data
from servetune.review.model import ModelFacts
from servetune.vllm.flags import version_at_least

DATA = "vllm_moe_configs.json"
FP8_BLOCK = (128, 128)  # weight_block_size of the catalog's FP8 MoE checkpoints
_SCHEMES = {"W8A8-FP8": "fp8_w8a8", "W8A8-INT8": "int8_w8a8"}


@dataclass(frozen=True)
class MoeShape:
    """What fused_moe.py looks a config up by."""

    experts: int  # on one GPU
    n: int  # one expert's intermediate size on one GPU
    dtype: str | None  # "fp8_w8a8", "int8_w8a8", None (BF16/FP16)
    block: tuple[int, int] | None = None

    def file_name(self, device_name: str) -> str:
        """The config's file name (without .json), as `get_config_file_name` spells it."""
        name = f"E={self.experts},N={self.n},device_name={device_name}"
        if self.dtype:
            name += f",dtype={self.dtype}"
        if self.block:
            name += f",block_shape=[{self.block[0]},{self.block[1]}]"
        return name


def _table() -> dict[str, Any]:
    data: dict[str, Any] = _data.load(DATA)
    return data


def device_name(gpu: str, version: str) -> str | None:
    """torch's name of the GPU table's `gpu` as the config files spell it in `version` (the
    H200 family reads NVIDIA_H200's files from the release `h200_family_from`)."""
    table = _table()
    name: str | None = table["device_names"].get(gpu)
    family_from = table.get("h200_family_from")
    h200 = name is not None and "H200" in name.split("_")
    if h200 and family_from and version_at_least(version, family_from):
        return "NVIDIA_H200"
    return name


def _release_index(version: str) -> int | None:
    """The index of the newest release of the data at or below `version`."""
    releases: list[str] = _table()["releases"]
    below = [i for i, r in enumerate(releases) if version_at_least(version, r)]
    return below[-1] if below else None


def _shipped(runs: list[list[str]], version: str) -> bool:
    releases: list[str] = _table()["releases"]
    at = _release_index(version)
    if at is None:
        return False
    return any(releases.index(first) <= at <= releases.index(last) for first, last in runs)


def tuned(shape: MoeShape, gpu: str, version: str) -> bool | None:
    """Whether `version` ships a tuned config for `shape` on `gpu`; None where the GPU's torch
    name is not known (then nothing is said)."""
    name = device_name(gpu, version)
    if name is None:
        return None
    runs = _table()["configs"].get(shape.file_name(name))
    return bool(runs) and _shipped(runs, version)


def shape(
    model: ModelFacts, tp: int, dp: int, expert_parallel: bool, quantization: str | None
) -> MoeShape | None:
    """The lookup key of `model`'s routed experts served at TP x DP (None: not an MoE model,
    or one whose expert shape the config does not say)."""
    experts, inter = model.num_experts or 0, model.moe_intermediate_size or model.intermediate_size
    if not experts or not inter:
        return None
    ranks = max(tp, 1) * max(dp, 1)
    local, n = (max(experts // ranks, 1), inter) if expert_parallel else (experts, inter // ranks)
    return MoeShape(local, n, *_dtype(model, quantization))


Block = tuple[int, int]


def _dtype(model: ModelFacts, quantization: str | None) -> tuple[str | None, Block | None]:
    quant = model.quantization
    if quant is not None and quant.method == "fp8":
        return "fp8_w8a8", FP8_BLOCK
    scheme = quant.scheme if quant is not None else None
    if scheme in _SCHEMES:  # compressed-tensors: per channel or tensor, no block
        return _SCHEMES[scheme], None
    if quantization == "fp8":
        return "fp8_w8a8", None
    return None, None
