"""Regenerate servetune's packaged data files from ../shared/reference.

Run from the repository root: `python scripts/build_data.py [REFERENCE_DIR]`. The outputs under
src/servetune/data/ are committed; this script documents where every number came from.
vllm_flags.json is built by scripts/build_flag_tables.py, from every vLLM release's own source.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "src" / "servetune" / "data"

# Names users type, mapped to the variant they most often mean (clouds rent the SXM parts).
SHORT_NAMES = {
    "V100-SXM2-16GB": ["V100", "V100-16GB"],
    "V100-SXM2-32GB": ["V100-32GB"],
    "A100-40GB-SXM": ["A100-40GB"],
    "A100-80GB-SXM": ["A100", "A100-80GB"],
    "A800-80GB-SXM": ["A800", "A800-80GB", "A800-SXM"],
    "A800-80GB-PCIe": ["A800-PCIe"],
    "A800-40GB-PCIe": ["A800-40GB"],
    "H100-SXM-80GB": ["H100", "H100-80GB", "H100-SXM"],
    "H100-PCIe-80GB": ["H100-PCIe"],
    "H100-NVL-94GB": ["H100-NVL"],
    "H800-SXM-80GB": ["H800", "H800-80GB", "H800-SXM"],
    "H800-PCIe-80GB": ["H800-PCIe"],
    "H200-SXM-141GB": ["H200", "H200-141GB"],
    "H200-NVL-141GB": ["H200-NVL"],
    "H20": ["H20-96GB"],
    "H20-3e-141GB": ["H20-3e", "H20-141GB"],
    "RTX-2080-Ti": ["RTX2080Ti", "2080Ti", "RTX-2080Ti"],
    "RTX-3080": ["RTX3080", "3080"],
    "RTX-3090": ["RTX3090", "3090"],
    "RTX-3090-Ti": ["RTX3090Ti", "3090Ti"],
    "RTX-4080": ["RTX4080", "4080"],
    "RTX-4080-SUPER": ["RTX4080S", "RTX4080Super", "4080Super"],
    "RTX-4090": ["RTX4090", "4090"],
    "RTX-4090-D": ["RTX4090D", "4090D"],
    "RTX-4060": ["RTX4060", "4060"],
    "RTX-4060-Ti": ["RTX4060Ti", "4060Ti"],
    "RTX-4060-Laptop": ["RTX4060-Laptop", "RTX4060M"],
    "RTX-3060": ["RTX3060", "3060"],
    "RTX-5090": ["RTX5090", "5090"],
    "RTX-A4000": ["A4000"],
    "RTX-A5000": ["A5000"],
    "RTX-A6000": ["A6000"],
    "RTX-6000-Ada": ["RTX6000-Ada", "6000-Ada", "RTX-6000-Ada-Generation"],
    "Quadro-RTX-6000": ["QuadroRTX6000"],
    "Quadro-RTX-8000": ["RTX8000", "QuadroRTX8000"],
    "GH200-96GB": ["GH200"],
    "B200": ["B200-180GB", "HGX-B200"],
    "B300": ["B300-288GB", "HGX-B300", "NVIDIA B300"],
    "MI210": ["Instinct MI210"],
    "MI250X": ["Instinct MI250X", "MI250"],
    "MI300X": ["Instinct MI300X"],
    "MI325X": ["Instinct MI325X"],
}

# What one device has where the reference row describes a package: an MI250X holds two GCDs
# that ROCm (and so vLLM) enumerate as two devices of 64 GB each.
DEVICE_MEMORY = {"MI250X": 64.0}

# What vLLM runs on AMD parts (ROCm), from vLLM's quantization hardware table
# (https://docs.vllm.ai/en/v0.14.0/features/quantization/, "AMD GPU" column: FP8 W8A8 and GGUF
# yes; AWQ, GPTQ, Marlin, bitsandbytes no) and the ROCm install page
# (https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html: MI200 gfx90a and
# MI300 gfx942 supported). FP8 needs the gfx942 (CDNA 3) matrix cores.
ROCM_QUANTIZATION = {
    "gfx90a": ["gguf", "compressed-tensors", "quark"],
    "gfx942": ["fp8", "ptpc_fp8", "gguf", "compressed-tensors", "quark", "mxfp4"],
    # CDNA 4 (MI350X/MI355X) keeps CDNA 3's FP8 and adds native MXFP4; RDNA cards (gfx1100,
    # gfx1201) have no row: the docs' table does not say, so the review says nothing either.
    "gfx950": ["fp8", "ptpc_fp8", "gguf", "compressed-tensors", "quark", "mxfp4"],
}
# Extra rows (GPUs the reference table lacks), same columns, with a source per row.
EXTRA_GPUS = ROOT / "scripts" / "sources" / "gpus_extra.csv"


def _num(text: str) -> float | None:
    return float(text) if text.strip() else None


# Products sold under one name with several memory sizes: the row a bare name reads as, and the
# other rows it may be (NVIDIA sells the H20 with 96 GB HBM3 and, as the H20-3e, 141 GB HBM3e;
# both report compute capability 9.0). A name that says its memory stays exact.
MEMORY_VARIANTS = {"H20": ["H20-3e-141GB"]}


def _gpu_row(row: dict[str, str]) -> dict[str, object]:
    cc = row["compute_capability"].strip()
    # AMD parts carry a gfx target instead of a compute capability; other devices (Intel XPU and
    # Gaudi HPU, Google TPU, Ascend NPU) name their platform and have neither.
    platform = (row.get("platform") or "").strip() or ("cuda" if cc[:1].isdigit() else "rocm")
    rocm = platform == "rocm"
    return {
        "name": row["name"],
        "vendor": row["vendor"],
        "aliases": [a.strip() for a in row["aliases"].split(";") if a.strip()]
        + SHORT_NAMES.get(row["name"], []),
        "memory_gib": DEVICE_MEMORY.get(row["name"], float(row["memory_gib"])),
        "memory_bandwidth_gbs": _num(row["memory_bandwidth_gbs"]),
        "bf16_dense_tflops": _num(row["bf16_dense_tflops"]),
        "fp16_dense_tflops": _num(row["fp16_dense_tflops"]),
        "fp8_dense_tflops": _num(row["fp8_dense_tflops"]),
        "compute_capability": cc if platform == "cuda" else None,
        "architecture": row["architecture"],
        "nvlink": row["nvlink"].strip().lower() == "yes",
        "platform": platform,
        "gfx_target": cc if rocm else None,
        "rocm_quantization": ROCM_QUANTIZATION.get(cc) if rocm else None,
    } | (
        {"memory_variants": MEMORY_VARIANTS[row["name"]]} if row["name"] in MEMORY_VARIANTS else {}
    )


def build_gpus(ref: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for path in (ref / "gpus.csv", EXTRA_GPUS):
        with path.open(encoding="utf-8") as fh:
            rows.extend(_gpu_row(row) for row in csv.DictReader(fh))
    return rows


# The reference copies of a few checkpoints are partial (SOURCES.md says which). These keys are
# filled in from the published checkpoints so that the review does not mistake a missing key for a
# fact (e.g. TheBloke's GPTQ repo does ship a GPTQ quantization_config; only the copy lacked it).
SUPPLEMENTS: dict[str, dict[str, object]] = {
    "TheBloke/Llama-2-7B-Chat-GPTQ": {
        "model_type": "llama",
        "num_key_value_heads": 32,
        "max_position_embeddings": 4096,
        "torch_dtype": "float16",
        "tie_word_embeddings": False,
        "quantization_config": {
            "bits": 4,
            "group_size": 128,
            "desc_act": False,
            "sym": True,
            "quant_method": "gptq",
        },
    },
    "Qwen/Qwen2.5-14B-Instruct": {
        "model_type": "qwen2",
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
        "use_sliding_window": False,
    },
    "Qwen/Qwen2.5-32B-Instruct": {"tie_word_embeddings": False},
    "Qwen/Qwen2.5-72B-Instruct-AWQ": {"torch_dtype": "float16"},
    "Qwen/Qwen3-32B-AWQ": {"torch_dtype": "float16"},
    "mistralai/Mistral-Small-24B-Instruct-2501": {
        "architectures": ["MistralForCausalLM"],
        "model_type": "mistral",
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": False,
    },
    "google/gemma-3-12b-it": {
        "architectures": ["Gemma3ForConditionalGeneration"],
        "model_type": "gemma3",
        "torch_dtype": "bfloat16",
    },
}

# Other spellings of catalog checkpoints that users (and assistants) type.
CATALOG_ALIASES = {
    "meta-llama/Meta-Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Meta-Llama-3.1-70B-Instruct": "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Meta-Llama-3.1-405B-Instruct": "meta-llama/Llama-3.1-405B-Instruct",
    "meta-llama/Meta-Llama-3.1-8B": "meta-llama/Llama-3.1-8B",
    "meta-llama/Meta-Llama-3.1-70B": "meta-llama/Llama-3.1-70B",
    "meta-llama/Llama-3-8B-Instruct": "meta-llama/Meta-Llama-3-8B-Instruct",
    "meta-llama/Llama-3-70B-Instruct": "meta-llama/Meta-Llama-3-70B-Instruct",
    "zai-org/GLM-4-9B-0414": "THUDM/GLM-4-9B-0414",
    "zai-org/GLM-4-32B-0414": "THUDM/GLM-4-32B-0414",
    "zai-org/glm-4-9b-chat": "THUDM/glm-4-9b-chat",
    "unsloth/Llama-3.3-70B-Instruct": "meta-llama/Llama-3.3-70B-Instruct",
    "TheBloke/Llama-2-7b-Chat-GPTQ": "TheBloke/Llama-2-7B-Chat-GPTQ",
}


# Checkpoints beyond the reference directory, each with the URL of its config.json.
CATALOG_SOURCES = ROOT / "scripts" / "sources" / "catalog_models.json"
# Each entry of it checked against a real config.json copy in a public repository: where, whether
# it is verified, and the values the real file corrects ({key: [written, real]}; dotted keys reach
# text_config / llm_config). Kept apart from catalog_models.json so that file can grow alone.
CATALOG_CHECKS = ROOT / "scripts" / "sources" / "catalog_checks.json"

# The quantization block each publisher writes into its quantized repos (Qwen's -AWQ and
# -GPTQ-Int4/-Int8, the -FP8 block checkpoints); the architecture keys are the base model's.
_AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
_GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
_FP8 = {
    "quant_method": "fp8",
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "weight_block_size": [128, 128],
}
VARIANTS: dict[str, tuple[str | None, dict[str, object]]] = {
    "-AWQ": ("float16", _AWQ),
    "-GPTQ-Int4": ("float16", _GPTQ),
    "-GPTQ-Int8": ("float16", {**_GPTQ, "bits": 8}),
    "-FP8": (None, _FP8),
}


def _resolve(value: object, models: dict[str, dict[str, object]]) -> object:
    """`{"$from": ID}` stands for the config of an entry already built."""
    if isinstance(value, dict):
        if set(value) == {"$from"}:
            return dict(models[str(value["$from"])])
        return {k: _resolve(v, models) for k, v in value.items()}
    return value


def _apply_checks(models: dict[str, dict[str, object]], sources: dict[str, str]) -> None:
    """Override each checked entry's config with the real file's values; note the check."""
    checks = json.loads(CATALOG_CHECKS.read_text(encoding="utf-8"))
    for model_id, check in checks.items():
        if model_id.startswith("_"):
            continue
        config = dict(models[model_id])  # entries built with `like` share nested dicts
        for dotted, (old, new) in check["fixed"].items():
            *path, key = dotted.split(".")
            target = config
            for part in path:
                target[part] = dict(target[part])
                target = target[part]
            if target.get(key) != old:
                found = target.get(key)
                raise ValueError(f"{model_id}: {dotted} is {found!r}, the check expects {old!r}")
            target[key] = new
        models[model_id] = config
        verdict = "verified" if check["verified"] else "checked (not verified)"
        fixed = f"; fixed from it: {', '.join(check['fixed'])}" if check["fixed"] else ""
        sources[model_id] += f"; {verdict} against {check['checked_against']}{fixed}"


def _add_sourced(models: dict[str, dict[str, object]], sources: dict[str, str]) -> None:
    listed = json.loads(CATALOG_SOURCES.read_text(encoding="utf-8"))
    for entry in listed["models"]:
        base = dict(models[entry["like"]]) if "like" in entry else {}
        config = {**base, **_resolve(entry["config"], models)}
        for nested in ("text_config", "vision_config"):  # an entry's own keys over its base's
            if nested in entry["config"] and nested in base:
                config[nested] = {**base[nested], **entry["config"][nested]}
        models[entry["id"]] = config
        sources[entry["id"]] = entry["source"]
    _apply_checks(models, sources)  # before the variants, which copy their base's config
    for group in listed["variants"]:
        for suffix in group["suffixes"]:
            dtype, block = VARIANTS[suffix]
            config = {**models[group["of"]], "quantization_config": block}
            if dtype is not None:
                config["torch_dtype"] = dtype
            model_id = group["of"] + suffix
            models[model_id] = config
            sources[model_id] = (
                f"https://huggingface.co/{model_id}/blob/main/config.json (derived: the base "
                f"model's architecture with the publisher's {suffix[1:]} quantization block)"
            )


def build_catalog(ref: Path) -> dict[str, object]:
    models: dict[str, dict[str, object]] = {}
    sources: dict[str, str] = {}
    for path in sorted((ref / "model_configs").glob("*.json")):
        model_id = path.stem.replace("__", "/", 1)
        config = json.loads(path.read_text(encoding="utf-8"))
        for key, value in SUPPLEMENTS.get(model_id, {}).items():
            config.setdefault(key, value)
        models[model_id] = config
        sources[model_id] = f"../shared/reference/model_configs/{path.name} (see SOURCES.md there)"
    _add_sourced(models, sources)
    return {"models": models, "aliases": CATALOG_ALIASES, "sources": sources}


def main() -> None:
    """`build_data.py [REFERENCE_DIR] [NAME.json ...]`: rebuild all outputs, or only those named."""
    args = sys.argv[1:]
    only = {a for a in args if a.endswith(".json")}
    dirs = [a for a in args if not a.endswith(".json")]
    ref = Path(dirs[0]) if dirs else ROOT.parent / "shared" / "reference"
    DATA.mkdir(parents=True, exist_ok=True)
    builders = {
        "gpus.json": build_gpus,
        "catalog.json": build_catalog,
    }
    for name, build in builders.items():
        if only and name not in only:
            continue
        value = build(ref)
        text = json.dumps(value, indent=1, sort_keys=False, ensure_ascii=False) + "\n"
        (DATA / name).write_text(text, encoding="utf-8")
        print(f"wrote {name} ({len(text):,} bytes)")


if __name__ == "__main__":
    main()
