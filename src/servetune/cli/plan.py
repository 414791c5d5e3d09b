"""`servetune plan --gpus 1xH100-80GB --input-len 1000 --output-len 200 --concurrency 50 --
vllm serve MODEL`: the boss's questions answered offline by a simulation of vLLM's scheduler.

Exit codes: 0 a prediction was made, 1 the configuration cannot run (check's errors are
listed), 2 bad usage (no load given, unknown model or GPU, unreadable --calibrate files).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import (
    ReviewArgs,
    parse_slo,
    positive_float,
    positive_int,
    ratio,
    review,
    write_json,
)
from servetune.errors import UsageError
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from collections.abc import Sequence

    from servetune.plan.predict import Slo
    from servetune.plan.simulate import Load
    from servetune.review.check import Finding

SLO_KEYS = ("ttft", "tpot", "e2el")


def _add_load(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the load")
    g.add_argument(
        "--input-len",
        type=positive_int,
        metavar="N",
        help="prompt tokens per request (or --random-input-len)",
    )
    g.add_argument(
        "--output-len",
        type=positive_int,
        metavar="N",
        help="output tokens per request (or --random-output-len)",
    )
    g.add_argument(
        "--random-input-len",
        type=positive_int,
        metavar="N",
        help="the same as --input-len, spelled as in bench",
    )
    g.add_argument(
        "--random-output-len",
        type=positive_int,
        metavar="N",
        help="the same as --output-len, spelled as in bench",
    )
    g.add_argument(
        "--random-range-ratio",
        type=ratio,
        default=0.0,
        metavar="R",
        help="lengths vary uniformly by +/- R (default 0), as in bench",
    )
    g.add_argument(
        "--dataset-name",
        choices=("random",),
        default="random",
        help="only random lengths are simulated (accepted for bench's spelling)",
    )
    g.add_argument(
        "--concurrency",
        type=positive_int,
        metavar="N",
        help="N users at once, closed loop (each sends the next request when the last ends)",
    )
    g.add_argument(
        "--request-rate",
        type=positive_float,
        metavar="R",
        help="open loop: Poisson arrivals at R requests/s",
    )
    g.add_argument(
        "--num-prompts",
        type=positive_int,
        default=1000,
        metavar="N",
        help="requests simulated (default 1000)",
    )
    g.add_argument("--seed", type=int, default=0, help="seed of lengths and arrivals (default 0)")


def _add_targets(parser: argparse.ArgumentParser) -> None:
    t = parser.add_argument_group("targets and accuracy")
    t.add_argument(
        "--slo",
        action="append",
        default=[],
        metavar="KEY:MS",
        help="a latency target, repeated: ttft, tpot or e2el in ms (p99 unless --slo-percentile)",
    )
    t.add_argument(
        "--slo-percentile",
        type=int,
        default=99,
        choices=(50, 90, 95, 99),
        help="the percentile the targets apply to (default 99)",
    )
    t.add_argument(
        "--calibrate",
        nargs="+",
        type=Path,
        default=[],
        metavar="RESULT",
        help="result files measured on this setup (servetune bench or vllm bench serve) "
        "to fit the model to",
    )
    t.add_argument(
        "--plot",
        type=Path,
        metavar="FILE",
        help="write continuous vs static batching over a range of users (PNG, or SVG by extension)",
    )


@dataclass(frozen=True)
class PlanArgs:
    review: ReviewArgs
    input_len: int
    output_len: int
    range_ratio: float
    concurrency: int | None
    request_rate: float | None
    num_prompts: int
    slo: dict[str, float]
    slo_percentile: int
    calibrate: tuple[Path, ...]
    plot: Path | None
    seed: int

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        ReviewArgs.add_arguments(parser)
        _add_load(parser)
        _add_targets(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        input_len = ns.input_len or ns.random_input_len
        output_len = ns.output_len or ns.random_output_len
        if input_len is None or output_len is None:
            raise UsageError(ErrorText("plan.lengths"))
        if (ns.concurrency is None) == (ns.request_rate is None):
            raise UsageError(ErrorText("plan.load"))
        return cls(
            review=ReviewArgs.from_namespace(ns),
            input_len=input_len,
            output_len=max(output_len, 1),
            range_ratio=ns.random_range_ratio,
            concurrency=ns.concurrency,
            request_rate=ns.request_rate,
            num_prompts=ns.num_prompts,
            slo=parse_slo(ns.slo, "--slo", SLO_KEYS),
            slo_percentile=ns.slo_percentile,
            calibrate=tuple(ns.calibrate),
            plot=ns.plot,
            seed=ns.seed,
        )

    def load(self) -> Load:
        from servetune.plan.simulate import Load

        return Load(
            input_len=self.input_len,
            output_len=self.output_len,
            num_prompts=self.num_prompts,
            concurrency=self.concurrency,
            request_rate=self.request_rate,
            range_ratio=self.range_ratio,
            seed=self.seed,
        )

    def targets(self) -> Slo:
        from servetune.plan.predict import Slo

        return Slo(
            ttft_ms=self.slo.get("ttft"),
            tpot_ms=self.slo.get("tpot"),
            e2el_ms=self.slo.get("e2el"),
            percentile=self.slo_percentile,
        )


def _refused(args: PlanArgs, streams: Streams, errors: Sequence[Finding]) -> ExitCode:
    from servetune.render.plan import refused_json, refused_text

    if args.review.output.format == "json":
        write_json(streams.stdout, refused_json([(f.rule, f.title.text()) for f in errors]))
    else:
        language = args.review.language
        said = [(f.rule, f.title.text(language)) for f in errors]
        streams.stdout.write(refused_text(said, language))
    return ExitCode.FAILED


def run(args: PlanArgs, streams: Streams) -> ExitCode:
    from servetune.plan.planner import PlanConfig, batching_sweep, corrected, run_plan
    from servetune.render.plan import plan_text, plot_written, write_plot

    report = review(args.review, streams.stdin)
    options = args.review.check_options()
    plannable = corrected(report, options)  # a command check knows the fix for is planned fixed
    if plannable is None:
        return _refused(args, streams, report.errors)
    config = PlanConfig(load=args.load(), slo=args.targets(), calibrate=args.calibrate)
    result = run_plan(plannable, config, options)
    if args.plot is not None:
        write_plot(args.plot, batching_sweep(result))
    if args.review.output.format == "json":
        doc = result.to_json()
        if args.plot is not None:
            doc["plot"] = str(args.plot)
        write_json(streams.stdout, doc)
    else:
        streams.stdout.write(plan_text(result, args.review.language))
        if args.plot is not None:
            streams.stdout.write(plot_written(args.plot, args.review.language))
    return ExitCode.OK


COMMAND = Command(
    name="plan",
    help="predict latency and throughput offline: will N users lag, QPS per GPU, "
    "add a GPU or quantize?",
    options=PlanArgs,
    run=run,
    usage="servetune plan --gpus SPEC --input-len N --output-len N "
    "(--concurrency N | --request-rate R) [options] -- vllm serve MODEL [flags]",
    takes_serve_command=True,
)
