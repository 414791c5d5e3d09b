"""`servetune bench`: options (spelled as `vllm bench serve` spells them) -> run -> result file.

Exit codes: 0 the run finished and its result was written (failed requests are data); 1 every
request failed; 2 bad usage or a server that cannot be reached; 130 interrupted (the partial
result is still written, marked partial).

To add an option: declare it in the `_add_*` group it belongs to, and read it in
`build_config` (a setting of the run) or in `BenchArgs.from_namespace` (where results go).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self, TextIO

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import (
    OutputArgs,
    add_language_argument,
    count,
    in_flags,
    language_of,
    parse_slo,
    positive_float,
    positive_int,
    ratio,
)
from servetune.errors import UsageError
from servetune.texts import ErrorText

if TYPE_CHECKING:  # only for annotations: the CLI imports the heavy modules lazily
    from servetune.measure.bench import BenchConfig, BenchRun, Progress
    from servetune.texts import Language

_SLO_KEYS = ("ttft", "tpot", "e2el")


def _add_server(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the server")
    g.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000")
    g.add_argument("--model", required=True, help="the model name the server serves")
    g.add_argument(
        "--endpoint",
        default="/v1/completions",
        choices=("/v1/completions", "/v1/chat/completions"),
        help="the API to load (default /v1/completions)",
    )
    g.add_argument("--api-key", help="bearer token (default: $OPENAI_API_KEY); never written")
    g.add_argument(
        "--server-command", help='the server\'s launch, e.g. "vllm serve ..." (recorded)'
    )
    g.add_argument("--gpus", metavar="SPEC", help="the server's GPUs, e.g. 2xA100-80GB (recorded)")


def _add_workload(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the prompts")
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
        help="prompt tokens per request, random dataset (default 1024)",
    )
    g.add_argument(
        "--random-output-len",
        type=positive_int,
        default=128,
        help="tokens to generate per request, random dataset (default 128)",
    )
    g.add_argument(
        "--random-range-ratio",
        type=ratio,
        default=0.0,
        help="lengths vary uniformly by +/- this share (default 0: fixed)",
    )
    g.add_argument(
        "--random-prefix-len",
        type=count,
        default=0,
        help="tokens of one prefix shared by every prompt (default 0)",
    )
    g.add_argument(
        "--sharegpt-output-len",
        type=positive_int,
        help="output tokens per ShareGPT prompt (default: as in the file)",
    )


def _add_load(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the load")
    load = g.add_mutually_exclusive_group()
    load.add_argument(
        "--num-prompts", type=positive_int, default=None, help="requests to send (default 1000)"
    )
    load.add_argument("--duration", type=positive_float, help="run for S seconds instead")
    g.add_argument(
        "--request-rate",
        type=positive_float,
        default=math.inf,
        help="mean arrivals per second (default inf: all at once)",
    )
    g.add_argument(
        "--burstiness",
        type=positive_float,
        default=1.0,
        help="gamma shape: 1 = Poisson, inf = evenly spaced",
    )
    g.add_argument(
        "--max-concurrency",
        type=positive_int,
        help="at most this many requests in flight (default: no limit)",
    )
    g.add_argument("--warmup", type=count, default=0, help="requests left out of the results")
    g.add_argument(
        "--ignore-eos",
        action="store_true",
        help="generate the full output length even past end-of-sequence",
    )
    g.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of prompt lengths and arrival times (default 0; recorded)",
    )
    g.add_argument(
        "--prompt-seed",
        type=int,
        help="seed of the random prompts' text (default: --seed where the server's "
        "prefix cache can be emptied first, else a new one per run; recorded)",
    )
    g.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N|auto",
        help="client processes that share the requests (default 1; auto: one per core but one)",
    )
    g.add_argument(
        "--request-timeout",
        type=positive_float,
        default=600.0,
        help="seconds before one request counts as failed (default 600)",
    )
    g.add_argument("--goodput", nargs="+", metavar="KEY:MS", help="SLOs, e.g. ttft:500 tpot:50")


def _add_result(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the result file")
    g.add_argument("--output", type=Path, help="the result file (JSON)")
    g.add_argument("--save-result", action="store_true", help="as vLLM: write to --result-dir")
    g.add_argument(
        "--result-dir", type=Path, help="folder of the result file (default: the current one)"
    )
    g.add_argument(
        "--result-filename", help="name of the result file (default: from label, rate and time)"
    )
    g.add_argument("--label", help="a name for this run, recorded and used in the file name")
    g.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the run's report page (offline HTML), as `servetune report`",
    )


def _workers(text: str) -> int:
    from servetune.measure.workers import worker_count

    try:
        return worker_count(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(in_flags(exc)[0]) from exc


def _checked_gpus(spec: str | None) -> str | None:
    if spec is not None:
        from servetune.review.hardware import parse_gpus

        parse_gpus(spec)  # a HardwareError (exit 2) now, not an unreadable record later
    return spec


def _check_workload(ns: argparse.Namespace) -> None:
    if ns.dataset_name != "random" and ns.dataset_path is None:
        raise UsageError(ErrorText("bench.dataset-path", name=ns.dataset_name))
    if ns.dataset_path is not None and not ns.dataset_path.is_file():
        raise UsageError(ErrorText("bench.no-such-file", path=ns.dataset_path))
    if ns.duration is not None and math.isinf(ns.request_rate) and not ns.max_concurrency:
        raise UsageError(ErrorText("bench.duration"))


def build_config(ns: argparse.Namespace) -> BenchConfig:
    """The run the options describe (checked: a bad combination is a `UsageError`)."""
    from servetune.measure.bench import BenchConfig
    from servetune.measure.workload import WorkloadSpec

    _check_workload(ns)
    spec = WorkloadSpec(
        dataset_name=ns.dataset_name,
        dataset_path=ns.dataset_path,
        num_prompts=ns.num_prompts or 1000,
        random_input_len=ns.random_input_len,
        random_output_len=ns.random_output_len,
        random_range_ratio=ns.random_range_ratio,
        random_prefix_len=ns.random_prefix_len,
        sharegpt_output_len=ns.sharegpt_output_len,
    )
    return BenchConfig(
        base_url=ns.base_url,
        model=ns.model,
        endpoint=ns.endpoint,
        api_key=ns.api_key or os.environ.get("OPENAI_API_KEY") or None,
        workload=spec,
        duration_s=ns.duration,
        request_rate=ns.request_rate,
        burstiness=ns.burstiness,
        max_concurrency=ns.max_concurrency,
        warmup=ns.warmup,
        ignore_eos=ns.ignore_eos,
        seed=ns.seed,
        prompt_seed=ns.prompt_seed,
        workers=ns.workers,
        request_timeout_s=ns.request_timeout,
        goodput_slo_ms=parse_slo(ns.goodput, "--goodput", _SLO_KEYS),
        label=ns.label,
        server_command=ns.server_command,
        gpus=_checked_gpus(ns.gpus),
    )


@dataclass(frozen=True)
class BenchArgs:
    """The run (`config`) and where its result goes (`output_path`, else the folder and name
    `--result-dir` / `--result-filename` give, the name defaulting to one the run picks)."""

    config: BenchConfig
    output_path: Path | None
    result_dir: Path | None
    result_filename: str | None
    output: OutputArgs
    language: Language
    html: Path | None = None

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        _add_server(parser)
        _add_workload(parser)
        _add_load(parser)
        _add_result(parser)
        OutputArgs.add_arguments(parser)
        add_language_argument(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        # --save-result needs no field: without --output the file always goes to --result-dir.
        return cls(
            config=build_config(ns),
            output_path=ns.output,
            result_dir=ns.result_dir,
            result_filename=ns.result_filename,
            output=OutputArgs.from_namespace(ns),
            language=language_of(ns),
            html=ns.html,
        )

    def result_path(self, default_name: str) -> Path:
        if self.output_path is not None:
            return self.output_path
        return (self.result_dir or Path()) / (self.result_filename or default_name)


class _LiveLine:
    """One status line on a TTY, rewritten in place. Its tok/s counts content chunks as they
    arrive (one token each unless the server batches tokens; exact counts come at the end)."""

    def __init__(self, stream: TextIO, language: Language = "en") -> None:
        self.stream = stream
        self.language = language
        self.last_tokens = 0
        self.last_time = 0.0

    def __call__(self, p: Progress) -> None:
        dt = p.elapsed_s - self.last_time
        rate = (p.output_tokens - self.last_tokens) / dt if dt > 0 else 0.0
        self.last_tokens, self.last_time = p.output_tokens, p.elapsed_s
        from servetune.render.bench import live_line

        line = live_line(
            elapsed_s=p.elapsed_s,
            done=p.done,
            total=p.total,
            failed=p.failed,
            in_flight=p.in_flight,
            tokens_per_s=rate,
            language=self.language,
        )
        self.stream.write(f"\r  {line}   ")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


async def _run_with_signals(config: BenchConfig, progress: _LiveLine | None) -> BenchRun:
    from servetune.measure.bench import run_bench

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await run_bench(config, progress=progress, stop=stop)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _save(path: Path, default_name: str, write: Callable[[Path], None]) -> None:
    """`write` the result to `path`; never lose a finished run to a bad path: keep it in the
    temp folder instead and say where."""
    try:
        write(path)
    except OSError as exc:
        rescue = Path(tempfile.gettempdir()) / default_name
        write(rescue)
        reason = exc.strerror or exc
        raise UsageError(
            ErrorText("bench.cannot-save", path=path, reason=reason, rescue=rescue)
        ) from exc


def _write_html(page: Path, result: Path, language: Language, streams: Streams | None) -> None:
    """--html: the report page of the result just written (and, in text, a line saying where)."""
    from servetune.cli.report import write_page
    from servetune.render.report import ReportRequest
    from servetune.texts import Voice

    written = write_page(ReportRequest(paths=(result,)), page, language)
    if streams is not None:
        streams.stdout.write(Voice("report", language)("written", path=written) + "\n")


def run(args: BenchArgs, streams: Streams) -> ExitCode:
    from servetune.measure import results
    from servetune.measure.client import run_event_loop
    from servetune.render import bench as render

    text = args.output.format == "text"
    live = _LiveLine(streams.stderr, args.language) if streams.stderr.isatty() and text else None
    outcome = run_event_loop(_run_with_signals(args.config, live))
    if live is not None:
        live.close()
    summary = results.summarize(outcome)
    doc = results.document(outcome, summary)
    default_name = results.default_filename(outcome)
    path = args.result_path(default_name)
    _save(path, default_name, lambda where: results.write_atomic(where, doc))
    if text:
        streams.stdout.write(render.bench_text(doc, str(path), args.language))
    else:
        streams.stdout.write(json.dumps(results.summary_document(doc), indent=2) + "\n")
    if args.html is not None:
        _write_html(args.html, path, args.language, streams if text else None)
    if outcome.partial:
        return ExitCode.INTERRUPTED
    return ExitCode.FAILED if summary.completed == 0 else ExitCode.OK


COMMAND = Command(
    name="bench",
    help="load-test an OpenAI-compatible server (TTFT, TPOT, ITL, E2EL, throughput)",
    description="Load-test an OpenAI-compatible server. Flag names follow `vllm bench serve`.",
    options=BenchArgs,
    run=run,
)
