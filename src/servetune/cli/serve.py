"""`servetune serve`: check, then launch vLLM, follow its start, and stop it cleanly.

Exit codes: 0 stopped by Ctrl-C/SIGTERM (after a good start or before it); 1 refused (error
findings without --force), failed to start, or died; 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self, TextIO

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import ReviewArgs, review

if TYPE_CHECKING:  # only for annotations: the CLI imports the heavy modules lazily
    from servetune.launch.launcher import ManagedServer
    from servetune.render.serve import Status, Why
    from servetune.review.check import Report
    from servetune.texts import Language


@dataclass(frozen=True)
class ServeArgs:
    review: ReviewArgs
    vllm: str | None
    ready_timeout_s: float
    log: Path | None
    force: bool

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        ReviewArgs.add_arguments(parser)
        parser.add_argument(
            "--vllm", metavar="PATH", help="the vllm program (default: $SERVETUNE_VLLM, PATH)"
        )
        parser.add_argument(
            "--ready-timeout",
            type=float,
            default=1800.0,
            metavar="S",
            help="give up when vLLM is not ready after S seconds (default 1800)",
        )
        parser.add_argument(
            "--log",
            type=Path,
            metavar="FILE",
            help="where vLLM's output goes (default: a file under ~/.cache/servetune/logs/)",
        )
        parser.add_argument("--force", action="store_true", help="launch despite error findings")

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(
            review=ReviewArgs.from_namespace(ns),
            vllm=ns.vllm,
            ready_timeout_s=ns.ready_timeout,
            log=ns.log,
            force=ns.force,
        )


class _Flag:
    """Set by SIGINT/SIGTERM: the server is then stopped, never left behind."""

    def __init__(self) -> None:
        self.raised = False

    def __call__(self, _signum: int, _frame: object) -> None:
        self.raised = True


@dataclass(frozen=True)
class _Out:
    """serve's output: one line of text, or one JSON object per line with --format json."""

    stream: TextIO
    json: bool

    def emit(self, status: Status) -> None:
        if self.json:
            if status.doc is not None:
                self.stream.write(json.dumps(status.doc, ensure_ascii=False) + "\n")
        else:
            self.stream.write(status.text + "\n")
        self.stream.flush()


def _ready(server: ManagedServer, report: Report, language: Language) -> Status:
    from servetune.launch.doctor import diagnose
    from servetune.render import serve as render

    reported = diagnose(server.log_text(), vllm_output=True).reported  # every release
    est = report.estimate
    estimated = render.Capacity(
        est.kv_cache_tokens if est else None,
        est.max_concurrent_seqs_at_max_model_len if est else None,
    )
    url = f"http://{server.host}:{server.port}"
    found = render.Capacity(reported.kv_cache_tokens, reported.max_concurrency)
    return render.ready(url, server.pid, server.log_path, found, estimated, language=language)


def _failure(server: ManagedServer, out: _Out, why: Why, language: Language) -> ExitCode:
    from servetune.launch.doctor import diagnose
    from servetune.render import serve as render

    report = diagnose(server.log_text(), vllm_output=True)
    out.emit(render.failed(why, server.log_path, report, language))
    return ExitCode.FAILED


def _refuse(report: Report, args: ServeArgs, streams: Streams) -> ExitCode:
    from servetune.render import check
    from servetune.render import serve as render

    if args.review.output.format == "json":
        streams.stdout.write(render.refused_json(report))
    else:
        streams.stdout.write(check.report_text(report, args.review.language))
    streams.stderr.write(render.refused_error(args.review.language))
    return ExitCode.FAILED


def run(args: ServeArgs, streams: Streams) -> ExitCode:
    """Review the command, then launch it unless the review found an error."""
    from servetune.launch import launcher
    from servetune.render import serve as render

    report = review(args.review, streams.stdin)
    if report.errors and not args.force:
        return _refuse(report, args, streams)
    vllm = launcher.find_vllm(args.vllm)
    host, port = launcher.server_address(report.command)
    server = launcher.ManagedServer(
        argv=launcher.launch_argv(report.command, vllm),
        log_path=args.log or launcher.default_log_path(port),
        host=host,
        port=port,
    )
    out = _Out(streams.stdout, args.review.output.format == "json")
    flag = _Flag()
    previous = {sig: signal.signal(sig, flag) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with server:
            out.emit(render.starting(server.pid, server.log_path, args.review.language))
            return _follow(server, report, args, out, flag)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _why(outcome: str, ready_timeout_s: float) -> Why:
    from servetune.render.serve import Why

    if outcome == "timeout":
        return Why("why.timeout", seconds=f"{ready_timeout_s:g}")
    return Why(f"why.{outcome}")  # exited, fatal


def _follow(
    server: ManagedServer, report: Report, args: ServeArgs, out: _Out, flag: _Flag
) -> ExitCode:
    from servetune.launch import launcher
    from servetune.render import serve as render
    from servetune.render.serve import Why

    shown: set[str] = set()

    def on_line(line: str) -> None:
        label = launcher.phase(line)
        if label and label not in shown:
            shown.add(label)
            out.emit(render.phase(label))

    outcome = server.wait_ready(args.ready_timeout_s, on_line, lambda: flag.raised)
    language = args.review.language
    if outcome == "interrupted":
        out.emit(render.stopped_early(language))
        return ExitCode.OK
    if outcome != "ready":
        return _failure(server, out, _why(outcome, args.ready_timeout_s), language)
    out.emit(_ready(server, report, language))
    while not flag.raised:
        if server.poll() is not None:
            return _failure(server, out, Why("why.died"), language)
        server.new_lines()
        time.sleep(0.5)
    out.emit(render.stopping(language))
    code = server.stop()
    out.emit(render.stopped(code, language))
    return ExitCode.OK


COMMAND = Command(
    name="serve",
    help="check, then launch vLLM and say in plain words why a start failed",
    usage="servetune serve [options] -- vllm serve MODEL [flags]",
    options=ServeArgs,
    run=run,
    takes_serve_command=True,
)
