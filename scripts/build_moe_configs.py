"""Which tuned fused-MoE kernel configs each vLLM release ships, from its sdist.

    python scripts/build_moe_configs.py [SDIST_DIR]   # default: .cache/vllm-sdist

Writes src/servetune/data/vllm_moe_configs.json. vLLM's Triton fused-MoE kernel
(vllm/model_executor/layers/fused_moe/fused_moe.py, `try_get_optimal_moe_config`) looks up a
tile config per batch size in `fused_moe/configs/E=<E>,N=<N>,device_name=<GPU>[,dtype=<dtype>]
[,block_shape=[<n>,<k>]].json`: E the experts one GPU holds (`w2.shape[0]`: E / EP ranks),
N the expert's intermediate size on one GPU (`w2.shape[2]`: moe_intermediate_size / TP without
expert parallelism), the GPU as torch names it with spaces as underscores, the dtype
("fp8_w8a8", "int8_w8a16"...; none for BF16/FP16) and the FP8 block shape. Where no file
matches, `get_default_config` gives one config for every batch size ("Using default MoE
config. Performance might be sub-optimal!"). From some release `get_config_file_name` maps
every GPU of the H200 family (H200 NVL...) to NVIDIA_H200's files; the data says from which.

The data keeps, per file name (without ".json"), the runs of releases (first, last) that ship
it, and the device names of the GPU table's cards (servetune's names to torch's).
"""

from __future__ import annotations

import json
import re
import sys
import tarfile
from pathlib import Path

from sdist_files import local_sdists, release_runs

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "servetune" / "data" / "vllm_moe_configs.json"
_CONFIG = re.compile(r"^[^/]+/vllm/model_executor/layers/fused_moe/configs/(E=\d+,N=\d+,.*)\.json$")
_FUSED_MOE = re.compile(r"^[^/]+/vllm/model_executor/layers/fused_moe/fused_moe\.py$")
_H200_FAMILY = '"H200" in device_name.split("_")'
# The GPU table's names (review/hardware) to the names torch.cuda.get_device_name() gives, as
# vLLM writes them in the file names (the names the configs of the newest sdist use)
DEVICE_NAMES = {
    "A100-40GB-SXM": "NVIDIA_A100-SXM4-40GB",
    "A100-80GB-SXM": "NVIDIA_A100-SXM4-80GB",
    "A100-80GB-PCIe": "NVIDIA_A100_80GB_PCIe",
    "A800-80GB-SXM": "NVIDIA_A800-SXM4-80GB",
    "B200": "NVIDIA_B200",
    "B300": "NVIDIA_B300_SXM6_AC",
    "GB10": "NVIDIA_GB10",
    "GB200": "NVIDIA_GB200",
    "H100-SXM-80GB": "NVIDIA_H100_80GB_HBM3",
    "H100-PCIe-80GB": "NVIDIA_H100_PCIe",
    "H100-NVL-94GB": "NVIDIA_H100_NVL",
    "H20": "NVIDIA_H20",
    "H20-3e-141GB": "NVIDIA_H20-3e",
    "H200-SXM-141GB": "NVIDIA_H200",
    "H200-NVL-141GB": "NVIDIA_H200_NVL",
    "H800-SXM-80GB": "NVIDIA_H800",
    "L20": "NVIDIA_L20",
    "L40S": "NVIDIA_L40S",
    "RTX-4090": "NVIDIA_GeForce_RTX_4090",
    "MI300X": "AMD_Instinct_MI300X",
    "MI308X": "AMD_Instinct_MI308X",
    "MI325X": "AMD_Instinct_MI325X",
    "MI350X": "AMD_Instinct_MI350X",
    "MI355X": "AMD_Instinct_MI355X",
}


def _release(path: Path) -> tuple[set[str], bool]:
    """(config names, whether the H200 family shares NVIDIA_H200's files) of one sdist."""
    names: set[str] = set()
    family = False
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            match = _CONFIG.match(member.name)
            if match and member.isfile():  # a few are spelled "block_shape=[128, 128]"
                names.add(match.group(1).replace(" ", ""))
            elif _FUSED_MOE.match(member.name):
                handle = archive.extractfile(member)
                text = handle.read().decode("utf-8", errors="replace") if handle else ""
                family = _H200_FAMILY in text
    return names, family


def build(folder: Path) -> dict[str, object]:
    sdists = local_sdists(folder)
    versions = list(sdists)
    shipped: dict[str, set[str]] = {}
    family_from = None
    for version, path in sdists.items():
        names, family = _release(path)
        shipped[version] = names
        if family and family_from is None:
            family_from = version
        print(f"  {version}: {len(names)} configs", file=sys.stderr)
    every = sorted(set().union(*shipped.values()))
    configs = {
        name: release_runs(versions, [name in shipped[v] for v in versions]) for name in every
    }
    return {
        "about": __doc__.split("\n")[0],
        "releases": versions,
        "h200_family_from": family_from,
        "device_names": DEVICE_NAMES,
        "configs": configs,
    }


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else ROOT / ".cache" / "vllm-sdist"
    data = build(folder)
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
