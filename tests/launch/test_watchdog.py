"""The guard process (`servetune.launch.watchdog`) and `ManagedServer` as a context manager, on
real processes: a stand-in "server" (`sh`, `sleep`, a Python that ignores SIGTERM) in its own
process group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from servetune.launch import watchdog
from servetune.launch.launcher import ManagedServer, group_alive

LIMIT_S = 20.0  # each wait ends within about a second on an idle machine; slack for a busy CI box
SLEEPS = "import time; time.sleep(300)"
IGNORES_SIGTERM = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + SLEEPS

# A servetune that starts a server whose child outlives it, then dies without stopping it: the
# server (`sh`) gets the parent-death signal, its child (`sleep`, as vLLM's engine) does not.
SERVETUNE_KILLED = """
import sys, time
from pathlib import Path
from servetune.launch.launcher import ManagedServer
server = ManagedServer(["sh", "-c", "sleep 300 & echo started; wait"], Path(sys.argv[1]), "127.0.0.1", 9)
server.start()
print(server.pid, flush=True)
time.sleep(300)
"""


def eventually(condition: Callable[[], bool], limit_s: float = LIMIT_S) -> bool:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_the_guard_stops_the_group_when_servetune_is_killed(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # servetune as imported here
    servetune = subprocess.Popen(
        [sys.executable, "-c", SERVETUNE_KILLED, str(log)], stdout=subprocess.PIPE, env=env
    )
    assert servetune.stdout is not None
    pgid = int(servetune.stdout.readline())
    try:
        assert eventually(lambda: log.is_file() and "started" in log.read_text())
        assert group_alive(pgid)
        servetune.send_signal(signal.SIGKILL)  # no chance to stop the server itself
        servetune.wait()
        assert eventually(lambda: not group_alive(pgid))
    finally:
        servetune.kill()
        servetune.wait()
        servetune.stdout.close()
        if group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)


def test_a_group_that_ignores_sigterm_gets_sigkill_after_the_grace() -> None:
    child = subprocess.Popen([sys.executable, "-c", IGNORES_SIGTERM], start_new_session=True)
    try:
        time.sleep(0.5)  # let it install its handler
        began = time.monotonic()
        watchdog.guard(parent=-1, pgid=child.pid, grace_s=0.5)  # -1: the parent is gone
        assert child.wait(timeout=LIMIT_S) == -signal.SIGKILL
        assert time.monotonic() - began >= 0.5
    finally:
        child.kill()
        child.wait()


def test_the_guard_leaves_when_the_group_ends_first() -> None:
    child = subprocess.Popen([sys.executable, "-c", SLEEPS], start_new_session=True)
    guard = subprocess.Popen(watchdog.argv(os.getpid(), child.pid, 0.5))
    try:
        child.terminate()
        child.wait()
        assert guard.wait(timeout=LIMIT_S) == 0
    finally:
        for process in (child, guard):
            process.kill()
            process.wait()


def fail_inside(server: ManagedServer) -> None:
    with server:
        assert group_alive(server.pid)
        raise RuntimeError("inside the block")


def test_with_stops_the_server_and_its_guard_when_the_block_raises(tmp_path: Path) -> None:
    server = ManagedServer(["sh", "-c", "sleep 300 & wait"], tmp_path / "vllm.log", "127.0.0.1", 9)
    with pytest.raises(RuntimeError, match="inside the block"):
        fail_inside(server)
    assert not group_alive(server.pid)
    assert server.watchdog is not None and server.watchdog.poll() is not None
    assert server.process is not None and server.process.returncode is not None
    assert server.stop() == server.process.returncode  # a second stop only says the exit code


def test_a_start_that_fails_leaves_nothing_to_stop(tmp_path: Path) -> None:
    server = ManagedServer([str(tmp_path / "no-such-vllm")], tmp_path / "vllm.log", "h", 9)
    with pytest.raises(FileNotFoundError), server:
        pytest.fail("the block must not run")
    assert server.process is None and server.watchdog is None
