"""`servetune bench`: options (spelled as `vllm bench serve` spells them) -> run -> result file.

Exit codes: 0 the run finished and its result was written (failed requests are data); 1 every
request failed; 2 bad usage or a server that cannot be reached; 130 interrupted (the partial
result is still written, marked partial).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from servetune.errors import UsageError

EXIT_OK, EXIT_ALL_FAILED, EXIT_INTERRUPTED = 0, 1, 130
_SLO_KEYS = ("ttft", "tpot", "e2el")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from exc
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer: {text!r}")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be 0 or a positive integer: {text!r}")
    return int(text)


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from exc
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError("must be in [0, 1)")
    return value


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "bench",
        help="load-test an OpenAI-compatible server (TTFT, TPOT, ITL, E2EL, throughput)",
        description="Load-test an OpenAI-compatible server. Flag names follow `vllm bench serve`.",
    )
    p.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000")
    p.add_argument("--model", required=True, help="the model name the server serves")
    p.add_argument("--endpoint", default="/v1/completions",
                   choices=("/v1/completions", "/v1/chat/completions"))  # fmt: skip
    p.add_argument("--api-key", help="bearer token (default: $OPENAI_API_KEY); never written")
    p.add_argument("--dataset-name", default="random", choices=("random", "jsonl", "sharegpt"))
    p.add_argument("--dataset-path", type=Path, help="the jsonl or ShareGPT file")
    p.add_argument("--random-input-len", type=_positive_int, default=1024)
    p.add_argument("--random-output-len", type=_positive_int, default=128)
    p.add_argument("--random-range-ratio", type=_ratio, default=0.0)
    p.add_argument("--random-prefix-len", type=_count, default=0)
    p.add_argument("--sharegpt-output-len", type=_positive_int)
    load = p.add_mutually_exclusive_group()
    load.add_argument("--num-prompts", type=_positive_int, default=None, help="default 1000")
    load.add_argument("--duration", type=_positive_float, help="run for S seconds instead")
    p.add_argument("--request-rate", type=_positive_float, default=math.inf, help="req/s (inf)")
    p.add_argument("--burstiness", type=_positive_float, default=1.0,
                   help="gamma shape: 1 = Poisson, inf = evenly spaced")  # fmt: skip
    p.add_argument("--max-concurrency", type=_positive_int)
    p.add_argument("--warmup", type=_count, default=0, help="requests left out of the results")
    p.add_argument("--ignore-eos", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--request-timeout", type=_positive_float, default=600.0, help="seconds")
    p.add_argument("--goodput", nargs="+", metavar="KEY:MS", help="SLOs, e.g. ttft:500 tpot:50")
    p.add_argument("--output", type=Path, help="the result file (JSON)")
    p.add_argument("--save-result", action="store_true", help="as vLLM: write to --result-dir")
    p.add_argument("--result-dir", type=Path)
    p.add_argument("--result-filename")
    p.add_argument("--label")
    p.add_argument("--server-command", help='the server\'s launch, e.g. "vllm serve ..."')
    p.add_argument("--gpus", metavar="SPEC", help="the server's GPUs, e.g. 2xA100-80GB (recorded)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--debug", action="store_true")


def _slo(items: list[str] | None) -> dict[str, float]:
    slo: dict[str, float] = {}
    for item in items or []:
        key, sep, value = item.partition(":")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or key not in _SLO_KEYS or number <= 0:
            raise UsageError(
                f"bad --goodput item {item!r}", "use KEY:MS with KEY one of ttft, tpot, e2el"
            )
        slo[key] = number
    return slo


def _checked_gpus(spec: str | None) -> str | None:
    if spec is not None:
        from servetune.review.hardware import parse_gpus

        parse_gpus(spec)  # a HardwareError (exit 2) now, not an unreadable record later
    return spec


def build_config(ns: argparse.Namespace) -> object:
    from servetune.measure.bench import BenchConfig
    from servetune.measure.workload import WorkloadSpec

    if ns.dataset_name != "random" and ns.dataset_path is None:
        raise UsageError(f"--dataset-name {ns.dataset_name} needs --dataset-path")
    if ns.dataset_path is not None and not ns.dataset_path.is_file():
        raise UsageError(f"no such file: {ns.dataset_path}", "check --dataset-path")
    if ns.duration is not None and math.isinf(ns.request_rate) and not ns.max_concurrency:
        raise UsageError(
            "--duration needs a --request-rate or a --max-concurrency",
            "otherwise requests would be sent without limit",
        )
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
        request_timeout_s=ns.request_timeout,
        goodput_slo_ms=_slo(ns.goodput),
        label=ns.label,
        server_command=ns.server_command,
        gpus=_checked_gpus(ns.gpus),
    )


def _output_path(ns: argparse.Namespace, default_name: str) -> Path:
    if ns.output is not None:
        return Path(ns.output)
    directory = ns.result_dir or Path()
    return directory / (ns.result_filename or default_name)


class _LiveLine:
    """One status line on a TTY, rewritten in place. Its tok/s counts content chunks as they
    arrive (one token each unless the server batches tokens; exact counts come at the end)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last_tokens = 0
        self.last_time = 0.0

    def __call__(self, p: object) -> None:
        from servetune.measure.bench import Progress

        assert isinstance(p, Progress)  # noqa: S101 - our own value
        dt = p.elapsed_s - self.last_time
        rate = (p.output_tokens - self.last_tokens) / dt if dt > 0 else 0.0
        self.last_tokens, self.last_time = p.output_tokens, p.elapsed_s
        total = f"/{p.total}" if p.total else ""
        self.stream.write(
            f"\r  {p.elapsed_s:6.1f} s  done {p.done}{total}  failed {p.failed}  "
            f"in flight {p.in_flight}  {rate:,.0f} tok/s   "
        )
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


async def _run_with_signals(config: object, progress: object) -> object:
    from servetune.measure.bench import BenchConfig, run_bench

    assert isinstance(config, BenchConfig)  # noqa: S101 - our own value
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await run_bench(config, progress=progress, stop=stop)  # type: ignore[arg-type]
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def run(ns: argparse.Namespace, stdout: TextIO) -> int:
    from servetune.measure import results
    from servetune.measure.bench import BenchRun
    from servetune.render import bench as render

    config = build_config(ns)
    live = _LiveLine(sys.stderr) if sys.stderr.isatty() and ns.format == "text" else None
    outcome = asyncio.run(_run_with_signals(config, live))
    if live is not None:
        live.close()
    assert isinstance(outcome, BenchRun)  # noqa: S101 - our own value
    summary = results.summarize(outcome)
    doc = results.document(outcome, summary)
    path = _output_path(ns, results.default_filename(outcome))
    try:
        results.write_atomic(path, doc)
    except OSError as exc:
        # Never lose a finished run to a bad path: keep it in the temp folder and say where.
        rescue = Path(tempfile.gettempdir()) / results.default_filename(outcome)
        results.write_atomic(rescue, doc)
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}; the result was saved to {rescue}",
            "check --output / --result-dir",
        ) from exc
    if ns.format == "json":
        stdout.write(json.dumps(results.summary_document(doc), indent=2) + "\n")
    else:
        stdout.write(render.bench_text(doc, str(path)))
    if outcome.partial:
        return EXIT_INTERRUPTED
    return EXIT_ALL_FAILED if summary.completed == 0 else EXIT_OK
