"""A lean asyncio HTTP/1.1 client for OpenAI-compatible streaming endpoints.

Why not httpx or aiohttp: a load generator must cost far less CPU per streamed token than the
server it measures, and must never cap concurrency behind a connection pool limit (httpx's
default pool holds 100). This client keeps one keep-alive connection per in-flight request
(no limit but the run's own concurrency), reads `Transfer-Encoding: chunked` SSE streams with
two awaits per chunk, and timestamps each network chunk with `time.perf_counter()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from servetune.errors import UsageError

Clock = Callable[[], float]


class RequestFailed(Exception):  # noqa: N818 - a failure kind, recorded as data, not an error name
    """A request that did not complete; `kind` is the error class recorded in results."""

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
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"not an http(s) base URL: {base_url!r}", "e.g. --base-url http://127.0.0.1:8000"
            )
        port = parts.port or (443 if parts.scheme == "https" else 80)
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
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    reusable: bool = True


@dataclass
class ClientLimits:
    """Explicit limits, recorded in results (no hidden library defaults)."""

    connect_timeout_s: float = 10.0
    request_timeout_s: float = 600.0
    max_idle_connections: int = 100_000


@dataclass
class HttpClient:
    """Keep-alive HTTP/1.1 connections to one server; no cap besides the caller's concurrency."""

    endpoint: Endpoint
    limits: ClientLimits = field(default_factory=ClientLimits)
    headers: Mapping[str, str] = field(default_factory=dict)
    _idle: deque[_Connection] = field(default_factory=deque)

    async def _connect(self) -> _Connection:
        context = ssl.create_default_context() if self.endpoint.scheme == "https" else None
        try:
            async with asyncio.timeout(self.limits.connect_timeout_s):
                reader, writer = await asyncio.open_connection(
                    self.endpoint.host, self.endpoint.port, ssl=context, limit=1 << 20
                )
        except TimeoutError as exc:
            raise RequestFailed("connect", "connection attempt timed out") from exc
        except OSError as exc:
            raise RequestFailed("connect", exc.strerror or str(exc)) from exc
        return _Connection(reader, writer)

    async def _acquire(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if not conn.writer.is_closing() and not conn.reader.at_eof():
                return conn
            conn.writer.close()
        return await self._connect()

    def _release(self, conn: _Connection) -> None:
        if conn.reusable and len(self._idle) < self.limits.max_idle_connections:
            self._idle.append(conn)
        else:
            conn.writer.close()

    async def aclose(self) -> None:
        while self._idle:
            conn = self._idle.pop()
            conn.writer.close()
            with contextlib.suppress(OSError):
                await conn.writer.wait_closed()

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

    @staticmethod
    async def _read_head(conn: _Connection) -> tuple[int, dict[str, str]]:
        try:
            raw = await conn.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            raise RequestFailed("stream_cut", "connection closed before a response") from exc
        except asyncio.LimitOverrunError as exc:
            raise RequestFailed("malformed", "response head too large") from exc
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise RequestFailed("malformed", f"not an HTTP response: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if headers.get("connection", "").lower() == "close":
            conn.reusable = False
        return int(parts[1]), headers

    @staticmethod
    async def _chunks(conn: _Connection, headers: Mapping[str, str]) -> AsyncIterator[bytes]:
        """The response body as the network delivers it: one item per read of the socket
        (all complete HTTP chunks of that read, de-chunked together)."""
        reader = conn.reader
        if "chunked" in headers.get("transfer-encoding", "").lower():
            async for payload in _dechunk(conn):
                yield payload
        elif "content-length" in headers:
            remaining = int(headers["content-length"])
            while remaining > 0:
                data = await reader.read(min(remaining, 1 << 16))
                if not data:
                    raise asyncio.IncompleteReadError(b"", remaining)
                remaining -= len(data)
                yield data
        else:
            conn.reusable = False  # the body ends when the server closes the connection
            while data := await reader.read(1 << 16):
                yield data

    async def request(
        self, method: str, path: str, body: bytes = b"", timeout_s: float | None = None
    ) -> Response:
        """A plain request; the whole body is read."""
        async with asyncio.timeout(timeout_s or self.limits.request_timeout_s):
            conn = await self._acquire()
            try:
                conn.writer.write(self._head(method, path, body, "application/json") + body)
                status, headers = await self._read_head(conn)
                parts = [chunk async for chunk in self._chunks(conn, headers)]
            except BaseException:
                conn.writer.close()
                raise
            self._release(conn)
            return Response(status, headers, b"".join(parts))

    async def stream(
        self, path: str, body: bytes, clock: Clock = time.perf_counter
    ) -> AsyncIterator[tuple[float, bytes]]:
        """POST and yield (arrival time, body chunk) as the response streams in.

        Raises `RequestFailed` for a non-200 status (kind `http_<status>`), a refused
        connection (`connect`) or a connection that ends mid-stream (`stream_cut`).
        """
        conn = await self._acquire()
        finished = False
        try:
            conn.writer.write(self._head("POST", path, body, "text/event-stream") + body)
            status, headers = await self._read_head(conn)
            if status != 200:
                text = b"".join([c async for c in self._chunks(conn, headers)])
                finished = True
                message = text.decode("utf-8", "replace")[:300]
                raise RequestFailed(f"http_{status}", message, status)
            async for chunk in self._chunks(conn, headers):
                yield clock(), chunk
            finished = True
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise RequestFailed("stream_cut", "the server closed the stream early") from exc
        except asyncio.LimitOverrunError as exc:
            raise RequestFailed("malformed", "an oversized line in the stream") from exc
        finally:
            if finished:
                self._release(conn)
            else:
                conn.writer.close()


async def _dechunk(conn: _Connection) -> AsyncIterator[bytes]:
    decoder = ChunkedDecoder()
    while not decoder.done:
        data = await conn.reader.read(1 << 16)
        if not data:
            raise asyncio.IncompleteReadError(b"", None)
        payload = decoder.feed(data)
        if payload:
            yield payload
    missing = decoder.trailer_missing
    if missing:
        decoder.feed(await conn.reader.readexactly(missing))
    if not decoder.clean_end:
        conn.reusable = False  # something follows the body: do not reuse the connection


def _size_line(buffer: bytes, pos: int) -> tuple[int, int] | None:
    """(chunk size, position after its line), or None while the line is incomplete."""
    end = buffer.find(b"\r\n", pos)
    if end < 0:
        return None
    try:
        return int(buffer[pos:end].split(b";", 1)[0], 16), end + 2
    except ValueError as exc:
        raise RequestFailed("malformed", "bad chunk size in the response") from exc


class ChunkedDecoder:
    """Incremental `Transfer-Encoding: chunked` decoding of whatever bytes have arrived.

    `feed` returns the body bytes it could decode (possibly part of a chunk; the SSE framing
    above does its own buffering). `done` turns true at the zero-size last chunk.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._remaining = 0  # body bytes of the current chunk still to come
        self._crlf = False  # a chunk's closing CRLF still to skip
        self.done = False
        self.clean_end = False  # the final CRLF after the last chunk was seen

    @property
    def trailer_missing(self) -> int | None:
        """After the last chunk: bytes of its closing CRLF still unread (0-2), or None when
        something else (trailers, garbage) follows."""
        if not self.done:
            return None
        rest = self._buffer
        return 2 - len(rest) if b"\r\n".startswith(rest) else None

    def _whole_chunks(self, buffer: bytes, out: list[bytes]) -> int:
        """Fast path: copy out every complete chunk at the front of `buffer`; returns where
        the first incomplete one starts (the general loop handles it)."""
        pos, size_of, find = 0, len(buffer), buffer.find
        while True:
            end = find(b"\r\n", pos)
            if end < 0:
                return pos
            try:
                size = int(buffer[pos:end], 16)
            except ValueError:
                return pos  # chunk extensions or garbage: the careful loop decides
            if size == 0 or end + 4 + size > size_of:
                return pos
            out.append(buffer[end + 2 : end + 2 + size])
            pos = end + 4 + size

    def _after_end(self, data: bytes) -> bytes:
        self._buffer += data
        self.clean_end = self._buffer == b"\r\n"
        return b""

    def feed(self, data: bytes) -> bytes:
        if self.done:
            return self._after_end(data)
        buffer = self._buffer + data if self._buffer else data
        out: list[bytes] = []
        pos, size_of = 0, len(buffer)
        if not self._remaining and not self._crlf:
            pos = self._whole_chunks(buffer, out)
        while not self.done:
            if self._remaining:
                take = min(self._remaining, size_of - pos)
                out.append(buffer[pos : pos + take])
                pos += take
                self._remaining -= take
                if self._remaining:
                    break
                self._crlf = True
            if self._crlf:
                if size_of - pos < 2:
                    break
                pos += 2
                self._crlf = False
            line = _size_line(buffer, pos)
            if line is None:
                break
            size, pos = line
            if size == 0:
                self.done = True
                self.clean_end = buffer[pos : pos + 2] == b"\r\n" and size_of == pos + 2
            self._remaining = size
        self._buffer = buffer[pos:]
        return out[0] if len(out) == 1 else b"".join(out)


def json_body(payload: Mapping[str, object]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")
