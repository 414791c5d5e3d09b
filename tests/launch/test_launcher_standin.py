"""The launcher follows a start with the shared log reader: the stand-in `vllm`
(tests/fakes/vllm_standin.py) run directly under `ManagedServer`, without the CLI."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
import vllm_standin

from servetune.launch.launcher import ManagedServer

# Each outcome comes within about a second on an idle machine; the limit is for a busy CI box.
LIMIT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def follow(tmp_path: Path, mode: str) -> tuple[str, float, list[str]]:
    port = free_port()
    vllm = vllm_standin.write_executable(tmp_path / "vllm")
    server = ManagedServer(
        argv=[str(vllm), "serve", "standin/tiny", "--port", str(port)],
        log_path=tmp_path / "vllm.log",
        host="127.0.0.1",
        port=port,
        env={**os.environ, "STANDIN_MODE": mode},
        stop_grace_s=5,
    )
    seen: list[str] = []
    with server:
        started = time.monotonic()
        outcome = server.wait_ready(LIMIT_S, seen.append)
        return outcome, time.monotonic() - started, seen


def test_a_recovered_traceback_does_not_stop_the_start(tmp_path: Path) -> None:
    outcome, _, seen = follow(tmp_path, "recovered")
    assert outcome == "ready"
    assert "Traceback (most recent call last):" in seen


def test_an_engine_failure_is_fatal_without_waiting_for_the_process(tmp_path: Path) -> None:
    outcome, elapsed, seen = follow(tmp_path, "fatal")
    assert outcome == "fatal"
    assert any("EngineCore failed to start" in line for line in seen)
    assert elapsed < LIMIT_S  # the stand-in hangs for 300 s after the failure


@pytest.mark.parametrize(("mode", "outcome"), [("crash", "exited")])
def test_a_crash_ends_the_wait_when_the_process_exits(
    tmp_path: Path, mode: str, outcome: str
) -> None:
    assert follow(tmp_path, mode)[0] == outcome
