"""Tests of the fake vLLM server itself, with standard-library clients only."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from vllm_capture import captured_streams

from stub_server import StubBehaviour, StubServer, ThreadedStub

STUB_SCRIPT = Path(__file__).resolve().parent / "stub_server.py"


@pytest.fixture
def stub() -> Iterator[ThreadedStub]:
    with ThreadedStub() as running:
        yield running


def _raw_post(port: int, path: str, body: dict[str, Any]) -> bytes:
    """Send one POST with `Connection: close` and return every byte until the server closes."""
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head.encode() + payload)
        parts = []
        while data := sock.recv(65536):
            parts.append(data)
    return b"".join(parts)


def _split_chunked(raw: bytes) -> tuple[bytes, list[bytes], bool]:
    """(head, HTTP chunks, whether the zero-length terminating chunk came)."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    chunks: list[bytes] = []
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            assert rest == b"\r\n"
            return head, chunks, True
        chunks.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n", "chunk not followed by CRLF"
        rest = rest[size + 2 :]
    return head, chunks, False


def _stream(port: int, path: str, body: dict[str, Any]) -> tuple[list[Any], bool]:
    """The SSE payloads (parsed JSON, or the raw text when not JSON), one HTTP chunk each."""
    head, chunks, terminated = _split_chunked(_raw_post(port, path, {**body, "stream": True}))
    assert head.startswith(b"HTTP/1.1 200 OK")
    events: list[Any] = []
    for chunk in chunks:
        assert chunk.startswith(b"data: ")
        assert chunk.endswith(b"\n\n")
        assert chunk.count(b"\n\n") == 1, "one SSE event per HTTP chunk"
        text = chunk[6:-2].decode()
        try:
            events.append(json.loads(text))
        except ValueError:
            events.append(text)
    return events, terminated


def _request(
    port: int, method: str, path: str, body: dict[str, Any] | None = None
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body))
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


USAGE = {"stream_options": {"include_usage": True}}


def test_completions_stream_has_vllm_shape(stub: ThreadedStub) -> None:
    body = {"model": "any", "prompt": "one two  three", "max_tokens": 3, **USAGE}
    events, terminated = _stream(stub.port, "/v1/completions", body)

    assert terminated
    assert events[-1] == "[DONE]"
    *content, finish, usage, _ = events
    assert len(content) == 3
    first = content[0]
    assert list(first) == ["id", "object", "created", "model", "choices"]
    assert first["id"].startswith("cmpl-")
    assert first["object"] == "text_completion"
    assert first["model"] == "stub"
    assert first["choices"] == [
        {"index": 0, "text": " tok", "logprobs": None, "finish_reason": None, "stop_reason": None}
    ]
    assert finish["choices"][0]["text"] == ""
    assert finish["choices"][0]["finish_reason"] == "length"
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 3, "total_tokens": 6, "completion_tokens": 3}
    assert {event["id"] for event in events[:-1]} == {first["id"]}


def test_chat_stream_sends_the_role_chunk_first(stub: ThreadedStub) -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi you"}]
    events, terminated = _stream(
        stub.port, "/v1/chat/completions", {"messages": messages, "max_tokens": 2, **USAGE}
    )

    assert terminated
    role, *content, finish, usage, done = events
    assert role["object"] == "chat.completion.chunk"
    assert role["id"].startswith("chatcmpl-")
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert [c["choices"] for c in content] == [
        [{"index": 0, "delta": {"content": " tok"}, "logprobs": None, "finish_reason": None}]
    ] * 2
    assert finish["choices"][0]["finish_reason"] == "length"
    assert usage["usage"] == {"prompt_tokens": 4, "total_tokens": 6, "completion_tokens": 2}
    assert done == "[DONE]"


def test_no_usage_chunk_unless_asked(stub: ThreadedStub) -> None:
    events, _ = _stream(stub.port, "/v1/completions", {"prompt": "x", "max_tokens": 1})
    assert all("usage" not in event for event in events[:-1])
    stub.set_behaviour(StubBehaviour(usage=False))
    events, _ = _stream(stub.port, "/v1/completions", {"prompt": "x", "max_tokens": 1, **USAGE})
    assert all("usage" not in event for event in events[:-1])


def test_multi_token_chunks_carry_the_requested_tokens() -> None:
    with ThreadedStub(StubBehaviour(tokens_per_chunk=3)) as stub:
        events, _ = _stream(
            stub.port, "/v1/completions", {"prompt": "p", "max_tokens": 10, **USAGE}
        )
    texts = [event["choices"][0]["text"] for event in events[:-3]]
    assert texts == [" tok tok tok"] * 3 + [" tok"]
    assert events[-2]["usage"]["completion_tokens"] == 10


def test_continuous_usage_counts_running_tokens() -> None:
    options = {"stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    with ThreadedStub(StubBehaviour(continuous_usage=True, tokens_per_chunk=2)) as stub:
        events, _ = _stream(
            stub.port, "/v1/completions", {"prompt": "a b", "max_tokens": 5, **options}
        )
    running = [event["usage"]["completion_tokens"] for event in events[:3]]
    assert running == [2, 4, 5]
    assert events[0]["usage"]["prompt_tokens"] == 2


def test_ttft_and_itl_are_respected() -> None:
    with ThreadedStub(StubBehaviour(ttft_ms=50, itl_ms=10)) as stub:
        conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
        body = {"prompt": "p", "max_tokens": 5, "stream": True}
        start = time.perf_counter()
        conn.request("POST", "/v1/completions", body=json.dumps(body))
        response = conn.getresponse()
        arrivals = [time.perf_counter() - start for line in response if b'" tok"' in line]
        conn.close()
    assert len(arrivals) == 5
    assert arrivals[0] >= 0.05
    # Four gaps of 10 ms after the first token, kept to the schedule from the request: a first
    # token that a busy machine delayed makes the next gap shorter, never the run faster.
    assert arrivals[-1] >= 0.089


def test_keep_alive_serves_two_requests_on_one_connection(stub: ThreadedStub) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
    try:
        conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "a", "stream": True}))
        first = conn.getresponse()
        assert b"data: [DONE]" in first.read()
        sock = conn.sock
        assert sock is not None
        conn.request("POST", "/v1/chat/completions", body=json.dumps({"messages": []}))
        second = conn.getresponse()
        whole = json.loads(second.read())
        assert conn.sock is sock, "the second request reused the connection"
    finally:
        conn.close()
    assert first.getheader("content-length") is None
    assert second.getheader("content-length") is not None
    assert whole["object"] == "chat.completion"
    assert whole["choices"][0]["message"]["content"] == " tok" * 16
    assert whole["usage"] == {"prompt_tokens": 0, "total_tokens": 16, "completion_tokens": 16}


def test_fail_every_answers_the_error_status() -> None:
    with ThreadedStub(StubBehaviour(fail_every=2, fail_status=429)) as stub:
        conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
        statuses = []
        for _ in range(4):
            conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "x"}))
            response = conn.getresponse()
            statuses.append(response.status)
            body = json.loads(response.read())
            if response.status == 429:
                assert response.reason == "Too Many Requests"
                assert body == {"error": {"message": "stub failure", "type": "stub", "code": 429}}
        conn.close()
        assert statuses == [200, 429, 200, 429]
        stub.server.reset()
        assert stub.server.received == []
        status, _ = _request(stub.port, "POST", "/v1/completions", {"prompt": "x"})
        assert status == 200  # the count restarted


def test_cut_after_chunks_closes_without_done() -> None:
    with ThreadedStub(StubBehaviour(cut_after_chunks=2)) as stub:
        raw = _raw_post(
            stub.port, "/v1/completions", {"prompt": "p", "max_tokens": 5, "stream": True}
        )
        _, chunks, terminated = _split_chunked(raw)
        assert not terminated
        assert len(chunks) == 2
        assert b"[DONE]" not in raw
        conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
        conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "p", "stream": True}))
        with pytest.raises(http.client.IncompleteRead):
            conn.getresponse().read()
        conn.close()


def test_malformed_event_then_the_stream_goes_on() -> None:
    with ThreadedStub(StubBehaviour(malformed_after_chunks=1)) as stub:
        events, terminated = _stream(stub.port, "/v1/completions", {"prompt": "p", "max_tokens": 3})
    assert terminated
    assert events[1] == "{not json"
    assert events[0]["choices"][0]["text"] == " tok"
    assert [e["choices"][0]["text"] for e in events[2:4]] == [" tok", " tok"]
    assert events[-1] == "[DONE]"


def test_hang_never_answers_and_still_shuts_down_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    with ThreadedStub(StubBehaviour(hang=True)) as stub:
        idle = socket.create_connection(("127.0.0.1", stub.port), timeout=5)
        conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=0.2)
        conn.request("POST", "/v1/completions", body=json.dumps({"prompt": "p"}))
        with pytest.raises(TimeoutError):
            conn.getresponse()
        status, _ = _request(stub.port, "GET", "/health")
        assert status == 200
        # Leave the hanging request and an idle connection open: stopping must drop them.
    conn.close()
    idle.close()
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


def test_clients_leaving_mid_stream_are_harmless(caplog: pytest.LogCaptureFixture) -> None:
    async def leave_early(port: int, max_tokens: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        payload = json.dumps({"prompt": "p", "max_tokens": max_tokens, "stream": True}).encode()
        writer.write(
            b"POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n%b"
            % (len(payload), payload)
        )
        await reader.readuntil(b'"text":" tok"')
        writer.transport.abort()  # a reset, mid-stream

    async def main() -> tuple[bytes, int]:
        server = StubServer(StubBehaviour(itl_ms=1))
        await server.start()
        try:
            await asyncio.gather(*(leave_early(server.port, 1000) for _ in range(5)))
            server.behaviour = StubBehaviour()  # zero delay: the stub is mid-burst when they go
            await asyncio.gather(*(leave_early(server.port, 100_000) for _ in range(5)))
            await asyncio.sleep(0.05)
            running = server._running
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
            answer = await reader.read()
            writer.close()
            await writer.wait_closed()
            return answer, running
        finally:
            await server.stop()

    answer, running = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.1 200 OK")
    assert running == 0
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


def test_metrics_report_running_streams() -> None:
    with ThreadedStub(StubBehaviour(ttft_ms=300)) as stub:
        status, text = _request(stub.port, "GET", "/metrics")
        assert status == 200
        for name in (
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm:kv_cache_usage_perc",
            "vllm:num_preemptions_total",
        ):
            assert f"# TYPE {name} ".encode() in text
        assert b'vllm:num_requests_running{engine="0",model_name="stub"} 0.0\n' in text

        slow = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
        slow.request("POST", "/v1/completions", body=json.dumps({"prompt": "p", "stream": True}))
        slow.getresponse()  # the head comes before the first token
        _, text = _request(stub.port, "GET", "/metrics")
        slow.close()
    assert b'vllm:num_requests_running{engine="0",model_name="stub"} 1.0\n' in text
    assert b'vllm:kv_cache_usage_perc{engine="0",model_name="stub"} 0.01\n' in text


def test_tokenize_and_detokenize_round_trip(stub: ThreadedStub) -> None:
    status, raw = _request(stub.port, "POST", "/tokenize", {"prompt": "the quick  brown fox"})
    assert status == 200
    tokenized = json.loads(raw)
    assert tokenized["count"] == 4
    assert tokenized["max_model_len"] == 4096
    assert all(0 <= t < 50_000 for t in tokenized["tokens"])
    _, raw = _request(stub.port, "POST", "/detokenize", {"tokens": tokenized["tokens"]})
    assert json.loads(raw) == {"prompt": "the quick brown fox"}
    _, raw = _request(stub.port, "POST", "/tokenize", {"messages": [{"content": "a b"}]})
    assert json.loads(raw)["count"] == 2
    _, raw = _request(stub.port, "POST", "/detokenize", {"tokens": [123456]})
    assert json.loads(raw) == {"prompt": "w123456"}


def test_plain_endpoints_and_errors(stub: ThreadedStub) -> None:
    assert _request(stub.port, "GET", "/health") == (200, b"")
    status, raw = _request(stub.port, "GET", "/v1/models")
    assert status == 200
    models = json.loads(raw)
    assert models["object"] == "list"
    (card,) = models["data"]
    assert card | {"created": 0} == {
        "id": "stub",
        "object": "model",
        "created": 0,
        "owned_by": "vllm",
        "root": "stub",
        "parent": None,
        "max_model_len": 4096,
    }
    assert json.loads(_request(stub.port, "GET", "/version")[1]) == {"version": "stub"}
    status, raw = _request(stub.port, "GET", "/nowhere")
    assert status == 404
    assert json.loads(raw)["error"]["code"] == 404
    status, _ = _request(stub.port, "GET", "/v1/completions")
    assert status == 405

    conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
    conn.request("POST", "/v1/completions", body=b"{nope")
    response = conn.getresponse()
    assert response.status == 400
    assert "invalid JSON" in json.loads(response.read())["error"]["message"]
    conn.close()


def test_chunked_request_body_and_the_received_log(stub: ThreadedStub) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
    parts = [b'{"prompt": "a b c",', b' "max_tokens": 2}']
    before = time.perf_counter()
    conn.request("POST", "/v1/completions?x=1", body=iter(parts), encode_chunked=True)
    response = conn.getresponse()
    whole = json.loads(response.read())
    conn.close()
    assert whole["usage"] == {"prompt_tokens": 3, "total_tokens": 5, "completion_tokens": 2}
    (received,) = stub.server.received
    assert received.path == "/v1/completions"
    assert received.body == {"prompt": "a b c", "max_tokens": 2}
    assert received.headers["transfer-encoding"] == "chunked"
    assert before <= received.received_at <= time.perf_counter()


def test_500_concurrent_streams_on_500_connections() -> None:
    async def one(port: int) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        payload = json.dumps({"prompt": "p", "max_tokens": 4, "stream": True}).encode()
        writer.write(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
            b"Content-Length: %d\r\n\r\n%b" % (len(payload), payload)
        )
        try:
            return await reader.readuntil(b"data: [DONE]\n\n\r\n0\r\n\r\n")
        finally:
            writer.close()
            await writer.wait_closed()

    async def main() -> list[bytes]:
        server = StubServer()
        await server.start()
        try:
            return await asyncio.wait_for(
                asyncio.gather(*(one(server.port) for _ in range(500))), timeout=30
            )
        finally:
            await server.stop()

    responses = asyncio.run(main())
    assert len(responses) == 500
    assert all(r.count(b'"text":" tok"') == 4 for r in responses)


def test_runs_as_a_process_until_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, str(STUB_SCRIPT), "--port", "0", "--itl-ms", "1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("READY http://127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        assert _request(port, "GET", "/health")[0] == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


# --- vLLM 0.32.0's exact bytes -------------------------------------------------------------------


def _normalized(line: bytes) -> bytes:
    """What may differ between two servers' runs: ids, times, model, texts, counts."""
    line = re.sub(rb'"id":"(chat)?cmpl-[0-9a-f]+"', rb'"id":"ID"', line)
    line = re.sub(rb'"(created|[a-z]+_tokens)":\d+', rb'"\1":0', line)
    line = re.sub(rb'"model":"[^"]*"', rb'"model":"M"', line)
    return re.sub(rb'"(text|content)":"(?:[^"\\]|\\.)+"', rb'"\1":"T"', line)


def _event_lines(raw: bytes) -> list[bytes]:
    _, chunks, terminated = _split_chunked(raw)
    assert terminated
    return [chunk.rstrip(b"\n") for chunk in chunks]


@pytest.mark.parametrize(("path", "index"), [("/v1/completions", 0), ("/v1/chat/completions", 1)])
def test_vllm_shape_matches_the_capture_byte_for_byte(path: str, index: int) -> None:
    body: dict[str, Any] = {"model": "tiny", "max_tokens": 4 - index, "stream": True, **USAGE}
    if index:
        body["messages"] = [{"role": "user", "content": "hi"}]
    else:
        body["prompt"] = "hello world"
    behaviour = StubBehaviour(shape="vllm-0.32", event_writes=True, model="tiny")
    with ThreadedStub(behaviour) as stub:
        lines = _event_lines(_raw_post(stub.port, path, body))
    expected = captured_streams()[index]
    assert [_normalized(x) for x in lines] == [_normalized(x) for x in expected]
    assert lines[-1] == b"data: [DONE]"
    assert re.fullmatch(rb'data: \{"id":"(chat)?cmpl-[0-9a-f]{16}".*', lines[0])


def test_spaced_json_is_the_same_document() -> None:
    body = {"model": "tiny", "prompt": "a b", "max_tokens": 3, "stream": True, **USAGE}
    docs = []
    for spaced in (False, True):
        behaviour = StubBehaviour(shape="vllm-0.32", spaced=spaced, model="tiny")
        with ThreadedStub(behaviour) as stub:
            lines = _event_lines(_raw_post(stub.port, "/v1/completions", body))
        assert (b'", "' in lines[0]) is spaced and (b'": ' in lines[0]) is spaced
        docs.append([json.loads(x[6:]) for x in lines[:-1]])
    for compact, spaced_doc in zip(*docs, strict=True):
        for key in ("id", "created"):  # per request (and the clock may tick between the two)
            assert isinstance(compact.pop(key), str | int) and key in spaced_doc
            spaced_doc.pop(key)
        assert compact == spaced_doc
        assert list(compact) == list(spaced_doc)


class _RecordingTransport:
    """Stands in for a socket transport: records each write."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return 16384, 65536

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False


class _RecordingWriter:
    def __init__(self) -> None:
        self.transport = _RecordingTransport()

    async def drain(self) -> None:
        return None


@pytest.mark.parametrize("event_writes", [False, True])
def test_event_writes_send_one_event_per_write(event_writes: bool) -> None:
    from stub_server import _Pacer, _Plan, _pump, _stream_events

    behaviour = StubBehaviour(shape="vllm-0.32", event_writes=event_writes)
    plan = _Plan.parse(
        {"prompt": "a", "max_tokens": 100, "stream": True, **USAGE}, behaviour, chat=False
    )
    writer = _RecordingWriter()

    async def main() -> bool:
        return await _pump(
            writer, _stream_events(plan, behaviour, True), _Pacer(), event_writes=event_writes
        )

    assert asyncio.run(main()) is True
    writes = writer.transport.writes
    events = b"".join(writes).count(b"data: ")
    assert events == 102  # 100 content events, usage, [DONE]
    if event_writes:
        assert [w.count(b"data: ") for w in writes[1:]] == [1] * events
    else:
        assert len(writes) < 10  # zero-delay events go out in batches
