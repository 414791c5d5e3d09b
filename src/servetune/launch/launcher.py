"""Start vLLM as a child process, follow its log to readiness or failure, and stop it cleanly.

vLLM runs in a process session of its own (so one signal to the group reaches its engine and
worker processes) and, on Linux, with a parent-death signal: if servetune itself is killed,
vLLM gets SIGTERM and shuts its children down; a guard process (`launch/watchdog.py`) stops
the whole group when servetune disappears, even by SIGKILL. Its output goes straight to the
log file (not through a pipe that would break with servetune), and servetune follows the file.

`ManagedServer` is a context manager, as vLLM's benchmarks' `ServerProcess` is:

    with ManagedServer(argv, log_path, host, port) as server:  # started
        outcome = server.wait_ready(600)
    # stopped here, whatever happened inside (an error, Ctrl-C)
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from servetune.errors import UsageError
from servetune.launch import watchdog
from servetune.texts import ErrorText
from servetune.vllm import log as vllm_log
from servetune.vllm.serve_command import ServeCommand

_PR_SET_PDEATHSIG = 1
WATCHDOG_GRACE_S = 10.0  # the guard's SIGTERM to SIGKILL wait, once servetune is gone


def healthy(host: str, port: int, timeout_s: float = 2.0) -> bool:
    """GET /health answers 200."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/health", timeout=timeout_s) as response:
            return int(response.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def find_vllm(explicit: str | None) -> str:
    """The vLLM executable: --vllm, else $SERVETUNE_VLLM, else `vllm` on PATH."""
    candidate = explicit or os.environ.get("SERVETUNE_VLLM") or shutil.which("vllm")
    if not candidate:
        raise UsageError(ErrorText("launch.no-vllm"))
    path = Path(candidate).expanduser()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise UsageError(ErrorText("launch.not-executable", path=candidate))
    return str(path)


def server_address(command: ServeCommand) -> tuple[str, int]:
    """(host to poll, port) as the command sets them; 0.0.0.0 and :: are polled on loopback."""
    host = command.text("--host") or "127.0.0.1"
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - we only poll, never bind
        host = "127.0.0.1"
    port = command.integer("--port") or 8000
    return host, port


def launch_argv(command: ServeCommand, vllm: str) -> list[str]:
    """The argv to run: `vllm serve` with the chosen executable; module forms as written."""
    if command.form == "docker":
        raise UsageError(ErrorText("launch.docker"))
    if command.form == "bench":  # an offline benchmark, not a server: nothing to serve
        raise UsageError(ErrorText("launch.bench"))
    if command.form == "api-server":
        return [*command.prefix, *_arg_tokens(command)]
    return [vllm, "serve", *_arg_tokens(command)]


def _arg_tokens(command: ServeCommand) -> list[str]:
    tokens: list[str] = []
    if command.model is not None:
        tokens += [command.model] if command.model_positional else ["--model", command.model]
    for flag in command.order:
        if flag in command.from_config:
            continue  # vLLM reads those from the --config file itself
        value = command.args[flag]
        if value is True:
            tokens.append(flag)
        elif value is False:
            tokens.append("--no-" + flag.removeprefix("--"))
        elif isinstance(value, tuple):
            tokens += [flag, *value]
        else:
            tokens += [flag, value]
    return tokens


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM us if servetune dies."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(libc_name, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


Outcome = Literal["ready", "exited", "fatal", "timeout", "interrupted"]


@dataclass
class ManagedServer:
    """One vLLM process (and its process group), with its log.

    `with` starts it and stops it at the end of the block (`start`/`stop` by hand also work).
    """

    argv: list[str]
    log_path: Path
    host: str
    port: int
    env: dict[str, str] | None = None
    stop_grace_s: float = 10.0  # `stop`'s SIGTERM to SIGKILL wait (also at the end of `with`)
    process: subprocess.Popen[bytes] | None = None
    watchdog: subprocess.Popen[bytes] | None = None
    _offset: int = 0
    _seen: list[str] = field(default_factory=list)
    _stopped: bool = False

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self._offset = log.tell()
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
                env=self.env,
            )
        self.watchdog = subprocess.Popen(
            watchdog.argv(os.getpid(), self.process.pid, WATCHDOG_GRACE_S),
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # outlives a kill of servetune's own process group
        )

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()  # a half start (vLLM running, its guard not) leaves nothing behind
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError("the server is not started")
        return self.process.pid

    def poll(self) -> int | None:
        """The exit code once the server process has ended, else None."""
        return None if self.process is None else self.process.poll()

    def new_lines(self) -> list[str]:
        """Complete log lines written since the last call."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(self._offset)
                data = log.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        self._offset += end
        lines = data[:end].decode("utf-8", "replace").splitlines()
        self._seen.extend(lines)
        return lines

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "\n".join(self._seen)

    def wait_ready(
        self,
        timeout_s: float,
        on_line: Callable[[str], None] = lambda _: None,
        interrupted: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> Outcome:
        """Follow the log until the server is ready (a ready line and /health 200), exits,
        prints a fatal line, `interrupted()` turns true, or `timeout_s` passes.

        Lines are judged by `servetune.vllm.log`, the reader `doctor` uses: a traceback vLLM
        recovers from is not fatal; a start that really died exits or prints a fatal line."""
        deadline = clock() + timeout_s
        watch = vllm_log.StartWatch()
        while True:
            for line in self.new_lines():
                on_line(line)
                watch.feed(line)
                if watch.fatal is not None:
                    self._drain(on_line)
                    return "fatal"
            if self.process is not None and self.process.poll() is not None:
                self._drain(on_line)
                return "exited"
            if watch.ready and healthy(self.host, self.port):
                return "ready"
            if interrupted():
                return "interrupted"
            if clock() >= deadline:
                return "timeout"
            time.sleep(0.25)

    def _drain(self, on_line: Callable[[str], None], settle_s: float = 1.0) -> None:
        """Give a failing server a moment to finish writing its traceback."""
        end = time.monotonic() + settle_s
        while time.monotonic() < end:
            if self.process is not None and self.process.poll() is not None:
                break
            time.sleep(0.1)
        for line in self.new_lines():
            on_line(line)

    def stop(self, grace_s: float | None = None) -> int | None:
        """SIGTERM the server (it stops its own children), then its group; SIGKILL after
        `grace_s` (default `stop_grace_s`). Returns the exit code. Leaves no process of the
        group behind; a second call only returns the exit code again."""
        proc = self.process
        if proc is None or self._stopped:
            return None if proc is None else proc.returncode
        grace_s = self.stop_grace_s if grace_s is None else grace_s
        pgid = proc.pid
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(pgid, signal.SIGKILL)
                proc.wait()
        _signal_group(pgid, signal.SIGTERM)
        if not _group_gone(pgid, grace_s):
            _signal_group(pgid, signal.SIGKILL)
            _group_gone(pgid, 5.0)
        if self.watchdog is not None and self.watchdog.poll() is None:
            self.watchdog.kill()
            self.watchdog.wait()
        self._stopped = True
        return proc.returncode


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """True while any non-zombie process of the group exists."""
    proc = Path("/proc")
    if not proc.is_dir():  # no /proc: a signal 0 tells, though it also sees zombies
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _group_gone(pgid: int, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if not group_alive(pgid):
            return True
        time.sleep(0.1)
    return not group_alive(pgid)


def default_log_path(port: int) -> Path:
    """A fresh log file under the user's cache folder."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "servetune" / "logs"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return base / f"vllm-{port}-{stamp}.log"


def phase(line: str) -> str | None:
    """A short progress label for a raw startup line, or None."""
    return vllm_log.phase(vllm_log.parse_line(line).text)
