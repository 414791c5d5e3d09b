"""The checkpoints vLLM's own tests name for each architecture, from every release's source.

    python scripts/build_example_models.py [SDIST_DIR]   # default: .cache/vllm-sdist

Writes src/servetune/data/vllm_example_models.json. vLLM's tests/models/registry.py (0.6.5 on)
gives each registered architecture an `_HfExamplesInfo(default, extras={...})`: the Hugging Face
checkpoints vLLM tests it with (`"MiniCPMV": _HfExamplesInfo("openbmb/MiniCPM-Llama3-V-2_5",
extras={"2.6": "openbmb/MiniCPM-V-2_6", ...})`). A checkpoint's config names that architecture,
so a model whose name is one of these or a sibling of them (`MiniCPM-V-2` beside `MiniCPM-V-2_6`)
has it: servetune reads names against this table where no config is at hand
(model.infer_architecture). The union over releases is kept: an architecture's examples change
as checkpoints come and go, the checkpoint's own architecture does not.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from sdist_files import local_sdists, read_files

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "servetune" / "data" / "vllm_example_models.json"
_WANTED = re.compile(r"^[^/]+/(tests/models/registry\.py)$")


def examples(text: str) -> dict[str, set[str]]:
    """{architecture: checkpoints} of one registry.py."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if not (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and isinstance(value, ast.Call)
                and ast.unparse(value.func) == "_HfExamplesInfo"
                and value.args
                and isinstance(value.args[0], ast.Constant)
            ):
                continue
            names = {str(value.args[0].value)}
            for keyword in value.keywords:
                if keyword.arg == "extras" and isinstance(keyword.value, ast.Dict):
                    names |= {
                        str(v.value) for v in keyword.value.values if isinstance(v, ast.Constant)
                    }
            found.setdefault(key.value, set()).update(n for n in names if "/" in n)
    return found


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".cache" / "vllm-sdist"
    table: dict[str, set[str]] = {}
    read = []
    for version, path in local_sdists(folder).items():
        files = read_files(path, _WANTED)
        if "tests/models/registry.py" not in files:
            continue
        read.append(version)
        for architecture, names in examples(files["tests/models/registry.py"]).items():
            table.setdefault(architecture, set()).update(names)
    lines = ["{", f' "about": {json.dumps(__doc__.split(chr(10) * 2)[0])},']
    lines.append(f' "releases": {json.dumps([read[0], read[-1]])},')
    inner = [f"  {json.dumps(a)}: {json.dumps(sorted(n))}" for a, n in sorted(table.items())]
    lines.append(' "architectures": {\n' + ",\n".join(inner) + "\n }")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(table)} architectures from {len(read)} releases ({read[0]}-{read[-1]}) -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
