"""servetune's exception tree: every error a user can act on carries a hint and an exit code."""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    """The exit status of every `servetune` command; each command documents which it uses."""

    OK = 0
    FINDINGS = 1  # check/explain: at least one error finding
    FAILED = 1  # the others: refused, failed to start, not accepted, every request failed
    USAGE = 2  # bad usage or input that must be fixed before the command can run
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


class ServetuneError(Exception):
    """Root of every error servetune raises on purpose.

    `message` says what went wrong; `hint` says what to do next. The CLI prints both and exits
    with the error type's `exit_code`; library users can catch this one class.
    """

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} ({self.hint})"


class UsageError(ServetuneError):
    """The user asked for something malformed: a bad option value, an unknown GPU name."""


class CommandParseError(UsageError):
    """The `vllm serve` command text could not be understood at all."""


class ModelConfigError(ServetuneError):
    """A model's config.json is missing, unreadable or not a model configuration."""


class HardwareError(UsageError):
    """A GPU specification could not be resolved."""


class ServerUnreachable(ServetuneError):  # noqa: N818 - reads as the situation it names
    """The server could not be reached before a load test started (nothing was measured)."""

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE  # bench documents 2 for it, as for bad input


class NotAVllmLog(UsageError):  # noqa: N818 - reads as the situation it names
    """A text given as a vLLM log holds no line any vLLM release prints (another server's log, a
    bare library traceback, random bytes): there is nothing for `doctor` to judge."""
