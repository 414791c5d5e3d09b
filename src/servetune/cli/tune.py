"""`servetune tune`: find the serve flags that carry the most users within latency targets.

Exit codes: 0 a best configuration was found; 1 none met the targets; 2 bad usage;
130 interrupted (finished trials stay in --output: rerun to resume).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self, TextIO

from servetune.cli import tune_executor
from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import (
    OutputArgs,
    add_language_argument,
    in_flags,
    language_of,
    parse_slo,
    positive_float,
    positive_int,
    ratio,
    read_file,
    write_json,
)
from servetune.errors import UsageError
from servetune.texts import ErrorText, Language

if TYPE_CHECKING:
    from servetune.tune.search import TuneConfig

_SLO_KEYS = ("ttft", "tpot", "itl", "e2el")


def _add_server(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the server (as `serve` takes it)")
    g.add_argument(
        "--vllm", metavar="PATH", help="the vllm program (default: $SERVETUNE_VLLM, PATH)"
    )
    g.add_argument("--gpus", metavar="SPEC", help="N, NAME or NxNAME, e.g. 1xH100 (default: NVML)")
    g.add_argument("--vllm-version", metavar="X.Y.Z", help="vLLM release to review for")
    g.add_argument(
        "--ready-timeout",
        type=positive_float,
        default=1800.0,
        metavar="S",
        help="a start not ready after S seconds has failed (default 1800)",
    )
    g.add_argument("--file", metavar="PATH", help="read the command from a file ('-' = stdin)")
    g.add_argument("--model-config", metavar="PATH", type=Path, help="config.json or its folder")
    g.add_argument("--online", action="store_true", help="fetch unknown configs from the HF Hub")
    g.add_argument(
        "--force", action="store_true", help="start configurations despite check's error findings"
    )
    add_language_argument(g)


def _add_workload(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the workload (as `bench` takes it)")
    g.add_argument(
        "--dataset-name",
        default="random",
        choices=("random", "jsonl", "sharegpt"),
        help="where prompts come from (default: random words)",
    )
    g.add_argument("--dataset-path", type=Path, help="the jsonl or ShareGPT file")
    g.add_argument(
        "--random-input-len",
        type=positive_int,
        default=1024,
        metavar="N",
        help="prompt tokens per request (default 1024)",
    )
    g.add_argument(
        "--random-output-len",
        type=positive_int,
        default=128,
        metavar="N",
        help="tokens to generate per request (default 128)",
    )
    g.add_argument(
        "--random-range-ratio",
        type=ratio,
        default=0.0,
        metavar="R",
        help="lengths vary uniformly by +/- this share (default 0)",
    )
    g.add_argument("--seed", type=int, default=0, help="prompts and arrivals (default 0)")
    g.add_argument(
        "--endpoint",
        default="/v1/completions",
        choices=("/v1/completions", "/v1/chat/completions"),
        help="the API to load (default /v1/completions)",
    )


def _add_search(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the search")
    g.add_argument(
        "--slo",
        action="append",
        metavar="KEY:MS",
        required=True,
        help="a latency target, repeatable: ttft, tpot, itl or e2el in ms",
    )
    g.add_argument(
        "--slo-percentile",
        type=positive_float,
        default=99.0,
        metavar="P",
        help="the percentile the targets hold for (default 99)",
    )
    g.add_argument(
        "--knob",
        action="append",
        metavar="FLAG=V1,V2",
        help="values to consider for one serve flag, repeatable (default: "
        "max-num-seqs, max-num-batched-tokens, gpu-memory-utilization, and "
        "tensor-parallel-size, kv-cache-dtype where they apply)",
    )
    g.add_argument(
        "--max-starts",
        type=positive_int,
        default=12,
        metavar="N",
        help="server starts allowed (default 12)",
    )
    g.add_argument(
        "--repeats",
        type=positive_int,
        default=2,
        metavar="N",
        help="runs at each configuration's capacity (default 2)",
    )
    g.add_argument(
        "--output",
        type=Path,
        required=True,
        metavar="DIR",
        help="where trials, tune.json and report.html go; rerun to resume",
    )


@dataclass(frozen=True)
class TuneArgs:
    command: tuple[str, ...]
    ns: argparse.Namespace
    language: Language
    output: OutputArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        _add_server(parser)
        _add_workload(parser)
        _add_search(parser)
        tune_executor.add_arguments(parser)
        OutputArgs.add_arguments(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(_command_words(ns), ns, language_of(ns), OutputArgs.from_namespace(ns))

    def config(self) -> TuneConfig:
        from servetune.launch.launcher import find_vllm
        from servetune.measure.workload import WorkloadSpec
        from servetune.review.hardware import parse_gpus
        from servetune.tune.knobs import parse_knob
        from servetune.tune.search import TuneConfig
        from servetune.tune.trial import Targets

        ns = self.ns
        if ns.gpus is not None:
            parse_gpus(ns.gpus)  # a bad spec is a usage error now, not a failed trial later
        if ns.slo_percentile >= 100:
            raise UsageError(ErrorText("tune.slo-percentile"))
        if ns.dataset_name != "random" and (
            ns.dataset_path is None or not ns.dataset_path.is_file()
        ):
            raise UsageError(ErrorText("tune.dataset-path", name=ns.dataset_name))
        workload = WorkloadSpec(
            dataset_name=ns.dataset_name,
            dataset_path=ns.dataset_path,
            random_input_len=ns.random_input_len,
            random_output_len=ns.random_output_len,
            random_range_ratio=ns.random_range_ratio,
        )
        knobs = dict(parse_knob(k) for k in ns.knob) if ns.knob else None
        targets = Targets(parse_slo(ns.slo, "--slo", _SLO_KEYS), ns.slo_percentile)
        return TuneConfig(
            argv=self.command,
            targets=targets,
            output=ns.output,
            vllm=find_vllm(ns.vllm),
            workload=workload,
            endpoint=ns.endpoint,
            seed=ns.seed,
            gpus=ns.gpus,
            vllm_version=ns.vllm_version,
            ready_timeout_s=ns.ready_timeout,
            knobs=knobs,
            max_starts=ns.max_starts,
            repeats=ns.repeats,
            model_config=ns.model_config,
            online=ns.online,
            force=ns.force,
        )


def _command_words(ns: argparse.Namespace) -> tuple[str, ...]:
    """The command to tune: the words after `--` (or one quoted word), or --file's text."""
    from servetune.vllm.serve_command import tokens_from_text

    words = list(ns.serve_command or [])
    if ns.file is not None:
        if words:
            raise UsageError(ErrorText("cli.command-twice"))
        hint = ErrorText("hint.file-path")
        text = sys.stdin.read() if ns.file == "-" else read_file(Path(ns.file), hint)
        return tuple(tokens_from_text(text))
    if not words:
        raise UsageError(ErrorText("tune.no-command"))
    if len(words) == 1 and " " in words[0]:
        return tuple(tokens_from_text(words[0]))  # the whole command passed as one word
    return tuple(words)


class _Progress:
    """Live lines on stderr: elapsed time, the trial, what it is doing."""

    def __init__(self, stream: TextIO, max_starts: int) -> None:
        self.stream, self.max_starts = stream, max_starts
        self.began = time.monotonic()
        self.trial = ""

    def __call__(self, event: str) -> None:
        if event.startswith("trial "):
            number, _, what = event.partition(": ")
            self.trial = f"{number} (at most {self.max_starts} starts)"
            event = what
        elapsed = time.monotonic() - self.began
        self.stream.write(f"[{elapsed:6.0f} s] {self.trial}: {event}\n")
        self.stream.flush()


def run(args: TuneArgs, streams: Streams) -> ExitCode:
    from servetune.errors import MissingExtra
    from servetune.render import tune_report
    from servetune.render.tune import interrupted_text, summary_text
    from servetune.tune import output

    config = args.config()
    executor = tune_executor.ExecutorArgs.from_namespace(args.ns)
    try:
        result = tune_executor.run(config, executor, _Progress(streams.stderr, config.max_starts))
    except KeyboardInterrupt:
        streams.stderr.write(interrupted_text(config.output, args.language))
        return ExitCode.INTERRUPTED
    doc = output.write_document(result)
    try:
        tune_report.write(result, args.language)
    except MissingExtra as exc:
        message, hint = in_flags(exc, args.language)
        streams.stderr.write(f"warning: {message}\nhint: {hint}\n")
    if args.output.format == "json":
        write_json(streams.stdout, doc)
    else:
        streams.stdout.write(summary_text(result, args.language))
    return ExitCode.OK if result.best is not None else ExitCode.FAILED


COMMAND = Command(
    name="tune",
    help="find the serve flags that carry the most users within latency targets",
    usage="servetune tune --slo KEY:MS ... --output DIR [options] -- vllm serve MODEL [flags]",
    options=TuneArgs,
    run=run,
    takes_serve_command=True,
)
