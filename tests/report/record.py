"""Records the report tests' bench results: `servetune bench` against the scheduler stand-in
(tests/fakes/vllm_sim.py), before (--gpu-memory-utilization 0.6: a small KV cache) and after
(0.92), two runs each, plus a postmortem of one run and a plan. Run it from the repository root
(`python tests/report/record.py`) to make the files in tests/report/data again; the tests only
read them.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
SIM = ROOT / "tests" / "fakes" / "vllm_sim.py"
SERVETUNE = [sys.executable, "-m", "servetune"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(port: int) -> None:
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
        except OSError:
            time.sleep(0.1)
        else:
            return
    raise RuntimeError("the stand-in did not start")


def bench(util: str, name: str, seeds: list[int]) -> None:
    port = _free_port()
    flags = ["--gpu-memory-utilization", util, "--max-num-seqs", "64"]
    server = subprocess.Popen(
        [sys.executable, str(SIM), "serve", "sim", "--port", str(port), *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait(port)
        for seed in seeds:
            out = DATA / name / f"run-{seed}.json"
            subprocess.run(
                [
                    *SERVETUNE,
                    "bench",
                    "--base-url",
                    f"http://127.0.0.1:{port}",
                    "--model",
                    "sim",
                    "--num-prompts",
                    "200",
                    "--request-rate",
                    "20",
                    "--random-input-len",
                    "256",
                    "--random-output-len",
                    "32",
                    "--ignore-eos",
                    "--seed",
                    str(seed),
                    "--gpus",
                    "1xA100-80GB",
                    "--server-command",
                    " ".join(["vllm", "serve", "sim", *flags]),
                    "--label",
                    name,
                    "--output",
                    str(out),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    bench("0.6", "before", [1, 2])
    bench("0.92", "after", [3, 4])
    postmortem = subprocess.run(
        [
            *SERVETUNE,
            "postmortem",
            str(DATA / "before" / "run-1.json"),
            "--window",
            "2",
            "--format",
            "json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (DATA / "postmortem.json").write_text(postmortem.stdout, encoding="utf-8")
    log = ROOT / "tests" / "data" / "monitor" / "v1-kv-full-queue.log"  # vLLM's own time stamps
    postmortem = subprocess.run(
        [*SERVETUNE, "postmortem", str(log), "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
    )
    (DATA / "postmortem-log.json").write_text(postmortem.stdout, encoding="utf-8")
    plan = subprocess.run(
        [
            *SERVETUNE,
            "plan",
            "--gpus",
            "1xA100-80GB",
            "--input-len",
            "1000",
            "--output-len",
            "200",
            "--concurrency",
            "50",
            "--slo",
            "ttft:2000",
            "--slo",
            "tpot:50",
            "--format",
            "json",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen2.5-7B-Instruct",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    doc = json.loads(plan.stdout)
    (DATA / "plan.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
