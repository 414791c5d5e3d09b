"""Shared pytest fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# --- real vLLM harness ---
# Tests marked `vllm` use the `vllm_cpu` fixture and import the helpers from tests/fakes/vllm_cpu.py.
# Without the harness they skip; with SERVETUNE_REQUIRE_VLLM=1 (CI sets it) they fail instead.

# The fakes (stub server, real-vLLM harness) are imported by name from every test folder.
_FAKES_DIR = str(Path(__file__).resolve().parent / "fakes")
if _FAKES_DIR not in sys.path:  # `import vllm_cpu` works under any pytest import mode
    sys.path.insert(0, _FAKES_DIR)


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
