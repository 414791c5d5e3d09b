"""`servetune quality` against the real vLLM (CPU build, tiny random-weight model): the plumbing
works end to end, and a model whose answers are noise is reported as such, not as "no loss"."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from servetune.cli.main import main

import vllm_cpu

pytestmark = [pytest.mark.vllm, pytest.mark.usefixtures("vllm_cpu")]


@pytest.fixture(scope="module")
def server() -> Iterator[vllm_cpu.RunningServer]:
    with vllm_cpu.start_server() as running:
        yield running


def test_quality_on_the_tiny_model_is_honest_about_noise(
    server: vllm_cpu.RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "quality",
            "--before",
            server.base_url,
            "--after",
            server.base_url,
            "--model",
            vllm_cpu.SERVED_MODEL_NAME,
            "--endpoint",
            "/v1/completions",
            "--dataset",
            "builtin:math",
            "--num",
            "12",
            "--max-tokens",
            "12",
            "--concurrency",
            "4",
            "--format",
            "json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["n"] == 12
    assert doc["before"]["errors"] == 0 and doc["after"]["errors"] == 0
    assert doc["before"]["accuracy"] <= 0.1  # random weights answer no arithmetic
    assert "low-accuracy" in doc["warnings"]
    assert doc["verdict"] == "insufficient-data"  # 12 questions settle nothing
    assert code == 1
