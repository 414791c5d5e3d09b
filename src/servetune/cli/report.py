"""`servetune report PATH... --output FILE.html`: one offline HTML page from bench results, a
comparison (`--before ... --after ...`), a tune directory, or the JSON of `plan` or
`postmortem`.

Exit codes: 0 the page was written, 2 bad usage or unreadable inputs (a tune directory's plots
need the `report` extra: matplotlib).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import add_language_argument, language_of
from servetune.errors import UsageError
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from servetune.render.report import ReportRequest
    from servetune.texts import Language


@dataclass(frozen=True)
class ReportArgs:
    paths: tuple[Path, ...]
    before: tuple[Path, ...]
    after: tuple[Path, ...]
    output: Path
    title: str | None
    language: Language

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "paths",
            nargs="*",
            type=Path,
            metavar="PATH",
            help="bench result files or folders, tune directories, plan or postmortem JSON",
        )
        parser.add_argument(
            "--output", type=Path, required=True, metavar="FILE", help="the page to write (.html)"
        )
        parser.add_argument(
            "--before",
            type=Path,
            nargs="+",
            default=[],
            metavar="P",
            help="result files or folders measured before a change (with --after)",
        )
        parser.add_argument(
            "--after",
            type=Path,
            nargs="+",
            default=[],
            metavar="P",
            help="result files or folders measured after it",
        )
        parser.add_argument("--title", help="the page's title (default: servetune report)")
        parser.add_argument(
            "--debug", action="store_true", help="show a traceback instead of a short error"
        )
        add_language_argument(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        if bool(ns.before) != bool(ns.after):
            raise UsageError(ErrorText("report.needs-both"))
        if not ns.paths and not ns.before:
            raise UsageError(ErrorText("report.nothing"))
        return cls(
            paths=tuple(ns.paths),
            before=tuple(ns.before),
            after=tuple(ns.after),
            output=ns.output,
            title=ns.title,
            language=language_of(ns),
        )

    def request(self) -> ReportRequest:
        from servetune.render.report import ReportRequest

        return ReportRequest(self.paths, self.before, self.after, self.title)


def write_page(request: ReportRequest, output: Path, language: Language) -> Path:
    """Build the page and write it; a path that cannot be written is a usage error."""
    from servetune.render import report

    page = report.build(request, language)
    try:
        return report.write(output, page)
    except OSError as exc:
        reason = exc.strerror or exc
        raise UsageError(
            ErrorText("cannot-write", path=output, reason=reason), ErrorText("hint.output-path")
        ) from exc


def run(args: ReportArgs, streams: Streams) -> ExitCode:
    from servetune.texts import Voice

    path = write_page(args.request(), args.output, args.language)
    streams.stdout.write(Voice("report", args.language)("written", path=path) + "\n")
    return ExitCode.OK


COMMAND = Command(
    name="report",
    help="one offline HTML page from bench, compare, tune, plan or postmortem results",
    usage="servetune report PATH... --output FILE.html [--before P... --after P...] "
    "[--title T] [--lang en|zh-TW]",
    options=ReportArgs,
    run=run,
)
