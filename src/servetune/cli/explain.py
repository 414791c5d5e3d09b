"""`servetune explain`: every flag of a `vllm serve` command in plain words.

Exit codes: 0 explained, 2 bad usage or unreadable input.
"""

from __future__ import annotations

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import ReviewArgs, review, write_json


def run(args: ReviewArgs, streams: Streams) -> ExitCode:
    from servetune.render.check import explanations_text
    from servetune.review.explain import explain

    items = explain(review(args, streams.stdin))
    if args.output.format == "json":
        write_json(streams.stdout, [item.to_json() for item in items])
    else:
        streams.stdout.write(explanations_text(items, args.language))
    return ExitCode.OK


COMMAND = Command(
    name="explain",
    help="explain every flag of a `vllm serve` command in plain words",
    usage="servetune explain [options] -- vllm serve MODEL [flags]",
    options=ReviewArgs,
    run=run,
    takes_serve_command=True,
)
