"""Shared pytest fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# --- real vLLM harness ---
# Tests marked `vllm` use the `vllm_cpu` fixture and import the helpers from tests/vllm_cpu.py.
# Without the harness they skip; with SERVETUNE_REQUIRE_VLLM=1 (CI sets it) they fail instead.

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:  # `import vllm_cpu` works under any pytest import mode
    sys.path.insert(0, _TESTS_DIR)


@pytest.fixture(scope="session")
def vllm_cpu() -> None:
    """Require the real vLLM CPU venv and the tiny model (scripts/setup-vllm-cpu.sh)."""
    import vllm_cpu as harness

    reason = harness.available()
    if reason is None:
        return
    if os.environ.get("SERVETUNE_REQUIRE_VLLM") == "1":
        pytest.fail(
            f"{reason}\nSERVETUNE_REQUIRE_VLLM=1 is set, so the real vLLM tests must run: "
            "run scripts/setup-vllm-cpu.sh first.",
            pytrace=False,
        )
    pytest.skip(f"{reason} (set SERVETUNE_REQUIRE_VLLM=1 to fail instead)")
