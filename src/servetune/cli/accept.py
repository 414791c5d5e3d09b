"""`servetune accept`: the five acceptance checks: hardware, quantization, startup, data, one knob
(and a sixth, answer quality, with `--quality FILE`).

Exit codes: 0 only when every check passes, 1 otherwise, 2 bad usage or an unreadable log.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import ReviewArgs, review, write_json


@dataclass(frozen=True)
class AcceptArgs:
    review: ReviewArgs
    log: Path | None
    before: tuple[Path, ...]
    after: tuple[Path, ...]
    quality: Path | None

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        ReviewArgs.add_arguments(parser)
        parser.add_argument(
            "--log",
            type=Path,
            metavar="FILE",
            help="the server's log (default: ask the command's address for /health)",
        )
        parser.add_argument(
            "--before",
            type=Path,
            nargs="+",
            metavar="PATH",
            help="bench results before the change (files or folders)",
        )
        parser.add_argument(
            "--after",
            type=Path,
            nargs="+",
            metavar="PATH",
            help="bench results after the change (files or folders)",
        )
        parser.add_argument(
            "--quality",
            type=Path,
            metavar="FILE",
            help="a `servetune quality --output` result: adds a sixth check, answer quality",
        )

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(
            review=ReviewArgs.from_namespace(ns),
            log=ns.log,
            before=tuple(ns.before or ()),
            after=tuple(ns.after or ()),
            quality=ns.quality,
        )


def run(args: AcceptArgs, streams: Streams) -> ExitCode:
    from servetune.judge.accept import accept
    from servetune.render.judge import acceptance_text

    report = review(args.review, streams.stdin)
    result = accept(
        report, log=args.log, before=args.before, after=args.after, quality=args.quality
    )
    if args.review.output.format == "json":
        write_json(streams.stdout, result.to_json())
    else:
        streams.stdout.write(acceptance_text(result, args.review.language))
    return ExitCode.OK if result.accepted else ExitCode.FAILED


COMMAND = Command(
    name="accept",
    help="the five acceptance checks: hardware, quantization, startup, data, one knob",
    usage="servetune accept [options] -- vllm serve MODEL [flags]",
    options=AcceptArgs,
    run=run,
    takes_serve_command=True,
)
