"""`watch` in virtual time: recorded pages served by a fake fetcher, a fake clock and sleeper;
gaps, the server going away, Ctrl-C, the live panel, JSON Lines."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence

import pytest

from servetune.cli.command import Streams
from servetune.cli.main import build_parser
from servetune.cli.watch import WatchArgs, watch
from servetune.errors import ExitCode, ServerUnreachable
from servetune.monitor.watch import ScrapeFailed

Page = Callable[..., str]
URL = "http://127.0.0.1:9"


class Tape:
    """Pages (or failures) in order, one per scrape; the clock moves only when `sleep` is awaited."""

    def __init__(self, answers: Sequence[str | ScrapeFailed], interrupt_at: int | None = None):
        self.answers = list(answers)
        self.now = 1_000.0
        self.sleeps = 0
        self.interrupt_at = interrupt_at

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        if self.interrupt_at is not None and self.sleeps >= self.interrupt_at:
            raise KeyboardInterrupt
        self.now += seconds

    async def fetch(self) -> str:
        answer = self.answers.pop(0) if self.answers else ScrapeFailed("refused", "gone")
        if isinstance(answer, ScrapeFailed):
            raise answer
        return answer


def _args(*extra: str) -> WatchArgs:
    return WatchArgs.from_namespace(build_parser().parse_args(["watch", URL, *extra]))


def _watch(tape: Tape, *extra: str, tty: bool = False) -> tuple[ExitCode, str]:
    out = io.StringIO()
    streams = Streams(out, io.StringIO(), io.StringIO())
    code = watch(
        _args(*extra), streams, clock=tape.clock, sleep=tape.sleep, fetch=tape.fetch, tty=tty
    )
    return code, out.getvalue()


def _queue(make_page: Page, n: int, *, running: int = 32) -> list[str]:
    return [
        make_page(running=running, waiting=10 + i % 3, kv=0.4, generation_tokens=500 * i)
        for i in range(n)
    ]


def test_a_healthy_load_is_none(make_page: Page) -> None:
    pages = [make_page(running=4, kv=0.1, generation_tokens=200 * i) for i in range(6)]
    code, out = _watch(Tape(pages), "--duration", "10", "--format", "json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == ExitCode.OK
    assert len(lines) == 7
    assert {line["limit"] for line in lines[:-1]} == {"none"}
    assert list(lines[1]) == [
        "t",
        "running",
        "waiting",
        "kv_cache_usage",
        "preemptions_per_s",
        "prompt_tokens_per_s",
        "generation_tokens_per_s",
        "ttft_p99_ms",
        "itl_p99_ms",
        "limit",
        "evidence",
        "next_step",
    ]
    assert lines[1]["generation_tokens_per_s"] == 100.0
    assert (lines[1]["t"], lines[1]["running"], lines[1]["next_step"]) == (1002.0, 4, None)
    assert lines[-1] == {
        "summary": {"seconds": 10.0, "by_limit": {"none": 10.0}, "dominant": "none"}
    }


def test_running_at_the_cap_with_a_queue_is_max_num_seqs(make_page: Page) -> None:
    tape = Tape(_queue(make_page, 6))
    code, out = _watch(
        tape, "--duration", "10", "--serve-command", "vllm serve m --max-num-seqs 32"
    )
    assert code == ExitCode.OK
    last = out.splitlines()[-3]
    assert "running 32/32" in last
    assert "max-num-seqs: 32 running at the cap of 32" in last
    assert (
        out.splitlines()[-1]
        == "Next step: Raise --max-num-seqs from 32 to 64: requests wait while the KV cache has room."
    )
    assert "Dominant limit: max-num-seqs." in out


def test_without_the_cap_it_says_unconfirmed(make_page: Page) -> None:
    _, out = _watch(Tape(_queue(make_page, 4)), "--duration", "6", "--format", "json")
    last = json.loads(out.splitlines()[-2])
    assert last["limit"] == "max-num-seqs"
    assert "cap unconfirmed" in last["evidence"]


def test_a_failed_scrape_is_a_gap(make_page: Page) -> None:
    pages: list[str | ScrapeFailed] = [
        make_page(running=1),
        ScrapeFailed("timeout"),
        make_page(running=1),
    ]
    code, out = _watch(Tape(pages), "--duration", "4", "--format", "json")
    gap = json.loads(out.splitlines()[1])
    assert code == ExitCode.OK
    assert (gap["limit"], gap["evidence"], gap["running"]) == (
        "unknown",
        "no scrape: the scrape timed out",
        None,
    )
    text = _watch(Tape(pages), "--duration", "4", "--lang", "en")[1]
    assert "     2 s  gap: the scrape timed out" in text.splitlines()


def test_the_server_going_away_ends_with_exit_1(make_page: Page) -> None:
    code, out = _watch(Tape([make_page(running=1)] * 3))
    lines = out.splitlines()
    assert code == ExitCode.FAILED
    assert len([line for line in lines if "running 1/" in line]) == 3
    assert "The server went away (the connection was refused); the watch ends." in lines
    assert lines[-1].startswith("Watched 8 s:")


def test_nothing_to_scrape_at_all_is_an_error() -> None:
    with pytest.raises(ServerUnreachable, match="connection was refused"):
        _watch(Tape([]))


def test_ctrl_c_prints_the_summary(make_page: Page) -> None:
    code, out = _watch(Tape(_queue(make_page, 20), interrupt_at=4), "--format", "json")
    assert code == ExitCode.INTERRUPTED
    assert json.loads(out.splitlines()[-1])["summary"]["seconds"] == 6.0


def test_the_live_panel_redraws_in_place(make_page: Page) -> None:
    code, out = _watch(Tape(_queue(make_page, 3)), "--duration", "4", "--lang", "zh-TW", tty=True)
    assert code == ExitCode.OK
    assert out.count("\x1b[J") == 2  # the second and third frames go back over the first
    assert "瓶頸        max-num-seqs：序列上限（--max-num-seqs）" in out
    assert "共觀察 4 秒" in out
