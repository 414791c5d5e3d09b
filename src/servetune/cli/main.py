"""The `servetune` command line: the table of commands and the one error boundary.

Every command's handler returns an `ExitCode`; every error servetune raises on purpose is a
`ServetuneError` that carries its own exit code and is printed here as `error: ...` and
`hint: ...` on stderr, never as a traceback (unless --debug), in the language of the command
(its `--lang`, else the locale's); the prefixes stay ASCII for scripts. The library's errors name
config fields; here they are said as the flags that set them (`cli.options.in_flags`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from servetune import __version__, texts
from servetune.cli import (
    accept,
    alerts,
    bench,
    check,
    compare,
    doctor,
    explain,
    plan,
    postmortem,
    quality,
    report,
    serve,
    tune,
    watch,
)
from servetune.cli.command import Command, Parser, Streams
from servetune.cli.options import default_language, in_flags, language_in
from servetune.errors import ExitCode, ServetuneError

__all__ = ["COMMANDS", "build_parser", "default_language", "main"]

# The commands, in the order `servetune --help` lists them: one line per command.
COMMANDS: tuple[Command[Any], ...] = (
    check.COMMAND,
    explain.COMMAND,
    serve.COMMAND,
    doctor.COMMAND,
    bench.COMMAND,
    compare.COMMAND,
    accept.COMMAND,
    tune.COMMAND,
    plan.COMMAND,
    quality.COMMAND,
    watch.COMMAND,
    postmortem.COMMAND,
    alerts.COMMAND,
    report.COMMAND,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="servetune", description="Review, launch and measure vLLM deployments.")
    parser.add_argument("--version", action="version", version=f"servetune {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_to(sub)
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """servetune's own words, and the `vllm serve ...` words after `--` (None without `--`)."""
    if "--" in argv:
        index = list(argv).index("--")
        return list(argv[:index]), list(argv[index + 1 :])
    return list(argv), None


def _run(argv: Sequence[str], streams: Streams) -> ExitCode:
    own, serve_command = _split(argv)
    ns = build_parser().parse_args(own)
    ns.serve_command = serve_command
    by_name = {c.name: c for c in COMMANDS}
    return by_name[ns.command].invoke(ns, streams)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `servetune` console script and of `python -m servetune`."""
    args = list(sys.argv[1:] if argv is None else argv)
    streams = Streams(stdout=sys.stdout, stderr=sys.stderr, stdin=sys.stdin)
    try:
        return _run(args, streams)
    except ServetuneError as exc:
        if "--debug" in _split(args)[0]:
            raise
        message, hint = in_flags(exc, language_in(_split(args)[0]))
        print(f"error: {message}", file=sys.stderr)
        if hint:
            print(f"hint: {hint}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        interrupted = texts.format("errors", "interrupted", language_in(_split(args)[0]))
        print(f"error: {interrupted}", file=sys.stderr)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
