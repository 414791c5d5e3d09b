"""`servetune tune` end to end against the scheduler stand-in (tests/fakes/vllm_sim.py).

The start is an AI-written command with red flags 3 and 4 of the seed's article: a tiny
`--max-num-batched-tokens` and `--max-num-seqs` left at its default after quantization. The
stand-in's world is known, so the true capacity of every configuration of a grid is computed in
virtual time (`vllm_sim.true_capacity`) and tune is held to finding one within 10% of the
grid's best in at most 12 server starts, naming the start's limit.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from servetune.cli.main import main
from servetune.review.check import CheckOptions, check_argv

import vllm_sim

START = ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-num-batched-tokens", "256"]
GPUS = "1xA100-80GB"
WORLD = {
    "SIM_KV_BYTES_PER_TOKEN": "860000",
    "SIM_PREFILL_TOKEN_MS": "0.005",
    "SIM_DECODE_SEQ_MS": "0.5",
    "SIM_SAFE_UTIL": "0.93",
}
# Every simulated step lasts twice its model time: a busy machine's hiccups (a few ms) stay
# small next to a step, and the client streams half as many tokens per second.
TIME_SCALE = 2.0
SLO_MS = {"ttft": 400.0, "tpot": 25.0}  # in the model's time; the client sees them doubled
PERCENTILE = 80.0
INPUT, OUTPUT = 512, 16
GRID = {
    "--max-num-batched-tokens": ("256", "512", "1024", "2048", "4096"),
    "--max-num-seqs": ("32", "64", "256"),
    "--gpu-memory-utilization": ("0.9", "0.92"),
}


def true_capacity(flags: dict[str, str]) -> int:
    knobs = vllm_sim.Knobs.from_flags(flags)
    world = vllm_sim.World.from_env(WORLD)
    if knobs.max_num_batched_tokens < knobs.max_num_seqs or (
        knobs.gpu_memory_utilization > world.safe_util
    ):
        return 0
    return vllm_sim.true_capacity(
        world, knobs, SLO_MS, percentile=PERCENTILE, input_len=INPUT, output_len=OUTPUT
    )


def argv(exe: Path, out: Path) -> list[str]:
    slos = [f"--slo={k}:{v * TIME_SCALE:g}" for k, v in SLO_MS.items()]
    return [
        "tune",
        "--vllm",
        str(exe),
        "--gpus",
        GPUS,
        *slos,
        "--slo-percentile",
        "80",
        "--random-input-len",
        str(INPUT),
        "--random-output-len",
        str(OUTPUT),
        "--output",
        str(out),
        "--format",
        "json",
        "--",
        *START,
    ]


def test_the_start_has_red_flags_3_and_4() -> None:
    report = check_argv(START, CheckOptions(gpus=GPUS))
    rules = {f.rule for f in report.findings}
    assert {"batched-tokens-too-small", "quant-memory-unused"} <= rules
    assert not report.errors


def test_tune_finds_near_the_grid_best_within_12_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in {**WORLD, "SIM_TIME_SCALE": str(TIME_SCALE)}.items():
        monkeypatch.setenv(key, value)
    exe = vllm_sim.write_executable(tmp_path / "bin")
    out = tmp_path / "run"
    code = main(argv(exe, out))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    assert doc == json.loads((out / "tune.json").read_text())
    assert doc["server_starts"] <= 12
    assert doc["baseline"]["limit"] == "max-num-batched-tokens"
    assert "trial 1" in captured.err and "probe: " in captured.err  # progress on the terminal

    grid = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    grid_best = max(true_capacity(flags) for flags in grid)
    found = true_capacity(doc["best"]["flags"])
    start = true_capacity(doc["baseline"]["flags"])
    assert found >= 0.9 * grid_best, (found, grid_best, doc["best"]["flags"])
    assert found > start
    assert doc["best"]["improvement_pct"] > 0
    measured = doc["best"]["capacity"]["max_concurrency"]
    assert abs(measured - found) <= 0.3 * found  # HTTP and 2 busy cores vs virtual time

    # Resumable: the same command again reuses every finished trial, starting nothing.
    code = main(argv(exe, out))
    again = capsys.readouterr()
    assert code == 0
    assert "starting vLLM" not in again.err and "reused" in again.err
    assert json.loads(again.out)["best"]["flags"] == doc["best"]["flags"]
