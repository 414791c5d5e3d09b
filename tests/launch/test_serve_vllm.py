"""`servetune serve` with the real vLLM (CPU build, tiny model): ready, bench, stop, nothing left;
refusal on error findings; a real failed start diagnosed; servetune killed takes vLLM along."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from servetune.launch.launcher import group_alive

import vllm_cpu

pytestmark = [pytest.mark.vllm, pytest.mark.usefixtures("vllm_cpu")]

SERVETUNE = Path(sys.executable).parent / "servetune"


def serve(port: int, log: Path, *extra: str, fmt: str = "text") -> subprocess.Popen[str]:
    argv = [str(SERVETUNE), "serve", "--vllm", str(vllm_cpu.VLLM_BIN), "--log", str(log),
            "--format", fmt, *extra, "--", "vllm", "serve", *vllm_cpu.base_serve_args(port)]  # fmt: skip
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=vllm_cpu.vllm_env()
    )


@contextlib.contextmanager
def serving(port: int, log: Path) -> Iterator[subprocess.Popen[str]]:
    """`serve`, and whatever the test's end: servetune killed (vLLM dies with it), pipes closed,
    so a failed test leaves no process behind to fail a later one."""
    proc = serve(port, log)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)


def wait_for(proc: subprocess.Popen[str], prefix: str, timeout_s: float = 300) -> list[str]:
    """stdout lines up to and including the first one starting with `prefix`."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith(prefix) or time.monotonic() > deadline:
            break
    return lines


def vllm_pid(lines: list[str]) -> int:
    first = next(line for line in lines if line.startswith("starting vLLM (pid "))
    return int(first.split("pid ")[1].split(")")[0])


def gone(pgid: int, timeout_s: float = 20.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if not group_alive(pgid):
            return True
        time.sleep(0.2)
    return False


def test_serve_ready_bench_stop_and_nothing_left(tmp_path: Path) -> None:
    port = vllm_cpu.free_port()
    with serving(port, tmp_path / "vllm.log") as proc:
        lines = wait_for(proc, "ready")
        ready = lines[-1]
        assert ready.startswith("ready: ") and f"http://127.0.0.1:{port}" in ready, lines
        assert "KV cache 524,288 tokens" in ready  # what vLLM logged
        assert "estimated 524,288 tokens" in ready  # check's estimate of the same number
        pgid = vllm_pid(lines)
        out = tmp_path / "bench.json"
        bench = subprocess.run(
            [str(SERVETUNE), "bench", "--base-url", f"http://127.0.0.1:{port}", "--model", "tiny",
             "--num-prompts", "6", "--random-input-len", "16", "--random-output-len", "8",
             "--ignore-eos", "--output", str(out), "--format", "json"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert bench.returncode == 0, bench.stderr
        summary = json.loads(bench.stdout)
        assert summary["completed"] == 6, (summary, out.read_text(encoding="utf-8")[-4000:])
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        assert "vLLM stopped" in stdout
        assert gone(pgid)
        assert "Application startup complete" in (tmp_path / "vllm.log").read_text(encoding="utf-8")


def test_serve_refuses_error_findings_without_force(tmp_path: Path) -> None:
    port = vllm_cpu.free_port()
    argv = [str(SERVETUNE), "serve", "--vllm", str(vllm_cpu.VLLM_BIN), "--format", "json",
            "--log", str(tmp_path / "never.log"),
            "--", "vllm", "serve", *vllm_cpu.base_serve_args(port), "-tp", "3"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["status"] == "refused"
    assert "tp-heads-indivisible" in {f["rule"] for f in doc["check"]["findings"]}
    assert "--force" in done.stderr
    assert not (tmp_path / "never.log").exists()  # nothing was started


def test_serve_force_diagnoses_a_real_failed_start(tmp_path: Path) -> None:
    port = vllm_cpu.free_port()
    argv = [str(SERVETUNE), "serve", "--vllm", str(vllm_cpu.VLLM_BIN), "--format", "json",
            "--force", "--log", str(tmp_path / "fail.log"),
            "--", "vllm", "serve", *vllm_cpu.base_serve_args(port), "-tp", "3"]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, env=vllm_cpu.vllm_env()
    )
    assert done.returncode == 1, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    failure = events[-1]
    assert failure["status"] == "failed"
    ids = [d["id"] for d in failure["doctor"]["diagnoses"]]
    assert "tp-heads-indivisible" in ids
    assert "divisible by tensor parallel size (3)" in (failure["doctor"]["root_cause"] or "")


def test_killing_servetune_takes_vllm_along(tmp_path: Path) -> None:
    port = vllm_cpu.free_port()
    with serving(port, tmp_path / "vllm.log") as proc:
        lines = wait_for(proc, "  loading weights", timeout_s=300)
        pgid = vllm_pid(lines)
        assert group_alive(pgid)
        proc.send_signal(signal.SIGKILL)  # no chance to clean up: the parent-death signal must
        proc.communicate(timeout=30)
        assert gone(pgid, timeout_s=30)
