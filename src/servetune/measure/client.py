"""A lean asyncio HTTP/1.1 client for OpenAI-compatible streaming endpoints.

Why not httpx or aiohttp: a load generator must cost far less CPU per streamed token than the
server it measures, and must never cap concurrency behind a connection pool limit (httpx's
default pool holds 100). This client keeps one keep-alive connection per in-flight request
(no limit but the run's own concurrency) and parses each response inside its connection's
`asyncio.Protocol.data_received`: a streamed chunk costs one callback from the event loop, with
no task switch, and is timestamped there with `time.perf_counter()` (`HttpClient.stream_to`).
On uvloop's event loop (`run_event_loop`, where uvloop is installed) that read path is C up to
our callback.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from servetune.errors import UsageError
from servetune.measure.chunked import ChunkedDecoder, MalformedChunk, hex_size
from servetune.texts import ErrorText

Clock = Callable[[], float]
T = TypeVar("T")
EVENT_LOOP_ENV = "SERVETUNE_EVENT_LOOP"  # "asyncio" forces the standard loop


def event_loop_name() -> str:
    """The event loop a load test runs on: "uvloop" where it is installed (a dependency except
    on Windows; its read path costs far less CPU per streamed chunk), else "asyncio"."""
    if os.environ.get(EVENT_LOOP_ENV, "").strip().lower() == "asyncio":
        return "asyncio"
    try:
        importlib.import_module("uvloop")
    except ImportError:
        return "asyncio"
    return "uvloop"


def run_event_loop(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the loop `event_loop_name()` picks."""
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    if event_loop_name() == "uvloop":
        factory = importlib.import_module("uvloop").new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


class RequestFailed(Exception):
    """A request that did not complete; `kind` is the error class recorded in results.

    An internal signal, recorded as data: it never reaches a user as an error."""

    def __init__(self, kind: str, detail: str, status: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    """Where the server is: scheme, host, port and a path prefix from the base URL."""

    scheme: str
    host: str
    port: int
    prefix: str

    @classmethod
    def parse(cls, base_url: str) -> Endpoint:
        parts = urlsplit(base_url.strip())
        hint = ErrorText("hint.base-url")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(ErrorText("client.not-a-url", url=base_url), hint)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:  # a port that is not a number from 0 to 65535
            raise UsageError(ErrorText("client.bad-port", url=base_url), hint) from None
        prefix = parts.path.rstrip("/")
        if prefix.endswith("/v1"):
            prefix = prefix[: -len("/v1")]  # users often paste the OpenAI base (".../v1")
        return cls(parts.scheme, parts.hostname, port, prefix)

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes = b""


@dataclass
class ClientLimits:
    """Explicit limits, recorded in results (no hidden library defaults)."""

    connect_timeout_s: float = 10.0
    request_timeout_s: float = 600.0
    max_idle_connections: int = 100_000


BodySink = Callable[[float, bytes], None]
_READ_SIZE = 1 << 16
_HEAD_LIMIT = 1 << 16


def _parse_head(raw: bytes) -> tuple[str, int, dict[str, str]]:
    """(HTTP version, status, headers with lower-case names) of a response head."""
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = parts[1] if len(parts) > 1 else ""
    if not (parts[0].startswith("HTTP/") and status.isascii() and status.isdigit()):
        raise RequestFailed("malformed", f"not an HTTP response: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return parts[0], int(status), headers


class _Exchange:
    """One response being read. With a `sink`, a 200 response's body goes to it as it arrives
    (with the arrival time); any other body is collected."""

    __slots__ = ("body", "clock", "future", "headers", "left", "sink", "status")

    def __init__(self, future: asyncio.Future[Response], sink: BodySink | None, clock: Clock):
        self.future = future
        self.sink = sink
        self.clock = clock
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body: list[bytes] = []
        self.left = 0  # Content-Length bytes still to come

    def finish(self) -> None:
        if not self.future.done():
            self.future.set_result(Response(self.status, self.headers, b"".join(self.body)))

    def fail(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection. Responses are parsed inside `data_received`: a
    streamed chunk costs one callback from the event loop, not a task switch.

    On uvloop the plain protocol is the cheaper one (its C read path hands over `bytes` of the
    size read); asyncio's own loop gets `_BufferedConnection` (see there)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.reusable = True
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._exchange: _Exchange | None = None
        self._body: Callable[[bytes], None] | None = None  # the body reader of this response
        self._head = b""
        self._decoder = ChunkedDecoder()
        self._skip = b""  # the end of a last chunk's CRLF, when it had not arrived yet

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a TCP (or TLS) stream

    def connection_lost(self, exc: Exception | None) -> None:  # noqa: ARG002 - asyncio's signature
        self.reusable = False
        if not self.lost.done():
            self.lost.set_result(None)
        exchange, self._exchange = self._exchange, None
        if exchange is None:
            return
        if self._body == self._until_close:
            exchange.finish()  # the body ended when the server closed the connection
        else:
            exchange.fail(RequestFailed("stream_cut", "the server closed the stream early"))

    @property
    def idle(self) -> bool:
        transport = self.transport
        closing = transport is None or transport.is_closing()
        return self._exchange is None and self.reusable and not closing and not self.lost.done()

    def send(self, request: bytes, exchange: _Exchange) -> None:
        if self.transport is None or self.transport.is_closing():
            raise RequestFailed("stream_cut", "the connection was closed")
        self._exchange, self._body, self._head = exchange, None, b""
        self.transport.write(request)

    def abandon(self) -> None:
        """Stop reading the current response (cancelled or failed): the connection is spent."""
        self._exchange = None
        self.reusable = False
        if self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        body = self._body
        try:
            if body is not None:  # the hot path: more of a response body
                body(data)
            else:
                self._receive(data)
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting request, which raises it
            exchange = self._exchange
            self.abandon()
            if exchange is not None:
                exchange.fail(exc)

    def _receive(self, data: bytes) -> None:
        if self._skip:
            take = data[: len(self._skip)]
            if not self._skip.startswith(take):
                self.reusable = False
            self._skip, data = self._skip[len(take) :], data[len(take) :]
        if self._exchange is None:
            if data:  # bytes nobody asked for: do not reuse this connection
                self.abandon()
            return
        self._head += data
        end = self._head.find(b"\r\n\r\n")
        if end < 0:
            if len(self._head) > _HEAD_LIMIT:
                raise RequestFailed("malformed", "response head too large")
            return
        raw, rest = self._head[:end], self._head[end + 4 :]
        self._head = b""
        self._start_body(self._exchange, *_parse_head(raw))
        if rest or self._body == self._empty:
            self.data_received(rest)

    def _start_body(
        self, exchange: _Exchange, version: str, status: int, headers: dict[str, str]
    ) -> None:
        if 100 <= status < 200:  # an interim response: the real one follows
            return
        exchange.status, exchange.headers = status, headers
        if exchange.sink is not None and status != 200:
            exchange.sink = None  # an error's body is collected for the message
        connection = headers.get("connection", "").lower()
        if connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive"):
            self.reusable = False  # the server closes after this response
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._decoder = ChunkedDecoder()
            self._body = self._chunked
        elif "content-length" in headers:
            length = headers["content-length"]
            if not (length.isascii() and length.isdigit()):
                raise RequestFailed("malformed", f"bad Content-Length: {length[:40]!r}")
            exchange.left = int(length)
            self._body = self._sized if exchange.left > 0 else self._empty
        else:
            self.reusable = False
            self._body = self._until_close

    def _deliver(self, exchange: _Exchange, payload: bytes) -> None:
        if exchange.sink is not None:
            exchange.sink(exchange.clock(), payload)
        else:
            exchange.body.append(payload)

    def _chunked(self, data: bytes) -> None:
        exchange = self._exchange
        if exchange is None:
            return
        decoder = self._decoder
        sink = exchange.sink
        if sink is not None and decoder.idle:  # the hot path: one read, one whole chunk
            end = data.find(b"\r\n")
            if 0 < end < 9 and data.endswith(b"\r\n"):
                size = hex_size(data[:end])
                if size > 0 and size + end + 4 == len(data):
                    sink(exchange.clock(), data[end + 2 : -2])
                    return
        self._chunks(exchange, decoder, data)

    def _chunks(self, exchange: _Exchange, decoder: ChunkedDecoder, data: bytes) -> None:
        """Any other read of a chunked body: parts of chunks, several chunks, the last one."""
        try:
            pieces = decoder.pieces(data)
        except MalformedChunk as exc:
            raise RequestFailed("malformed", str(exc)) from exc
        sink = exchange.sink
        if sink is not None:  # several events in one read: the same arrival time for each
            at = exchange.clock()
            for piece in pieces:
                if piece:
                    sink(at, piece)
        else:
            exchange.body.append(b"".join(pieces))
        if decoder.done:
            missing = decoder.trailer_missing
            if missing is None:
                self.reusable = False  # trailers or garbage after the body
            self._skip = b"\r\n"[2 - missing :] if missing else b""
            self._complete(exchange)

    def _sized(self, data: bytes) -> None:
        exchange = self._exchange
        if exchange is None:
            return
        if len(data) > exchange.left:
            self.reusable = False  # more than the announced length
            data = data[: exchange.left]
        exchange.left -= len(data)
        self._deliver(exchange, data)
        if exchange.left == 0:
            self._complete(exchange)

    def _empty(self, data: bytes) -> None:
        exchange = self._exchange
        if data:
            self.reusable = False
        if exchange is not None:
            self._complete(exchange)

    def _until_close(self, data: bytes) -> None:
        exchange = self._exchange
        if exchange is not None and data:
            self._deliver(exchange, data)

    def _complete(self, exchange: _Exchange) -> None:
        self._exchange, self._body = None, None
        exchange.finish()


class _BufferedConnection(_Connection, asyncio.BufferedProtocol):
    """The connection on asyncio's own event loop, which reads a plain protocol's data into a
    new bytes object of its largest read size (256 KiB, allocated and shrunk per read: most of
    a streamed event's cost there). Reads land in one buffer per connection instead."""

    def __init__(self) -> None:
        super().__init__()
        self._view = memoryview(bytearray(_READ_SIZE))

    def get_buffer(self, sizehint: int) -> memoryview:  # noqa: ARG002 - asyncio's signature
        return self._view

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(self._view[:nbytes].tobytes())


def _protocol(loop: asyncio.AbstractEventLoop) -> type[_Connection]:
    """The cheaper connection class for this event loop (asyncio's own, or uvloop's)."""
    return _BufferedConnection if isinstance(loop, asyncio.BaseEventLoop) else _Connection


@dataclass
class HttpClient:
    """Keep-alive HTTP/1.1 connections to one server; no cap besides the caller's concurrency."""

    endpoint: Endpoint
    limits: ClientLimits = field(default_factory=ClientLimits)
    headers: Mapping[str, str] = field(default_factory=dict)
    _idle: deque[_Connection] = field(default_factory=deque)

    async def _connect(self) -> _Connection:
        context = ssl.create_default_context() if self.endpoint.scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.limits.connect_timeout_s):
                _, conn = await loop.create_connection(
                    _protocol(loop), self.endpoint.host, self.endpoint.port, ssl=context
                )
        except TimeoutError as exc:
            raise RequestFailed("connect", "connection attempt timed out") from exc
        except OSError as exc:
            raise RequestFailed("connect", exc.strerror or str(exc)) from exc
        return conn

    async def _acquire(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if conn.idle:
                return conn
            conn.abandon()
        return await self._connect()

    def _release(self, conn: _Connection) -> None:
        if conn.idle and len(self._idle) < self.limits.max_idle_connections:
            self._idle.append(conn)
        elif conn.transport is not None:
            conn.transport.close()

    async def aclose(self) -> None:
        closing = []
        while self._idle:
            conn = self._idle.pop()
            if conn.transport is not None:
                conn.transport.close()
                closing.append(conn.lost)
        if closing:
            await asyncio.wait(closing, timeout=5.0)

    def _head(self, method: str, path: str, body: bytes, accept: str) -> bytes:
        lines = [
            f"{method} {self.endpoint.prefix}{path} HTTP/1.1",
            f"Host: {self.endpoint.host_header}",
            "User-Agent: servetune",
            f"Accept: {accept}",
            "Connection: keep-alive",
        ]
        if body or method == "POST":
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in self.headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _exchange(
        self, request: bytes, sink: BodySink | None, clock: Clock = time.perf_counter
    ) -> Response:
        conn = await self._acquire()
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        try:
            conn.send(request, _Exchange(future, sink, clock))
            response = await future
        except BaseException:
            conn.abandon()
            raise
        self._release(conn)
        return response

    async def request(
        self, method: str, path: str, body: bytes = b"", timeout_s: float | None = None
    ) -> Response:
        """A plain request; the whole body is read."""
        async with asyncio.timeout(timeout_s or self.limits.request_timeout_s):
            head = self._head(method, path, body, "application/json")
            return await self._exchange(head + body, None)

    async def stream_to(
        self, path: str, body: bytes, sink: BodySink, clock: Clock = time.perf_counter
    ) -> None:
        """POST and hand each piece of the response body to `sink(arrival time, bytes)` as it
        arrives, inside the event loop's read callback (keep `sink` quick; what it raises
        ends the request and is raised here).

        Raises `RequestFailed` for a non-200 status (kind `http_<status>`), a refused
        connection (`connect`) or a connection that ends mid-stream (`stream_cut`).
        """
        request = self._head("POST", path, body, "text/event-stream") + body
        response = await self._exchange(request, sink, clock)
        if response.status != 200:
            message = response.body.decode("utf-8", "replace")[:300]
            raise RequestFailed(f"http_{response.status}", message, response.status)

    async def stream(
        self, path: str, body: bytes, clock: Clock = time.perf_counter
    ) -> AsyncIterator[tuple[float, bytes]]:
        """POST and yield (arrival time, body chunk) as the response streams in; the same
        errors as `stream_to`, which is cheaper (no task switch per chunk)."""
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()
        task = asyncio.ensure_future(
            self.stream_to(path, body, lambda at, data: queue.put_nowait((at, data)), clock)
        )
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (item := await queue.get()) is not None:
                yield item
            await task
        finally:
            task.cancel()


def json_body(payload: Mapping[str, object]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")
