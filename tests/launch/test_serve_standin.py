"""`servetune serve` with a stand-in `vllm` program (tests/fakes/vllm_standin.py): a start that
prints a traceback vLLM recovers from reaches ready; a real engine failure is caught at once
even though the process hangs; a crash is reported with the doctor's diagnosis."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import vllm_standin

# Generous for a busy 2-core CI machine: the stand-in itself needs well under a second.
START_LIMIT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(tmp_path: Path, mode: str, port: int) -> subprocess.Popen[str]:
    vllm = vllm_standin.write_executable(tmp_path / "vllm")
    argv = [sys.executable, "-m", "servetune", "serve", "--vllm", str(vllm), "--force",
            "--log", str(tmp_path / "vllm.log"), "--format", "json", "--ready-timeout", "120",
            "--", "vllm", "serve", "standin/tiny", "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    env = {**os.environ, "STANDIN_MODE": mode}
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def events_until(proc: subprocess.Popen[str], statuses: set[str]) -> list[dict[str, object]]:
    """serve's JSON events up to the first whose status is in `statuses` (or the end)."""
    assert proc.stdout is not None
    events: list[dict[str, object]] = []
    for line in proc.stdout:
        if line.startswith("{"):
            events.append(json.loads(line))
            if events[-1].get("status") in statuses:
                break
    return events


def test_a_recovered_traceback_then_the_api_server_is_ready(tmp_path: Path) -> None:
    port = free_port()
    proc = serve(tmp_path, "recovered", port)
    try:
        events = events_until(proc, {"ready", "failed"})
        assert events[-1]["status"] == "ready", events
        assert events[-1]["url"] == f"http://127.0.0.1:{port}"
        log = (tmp_path / "vllm.log").read_text(encoding="utf-8")
        assert "Traceback (most recent call last)" in log  # the trap was there
        assert "ModuleNotFoundError" in log
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_an_engine_failure_is_fatal_at_once_although_the_process_hangs(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = serve(tmp_path, "fatal", free_port())
    stdout, stderr = proc.communicate(timeout=START_LIMIT_S)
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, stdout + stderr
    failure = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")][-1]
    assert failure["status"] == "failed"
    assert failure["why"] == "a fatal error in the log"
    doctor = failure["doctor"]
    assert doctor["status"] == "failed"
    assert doctor["root_cause"].startswith("ValueError: To serve at least one request")
    assert doctor["diagnoses"][0]["id"] == "kv-cache-too-small"
    # The stand-in sleeps 300 s after the failure: only the fatal line can have ended it.
    assert elapsed < START_LIMIT_S


def test_a_crash_is_reported_with_the_diagnosis(tmp_path: Path) -> None:
    proc = serve(tmp_path, "crash", free_port())
    stdout, stderr = proc.communicate(timeout=START_LIMIT_S)
    assert proc.returncode == 1, stdout + stderr
    failure = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")][-1]
    assert failure["status"] == "failed"
    assert failure["doctor"]["diagnoses"][0]["id"] == "architecture-unsupported"


@pytest.mark.parametrize("mode", ["recovered", "fatal", "crash"])
def test_the_stand_in_writes_what_its_mode_says(tmp_path: Path, mode: str) -> None:
    # The stand-in itself, without servetune: a check that the tests above test something.
    vllm = vllm_standin.write_executable(tmp_path / "vllm")
    env = {**os.environ, "STANDIN_MODE": mode}
    with subprocess.Popen(
        [str(vllm), "serve", "x", "--port", str(free_port())],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    ) as proc:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(7)]
        proc.kill()
    text = "".join(lines)
    assert ("Traceback (most recent call last)" in text) is True
    assert ("EngineCore failed to start" in text) is (mode == "fatal")
