"""`servetune watch URL`: attach to a running vLLM, sample /metrics, name the limit that binds.

On a terminal a live panel redrawn in place; otherwise one line per interval; `--format json`
writes JSON Lines (one object per interval, then `{"summary": ...}`).

Exit codes: 0 the duration ran out, 1 the server went away (after what was seen is printed),
2 bad usage or a server that could not be scraped at all, 130 Ctrl-C (after the summary).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self, TextIO

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import (
    OutputArgs,
    add_language_argument,
    language_of,
    positive_float,
    read_file,
)
from servetune.errors import UsageError
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from servetune.monitor.caps import Caps
    from servetune.monitor.watch import Ending, Fetch, Tick, Watch, WatchConfig
    from servetune.texts import Language


def add_caps_arguments(parser: argparse.ArgumentParser, *, log: bool = True) -> None:
    """Where the caps come from (shared with postmortem): a serve command, its GPUs and release,
    the server's startup log."""
    parser.add_argument(
        "--serve-command",
        dest="command_text",  # `serve_command` holds the words after `--` (cli/main.py)
        metavar="TEXT",
        help='the server\'s command, "vllm serve MODEL ..."',
    )
    parser.add_argument("--file", metavar="PATH", type=Path, help="read the command from a file")
    parser.add_argument(
        "--gpus", metavar="SPEC", help="the server's GPUs for vLLM's defaults, e.g. 1xH100"
    )
    parser.add_argument("--vllm-version", metavar="X.Y.Z", help="the server's vLLM release")
    if log:
        parser.add_argument(
            "--log", metavar="PATH", type=Path, help="the server's log (caps, KV cache size)"
        )


@dataclass(frozen=True)
class CapsArgs:
    serve_command: str | None
    file: Path | None
    gpus: str | None
    vllm_version: str | None
    log: Path | None

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        if ns.command_text and ns.file:
            raise UsageError(ErrorText("watch.command-twice"))
        return cls(ns.command_text, ns.file, ns.gpus, ns.vllm_version, getattr(ns, "log", None))

    def caps(self, extra_logs: tuple[str, ...] = ()) -> Caps:
        from servetune.monitor import caps

        text = self.serve_command
        if self.file is not None:
            text = read_file(self.file, ErrorText("hint.file-path"))
        config_dir = self.file.resolve().parent if self.file else None
        command = (
            caps.from_command(
                text, gpus=self.gpus, vllm_version=self.vllm_version, config_dir=config_dir
            )
            if text
            else None
        )
        logs = [read_file(self.log, ErrorText("hint.server-log"), lenient=True)] if self.log else []
        started = [caps.from_log(t) for t in [*logs, *extra_logs]]
        found = next((c for c in started if c.source != "none"), started[0] if started else None)
        return caps.joined(command, found)


def _seconds(parser: argparse.ArgumentParser, flag: str, default: float | None, text: str) -> None:
    parser.add_argument(flag, type=positive_float, default=default, metavar="S", help=text)


@dataclass(frozen=True)
class WatchArgs:
    url: str
    interval_s: float
    window_s: float
    duration_s: float | None
    api_key: str | None
    caps: CapsArgs
    language: Language
    output: OutputArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("url", help="the server's base URL, e.g. http://127.0.0.1:8000")
        _seconds(parser, "--interval", 2.0, "seconds between two scrapes (default 2)")
        _seconds(parser, "--window", 30.0, "the window a limit is judged over (default 30)")
        _seconds(parser, "--duration", None, "stop after S seconds (default: until Ctrl-C)")
        parser.add_argument("--api-key", metavar="KEY", help="sent as `Authorization: Bearer KEY`")
        add_caps_arguments(parser)
        OutputArgs.add_arguments(parser)
        add_language_argument(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(
            url=ns.url,
            interval_s=ns.interval,
            window_s=ns.window,
            duration_s=ns.duration,
            api_key=ns.api_key,
            caps=CapsArgs.from_namespace(ns),
            language=language_of(ns),
            output=OutputArgs.from_namespace(ns),
        )

    def config(self) -> WatchConfig:
        from servetune.monitor.watch import WatchConfig

        timeout = max(1.0, min(5.0, self.interval_s * 2))
        return WatchConfig(self.url, self.interval_s, self.window_s, self.duration_s, timeout)


class _View:
    """Where each interval goes: JSON Lines, the live panel, or one line per interval."""

    def __init__(self, args: WatchArgs, stream: TextIO, tty: bool) -> None:
        self.args, self.stream, self.tty = args, stream, tty
        self.height = 0

    def __call__(self, tick: Tick) -> None:
        from servetune.render import monitor as view

        if self.args.output.format == "json":
            self.stream.write(view.json_line(tick.to_json()))
        elif self.tty:
            lines = view.panel(tick, self.args.url, self.args.window_s, self.args.language)
            self.stream.write(view.redraw(lines, self.height))
            self.height = len(lines)
        else:
            self.stream.write(view.interval_line(tick, self.args.language))
        self.stream.flush()

    def close(self, state: Watch, ending: Ending | None) -> None:
        from servetune.render import monitor as view

        summary = state.summary()
        if self.args.output.format == "json":
            self.stream.write(view.json_line(summary.to_json()))
        else:
            if ending is not None:
                self.stream.write(view.ending_text(ending, self.args.language))
            self.stream.write(view.summary_text(summary, self.args.language))
        self.stream.flush()


async def _loop(
    args: WatchArgs,
    state: Watch,
    *,
    fetch: Fetch | None,
    clock: Callable[[], float],
    sleep: Callable[[float], Awaitable[None]],
    emit: Callable[[Tick], None],
) -> Ending:
    from servetune.measure.client import ClientLimits, Endpoint, HttpClient
    from servetune.monitor import watch

    config = args.config()
    client = None
    if fetch is None:
        headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
        limits = ClientLimits(connect_timeout_s=config.timeout_s, request_timeout_s=30.0)
        client = HttpClient(Endpoint.parse(args.url), limits, headers)
        fetch = watch.http_fetch(client, config.timeout_s)
    try:
        return await watch.run(config, state, fetch, clock=clock, sleep=sleep, emit=emit)
    finally:
        if client is not None:
            await client.aclose()


def watch(
    args: WatchArgs,
    streams: Streams,
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    fetch: Fetch | None = None,
    tty: bool | None = None,
) -> ExitCode:
    """The command with its clock, sleeper and fetcher injectable (the tests' seam)."""
    from servetune.measure.client import Endpoint, run_event_loop
    from servetune.monitor.watch import Watch

    Endpoint.parse(args.url)  # a bad URL is bad usage, before anything is shown
    state = Watch(args.caps.caps(), args.window_s, clock())
    view = _View(args, streams.stdout, streams.stdout.isatty() if tty is None else tty)
    try:
        ending = run_event_loop(
            _loop(args, state, fetch=fetch, clock=clock, sleep=sleep, emit=view)
        )
    except KeyboardInterrupt:
        view.close(state, None)
        return ExitCode.INTERRUPTED
    view.close(state, ending)
    return ExitCode.FAILED if ending.kind == "gone" else ExitCode.OK


def run(args: WatchArgs, streams: Streams) -> ExitCode:
    return watch(args, streams)


COMMAND = Command(
    name="watch",
    help="watch a running vLLM's /metrics and name the limit it hits now",
    options=WatchArgs,
    run=run,
)
