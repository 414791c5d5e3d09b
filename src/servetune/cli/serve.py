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
from typing import TYPE_CHECKING, Any, Self, TextIO

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import ReviewArgs, review

if TYPE_CHECKING:  # only for annotations: the CLI imports the heavy modules lazily
    from servetune.launch.launcher import ManagedServer
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

    def emit(self, text: str, doc: dict[str, Any] | None = None) -> None:
        if self.json:
            if doc is not None:
                self.stream.write(json.dumps(doc, ensure_ascii=False) + "\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _ready_doc(server: ManagedServer, report: Report, url: str) -> tuple[str, dict[str, Any]]:
    from servetune.launch.doctor import diagnose

    reported = diagnose(server.log_text(), vllm_output=True).reported  # every release's lines
    tokens, concurrency = reported.kv_cache_tokens, reported.max_concurrency
    est = report.estimate
    est_tokens = est.kv_cache_tokens if est else None
    est_conc = est.max_concurrent_seqs_at_max_model_len if est else None

    def num(value: float | None, fmt: str) -> str:
        return "unknown" if value is None else format(value, fmt)

    text = (
        f"ready: {url} (pid {server.pid}; vLLM reports KV cache {num(tokens, ',')} tokens, "
        f"max concurrency {num(concurrency, '.2f')}x; check estimated {num(est_tokens, ',')} "
        f"tokens, {num(est_conc, '.2f')}x)"
    )
    doc = {
        "status": "ready",
        "url": url,
        "pid": server.pid,
        "log": str(server.log_path),
        "reported": {"kv_cache_tokens": tokens, "max_concurrency": concurrency},
        "estimate": {"kv_cache_tokens": est_tokens, "max_concurrency": est_conc},
    }
    return text, doc


def _failure(server: ManagedServer, out: _Out, why: str, language: Language) -> ExitCode:
    from servetune.launch.doctor import diagnose
    from servetune.render.doctor import doctor_text

    report = diagnose(server.log_text(), vllm_output=True)
    doc = {"status": "failed", "why": why, "log": str(server.log_path), "doctor": report.to_json()}
    out.emit(
        f"vLLM did not start: {why}\nlog: {server.log_path}\n" + doctor_text(report, language), doc
    )
    return ExitCode.FAILED


def _refuse(report: Report, args: ServeArgs, streams: Streams) -> ExitCode:
    from servetune.render import check as render

    if args.review.output.format == "json":
        doc = {"status": "refused", "check": report.to_json()}
        streams.stdout.write(json.dumps(doc) + "\n")
    else:
        streams.stdout.write(render.report_text(report, args.review.language))
    streams.stderr.write("error: refusing to launch: fix the errors above, or pass --force\n")
    return ExitCode.FAILED


def run(args: ServeArgs, streams: Streams) -> ExitCode:
    """Review the command, then launch it unless the review found an error."""
    from servetune.launch import launcher

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
        server.start()
        out.emit(f"starting vLLM (pid {server.pid}); log: {server.log_path}")
        return _follow(server, report, args, out, flag)
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _follow(
    server: ManagedServer, report: Report, args: ServeArgs, out: _Out, flag: _Flag
) -> ExitCode:
    from servetune.launch import launcher

    shown: set[str] = set()

    def on_line(line: str) -> None:
        label = launcher.phase(line)
        if label and label not in shown:
            shown.add(label)
            out.emit(f"  {label}")

    outcome = server.wait_ready(args.ready_timeout_s, on_line, lambda: flag.raised)
    language = args.review.language
    if outcome == "interrupted":
        out.emit("stopped before vLLM was ready", {"status": "stopped"})
        return ExitCode.OK
    if outcome != "ready":
        why = {"exited": "the process exited", "fatal": "a fatal error in the log",
               "timeout": f"not ready after {args.ready_timeout_s:g} s"}[outcome]  # fmt: skip
        return _failure(server, out, why, language)
    text, doc = _ready_doc(server, report, f"http://{server.host}:{server.port}")
    out.emit(text, doc)
    while not flag.raised:
        if server.poll() is not None:
            return _failure(server, out, "vLLM exited after it was ready", language)
        server.new_lines()
        time.sleep(0.5)
    out.emit("stopping vLLM", {"status": "stopping"})
    code = server.stop()
    out.emit(f"vLLM stopped (exit code {code})", {"status": "stopped", "exit_code": code})
    return ExitCode.OK


COMMAND = Command(
    name="serve",
    help="check, then launch vLLM and say in plain words why a start failed",
    usage="servetune serve [options] -- vllm serve MODEL [flags]",
    options=ServeArgs,
    run=run,
    takes_serve_command=True,
)
