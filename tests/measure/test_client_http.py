"""HttpClient's protocol against a scripted server: responses cut anywhere, keep-alive reuse,
the forms of body (chunked, Content-Length, until close), failures and the event loop choice."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable

import pytest

from servetune.errors import UsageError
from servetune.measure import client
from servetune.measure.client import Endpoint, HttpClient, RequestFailed

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]

EVENTS = [b'data: {"text":"%d"}\n\n' % i for i in range(5)]
CHUNKED = b"".join(b"%x\r\n%b\r\n" % (len(e), e) for e in EVENTS) + b"0\r\n\r\n"
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head + await reader.readexactly(length)


async def _serve(
    script: Script, body: Callable[[HttpClient], Awaitable[object]]
) -> tuple[object, list[int]]:
    """Run `body` against a server that answers each request with `script` (given the request's
    number, from 1, over all connections); also returns how many requests each connection
    carried."""
    per_connection: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        per_connection.append(0)
        index = len(per_connection) - 1
        try:
            while True:
                await _read_request(reader)
                per_connection[index] += 1
                await script(reader, writer, sum(per_connection))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    http = HttpClient(Endpoint.parse(f"http://127.0.0.1:{port}"))
    try:
        result = await body(http)
    finally:
        await http.aclose()
        server.close()
        await server.wait_closed()
    return result, per_connection


async def _collect(http: HttpClient) -> list[bytes]:
    got: list[bytes] = []
    await http.stream_to("/v1/completions", b"{}", lambda _, data: got.append(data))
    return got


@pytest.mark.parametrize("plain", [False, True], ids=["buffered", "plain"])
@pytest.mark.parametrize("step", [1, 3, 17, 10_000])
def test_a_stream_cut_anywhere_arrives_whole_and_the_connection_is_reused(
    step: int, plain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both connection classes (asyncio's loop gets the buffered one, uvloop the plain one)."""
    if plain:
        monkeypatch.setattr(client, "_protocol", lambda _: client._Connection)
    wire = STREAM_HEAD + CHUNKED

    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> None:
        for i in range(0, len(wire), step):
            writer.write(wire[i : i + step])
            await writer.drain()
            await asyncio.sleep(0)

    async def body(http: HttpClient) -> list[list[bytes]]:
        return [await _collect(http), await _collect(http)]

    results, per_connection = asyncio.run(_serve(script, body))
    assert isinstance(results, list)
    for got in results:
        assert b"".join(got) == b"".join(EVENTS)
    assert per_connection == [2]  # keep-alive: both requests on one connection


def test_one_event_per_write_arrives_one_event_per_call_with_rising_times() -> None:
    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> None:
        writer.write(STREAM_HEAD)
        for event in EVENTS:
            writer.write(b"%x\r\n%b\r\n" % (len(event), event))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n")
        await writer.drain()
        await asyncio.sleep(0.01)
        writer.write(b"\r\n")  # the last CRLF late: the connection stays usable

    async def body(http: HttpClient) -> tuple[list[tuple[float, bytes]], list[bytes]]:
        got: list[tuple[float, bytes]] = []
        await http.stream_to("/x", b"{}", lambda at, data: got.append((at, data)))
        await asyncio.sleep(0.05)
        return got, await _collect(http)

    result, per_connection = asyncio.run(_serve(script, body))
    assert isinstance(result, tuple)
    got, again = result
    assert [data for _, data in got] == EVENTS
    times = [at for at, _ in got]
    assert times == sorted(times) and times[-1] - times[0] >= 0.03
    assert b"".join(again) == b"".join(EVENTS)
    assert per_connection == [2]


@pytest.mark.parametrize(
    ("answer", "kind", "reused"),
    [
        (
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 8\r\n\r\noverload",
            "http_503",
            True,
        ),
        (STREAM_HEAD + CHUNKED[:40], "stream_cut", False),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort", "stream_cut", False),
        (b"SSH-2.0-OpenSSH\r\n\r\n", "malformed", False),
        (STREAM_HEAD + b"zz\r\nbad\r\n", "malformed", False),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 1e3\r\n\r\n", "malformed", False),
        (b"HTTP/1.1 2\xb2\xb2 OK\r\ncontent-length: 0\r\n\r\n", "malformed", False),
    ],
)
def test_failures_are_classified(answer: bytes, kind: str, reused: bool) -> None:
    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, count: int) -> None:
        if count == 1:
            writer.write(answer)
            await writer.drain()
            if kind != "http_503":
                writer.close()
            return
        writer.write(STREAM_HEAD + CHUNKED)

    async def body(http: HttpClient) -> tuple[RequestFailed, list[bytes]]:
        with pytest.raises(RequestFailed) as info:
            await _collect(http)
        return info.value, await _collect(http)

    result, per_connection = asyncio.run(_serve(script, body))
    assert isinstance(result, tuple)
    error, second = result
    assert error.kind == kind
    if kind == "http_503":
        assert (error.status, error.detail) == (503, "overload")
    assert b"".join(second) == b"".join(EVENTS)  # the next request works
    assert per_connection == ([2] if reused else [1, 1])


def test_plain_requests_read_every_form_of_body() -> None:
    answers = {
        1: b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
        2: b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        3: b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n",
        4: b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end",
    }

    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, count: int) -> None:
        writer.write(answers[count])
        await writer.drain()
        if count == 4:
            writer.close()

    async def body(http: HttpClient) -> list[tuple[int, bytes]]:
        out = []
        for _ in answers:
            response = await http.request("GET", "/x", timeout_s=5)
            out.append((response.status, response.body))
        return out

    result, per_connection = asyncio.run(_serve(script, body))
    assert result == [(200, b"hello"), (200, b"abc"), (204, b""), (200, b"until the end")]
    assert per_connection == [4]


@pytest.mark.parametrize(
    ("version", "connection", "reused"),
    [("1.0", "", False), ("1.0", "connection: keep-alive\r\n", True), ("1.1", "", True)],
)
def test_an_http_1_0_answer_is_not_reused_unless_kept_alive(
    version: str, connection: str, reused: bool
) -> None:
    """A server answering HTTP/1.0 closes after each response unless it says keep-alive: the
    next request must take a new connection, not fail on the closed one."""
    answer = f"HTTP/{version} 200 OK\r\n{connection}content-length: 2\r\n\r\n{{}}".encode()

    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> None:
        writer.write(answer)
        await writer.drain()
        if not reused:
            await asyncio.sleep(0.05)  # the close arrives after the client has the answer
            writer.close()

    async def body(http: HttpClient) -> list[int]:
        statuses = []
        for _ in range(3):
            statuses.append((await http.request("GET", "/v1/models", timeout_s=5)).status)
            await asyncio.sleep(0.1)
        return statuses

    result, per_connection = asyncio.run(_serve(script, body))
    assert result == [200, 200, 200]
    assert per_connection == ([3] if reused else [1, 1, 1])


@pytest.mark.parametrize("url", ["http://h:99999", "http://h:port", "ftp://h", "h:8000"])
def test_a_base_url_that_is_not_one_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError, match=r"base URL|port"):
        Endpoint.parse(url)


def test_what_the_sink_raises_ends_the_request_and_the_connection() -> None:
    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> None:
        writer.write(STREAM_HEAD + CHUNKED)

    def sink(_: float, data: bytes) -> None:
        raise ValueError(data[:6].decode())

    async def body(http: HttpClient) -> list[bytes]:
        with pytest.raises(ValueError, match="data: "):
            await http.stream_to("/x", b"{}", sink)
        return await _collect(http)

    result, per_connection = asyncio.run(_serve(script, body))
    assert isinstance(result, list) and b"".join(result) == b"".join(EVENTS)
    assert per_connection == [1, 1]


def test_a_timeout_closes_the_connection() -> None:
    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, count: int) -> None:
        writer.write(STREAM_HEAD + CHUNKED[:30])
        if count > 1:
            writer.write(CHUNKED[30:])

    async def body(http: HttpClient) -> list[bytes]:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await _collect(http)
        return await _collect(http)

    result, per_connection = asyncio.run(_serve(script, body))
    assert result and per_connection == [1, 1]


def test_the_old_iterator_api_still_streams() -> None:
    async def script(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> None:
        writer.write(STREAM_HEAD + CHUNKED)

    async def body(http: HttpClient) -> bytes:
        return b"".join([data async for _, data in http.stream("/x", b"{}")])

    result, _ = asyncio.run(_serve(script, body))
    assert result == b"".join(EVENTS)


def test_the_event_loop_is_uvloop_only_where_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(client.EVENT_LOOP_ENV, "asyncio")
    assert client.event_loop_name() == "asyncio"

    async def loop_type() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert client.run_event_loop(loop_type()).startswith("asyncio")
    monkeypatch.delenv(client.EVENT_LOOP_ENV)
    try:
        import uvloop  # noqa: F401
    except ImportError:
        assert client.event_loop_name() == "asyncio"
    else:
        assert client.event_loop_name() == "uvloop"
        assert client.run_event_loop(loop_type()).startswith("uvloop")
    assert os.environ.get(client.EVENT_LOOP_ENV) is None


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
def test_each_event_loop_gets_its_cheaper_connection(
    loop_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio's loop would allocate its 256 KiB read size per read of a plain protocol: the
    buffered connection reads into its own buffer there; uvloop hands over sized bytes."""
    if loop_name == "uvloop":
        pytest.importorskip("uvloop")
    monkeypatch.setenv(client.EVENT_LOOP_ENV, "asyncio" if loop_name == "asyncio" else "")

    async def chosen() -> type[client._Connection]:
        return client._protocol(asyncio.get_running_loop())

    expected = client._BufferedConnection if loop_name == "asyncio" else client._Connection
    assert client.run_event_loop(chosen()) is expected
