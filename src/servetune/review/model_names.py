"""Which catalog checkpoint a model name stands for, when the name itself is not in the catalog.

Users serve local copies (`/models/gemma-3-4b-it`), renamed folders (`Mistral-Large-Instruct-
2407/`) and fine-tunes (`org/Llama-3-8B-Instruct-Gradient-1048k`). Their names keep the family,
version and size of the checkpoint they came from; this module finds that checkpoint by comparing
name tokens. It knows names only; `model.find_model` turns a match into facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Words after which a catalog name only says "tuned for chat" (the core before them is the
# family, version and size that fix the architecture).
_CHAT_WORDS = frozenset({"instruct", "it", "chat", "hf", "base"})
# Size words that make a core specific enough without a parameter count.
_SIZE_WORDS = frozenset({"large", "small", "medium", "mini", "nemo", "lite", "tiny", "scout"})
_SPLIT = re.compile(r"[-_\s]+|(?<=[a-z])(?=\d)")
_PARAMS = re.compile(r"^\d+(\.\d+)?[bm]$")  # a parameter count: 7b, 0.5b, 135m


@dataclass(frozen=True)
class NameMatch:
    """A catalog checkpoint a name was taken to be."""

    checkpoint: str
    exact: bool  # the name is the checkpoint's own name (a local copy), not a derivative


def tokens(name: str) -> tuple[str, ...]:
    """`Meta-Llama-3.1-8B-Instruct` -> (llama, 3.1, 8b, instruct): lower case, `meta-` dropped,
    family names split from their version (`qwen2.5` -> qwen, 2.5)."""
    text = name.strip().lower().removeprefix("meta-")
    return tuple(t for t in _SPLIT.split(text) if t)


# Folder names that say where a checkpoint lies, not which one: the Hugging Face cache's
# `snapshots/<commit>`, a revision, a `model/` or `weights/` folder inside the model's own.
_PLACE_WORDS = frozenset({"snapshots", "model", "weights", "hf", "main"})
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# The Hugging Face cache names a repository's folder `models--ORG--NAME`.
_HF_CACHE_FOLDER = re.compile(r"^models--(?P<org>.+?)--(?P<name>.+)$")


def last_part(model: str) -> str:
    """The name part of a hub id or a path: `org/X`, `/models/X/`, `./X` -> `X`. Folders that
    only say where the files lie are passed over: `/app/X/model` and the cache's
    `.../models--org--X/snapshots/<commit>` are `X`."""
    parts = [p for p in re.split(r"[\\/]+", model.strip()) if p and p != "."]
    while len(parts) > 1 and (parts[-1].lower() in _PLACE_WORDS or _COMMIT.match(parts[-1])):
        parts.pop()
    cached = _HF_CACHE_FOLDER.match(parts[-1]) if parts else None
    if cached is not None:
        return cached.group("name")
    return parts[-1] if parts else model.strip()


def _core(name_tokens: tuple[str, ...]) -> tuple[str, ...] | None:
    """The tokens before the first chat word, when they still pin down a size."""
    for i, token in enumerate(name_tokens):
        if token in _CHAT_WORDS:
            core = name_tokens[:i]
            specific = any(any(c.isdigit() for c in t) or t in _SIZE_WORDS for t in core[1:])
            return core if len(core) >= 2 and specific else None
    return None


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    size = len(needle)
    return any(haystack[i : i + size] == needle for i in range(len(haystack) - size + 1))


def _score(wanted: tuple[str, ...], checkpoint: str) -> float:
    """How much of `wanted` one catalog checkpoint explains (0: unrelated).

    A match that includes a parameter count outweighs one that does not (`DeepSeek-R1-0528-
    Qwen3-8B` is a Qwen3-8B); the whole name beats its core at equal length; a shorter
    checkpoint name wins ties among cores (the base model)."""
    own = tokens(last_part(checkpoint))
    core = _core(own)
    if _contains(wanted, own):
        matched, bonus = own, 0.5
    elif core is not None and _contains(wanted, core):
        matched, bonus = core, -0.01 * (len(own) - len(core))
    else:
        return 0.0
    sized = 2.0 if any(_PARAMS.match(t) for t in matched) else 0.0
    return len(matched) + bonus + sized


def match_name(model: str, checkpoints: Iterable[str]) -> NameMatch | None:
    """The catalog checkpoint that `model` (a hub id or a path) is a copy or fine-tune of."""
    wanted = tokens(last_part(model))
    if not wanted:
        return None
    best, best_score = None, 0.0
    for checkpoint in sorted(checkpoints):
        score = _score(wanted, checkpoint)
        if score > best_score:
            best, best_score = checkpoint, score
    if best is None:
        return None
    return NameMatch(best, tokens(last_part(best)) == wanted)


# Weight-only schemes alone: `W8A8` names are as often other toolchains' (Ascend's msit)
_LLM_COMPRESSOR = r"(?<![a-z0-9])w([48])a16(?![0-9])"
# Red Hat's (Neural Magic's) llm-compressor exports named by their integer width alone
# (`RedHatAI/Qwen3.8-27B-INT4`): a compressed-tensors `pack-quantized` W4A16 checkpoint, 4-bit
# symmetric weights in groups of 128 and 16-bit activations, as its quantized.w4a16 releases
# (their model cards tag them `W4A16`, `INT4`, `compressed-tensors`: RedHatAI/Llama-4-Scout-17B-
# 16E-Instruct-quantized.w4a16) and a public loader of this very checkpoint (search index id
# 69530859151: `weight_packed` int32, `weight_scale` per group of 128, no zero point) read it.
# Read last, after the toolchains that write the width beside their own word (`-GPTQ-Int4`,
# `-int4-AutoRound`, `-AWQ`).
_INT4_NAME = r"(?<![a-z0-9])int4(?![0-9])"

# llm-compressor's AWQ (`AWQModifier`, scheme preset `W4A16_ASYM`) writes compressed-tensors;
# AutoAWQ's own format always keeps zero points and has no word for them, so a name that says
# both `awq` and `asym` is llm-compressor's asymmetric W4A16 (`-awq-asym-mse`).
_AWQ_ASYM = r"(?<![a-z0-9])(?:awq[-_.]?(?:[a-z0-9]+[-_.])?asym|asym[-_.]?awq)(?![a-z0-9])"

# What a name's quantization word means, first match wins (`-AWQ`, `-GPTQ-Int8`, `-NVFP4`...).
_NAMED_FORMATS: tuple[tuple[str, dict[str, object]], ...] = (
    (_AWQ_ASYM, {"quant_method": "compressed-tensors", "symmetric": False}),
    (r"awq", {"quant_method": "awq", "bits": 4, "group_size": 128}),
    (r"gptq", {"quant_method": "gptq", "group_size": 128}),
    # Intel's AutoRound exports (auto_round:auto_gptq packing): symmetric groups of 128
    (r"auto-?round", {"quant_method": "auto-round", "group_size": 128, "sym": True}),
    (r"nvfp4|(?<!mx)fp4", {"quant_method": "modelopt", "quant_algo": "NVFP4"}),  # ModelOpt
    (r"mxfp4", {"quant_method": "mxfp4"}),
    (r"fp8", {"quant_method": "fp8"}),
    # llm-compressor's weight-only scheme names (`-W8A16`, `-quantized.w4a16`): compressed-tensors
    (_LLM_COMPRESSOR, {"quant_method": "compressed-tensors"}),
    (_INT4_NAME, {"quant_method": "compressed-tensors"}),
    (r"gguf", {"quant_method": "gguf"}),  # llama.cpp files: Q4_K_M, Q8_0, IQ3_XS...
    (r"bnb|[48]-?bit", {"quant_method": "bitsandbytes"}),
)


def quantization_in_name(model: str) -> dict[str, object] | None:
    """The quantization a name announces (`-AWQ`, `-GPTQ-Int8`, `-FP8`, `-NVFP4`, `-MXFP4`,
    `-bnb-4bit`, a `.gguf` file's `Q4_K_M`), written as the `quantization_config` such
    checkpoints carry; None when the name says nothing."""
    text = last_part(model).lower()
    bits = 8 if re.search(r"int8|8-?bit|w8a16", text) else 4
    for pattern, config in _NAMED_FORMATS:
        if not re.search(pattern, text):
            continue
        if config["quant_method"] in ("gptq", "bitsandbytes", "auto-round"):
            return {**config, "bits": bits}
        if config["quant_method"] == "compressed-tensors":
            return _compressed_tensors(text, symmetric=config.get("symmetric") is not False)
        if config["quant_method"] == "gguf":
            found = re.search(r"(?:^|[-_.])i?q(\d)", text)
            return {**config, "bits": int(found.group(1)) if found else 4}
        return dict(config)
    return None


def _compressed_tensors(text: str, *, symmetric: bool = True) -> dict[str, object]:
    """The config an llm-compressor checkpoint named `WnA16` (or `-awq-asym`) carries, as its
    preset schemes spell them: n-bit integer weights, 8 bits per output channel or 4 bits in
    groups of 128 (with zero points for `W4A16_ASYM`, its AWQ preset), and 16-bit activations."""
    found = re.search(_LLM_COMPRESSOR, text)
    symmetric = symmetric and re.search(_LLM_COMPRESSOR + r"[-_.]?asym", text) is None
    bits = int(found.group(1)) if found else (4 if not symmetric else 8)
    if found is None and re.search(_INT4_NAME, text):
        bits = 4
    weights: dict[str, object] = {"num_bits": bits, "type": "int", "symmetric": symmetric}
    if bits == 4:
        weights["group_size"] = 128
    group = {"weights": weights}
    return {"quant_method": "compressed-tensors", "config_groups": {"group_0": group}}


# A number that dates a checkpoint (`-1125`, `-2407`, `-0528`) rather than versions its family.
_DATE = re.compile(r"^\d{4}$")


def family_key(name_tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The family and version a name starts with: its tokens before the first parameter count,
    date or chat word (`Olmo-3-1125-32B` and `Olmo-3-32B-Think` -> (olmo, 3);
    `MiniCPM-V-2` -> (minicpm, v, 2))."""
    key: list[str] = []
    for token in name_tokens:
        if _PARAMS.match(token) or _DATE.match(token) or token in _CHAT_WORDS:
            break
        key.append(token)
    return tuple(key)


def _name_tokens(model: str) -> tuple[str, ...]:
    name = last_part(model)
    return tokens(name[: -len(".gguf")] if name.lower().endswith(".gguf") else name)


def sibling_label(model: str, labelled: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The one label that every (name, label) pair of `model`'s family has, and a name that has
    it: `MiniCPM-V-2` beside `openbmb/MiniCPM-V-2_6` (MiniCPMV). None where the family is
    not pinned down (no version in its key) or its names disagree."""
    key = family_key(_name_tokens(model))
    if len(key) < 2 or not any(any(c.isdigit() for c in t) for t in key[1:]):
        return None
    found: dict[str, str] = {}
    for name, label in sorted(labelled):
        if tokens(last_part(name))[: len(key)] == key:
            found.setdefault(label, name)
    return next(iter(found.items())) if len(found) == 1 else None
