"""What a command is: a name, its options type, and a handler that returns an `ExitCode`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, NoReturn, Protocol, Self, TextIO, TypeVar

from servetune.errors import ExitCode, UsageError
from servetune.texts import ErrorText

__all__ = ["Command", "ExitCode", "Options", "Parser", "Streams"]


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so the one error boundary handles it."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(ErrorText("cli.usage", message=message, prog=self.prog))


@dataclass(frozen=True)
class Streams:
    """Where a command reads and writes; tests pass their own."""

    stdout: TextIO
    stderr: TextIO
    stdin: TextIO


class Options(Protocol):
    """A command's options: declared on a parser, then read back from the parsed namespace."""

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None: ...

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self: ...


OptionsT = TypeVar("OptionsT", bound=Options)


@dataclass(frozen=True)
class Command(Generic[OptionsT]):
    """One `servetune NAME` subcommand.

    `takes_serve_command`: whether a `vllm serve ...` command may follow `--` (it reaches
    `from_namespace` as `ns.serve_command`, a list of words, or None when there is no `--`).
    """

    name: str
    help: str
    options: type[OptionsT]
    run: Callable[[OptionsT, Streams], ExitCode]
    usage: str | None = None
    description: str | None = None
    takes_serve_command: bool = False

    def add_to(self, subparsers: argparse._SubParsersAction[Any]) -> None:
        parser = subparsers.add_parser(
            self.name,
            help=self.help,
            usage=self.usage,
            description=self.description or self.help[:1].upper() + self.help[1:] + ".",
        )
        self.options.add_arguments(parser)

    def invoke(self, ns: argparse.Namespace, streams: Streams) -> ExitCode:
        if ns.serve_command and not self.takes_serve_command:
            raise UsageError(ErrorText("cli.no-serve-command", name=self.name))
        return self.run(self.options.from_namespace(ns), streams)
