"""Which GGUF architectures transformers can read a config from, by transformers release, and
which transformers releases each vLLM release accepts.

    python scripts/build_gguf_config_support.py [WHEEL_DIR] [SDIST_DIR]
    # defaults: .cache/transformers-wheels (one wheel per transformers minor, 4.40 on, fetched with
    # `pip download --no-deps --only-binary :all: transformers==X`), .cache/vllm-sdist

Writes src/servetune/data/transformers_gguf.json. How it decides (read from the code):
- vLLM does not read a GGUF file's metadata itself: for a `.gguf` model, `get_config`
  (vllm/transformers_utils/config.py, 0.5.5 to 0.23) passes `gguf_file=` to transformers'
  `PretrainedConfig.get_config_dict`, and from 0.24 the vllm-gguf-plugin does the same (0.24's
  docs/features/quantization/gguf.md: "GGUF assumes that HuggingFace can convert the metadata to a
  config file ... pass it as hf-config-path");
- transformers' `load_gguf_checkpoint` (modeling_gguf_pytorch_utils.py) reads the file's
  `general.architecture`, renames a few (`qwen2moe` -> `qwen2_moe`, `qwen3moe` -> `qwen3_moe`,
  `gpt-oss` -> `gpt_oss`, `minimax-m2` -> `minimax_m2`) and stops where neither name is among
  `GGUF_SUPPORTED_ARCHITECTURES` (the keys of one of `GGUF_TO_TRANSFORMERS_MAPPING`'s tables:
  `tensors` in 4.41, `config` later): "GGUF model with architecture olmo2 is not supported yet";
  later releases first rebuild the config of a few architectures themselves (`GGUF_CONFIG_ARCHS`
  in integrations/gguf/gguf_config_mapping.py, read by configuration_utils.py): those too;
- which transformers a vLLM release runs with is not fixed: its requirements file
  (requirements-common.txt, requirements/common.txt) gives a range (`transformers >= 4.56.0, <
  5`); the data keeps, for each vLLM release, the read transformers releases within it (one
  release read per transformers minor, its first, standing for the minor's patches).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from sdist_files import local_sdists, read_files, release_runs

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "servetune" / "data" / "transformers_gguf.json"
_WHEEL = re.compile(r"transformers-(\d+\.\d+\.\d+)-py3-none-any\.whl$")
_REQUIREMENTS = re.compile(r"^[^/]+/(requirements-common\.txt|requirements/common\.txt)$")
_NOT_ARCHITECTURES = frozenset({"general", "tokenizer"})


def _dict_keys(tree: ast.Module, name: str) -> dict[str, ast.expr] | None:
    """The first top-level `name = {...}`: its constant keys and their values."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            return {
                k.value: v
                for k, v in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    return None


def readable_architectures(wheel: Path) -> set[str] | None:
    """The `general.architecture` values this transformers reads a config from (None: no GGUF)."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        utils = "transformers/modeling_gguf_pytorch_utils.py"
        if utils not in names:
            return None
        text = archive.read(utils).decode("utf-8")
        ggml = ast.parse(archive.read("transformers/integrations/ggml.py").decode("utf-8"))
        rebuilt = _rebuilt_architectures(archive, names)
    table = re.search(
        r'GGUF_SUPPORTED_ARCHITECTURES = list\(GGUF_TO_TRANSFORMERS_MAPPING\["(\w+)"\]', text
    )
    mapping = _dict_keys(ast.parse(text), "GGUF_TO_TRANSFORMERS_MAPPING")
    if table is None or mapping is None:
        raise SystemExit(f"{wheel.name}: GGUF_SUPPORTED_ARCHITECTURES not found")
    source = mapping[table.group(1)]
    if not isinstance(source, ast.Name):
        raise SystemExit(f"{wheel.name}: the {table.group(1)} table is not a name")
    keys = _dict_keys(ggml, source.id)
    if keys is None:
        raise SystemExit(f"{wheel.name}: {source.id} not found in integrations/ggml.py")
    supported = set(keys) - _NOT_ARCHITECTURES
    for tested, target in _renames(ast.parse(text)):
        if target in supported:
            supported |= tested
    return supported | rebuilt


_REBUILT = "transformers/integrations/gguf/gguf_config_mapping.py"


def _rebuilt_architectures(archive: zipfile.ZipFile, names: set[str]) -> set[str]:
    """Architectures whose config `PretrainedConfig.get_config_dict` rebuilds itself before it
    falls back to `load_gguf_checkpoint` (`GGUF_CONFIG_ARCHS`, configuration_utils.py, 5.2x)."""
    if _REBUILT not in names:
        return set()
    config_utils = archive.read("transformers/configuration_utils.py").decode("utf-8")
    if "GGUF_CONFIG_ARCHS" not in config_utils:
        return set()
    keys = _dict_keys(ast.parse(archive.read(_REBUILT).decode("utf-8")), "GGUF_CONFIG_ARCHS")
    return set(keys or {})


def _renames(tree: ast.Module) -> list[tuple[set[str], str]]:
    """`if "qwen2moe" in architecture: updated_architecture = "qwen2_moe"` (and `elif`, `or`):
    the file names each branch tests and the name it sets."""
    found: list[tuple[set[str], str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        tested = {
            str(c.left.value)
            for c in ast.walk(node.test)
            if isinstance(c, ast.Compare)
            and isinstance(c.left, ast.Constant)
            and isinstance(c.ops[0], ast.In)
            and ast.unparse(c.comparators[0]) == "architecture"
        }
        for stmt in node.body:
            for inner in ast.walk(stmt):
                if (
                    isinstance(inner, ast.Assign)
                    and ast.unparse(inner.targets[0]) == "updated_architecture"
                    and isinstance(inner.value, ast.Constant)
                    and tested
                ):
                    found.append((tested, str(inner.value.value)))
    return found


def _requirement(text: str) -> str | None:
    for line in text.splitlines():
        found = re.match(r"^transformers\s*([<>=!~][^#]*)", line.strip())
        if found:
            return found.group(1).strip()
    return None


def _accepts(spec: SpecifierSet, release: str) -> bool:
    """Whether a vLLM release's range takes the transformers minor `release` opens: one release
    is read per minor and stands for its patches (`>= 4.42.4` takes 4.42, `< 5.21.0` not 5.21)."""
    major, minor = Version(release).release[:2]
    return Version(release) in spec or Version(f"{major}.{minor}.99") in spec


def main() -> int:
    wheels_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".cache" / "transformers-wheels"
    sdist_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / ".cache" / "vllm-sdist"
    wheels = {m.group(1): p for p in wheels_dir.glob("*.whl") if (m := _WHEEL.search(p.name))}
    order = sorted(wheels, key=Version)
    read = {v: readable_architectures(wheels[v]) for v in order}
    releases = [v for v in order if read[v] is not None]
    names = sorted(set().union(*(read[v] or set() for v in releases)))
    architectures = {
        name: release_runs(releases, [name in (read[v] or set()) for v in releases])
        for name in names
    }
    requirements: list[list[object]] = []
    for version, path in local_sdists(sdist_dir).items():
        files = read_files(path, _REQUIREMENTS)
        spec = next((s for t in files.values() if (s := _requirement(t))), None)
        if spec is None:
            continue
        allowed = [v for v in releases if _accepts(SpecifierSet(spec), v)]
        runs = release_runs(releases, [v in allowed for v in releases])
        if requirements and requirements[-1][2] == spec:
            requirements[-1][1] = version
        else:
            requirements.append([version, version, spec, runs])
    data = {
        "about": __doc__.split("\n\n")[0],
        "transformers_releases": releases,
        "architectures": architectures,
        "vllm_requires": requirements,
    }
    lines = ["{"]
    lines.append(f' "about": {json.dumps(data["about"])},')
    lines.append(f' "transformers_releases": {json.dumps(releases)},')
    inner = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in architectures.items()]
    lines.append(' "architectures": {\n' + ",\n".join(inner) + "\n },")
    inner = [f"  {json.dumps(r)}" for r in requirements]
    lines.append(' "vllm_requires": [\n' + ",\n".join(inner) + "\n ]")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(names)} GGUF architectures over {len(releases)} transformers releases -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
