"""`servetune doctor LOGFILE`: read a vLLM log and say ready, failed or starting, and why.

Exit codes: 0 ready or still starting, 1 failed, 2 unreadable log, a text that is not a vLLM
log at all, or bad usage.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import (
    OutputArgs,
    add_language_argument,
    language_of,
    read_file,
    write_json,
)
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from servetune.texts import Language


@dataclass(frozen=True)
class DoctorArgs:
    logfile: Path
    language: Language
    output: OutputArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("logfile", type=Path, help="the vLLM server's log (stdout + stderr)")
        OutputArgs.add_arguments(parser)
        add_language_argument(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(
            logfile=ns.logfile, language=language_of(ns), output=OutputArgs.from_namespace(ns)
        )


def run(args: DoctorArgs, streams: Streams) -> ExitCode:
    from servetune.launch.doctor import diagnose
    from servetune.render.doctor import doctor_text

    text = read_file(args.logfile, ErrorText("hint.vllm-log"), lenient=True)
    report = diagnose(text)
    if args.output.format == "json":
        write_json(streams.stdout, report.to_json())
    else:
        streams.stdout.write(doctor_text(report, args.language))
    return ExitCode.FAILED if report.status == "failed" else ExitCode.OK


COMMAND = Command(
    name="doctor",
    help="explain a vLLM log: ready, failed or starting, and why",
    options=DoctorArgs,
    run=run,
)
