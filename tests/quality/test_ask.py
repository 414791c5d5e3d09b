"""Asking through the load test's HTTP client: error kinds, limits, the API key, Ctrl-C, and
servers that answer garbage or hang up."""

from __future__ import annotations

import asyncio
import signal

import pytest

from servetune.errors import UsageError
from servetune.quality import ask, dataset
from servetune.quality.evaluate import QualityConfig, evaluate

from answer_server import AnswerBook, serve, serve_not_http

QUESTIONS = dataset.load("builtin:math")[:24]
ANSWERS = {q.prompt: q.answer for q in QUESTIONS}


def _ask_all(server: ask.Server, prompts: list[str], concurrency: int = 4) -> list[ask.Reply]:
    async def main() -> list[ask.Reply]:
        async with ask.Asker(concurrency) as asker:
            replies, interrupted = await asker.ask_all([(server, p) for p in prompts])
        assert not interrupted
        return replies

    return ask.run(main())


def test_a_dropped_connection_a_500_and_garbage_are_error_kinds_the_rest_answers() -> None:
    prompts = [q.prompt for q in QUESTIONS]
    book = AnswerBook(ANSWERS, drop={prompts[0]}, fail={prompts[1]}, garbage={prompts[2]})
    with serve(book) as url:
        replies = _ask_all(ask.Server(url, "fake/model"), prompts)
    assert [r.error for r in replies[:3]] == ["stream_cut", "http_500", "malformed"]
    assert all(r.text is None for r in replies[:3])
    assert all(
        r.error is None and r.text == book.reply(p)
        for r, p in zip(replies[3:], prompts[3:], strict=True)
    )


def test_an_answer_slower_than_the_request_timeout_is_a_timeout() -> None:
    prompts = [q.prompt for q in QUESTIONS[:3]]
    with serve(AnswerBook(ANSWERS, hang={prompts[1]})) as url:
        replies = _ask_all(ask.Server(url, "fake/model", timeout_s=0.5), prompts)
    assert [r.error for r in replies] == [None, "timeout", None]


def test_no_more_than_concurrency_requests_are_in_flight_per_server() -> None:
    book = AnswerBook(ANSWERS, delay_s=0.05)
    with serve(book) as url:
        config = QualityConfig(
            ask.Server(url, "fake/model"), ask.Server(url, "fake/model"), "x", concurrency=3
        )
        result = evaluate(config, QUESTIONS[:12])  # same URL and model: one limit for both
    assert result.before.errors == result.after.errors == 0
    assert 1 < book.peak <= 3


def test_the_api_key_goes_as_a_bearer_token_and_a_refused_key_is_a_usage_error() -> None:
    book = AnswerBook(ANSWERS, api_key="sk-right")
    with serve(book) as url:
        replies = _ask_all(ask.Server(url, "fake/model", api_key="sk-right"), [QUESTIONS[0].prompt])
        assert replies[0].error is None
        assert set(book.keys) == {"Bearer sk-right"}
        wrong = ask.Server(url, "fake/model", api_key="sk-wrong")
        config = QualityConfig(wrong, wrong, "x")
        with pytest.raises(UsageError, match=r"refused the API key \(401\)"):
            evaluate(config, QUESTIONS[:1])


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP response"),
        (b"", "closed"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n<html>hi!", "not JSON"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n", "not HTTP"),
    ],
)
def test_a_server_that_answers_garbage_is_a_usage_error_before_any_question(
    data: bytes, match: str
) -> None:
    with serve_not_http(data) as url:
        config = QualityConfig(ask.Server(url, "m"), ask.Server(url, "m"), "x")
        with pytest.raises(UsageError, match=match):
            evaluate(config, QUESTIONS[:1])


def test_garbage_instead_of_an_answer_is_malformed_not_a_crash() -> None:
    with serve_not_http(b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n") as bad_length:
        replies = _ask_all(ask.Server(bad_length, "m"), ["q"])
    with serve_not_http(b"\x00\xff garbage\r\n\r\n") as binary:
        replies += _ask_all(ask.Server(binary, "m"), ["q"])
    assert [r.error for r in replies] == ["malformed", "malformed"]


def test_ctrl_c_cancels_the_pending_requests_and_keeps_the_answers_in() -> None:
    book = AnswerBook(ANSWERS, hang={q.prompt for q in QUESTIONS[12:]})
    heard: list[int] = []

    def on_reply(index: int, _reply: ask.Reply) -> None:
        heard.append(index)
        if len(heard) == 5:
            signal.raise_signal(signal.SIGINT)  # as a terminal's Ctrl-C, mid-run

    with serve(book) as url:
        server = ask.Server(url, "fake/model")
        config = QualityConfig(server, server, "x", concurrency=2)
        result = evaluate(config, QUESTIONS, on_reply)
    assert result.interrupted
    kept = [g for g in result.graded if g.before.error is None]
    assert len(kept) >= 5 and all(g.before_correct for g in kept)
    errors = {g.before.error for g in result.graded} | {g.after.error for g in result.graded}
    assert errors <= {None, "cancelled"} and "cancelled" in errors


def test_the_synchronous_api_works_inside_a_running_event_loop() -> None:
    with serve(AnswerBook(ANSWERS)) as url:
        server = ask.Server(url, "fake/model")

        async def notebook_cell() -> int:
            return evaluate(QualityConfig(server, server, "x"), QUESTIONS[:4]).before.correct

        assert asyncio.run(notebook_cell()) == 4


@pytest.mark.parametrize(
    "url", ["127.0.0.1:8000", "ftp://host", "http://", "http://host:99999", "file:///tmp/x"]
)
def test_only_http_urls_with_a_host_are_servers(url: str) -> None:
    with pytest.raises(UsageError, match="not a server URL"):
        ask.check_url(url)


def test_a_base_url_ending_in_v1_asks_the_same_endpoints() -> None:
    with serve(AnswerBook(ANSWERS)) as url:
        replies = _ask_all(ask.Server(url + "/v1/", "fake/model"), [QUESTIONS[0].prompt])
    assert replies[0].error is None
