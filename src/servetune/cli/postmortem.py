"""`servetune postmortem FILE...`: which limit a server hit, after the fact.

FILE: a vLLM log (its periodic stats lines, and the caps its startup printed), a /metrics
snapshot, a Prometheus range-query export (JSON) or a servetune bench result file. Prints the
timeline, the incidents, the dominant limit and the next step; `--plot FILE` draws running,
waiting and KV cache use with the incidents shaded.

Exit codes: 0 analysed (whatever the limit), 2 unreadable files or bad usage.
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
    positive_float,
    read_file,
    write_json,
)
from servetune.cli.watch import CapsArgs, add_caps_arguments
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from servetune.texts import Language


@dataclass(frozen=True)
class PostmortemArgs:
    files: tuple[Path, ...]
    window_s: float
    plot: Path | None
    caps: CapsArgs
    language: Language
    output: OutputArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "files",
            nargs="+",
            type=Path,
            metavar="FILE",
            help="vLLM logs, /metrics snapshots, Prometheus range-query exports (JSON) or "
            "servetune bench results",
        )
        parser.add_argument(
            "--window",
            type=positive_float,
            default=30.0,
            metavar="S",
            help="the window each moment is judged over (default 30)",
        )
        parser.add_argument(
            "--plot", type=Path, metavar="FILE", help="draw the timeline (PNG, or SVG by name)"
        )
        add_caps_arguments(parser, log=False)
        OutputArgs.add_arguments(parser)
        add_language_argument(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(
            files=tuple(ns.files),
            window_s=ns.window,
            plot=ns.plot,
            caps=CapsArgs.from_namespace(ns),
            language=language_of(ns),
            output=OutputArgs.from_namespace(ns),
        )


def run(args: PostmortemArgs, streams: Streams) -> ExitCode:
    from servetune.monitor import postmortem
    from servetune.render.monitor import postmortem_text, write_plot

    hint = ErrorText("hint.postmortem-input")
    texts = [(path, read_file(path, hint, lenient=True)) for path in args.files]
    sources = [
        postmortem.read_source(path.name, text, path.stat().st_mtime) for path, text in texts
    ]
    logs = tuple(text for (_, text), s in zip(texts, sources, strict=True) if s.kind == "vllm-log")
    result = postmortem.analyse(postmortem.combine(sources), args.caps.caps(logs), args.window_s)
    if args.plot is not None:
        write_plot(args.plot, result)
    if args.output.format == "json":
        write_json(streams.stdout, result.to_json())
    else:
        streams.stdout.write(postmortem_text(result, args.language))
    return ExitCode.OK


COMMAND = Command(
    name="postmortem",
    help="read a vLLM log or saved metrics and say which limit the server hit, and when",
    options=PostmortemArgs,
    run=run,
)
