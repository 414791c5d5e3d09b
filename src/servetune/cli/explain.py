"""`servetune explain`: every flag of a `vllm serve` command in plain words.

Exit codes: 0 explained, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import ReviewArgs, review, write_json


@dataclass(frozen=True)
class ExplainArgs:
    review: ReviewArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        ReviewArgs.add_arguments(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(review=ReviewArgs.from_namespace(ns))


def run(args: ExplainArgs, streams: Streams) -> ExitCode:
    from servetune.render.check import explanations_text
    from servetune.review.explain import explain

    items = explain(review(args.review, streams.stdin))
    if args.review.output.format == "json":
        write_json(streams.stdout, [{"flag": f, "value": v, "meaning": m} for f, v, m in items])
    else:
        streams.stdout.write(explanations_text(items))
    return ExitCode.OK


COMMAND = Command(
    name="explain",
    help="explain every flag of a `vllm serve` command in plain words",
    usage="servetune explain [options] -- vllm serve MODEL [flags]",
    options=ExplainArgs,
    run=run,
    takes_serve_command=True,
)
