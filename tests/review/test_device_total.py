"""What a CUDA card reports as its total memory: the logged figure for datacenter cards that
report well under the formula (ECC, reserved memory), the formula for the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.review.hardware import parse_gpus
from servetune.review.startup_profile import device_total_gib

CORPUS = Path(__file__).parents[1] / "data" / "corpus" / "memory.json"


def reported(gpus: str) -> float:
    spec = parse_gpus(gpus).spec
    assert spec is not None
    return device_total_gib(spec.memory_gib, spec)


@pytest.mark.parametrize(
    ("gpus", "logged"),
    [("1xL40S", 44.39), ("1xL40", 44.39), ("1xA10", 22.06), ("1xL4", 21.96), ("1xT4", 14.56)],
)
def test_datacenter_cards_report_what_vllm_and_torch_logged(gpus: str, logged: float) -> None:
    assert reported(gpus) == pytest.approx(logged, abs=0.01)


def test_an_l40s_reports_less_than_the_formula_says() -> None:
    """46068 MiB in nvidia-smi, about 44.4 GiB to torch: not the ~47.4 GiB of 48 x 0.9953 - 0.42."""
    assert reported("1xL40S") < 45.0 < 48 * 0.9953 - 0.42


def test_the_a40_fit_record_reports_its_logged_total() -> None:
    records = json.loads(CORPUS.read_text())["records"]
    record = next(r for r in records if r["id"] == "vllm-11230-qwen25-72b-gptq-a40-v064post1")
    assert record["split"] == "fit"
    assert reported(record["gpus"]) == pytest.approx(record["logged"]["total_gpu_gib"], abs=0.01)


@pytest.mark.parametrize(("gpus", "logged"), [("1xH100-80GB", 79.2), ("1xRTX-3090", 23.58)])
def test_other_cards_keep_the_formula(gpus: str, logged: float) -> None:
    assert reported(gpus) == pytest.approx(logged, abs=0.12)


def test_a_size_other_than_the_cards_own_uses_the_formula() -> None:
    spec = parse_gpus("1xL40S").spec
    assert spec is not None
    assert device_total_gib(24.0, spec) == pytest.approx(24 * 0.9953 - 0.42)


def test_a_note_of_how_the_cards_spread_over_nodes_is_left_out() -> None:
    # surajssd/llm-k8s: "8xA100-SXM4-40GB (2 nodes x 4)"
    machine = parse_gpus("8xA100-SXM4-40GB (2 nodes x 4)")
    assert machine.count == 8
    assert machine.spec is not None and machine.spec.name == "A100-40GB-SXM"
