"""`servetune check`: review a `vllm serve` command against the model and the GPUs.

Exit codes: 0 no error finding, 1 at least one error finding, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import os

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import ReviewArgs, review, write_json


def run(args: ReviewArgs, streams: Streams) -> ExitCode:
    from servetune.render import check as render

    report = review(args, streams.stdin)
    if args.output.format == "json":
        write_json(streams.stdout, report.to_json())
    else:
        colour = streams.stdout.isatty() and "NO_COLOR" not in os.environ
        streams.stdout.write(render.report_text(report, args.language, colour=colour))
    return ExitCode.FINDINGS if report.errors else ExitCode.OK


COMMAND = Command(
    name="check",
    help="review a `vllm serve` command before launch",
    description="Review a `vllm serve` command against the model and the GPUs. "
    "Give the command after `--`, or as text with --file.",
    usage="servetune check [options] -- vllm serve MODEL [flags]",
    options=ReviewArgs,
    run=run,
    takes_serve_command=True,
)
