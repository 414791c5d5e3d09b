"""The GPUs a command will run on: `--gpus SPEC`, or what NVML sees on this machine.

Besides CUDA and ROCm GPUs the table holds the other devices vLLM serves on (Intel's XPU and
Gaudi HPU, Google's TPU, Huawei's Ascend NPU): their memory is reviewed as a GPU's, and the
checks that read a CUDA compute capability say they were skipped. `--gpus CPU` is vLLM's CPU
backend: no device memory, so the review runs without any GPU check and says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

from servetune import _data
from servetune._did_you_mean import suggest
from servetune.errors import HardwareError
from servetune.texts import ErrorText

# Where vLLM runs: NVIDIA (cuda), AMD (rocm), Intel GPUs (xpu), Intel Gaudi (hpu), Google TPU
# (tpu), Huawei Ascend (npu, the vllm-ascend plugin). The CPU backend has no row (`CPU`).
Platform = Literal["cuda", "rocm", "xpu", "hpu", "tpu", "npu"]
CPU = "CPU"


@dataclass(frozen=True)
class GpuSpec:
    """One row of the GPU table (../shared/reference/gpus.csv, with sources there)."""

    name: str
    vendor: str
    aliases: tuple[str, ...]
    memory_gib: float
    memory_bandwidth_gbs: float | None
    bf16_dense_tflops: float | None
    fp16_dense_tflops: float | None
    fp8_dense_tflops: float | None
    compute_capability: str | None  # "8.0"; None for non-CUDA parts
    architecture: str
    nvlink: bool
    platform: Platform = "cuda"
    gfx_target: str | None = None  # AMD: the ROCm target (gfx90a, gfx942)
    # AMD: the quantization methods vLLM runs on this part (None: the CUDA rules apply)
    rocm_quantization: tuple[str, ...] | None = None
    # The rows of the same product sold with other memory (`H20`: also `H20-3e-141GB`), which a
    # name that does not say its memory may be as well
    memory_variants: tuple[str, ...] = ()

    @property
    def capability(self) -> int | None:
        """Compute capability as vLLM compares it: major*10 + minor (A100 = 80, H100 = 90)."""
        if self.compute_capability is None:
            return None
        major, _, minor = self.compute_capability.partition(".")
        return int(major) * 10 + int(minor or 0)


@dataclass(frozen=True)
class Hardware:
    """The machine: how many GPUs and which (spec None when only the count is known)."""

    count: int
    spec: GpuSpec | None  # a mixed set: the card that binds (see `mixed`)
    source: Literal["--gpus", "nvml"]
    # A machine of different cards (`1xRTX-5070-Ti+1xRTX-5090-D`): each card, one entry per GPU.
    # `spec` is then what every rank can count on: vLLM sizes the KV cache by the smallest
    # card's free memory, runs only the kernels the oldest card has, and paces every step at
    # the slowest card's speed.
    cards: tuple[GpuSpec, ...] = ()
    cpu: bool = False  # vLLM's CPU backend (`--gpus CPU`): no GPU at all
    # The other cards a name that does not say its memory is also sold as (`8xH20`: the 96 GB
    # H20 or the 141 GB H20-3e); `spec` is the table's first reading of the name.
    variants: tuple[GpuSpec, ...] = ()

    def as_variant(self, variant: GpuSpec) -> Hardware:
        """The same machine with every card being `variant`."""
        return replace(self, spec=variant, variants=())

    @property
    def name(self) -> str | None:
        if self.cpu:
            return CPU
        if len({card.name for card in self.cards}) > 1:
            return " + ".join(dict.fromkeys(card.name for card in self.cards))
        return self.spec.name if self.spec else None

    def to_json(self) -> dict[str, object]:
        """The machine as `check --format json` spells it (its `hardware` object)."""
        spec = self.spec
        return {
            "count": self.count,
            "name": spec.name if spec else (CPU if self.cpu else None),
            "memory_gib": spec.memory_gib if spec else None,
            "compute_capability": spec.compute_capability if spec else None,
            "architecture": spec.architecture if spec else None,
            "source": self.source,
        }


def _key(text: str) -> str:
    """Match names loosely: case, spaces, dashes and vendor words do not matter."""
    text = text.lower()
    for word in ("nvidia", "geforce", "tesla", "amd", "instinct"):
        text = text.replace(word, "")
    return re.sub(r"[^a-z0-9]", "", text)


@cache
def gpu_table() -> tuple[GpuSpec, ...]:
    rows = _data.load("gpus.json")
    return tuple(
        GpuSpec(
            **{
                **row,
                "aliases": tuple(row["aliases"]),
                "rocm_quantization": _tuple_or_none(row.get("rocm_quantization")),
                "memory_variants": tuple(row.get("memory_variants", ())),
            }
        )
        for row in rows
    )


def _tuple_or_none(value: list[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def vllm_runs_quantization(spec: GpuSpec, method: str) -> bool | None:
    """Whether vLLM has kernels for `method` on an AMD part; None on CUDA parts, where the
    compute-capability rules decide."""
    if spec.rocm_quantization is None:
        return None
    return method.lower() in spec.rocm_quantization


@cache
def _index() -> dict[str, GpuSpec]:
    index: dict[str, GpuSpec] = {}
    for spec in gpu_table():
        for name in (spec.name, *spec.aliases):
            index.setdefault(_key(name), spec)
    return index


# Form-factor words that name the same part: an H100 SXM5 is vLLM's and our H100 SXM.
_SAME_WORD = {"sxm4": "sxm", "sxm5": "sxm", "sxm2": "sxm", "pcie4": "pcie", "pcie5": "pcie"}
# Words that name no part: vendors, and what users add ("Server Edition", "121GB unified").
_NO_PART = frozenset(
    ("nvidia", "geforce", "tesla", "amd", "instinct", "edition", "unified", "gpu", "memory")
)
_MEMORY_WORD = re.compile(r"^(\d+(?:\.\d+)?)g(?:b|ib)?$")


def _words(text: str) -> tuple[tuple[str, ...], float | None] | None:
    """A name as its words in any order (`H100-80GB-SXM` = `H100 SXM5 80GB`) and the memory it
    spells, if any; None for a name of one word (the plain key decides those)."""
    kept: list[str] = []
    memory: float | None = None
    for written in re.split(r"[^a-z0-9.]+", text.lower()):
        word = written.strip(".")
        if not word or word in _NO_PART:
            continue
        size = _MEMORY_WORD.match(word)
        if size is not None:
            memory = float(size.group(1))
            continue
        kept.append(_SAME_WORD.get(word, word))
    return (tuple(sorted(kept)), memory) if len(kept) + (memory is not None) > 1 else None


@cache
def _index_by_words() -> dict[tuple[tuple[str, ...], float | None], GpuSpec | None]:
    """Names by their words, with and without the memory they spell; None where two GPUs share
    the words (`A100 SXM` without its memory): then nothing is guessed."""
    index: dict[tuple[tuple[str, ...], float | None], GpuSpec | None] = {}

    def put(key: tuple[tuple[str, ...], float | None], spec: GpuSpec) -> None:
        seen = index.get(key, spec)
        index[key] = spec if seen is not None and seen.name == spec.name else None

    for spec in gpu_table():
        for name in (spec.name, *spec.aliases):
            found = _words(name)
            if found is not None:
                put(found, spec)
                put((found[0], None), spec)
    return index


def _by_words(name: str) -> GpuSpec | None:
    """A known GPU from its words in any order; a memory that differs from the table's (a
    modified card, a share of unified memory: `GB10 121GB unified`) overrides it."""
    found = _words(name)
    if found is None:
        return None
    words, memory = found
    index = _index_by_words()
    spec = index.get(found) or index.get((words, None))
    if spec is None or memory is None or memory == spec.memory_gib:
        return spec
    return replace(spec, memory_gib=memory) if 1 <= memory <= 1024 else None


# A memory size written after a known name: `RTX2080Ti-22GB`, `A100 40G`, `RTX3080_12GB`.
_MEMORY_SUFFIX = re.compile(r"^(.*?)[\s_-]*(\d+(?:\.\d+)?)\s*(?:gb|gib|g)$", re.IGNORECASE)


def _with_memory_suffix(name: str) -> GpuSpec | None:
    """A known GPU with its memory overridden by a suffix (modified cards, other SKUs)."""
    match = _MEMORY_SUFFIX.match(name.strip())
    if match is None or not match.group(1):
        return None
    base = _index().get(_key(match.group(1)))
    memory = float(match.group(2))
    if base is None or not 1 <= memory <= 1024:
        return None
    return replace(base, memory_gib=memory)


def find_gpu(name: str) -> GpuSpec:
    """The GPU a user or nvidia-smi calls `name`; a `HardwareError` with a suggestion otherwise.

    A memory suffix on a known name (`RTX2080Ti-22GB`) keeps that GPU and overrides its memory;
    the words of a known name in another order (`H100-80GB-SXM`, `H100 SXM5 80GB`) are that name.
    """
    spec = _index().get(_key(name)) or _by_words(name) or _with_memory_suffix(name)
    if spec is not None:
        return spec
    names = [s.name for s in gpu_table()] + [a for s in gpu_table() for a in s.aliases]
    by_key = {_key(n): n for n in names}
    close = suggest(_key(name), by_key, cutoff=0.6)
    hint = (
        ErrorText("hint.did-you-mean", guess=by_key[close])
        if close
        else ErrorText("gpus.known", names=", ".join(sorted({s.name for s in gpu_table()})))
    )
    raise HardwareError(ErrorText("gpus.unknown", name=name), hint)


# A name that says its memory: `H20-96GB`, `A100 40G`, `H20 141 GiB`.
_SAYS_MEMORY = re.compile(r"\d+(?:\.\d+)?\s*g(?:i?b)?(?![a-z])", re.IGNORECASE)


def memory_variants(name: str, spec: GpuSpec) -> tuple[GpuSpec, ...]:
    """The other cards `name` may be, where the table's reading of it (`spec`) is one product
    sold with several memory sizes and the name does not say which (`H20`, not `H20-96GB`)."""
    if not spec.memory_variants or _SAYS_MEMORY.search(name):
        return ()
    by_name = {row.name: row for row in gpu_table()}
    return tuple(by_name[variant] for variant in spec.memory_variants if variant in by_name)


_SPEC = re.compile(r"^\s*(?:(\d+)\s*[x×*]\s*)?(.*?)\s*$", re.IGNORECASE)


def _weakest(cards: Sequence[GpuSpec]) -> GpuSpec:
    """One spec that every card of a mixed set meets: the least memory, the oldest capability,
    the lowest bandwidth and compute (unknown where any card's is unknown)."""

    def least(values: Sequence[float | None]) -> float | None:
        return None if None in values else min(v for v in values if v is not None)

    smallest = min(cards, key=lambda card: card.memory_gib)
    oldest = min(cards, key=lambda card: card.capability or 0)
    return replace(
        smallest,
        name=" + ".join(dict.fromkeys(card.name for card in cards)),
        compute_capability=oldest.compute_capability,
        memory_bandwidth_gbs=least([c.memory_bandwidth_gbs for c in cards]),
        bf16_dense_tflops=least([c.bf16_dense_tflops for c in cards]),
        fp16_dense_tflops=least([c.fp16_dense_tflops for c in cards]),
        fp8_dense_tflops=least([c.fp8_dense_tflops for c in cards]),
        nvlink=all(c.nvlink for c in cards),
    )


def _mixed(parts: Sequence[str]) -> Hardware:
    cards: list[GpuSpec] = []
    for part in parts:
        one = parse_gpus(part)
        if one.spec is None:
            raise HardwareError(ErrorText("gpus.mixed-unreadable", part=part.strip()))
        cards.extend([one.spec] * one.count)
    if len({card.platform for card in cards}) > 1:
        raise HardwareError(ErrorText("gpus.mixed-platforms"))
    return Hardware(len(cards), _weakest(cards), "--gpus", tuple(cards))


_NODES_NOTE = re.compile(r"\s*\([^()]*\bnodes?\b[^()]*\)", re.IGNORECASE)


def parse_gpus(text: str) -> Hardware:
    """`N`, `NAME` or `NxNAME` (`2xA100-80GB`, `8xH100`, `1xL4`, `4 x RTX4090`); a mixed set
    joined by `+` or `,` (`1xRTX-5070-Ti+1xRTX-5090-D`, `RTX 3090 + RTX 3060`); `CPU` for
    vLLM's CPU backend. A note on how the cards spread over machines (`8xA100 (2 nodes x 4)`)
    says nothing of the cards themselves and is left out."""
    text = _NODES_NOTE.sub("", text)
    parts = [part for part in re.split(r"[+,]", text) if part.strip()]
    if len(parts) > 1:
        return _mixed(parts)
    stripped = text.strip()
    if stripped.lower() == CPU.lower():
        return Hardware(1, None, "--gpus", cpu=True)
    if re.fullmatch(r"\d+", stripped) and int(stripped) <= 64:  # "4090" is a GPU, not a count
        count = int(stripped)
        if count < 1:
            raise HardwareError(ErrorText("gpus.count-min"))
        return Hardware(count, None, "--gpus")
    match = _SPEC.match(stripped)
    if match is None or not match.group(2):
        raise HardwareError(ErrorText("gpus.unreadable", text=text))
    count = int(match.group(1)) if match.group(1) else 1
    if count < 1:
        raise HardwareError(ErrorText("gpus.name-min"))
    spec = find_gpu(match.group(2))
    return Hardware(count, spec, "--gpus", variants=memory_variants(match.group(2), spec))


def detect() -> Hardware | None:
    """The GPUs NVML reports on this machine, or None (no nvidia-ml-py, no driver, no GPU)."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - NVMLError subclasses vary by driver; any means "no GPU here"
        return None
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        if count == 0:
            return None
        raw = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
        name = raw.decode() if isinstance(raw, bytes) else str(raw)
        try:
            spec: GpuSpec | None = find_gpu(name)
        except HardwareError:
            spec = None
        return Hardware(count, spec, "nvml")
    finally:
        pynvml.nvmlShutdown()
