"""`servetune quality --before URL --after URL --model NAME --dataset builtin:math`: answer
quality before and after a change (typically a quantization) on the same questions.

Exit codes: 0 no-detectable-loss or better, 1 worse or insufficient-data, 2 bad usage (a
malformed dataset, a server that cannot be reached or does not serve the model), 130 Ctrl-C
(the record of the questions answered so far is still written to --output).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import (
    OutputArgs,
    add_language_argument,
    language_of,
    positive_int,
    write_json,
)
from servetune.errors import UsageError
from servetune.texts import ErrorText, Language

PASSING = ("no-detectable-loss", "better")


def _points(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 0 <= number <= 100:
        raise argparse.ArgumentTypeError("percentage points between 0 and 100")
    return number


def _add_servers(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("servers")

    g.add_argument(
        "--before",
        required=True,
        metavar="URL",
        help="base URL of the server before the change, e.g. http://127.0.0.1:8000",
    )
    g.add_argument(
        "--after",
        required=True,
        metavar="URL",
        help="base URL of the server after the change (may equal --before if you swap models)",
    )
    g.add_argument(
        "--model",
        required=True,
        help="served model name (on both servers unless --model-after)",
    )
    g.add_argument(
        "--model-after",
        metavar="NAME",
        help="served model name on the after server, when it differs",
    )
    g.add_argument(
        "--endpoint",
        default="/v1/chat/completions",
        choices=("/v1/chat/completions", "/v1/completions"),
        help="API to ask (default: chat, one user message per question)",
    )
    g.add_argument(
        "--api-key",
        help="bearer token for both servers (default: $OPENAI_API_KEY); never written",
    )
    g.add_argument(
        "--request-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds one answer may take (default 300)",
    )


def _add_questions(parser: argparse.ArgumentParser) -> None:
    q = parser.add_argument_group("questions")
    q.add_argument(
        "--dataset",
        default="builtin:math",
        help="JSON lines of {prompt, answer[, kind]}, or builtin:math / builtin:reasoning "
        "(default builtin:math)",
    )
    q.add_argument(
        "--num",
        type=positive_int,
        metavar="N",
        help="a seeded sample of N questions (default: all)",
    )
    q.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    q.add_argument(
        "--max-tokens",
        type=positive_int,
        default=512,
        help="longest reply per question (default 512)",
    )
    q.add_argument(
        "--concurrency",
        type=positive_int,
        default=8,
        help="requests in flight per server (default 8)",
    )
    q.add_argument(
        "--tolerance",
        type=_points,
        default=2.0,
        metavar="POINTS",
        help="accuracy loss in percentage points you accept (default 2)",
    )


@dataclass(frozen=True)
class QualityArgs:
    before: str
    after: str
    model: str
    model_after: str | None
    dataset: str
    num: int | None
    seed: int
    endpoint: str
    max_tokens: int
    concurrency: int
    tolerance: float
    api_key: str | None
    output_file: Path | None
    timeout_s: float
    language: Language
    output: OutputArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        _add_servers(parser)
        _add_questions(parser)
        parser.add_argument(
            "--output",
            dest="output_file",
            type=Path,
            metavar="FILE",
            help="write the full record: every question, both replies, both grades",
        )
        add_language_argument(parser)
        OutputArgs.add_arguments(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        from servetune.quality.ask import check_url

        check_url(ns.before)
        check_url(ns.after)
        if ns.request_timeout <= 0:
            raise UsageError(ErrorText("quality.timeout"))
        return cls(
            before=ns.before,
            after=ns.after,
            model=ns.model,
            model_after=ns.model_after,
            dataset=ns.dataset,
            num=ns.num,
            seed=ns.seed,
            endpoint=ns.endpoint,
            max_tokens=ns.max_tokens,
            concurrency=ns.concurrency,
            tolerance=ns.tolerance,
            api_key=ns.api_key or os.environ.get("OPENAI_API_KEY") or None,
            output_file=ns.output_file,
            timeout_s=ns.request_timeout,
            language=language_of(ns),
            output=OutputArgs.from_namespace(ns),
        )


def _write_record(path: Path, doc: dict[str, object]) -> None:
    """Atomically (bench's result-file writer), so an interrupted write never leaves half a
    record."""
    from servetune.measure.results import write_atomic

    try:
        write_atomic(path, doc)
    except OSError as exc:
        message = ErrorText("cannot-write", path=path, reason=exc)
        raise UsageError(message, ErrorText("hint.output-path")) from exc


def run(args: QualityArgs, streams: Streams) -> ExitCode:
    from servetune.quality import ask, dataset
    from servetune.quality.evaluate import QualityConfig, evaluate
    from servetune.render.quality import quality_text

    def server(url: str, model: str) -> ask.Server:
        return ask.Server(url, model, args.endpoint, args.max_tokens, args.timeout_s, args.api_key)

    config = QualityConfig(
        before=server(args.before, args.model),
        after=server(args.after, args.model_after or args.model),
        dataset=args.dataset,
        tolerance_pct_points=args.tolerance,
        concurrency=args.concurrency,
        seed=args.seed,
        num=args.num,
    )
    questions = dataset.sample(dataset.load(args.dataset), args.num, args.seed)
    total = 2 * len(questions)
    done = [0]

    def progress(_index: int, _reply: ask.Reply) -> None:
        done[0] += 1
        if streams.stderr.isatty():
            streams.stderr.write(f"\r{done[0]}/{total}")
            streams.stderr.flush()

    result = evaluate(config, questions, progress)
    if streams.stderr.isatty():
        streams.stderr.write("\r")
    if args.output_file is not None:
        _write_record(args.output_file, result.to_json(with_questions=True))
    if args.output.format == "json":
        write_json(streams.stdout, result.to_json())
    else:
        streams.stdout.write(quality_text(result, args.language))
    if result.interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if result.difference.verdict in PASSING else ExitCode.FAILED


COMMAND = Command(
    name="quality",
    help="compare answer quality before/after a change (e.g. a quantization) on the same questions",
    options=QualityArgs,
    run=run,
)
