"""`servetune compare BEFORE AFTER`: before/after with confidence intervals and verdicts.

Exit codes: 0 compared (whatever the verdicts), 2 bad usage or unreadable result files.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import OutputArgs, add_language_argument, language_of, write_json
from servetune.errors import UsageError
from servetune.texts import ErrorText, Language


@dataclass(frozen=True)
class CompareArgs:
    before: tuple[Path, ...]
    after: tuple[Path, ...]
    metrics: tuple[str, ...] | None
    output: OutputArgs
    language: Language
    html: Path | None = None

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "before", type=Path, nargs="?", help="a result file or a folder of runs"
        )
        parser.add_argument(
            "after", type=Path, nargs="?", help="the same, measured after the change"
        )
        parser.add_argument(
            "--before",
            dest="before_more",
            type=Path,
            nargs="+",
            metavar="PATH",
            help="more result files or folders for the before side",
        )
        parser.add_argument(
            "--after",
            dest="after_more",
            type=Path,
            nargs="+",
            metavar="PATH",
            help="more result files or folders for the after side",
        )
        parser.add_argument(
            "--metric",
            nargs="+",
            metavar="NAME",
            help="result-file keys to compare, e.g. p99_ttft_ms (default: the headline ones)",
        )
        parser.add_argument(
            "--html",
            type=Path,
            metavar="FILE",
            help="also write the comparison's report page (offline HTML), as `servetune report`",
        )
        OutputArgs.add_arguments(parser)
        add_language_argument(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        before = tuple(p for p in [ns.before, *(ns.before_more or [])] if p is not None)
        after = tuple(p for p in [ns.after, *(ns.after_more or [])] if p is not None)
        if not before or not after:
            raise UsageError(ErrorText("compare.two-sides"))
        metrics = tuple(ns.metric) if ns.metric else None
        return cls(
            before=before,
            after=after,
            metrics=metrics,
            output=OutputArgs.from_namespace(ns),
            language=language_of(ns),
            html=ns.html,
        )


def run(args: CompareArgs, streams: Streams) -> ExitCode:
    from servetune.judge.compare import compare
    from servetune.judge.runs import load_side
    from servetune.render.judge import comparison_text

    result = compare(load_side(args.before), load_side(args.after), args.metrics)
    if args.output.format == "json":
        write_json(streams.stdout, result.to_json())
    else:
        streams.stdout.write(comparison_text(result, args.language))
    if args.html is not None:
        from servetune.cli.report import write_page
        from servetune.render.report import ReportRequest
        from servetune.texts import Voice

        request = ReportRequest(before=args.before, after=args.after)
        written = write_page(request, args.html, args.language)
        if args.output.format != "json":
            streams.stdout.write(Voice("report", args.language)("written", path=written) + "\n")
    return ExitCode.OK


COMMAND = Command(
    name="compare",
    help="before/after with statistics: changes, confidence intervals, verdicts",
    usage="servetune compare BEFORE AFTER [--metric NAME ...] [--format json]",
    options=CompareArgs,
    run=run,
)
