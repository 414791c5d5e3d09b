"""HTTP/1.1 `Transfer-Encoding: chunked`, decoded incrementally from whatever bytes have arrived.

A streaming server sends one event per chunk, so the decoder hands its body out in pieces, one
per chunk (or part of one): the SSE reading above it then usually sees one whole event per call.
"""

from __future__ import annotations


class MalformedChunk(Exception):
    """The body is not chunked transfer coding (a chunk size that is not hex, for example).

    An internal signal: the client records it as the error kind "malformed"."""


def hex_size(line: bytes) -> int:
    """A chunk-size line of plain hex digits as a number; -1 for anything else (a sign, spaces,
    `_`, extensions: the careful decoder then reads it)."""
    if not line.isalnum():
        return -1
    try:
        return int(line, 16)
    except ValueError:
        return -1


def _size_line(buffer: bytes, pos: int) -> tuple[int, int] | None:
    """(chunk size, position after its line), or None while the line is incomplete."""
    end = buffer.find(b"\r\n", pos)
    if end < 0:
        return None
    try:
        return int(buffer[pos:end].split(b";", 1)[0], 16), end + 2
    except ValueError as exc:
        raise MalformedChunk("bad chunk size in the response") from exc


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
        self.idle = True  # between chunks, nothing buffered: the next byte starts a size line

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
        pieces = self.pieces(data)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def pieces(self, data: bytes) -> list[bytes]:
        """`feed`'s body bytes, one piece per chunk (or part of one) in `data`: a streaming
        server sends one event per chunk, so each piece is usually one whole event."""
        if self.done:
            self.idle = False
            return [self._after_end(data)]
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
        self.idle = not (self._buffer or self._remaining or self._crlf or self.done)
        return out
