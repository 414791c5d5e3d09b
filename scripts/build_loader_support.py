"""What each vLLM release's GGUF and bitsandbytes loaders can load, from its source.

    python scripts/build_loader_support.py [SDIST_DIR]   # default: .cache/vllm-sdist

Writes src/servetune/data/vllm_loader_support.json. How each release decides (read from its code):
- GGUF (`GGUFModelLoader`, 0.5.5 to 0.23; from 0.24 the out-of-tree vllm-gguf-plugin):
  `_get_gguf_weights_map` looks the checkpoint's `model_type` up among gguf's
  `MODEL_ARCH_NAMES`, after renaming the types whose GGUF name differs (`cohere` ->
  `command-r`, `gemma3_text` -> `gemma3`, `deepseek_v3` -> `deepseek2`, `qwen3_moe` ->
  `qwen3moe`, `minimax_m2` -> `minimax-m2`). A type that needs a rename fails in a release that
  lacks it ("Unknown gguf model_type"); the data keeps the releases that rename each type;
- bitsandbytes (`BitsAndBytesModelLoader`, in tree to 0.27; from 0.28 the vllm-bnb-plugin): the
  releases that refuse a pre-quantized checkpoint with tensor parallelism ("Prequant
  BitsAndBytes models with tensor parallelism is not supported. Please try with pipeline
  parallelism."), the releases whose engine arguments pick the bitsandbytes loader for a
  pre-quantized checkpoint by themselves ("bitsandbytes pre-quantized model need a specific model
  loader") and those where `--quantization bitsandbytes` picks it.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from sdist_files import local_sdists, read_files, release_runs

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "servetune" / "data" / "vllm_loader_support.json"
_WANTED = re.compile(r"^[^/]+/vllm/(model_executor/model_loader/[\w/]+\.py|engine/arg_utils\.py)$")


def _compared_types(function: ast.FunctionDef) -> set[str]:
    """The `model_type` values a function compares with (`==` one, `in` a tuple or set)."""
    found: set[str] = set()
    for node in ast.walk(function):
        if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)):
            continue
        if node.left.id != "model_type":
            continue
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
                found.add(str(right.value))
            elif isinstance(op, ast.In) and isinstance(right, ast.Tuple | ast.Set | ast.List):
                found |= {str(e.value) for e in right.elts if isinstance(e, ast.Constant)}
    return found


def _gguf(files: dict[str, str]) -> tuple[bool, set[str]]:
    """(the release has a GGUF loader, the model types its weights map renames)."""
    for text in files.values():
        if "class GGUFModelLoader" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name == "_get_gguf_weights_map":
                return True, _compared_types(node)
        return True, set()
    return False, set()


def _bnb(files: dict[str, str]) -> dict[str, bool]:
    loaders = "\n".join(text for name, text in files.items() if name != "engine/arg_utils.py")
    args = files.get("engine/arg_utils.py", "")
    flag_picks = re.search(
        r'if self\.quantization == "bitsandbytes":\s*\n\s*self\.load_format = "bitsandbytes"', args
    )
    return {
        "in_tree": "class BitsAndBytesModelLoader" in loaders,
        "prequant_tp_refused": bool(
            re.search(r"Prequant BitsAndBytes models with (TP|tensor parallelism)", loaders)
        ),
        "load_format_from_checkpoint": "pre-quantized model need a specific model loader" in args,
        "load_format_from_flag": bool(flag_picks),
    }


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".cache" / "vllm-sdist"
    found = local_sdists(folder)
    versions = list(found)
    gguf: dict[str, tuple[bool, set[str]]] = {}
    bnb: dict[str, dict[str, bool]] = {}
    for version in versions:
        files = read_files(found[version], _WANTED)
        gguf[version], bnb[version] = _gguf(files), _bnb(files)
    types = sorted(set().union(*(renamed for _, renamed in gguf.values())))
    data = {
        "about": __doc__.split("\n\n")[0],
        "releases": versions,
        "gguf": {
            "loader": release_runs(versions, [gguf[v][0] for v in versions]),
            "renamed_model_types": {
                t: release_runs(versions, [t in gguf[v][1] for v in versions]) for t in types
            },
        },
        "bitsandbytes": {
            key: release_runs(versions, [bnb[v][key] for v in versions])
            for key in bnb[versions[-1]]
        },
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"GGUF renames {types}, bitsandbytes facts over {len(versions)} releases -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
