"""servetune's exception tree: every error a user can act on carries a hint."""

from __future__ import annotations


class ServetuneError(Exception):
    """Root of every error servetune raises on purpose.

    `message` says what went wrong; `hint` says what to do next. The CLI prints both and exits
    with the code the command documents; library users can catch this one class.
    """

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
