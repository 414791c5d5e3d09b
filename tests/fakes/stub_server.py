"""A fast, fully controllable fake of vLLM's OpenAI-compatible server, for tests and benchmarks.

It speaks HTTP/1.1 on raw `asyncio` streams (no framework) so that it is never the bottleneck when
it measures a load-testing client: keep-alive connections, `Transfer-Encoding: chunked` streams with
one HTTP chunk per SSE event in the exact JSON shapes vLLM sends, Content-Length otherwise.

- `StubBehaviour` says how fast to answer, in which wire shape, and which failure to inject.
  `shape="vllm-0.32"` with `event_writes=True` copies vLLM 0.32.0 byte for byte (the capture in
  shared/reference/vllm-stream-0.32.0.txt): its extra null fields, `finish_reason` on the last
  content chunk, the usage chunk's `system_fingerprint`, one socket write per event.
- `StubServer` runs in the caller's event loop (`await start()` / `await stop()`).
- `ThreadedStub` runs one in a background thread, for synchronous tests.
- `python tests/fakes/stub_server.py --port P` runs one as a process and prints `READY <base url>`.

The stub's "tokenizer" is whitespace splitting, and every generated token is the text " tok".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import heapq
import http
import json
import math
import signal
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Protocol

MAX_MODEL_LEN = 4096
TOKEN_TEXT = " tok"  # noqa: S105 - generated text, not a password
_VOCAB_SIZE = 50_000
_HEAD_LIMIT = 64 * 1024
_BODY_LIMIT = 64 * 1024 * 1024
_BACKLOG = 4096  # the CPU benchmark opens 500+ connections at once
# Zero-delay streams join this many SSE events into one transport write: one send() per event
# would make the stub, not the client under test, the CPU cost being measured.
_FLUSH_EVERY = 64
_TICK_S = 0.001  # paced writes are batched per millisecond (see _Pacer)

JSON = dict[str, Any]
Shape = Literal["stub", "vllm-0.32"]
SHAPES: tuple[Shape, ...] = ("stub", "vllm-0.32")
VLLM_FINGERPRINT = "vllm-0.32.0-21e077a8"  # as in the capture


@dataclass(frozen=True)
class StubBehaviour:
    """How the stub answers completion requests; replace `StubServer.behaviour` between runs."""

    ttft_ms: float = 0.0  # delay before the first content chunk
    itl_ms: float = 0.0  # delay between content chunks
    tokens_per_chunk: int = 1  # tokens carried by one content chunk
    default_max_tokens: int = 16  # when the request has no max_tokens
    role_chunk: bool = True  # chat: a first role-only delta, sent at once
    usage: bool = True  # the usage chunk when stream_options.include_usage is true
    continuous_usage: bool = False  # running usage on every chunk, as vLLM's continuous_usage_stats
    fail_every: int = 0  # every n-th completion POST answers `fail_status`
    fail_status: int = 500
    cut_after_chunks: int | None = None  # close the connection after this many content chunks
    malformed_after_chunks: int | None = None  # one `data: {not json` event after this many
    hang: bool = False  # accept completion requests, never answer
    model: str = "stub"
    # The text of one token: "" for tokens that decode to nothing visible (special tokens, the
    # first bytes of a multi-byte character), as a random-weight model sometimes answers.
    token_text: str = TOKEN_TEXT
    # "stub": lean chunks and a separate finish chunk; "vllm-0.32": vLLM 0.32.0's exact chunks.
    shape: Shape = "stub"
    spaced: bool = False  # JSON with a space after ":" and "," (Python's json.dumps default)
    # One socket write per SSE event, yielding to the loop after each (as vLLM's server does),
    # instead of joining up to _FLUSH_EVERY zero-delay events into one write.
    event_writes: bool = False

    def __post_init__(self) -> None:
        if self.ttft_ms < 0 or self.itl_ms < 0:
            raise ValueError("ttft_ms and itl_ms must be >= 0")
        if self.tokens_per_chunk < 1:
            raise ValueError("tokens_per_chunk must be >= 1")
        if self.default_max_tokens < 0 or self.fail_every < 0:
            raise ValueError("default_max_tokens and fail_every must be >= 0")
        if not 100 <= self.fail_status <= 599:
            raise ValueError("fail_status must be an HTTP status code")
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}")


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the stub read it (every request, any path)."""

    path: str
    body: dict[str, Any] | None  # None: no body, or not a JSON object
    received_at: float  # time.perf_counter() when head and body were fully read
    headers: dict[str, str]  # lower-cased names


class _HttpError(Exception):
    def __init__(self, status: int, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind or _reason(status).replace(" ", "") + "Error"


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool
    received_at: float
    parsed: JSON | None = field(init=False)
    parse_error: str = field(init=False)

    def __post_init__(self) -> None:
        parsed, error = _parse_json(self.body)
        object.__setattr__(self, "parsed", parsed)
        object.__setattr__(self, "parse_error", error)

    def json(self) -> JSON:
        """The body as a JSON object, or a 400."""
        if self.parsed is None:
            raise _HttpError(400, self.parse_error)
        return self.parsed


def _parse_json(raw: bytes) -> tuple[JSON | None, str]:
    try:
        value = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        return None, f"invalid JSON body: {exc}"
    if not isinstance(value, dict):
        return None, "the JSON body must be an object"
    return value, ""


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Error"


# --- HTTP/1.1 reading ---


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> _Request | None:
    """The next request on the connection; None when the client closed it between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise _HttpError(400, "the request head ended early") from None
        return None
    except asyncio.LimitOverrunError:
        raise _HttpError(431, "the request head is too large") from None
    method, target, version, headers = _parse_head(head)
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await _read_body(reader, headers)
    return _Request(
        method=method,
        path=target.partition("?")[0],
        headers=headers,
        body=body,
        keep_alive=_keep_alive(version, headers),
        received_at=time.perf_counter(),
    )


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _HttpError(400, f"bad request line: {lines[0][:100]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise _HttpError(400, f"bad header line: {line[:100]!r}")
        key, value = name.lower(), value.strip(" \t")
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return parts[0], parts[1], parts[2], headers


def _keep_alive(version: str, headers: dict[str, str]) -> bool:
    tokens = {token.strip().lower() for token in headers.get("connection", "").split(",")}
    if version == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    encoding = headers.get("transfer-encoding")
    if encoding is not None:
        if encoding.lower() != "chunked":
            raise _HttpError(501, f"unsupported transfer-encoding: {encoding}")
        return await _read_chunked(reader)
    length = headers.get("content-length")
    if length is None:
        return b""
    if not length.isdigit():
        raise _HttpError(400, f"bad content-length: {length!r}")
    if int(length) > _BODY_LIMIT:
        raise _HttpError(413, "the request body is too large")
    return await reader.readexactly(int(length))


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise _HttpError(400, "bad chunk size in the request body") from None
        if size < 0 or total + size > _BODY_LIMIT:
            raise _HttpError(413 if size > 0 else 400, "bad or too large chunked request body")
        if size == 0:
            break
        total += size
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise _HttpError(400, "a request body chunk does not end with CRLF")
    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailer fields, ignored
        pass
    return b"".join(parts)


# --- HTTP/1.1 writing ---


def _write_response(
    writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str, keep_alive: bool
) -> None:
    head = (
        f"HTTP/1.1 {status} {_reason(status)}\r\ncontent-type: {content_type}\r\n"
        f"content-length: {len(body)}\r\n"
    )
    close = b"" if keep_alive else b"connection: close\r\n"
    writer.write(head.encode("latin-1") + close + b"\r\n" + body)


def _write_error(writer: asyncio.StreamWriter, error: _HttpError, keep_alive: bool) -> None:
    body = {"error": {"message": error.message, "type": error.kind, "code": error.status}}
    _write_response(writer, error.status, _dumps(body), "application/json", keep_alive)


def _dumps(obj: object, *, spaced: bool = False) -> bytes:
    return json.dumps(obj, separators=(", ", ": ") if spaced else (",", ":")).encode()


def _frame(payload: bytes) -> bytes:
    """One SSE event as one HTTP chunk."""
    event = b"data: " + payload + b"\n\n"
    return b"%x\r\n%b\r\n" % (len(event), event)


_MALFORMED = _frame(b"{not json")
_DONE_AND_END = _frame(b"[DONE]") + b"0\r\n\r\n"


def _stream_head(keep_alive: bool) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n"
        + (b"" if keep_alive else b"connection: close\r\n")
        + b"\r\n"
    )


# An event stream is bytes to write, a float (seconds to wait, after flushing) or None (cut here).
_Event = bytes | float | None


class _Pacer:
    """Runs callbacks at millisecond ticks (rounded up), with one timer per tick for all streams.

    One `asyncio.sleep` per paced chunk costs a timer, a future and a task wake-up through the
    handler's whole await chain: with hundreds of paced streams the stub became the bottleneck.
    Ticks lose no precision that mattered: epoll waits in whole milliseconds anyway.
    """

    def __init__(self) -> None:
        self._due: dict[int, list[Callable[[], None]]] = {}
        self._ticks: list[int] = []  # a heap of the keys of _due
        self._timer: asyncio.TimerHandle | None = None
        self._firing = False

    @staticmethod
    def time() -> float:
        return asyncio.get_running_loop().time()

    def call_at(self, when: float, callback: Callable[[], None]) -> None:
        tick = math.ceil(when / _TICK_S)
        callbacks = self._due.get(tick)
        if callbacks is not None:
            callbacks.append(callback)
            return
        self._due[tick] = [callback]
        heapq.heappush(self._ticks, tick)
        if self._ticks[0] == tick and not self._firing:
            self._arm()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._due.clear()
        self._ticks.clear()

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_at(self._ticks[0] * _TICK_S, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if not self._ticks:
            return
        self._firing = True
        try:
            limit = max(self._ticks[0], math.floor(self.time() / _TICK_S))
            while self._ticks and self._ticks[0] <= limit:
                for callback in self._due.pop(heapq.heappop(self._ticks)):
                    callback()
        finally:
            self._firing = False
        if self._ticks:
            self._arm()


class _Transport(Protocol):
    """What a stream's writes need of a transport (asyncio's, or a test's recorder)."""

    def write(self, data: bytes) -> None: ...

    def get_write_buffer_limits(self) -> tuple[int, int]: ...

    def get_write_buffer_size(self) -> int: ...

    def is_closing(self) -> bool: ...


class _Writer(Protocol):
    """What a stream's writes need of a writer: `asyncio.StreamWriter`, or a test's recorder."""

    @property
    def transport(self) -> _Transport: ...

    async def drain(self) -> None: ...


class _StreamWriter:
    """Writes one stream's events from loop callbacks: a paced chunk costs a write, not a task step.

    `run()` answers True (all written), False (cut) or None: the client is behind, so the handler
    awaits `drain()` and calls `run()` again.
    """

    def __init__(
        self,
        writer: _Writer,
        events: Iterator[_Event],
        pacer: _Pacer,
        *,
        event_writes: bool = False,
    ) -> None:
        self._transport = writer.transport
        self._event_writes = event_writes
        self._high_water = self._transport.get_write_buffer_limits()[1]
        self._events = events
        self._pacer = pacer
        self._due = 0.0  # when the last paced write was due
        self._result: asyncio.Future[bool | None] | None = None

    def run(self) -> asyncio.Future[bool | None]:
        self._result = asyncio.get_running_loop().create_future()
        self._due = self._pacer.time()
        self._step()
        return self._result

    def _step(self) -> None:
        result = self._result
        if result is None or result.done():  # the handler was cancelled meanwhile
            return
        try:
            self._advance(result)
        except Exception as exc:  # noqa: BLE001 - the awaiting handler raises it; the pacer goes on
            result.set_exception(exc)

    def _advance(self, result: asyncio.Future[bool | None]) -> None:
        pending: list[bytes] = []
        for event in self._events:
            if isinstance(event, bytes):
                pending.append(event)
                if len(pending) < _FLUSH_EVERY and not self._event_writes:
                    continue
            if not self._flush(pending, result):
                return
            if isinstance(event, float):
                self._wait(event)
                return
            if event is None:
                result.set_result(False)
                return
            if self._transport.get_write_buffer_size() > self._high_water:
                result.set_result(None)
                return
            if self._event_writes:  # let other streams (and the client) run between events
                asyncio.get_running_loop().call_soon(self._step)
                return
        if self._flush(pending, result):
            result.set_result(True)

    def _wait(self, delay_s: float) -> None:
        # Keep to the schedule (a late write makes the next gap shorter, so the mean gap stays
        # itl_ms), but never catch up by more than one gap (no bursts).
        self._due += delay_s
        if self._due < self._pacer.time():
            self._due = self._pacer.time() + delay_s
        self._pacer.call_at(self._due, self._step)

    def _flush(self, pending: list[bytes], result: asyncio.Future[bool | None]) -> bool:
        if self._transport.is_closing():
            result.set_exception(ConnectionResetError("the client went away"))
            return False
        if pending:
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))
        pending.clear()
        return True


async def _pump(
    writer: _Writer, events: Iterator[_Event], pacer: _Pacer, *, event_writes: bool
) -> bool:
    """Write the events; False when the stream was cut."""
    stream = _StreamWriter(writer, events, pacer, event_writes=event_writes)
    while (outcome := await stream.run()) is None:
        await writer.drain()
    return outcome


# --- completions ---


@dataclass(frozen=True)
class _Plan:
    """What one completion request asks for."""

    chat: bool
    stream: bool
    prompt_tokens: int
    completion_tokens: int
    include_usage: bool
    continuous_usage: bool

    @classmethod
    def parse(cls, body: JSON, behaviour: StubBehaviour, *, chat: bool) -> _Plan:
        options = body.get("stream_options")
        options = options if isinstance(options, dict) else {}
        include_usage = bool(options.get("include_usage"))
        return cls(
            chat=chat,
            stream=bool(body.get("stream")),
            prompt_tokens=len(_prompt_words(body, chat=chat)),
            completion_tokens=_max_tokens(body, behaviour.default_max_tokens),
            include_usage=include_usage,
            # vLLM sends running usage only when include_usage is set as well.
            continuous_usage=behaviour.continuous_usage
            and include_usage
            and bool(options.get("continuous_usage_stats")),
        )


def _prompt_words(body: JSON, *, chat: bool) -> list[str]:
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise _HttpError(400, '"messages" must be a list')
        return " ".join(_message_text(message) for message in messages).split()
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return prompt.split()
    if isinstance(prompt, list):  # several prompts, or token ids (one "word" each)
        return [
            w for item in prompt for w in (item.split() if isinstance(item, str) else [str(item)])
        ]
    raise _HttpError(400, '"prompt" must be a string or a list')


def _message_text(message: object) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _max_tokens(body: JSON, default: int) -> int:
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _HttpError(400, f'"{key}" must be a non-negative integer')
        return value
    return default


def _chunk_sizes(tokens: int, per_chunk: int) -> list[int]:
    sizes = [per_chunk] * (tokens // per_chunk)
    if tokens % per_chunk:
        sizes.append(tokens % per_chunk)
    return sizes


def _usage(prompt_tokens: int, completion_tokens: int) -> JSON:
    return {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
    }


@functools.lru_cache(maxsize=256)
def _choices(
    *,
    chat: bool,
    tokens: int,
    finish_reason: str | None,
    shape: Shape,
    spaced: bool,
    token_text: str = TOKEN_TEXT,
) -> bytes:
    """The `choices` JSON of a content (or finish) chunk, in vLLM's key order."""
    text = token_text * tokens
    choice: JSON = {"index": 0}
    if chat:
        choice |= {"delta": {"content": text}, "logprobs": None, "finish_reason": finish_reason}
        if finish_reason is not None:
            choice["stop_reason"] = None
        if shape == "vllm-0.32":
            choice["token_ids"] = None
    else:
        choice |= {"text": text, "logprobs": None, "finish_reason": finish_reason}
        choice["stop_reason"] = None
        if shape == "vllm-0.32":
            choice |= {"prompt_token_ids": None, "token_ids": None}
    return _dumps([choice], spaced=spaced)


@functools.lru_cache(maxsize=8)
def _role_choices(*, spaced: bool) -> bytes:
    choice = {
        "index": 0,
        "delta": {"role": "assistant", "content": ""},
        "logprobs": None,
        "finish_reason": None,
    }
    return _dumps([choice], spaced=spaced)


class _Chunks:
    """One request's SSE events in vLLM's shapes, spliced from cached JSON (json.dumps is slow)."""

    def __init__(self, plan: _Plan, behaviour: StubBehaviour) -> None:
        self._plan = plan
        self._shape = behaviour.shape
        self._spaced = behaviour.spaced
        self._token_text = behaviour.token_text
        head = {
            "id": ("chatcmpl-" if plan.chat else "cmpl-") + uuid.uuid4().hex[:16],
            "object": "chat.completion.chunk" if plan.chat else "text_completion",
            "created": int(time.time()),
            "model": behaviour.model,
        }
        key = b'"choices": ' if self._spaced else b'"choices":'
        comma = b", " if self._spaced else b","
        # The object, left open after "choices":
        self._prefix = b"data: " + self._dumps(head)[:-1] + comma + key
        self._content: dict[tuple[int, bool], bytes] = {}

    @property
    def finish_on_last(self) -> bool:
        """vLLM 0.32 puts finish_reason on the last content chunk (no separate finish chunk)."""
        return self._shape == "vllm-0.32"

    def role(self) -> bytes:
        tail: JSON = {}
        if self._shape == "vllm-0.32":
            tail = {"prompt_token_ids": None, "prompt_text": None}
        return self._event(_role_choices(spaced=self._spaced), self._running_usage(0), tail)

    def content(self, tokens: int, done: int, *, last: bool = False) -> bytes:
        if self._plan.continuous_usage:
            return self._event(self._choices(tokens, last), self._running_usage(done))
        event = self._content.get((tokens, last))
        if event is None:
            event = self._content[tokens, last] = self._event(self._choices(tokens, last))
        return event

    def finish(self, done: int) -> bytes:
        return self._event(self._choices(0, True), self._running_usage(done))

    def usage(self, done: int) -> bytes:
        tail: JSON = {}
        if self._shape == "vllm-0.32":
            tail = {"system_fingerprint": VLLM_FINGERPRINT}
        return self._event(b"[]", _usage(self._plan.prompt_tokens, done), tail)

    def _dumps(self, obj: object) -> bytes:
        return _dumps(obj, spaced=self._spaced)

    def _choices(self, tokens: int, last: bool) -> bytes:
        return _choices(
            chat=self._plan.chat,
            tokens=tokens,
            finish_reason="length" if last else None,
            shape=self._shape,
            spaced=self._spaced,
            token_text=self._token_text,
        )

    def _running_usage(self, done: int) -> JSON | None:
        return _usage(self._plan.prompt_tokens, done) if self._plan.continuous_usage else None

    def _event(self, choices: bytes, usage: JSON | None = None, tail: JSON | None = None) -> bytes:
        fields = ({"usage": usage} if usage is not None else {}) | (tail or {})
        rest = self._dumps(fields)[1:] if fields else b"}"  # ',"usage":{...}}' or '}'
        if fields:
            rest = (b", " if self._spaced else b",") + rest
        event = self._prefix + choices + rest + b"\n\n"
        return b"%x\r\n%b\r\n" % (len(event), event)


def _stream_events(
    plan: _Plan,
    behaviour: StubBehaviour,
    keep_alive: bool,
    sent: Callable[[int], None] = lambda _: None,
) -> Iterator[_Event]:
    """The stream's events; `sent(tokens)` after each content chunk was taken to be written."""
    chunks = _Chunks(plan, behaviour)
    yield _stream_head(keep_alive)
    if plan.chat and behaviour.role_chunk:
        yield chunks.role()
    sizes = _chunk_sizes(plan.completion_tokens, behaviour.tokens_per_chunk)
    finish_on_last = chunks.finish_on_last and bool(sizes)
    done = 0
    for index in range(len(sizes) + 1):  # the extra round: faults after the last content chunk
        if behaviour.malformed_after_chunks == index:
            yield _MALFORMED
        if behaviour.cut_after_chunks == index:
            yield None
            return
        if index == len(sizes):
            break
        delay_ms = behaviour.ttft_ms if index == 0 else behaviour.itl_ms
        if delay_ms > 0:
            yield delay_ms / 1000
        done += sizes[index]
        yield chunks.content(sizes[index], done, last=finish_on_last and index == len(sizes) - 1)
        sent(sizes[index])
    if not finish_on_last:
        yield chunks.finish(done)
    if plan.include_usage and behaviour.usage:
        yield chunks.usage(done)
    yield _DONE_AND_END


def _whole_completion(plan: _Plan, model: str) -> JSON:
    text = TOKEN_TEXT * plan.completion_tokens
    choice: JSON = {"index": 0}
    if plan.chat:
        choice["message"] = {"role": "assistant", "content": text}
    else:
        choice["text"] = text
    choice |= {"logprobs": None, "finish_reason": "length", "stop_reason": None}
    return {
        "id": ("chatcmpl-" if plan.chat else "cmpl-") + uuid.uuid4().hex,
        "object": "chat.completion" if plan.chat else "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": _usage(plan.prompt_tokens, plan.completion_tokens),
    }


# --- the other endpoints ---

_METRICS = (
    ("vllm:num_requests_running", "Number of requests in model execution batches.", "gauge"),
    ("vllm:num_requests_waiting", "Number of requests waiting to be processed.", "gauge"),
    ("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "gauge"),
    ("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", "counter"),
)


def _metrics_text(model: str, running: int) -> bytes:
    escaped = model.replace("\\", "\\\\").replace('"', '\\"')
    labels = f'{{engine="0",model_name="{escaped}"}}'
    values = (float(running), 0.0, min(1.0, running / 100), 0.0)
    lines: list[str] = []
    for (name, help_text, kind), value in zip(_METRICS, values, strict=True):
        lines += [
            f"# HELP {name} {help_text}",
            f"# TYPE {name} {kind}",
            f"{name}{labels} {value!r}",
        ]
    return ("\n".join(lines) + "\n").encode()


def _token_id(word: str) -> int:
    return zlib.crc32(word.encode()) % _VOCAB_SIZE


_Response = tuple[int, bytes, str]


def _json_response(obj: object, status: int = 200) -> _Response:
    return status, _dumps(obj), "application/json"


class StubServer:
    """The fake server in the caller's event loop; see the module docstring."""

    def __init__(
        self, behaviour: StubBehaviour | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.behaviour = behaviour or StubBehaviour()
        self.host = host
        self.received: list[ReceivedRequest] = []
        self._requested_port = port
        self._completion_posts = 0
        self._running = 0
        self.streams_completed = 0  # streams written to the end (a benchmark counts tokens here)
        self.tokens_streamed = 0
        self.tokens_sent = 0  # content tokens written so far, finished streams or not
        self._vocab: dict[int, str] = {}
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._pacer = _Pacer()
        self._routes: dict[str, tuple[str, Callable[[_Request], _Response]]] = {
            "/health": ("GET", lambda _: (200, b"", "text/plain; charset=utf-8")),
            "/version": ("GET", lambda _: _json_response({"version": "stub"})),
            "/stub/stats": ("GET", self._stats),
            "/v1/models": ("GET", self._models),
            "/metrics": ("GET", self._metrics),
            "/tokenize": ("POST", self._tokenize),
            "/detokenize": ("POST", self._detokenize),
        }

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stub server is not started")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def reset(self) -> None:
        """Forget the received requests and restart the fail_every count (between runs)."""
        self.received.clear()
        self._completion_posts = 0

    async def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("the stub server is already started")
        self._closing = False
        self._server = await asyncio.start_server(
            self._handle, self.host, self._requested_port, backlog=_BACKLOG, limit=_HEAD_LIMIT
        )

    async def stop(self) -> None:
        """Stop listening and drop every open connection (streams and hangs included)."""
        server, self._server = self._server, None
        if server is None:
            return
        self._closing = True
        # Stop accepting before close(): on 3.11 a connection accepted but not yet wrapped in a
        # transport when close() runs fails an assertion in asyncio and leaks its socket.
        loop = asyncio.get_running_loop()
        for sock in server.sockets:
            loop.remove_reader(sock.fileno())
        for _ in range(3):
            await asyncio.sleep(0)
        server.close()
        # A connection accepted just before that gets its handler a few loop turns later;
        # let those start (they see _closing and abort) so no task outlives the server.
        for _ in range(5):
            await asyncio.sleep(0)
            tasks = list(self._connections)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        self._pacer.close()
        await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if self._closing or task is None:
            writer.transport.abort()
            return
        self._connections.add(task)
        try:
            await self._serve_connection(reader, writer)
        except asyncio.CancelledError:
            # stop() cancels every connection. End the task normally: on 3.11 start_server's
            # done-callback logs an error for a handler task that ends cancelled.
            writer.transport.abort()
        finally:
            self._connections.discard(task)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):  # the client left
                while await self._serve_one(reader, writer):
                    pass
        finally:
            await self._close(writer)

    async def _close(self, writer: asyncio.StreamWriter) -> None:
        """Flush and close; abort instead when the server is stopping."""
        if not self._closing:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass
            except asyncio.CancelledError:  # stop() while a slow reader still holds our data
                writer.transport.abort()
                raise
            return
        writer.transport.abort()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must close."""
        try:
            request = await _read_request(reader, writer)
        except _HttpError as exc:
            _write_error(writer, exc, keep_alive=False)
            return False
        if request is None:
            return False
        self.received.append(
            ReceivedRequest(request.path, request.parsed, request.received_at, request.headers)
        )
        try:
            keep = await self._dispatch(request, reader, writer)
        except _HttpError as exc:
            _write_error(writer, exc, request.keep_alive)
            keep = True
        await writer.drain()
        return keep and request.keep_alive

    async def _dispatch(
        self, request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        chat = request.path == "/v1/chat/completions"
        if chat or request.path == "/v1/completions":
            if request.method != "POST":
                raise _HttpError(405, f"{request.path} takes POST")
            return await self._generate(request, reader, writer, chat=chat)
        route = self._routes.get(request.path)
        if route is None:
            raise _HttpError(404, f"no route for {request.path}")
        method, handler = route
        if request.method != method:
            raise _HttpError(405, f"{request.path} takes {method}")
        status, body, content_type = handler(request)
        _write_response(writer, status, body, content_type, request.keep_alive)
        return True

    async def _generate(
        self,
        request: _Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        chat: bool,
    ) -> bool:
        behaviour = self.behaviour  # one behaviour for the whole request
        self._completion_posts += 1
        if behaviour.fail_every and self._completion_posts % behaviour.fail_every == 0:
            raise _HttpError(behaviour.fail_status, "stub failure", kind="stub")
        if behaviour.hang:
            while await reader.read(65536):  # until the client gives up
                pass
            return False
        plan = _Plan.parse(request.json(), behaviour, chat=chat)
        self._running += 1
        try:
            if plan.stream:
                events = _stream_events(plan, behaviour, request.keep_alive, self._sent)
                whole = await _pump(
                    writer, events, self._pacer, event_writes=behaviour.event_writes
                )
                if whole:
                    self.streams_completed += 1
                    self.tokens_streamed += plan.completion_tokens
                return whole
            return await self._answer_whole(writer, plan, behaviour, request.keep_alive)
        finally:
            self._running -= 1

    @staticmethod
    async def _answer_whole(
        writer: asyncio.StreamWriter, plan: _Plan, behaviour: StubBehaviour, keep_alive: bool
    ) -> bool:
        chunks = len(_chunk_sizes(plan.completion_tokens, behaviour.tokens_per_chunk))
        delay_ms = behaviour.ttft_ms + behaviour.itl_ms * (chunks - 1) if chunks else 0.0
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)
        if behaviour.cut_after_chunks is not None and behaviour.cut_after_chunks < chunks:
            return False  # close without an answer
        body = _dumps(_whole_completion(plan, behaviour.model))
        _write_response(writer, 200, body, "application/json", keep_alive)
        return True

    def _models(self, _: _Request) -> _Response:
        name = self.behaviour.model
        model = {  # vLLM's card; `vllm bench serve` reads "root" when --model is not given
            "id": name,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "vllm",
            "root": name,
            "parent": None,
            "max_model_len": MAX_MODEL_LEN,
        }
        return _json_response({"object": "list", "data": [model]})

    def _sent(self, tokens: int) -> None:
        self.tokens_sent += tokens

    def _stats(self, _: _Request) -> _Response:
        """What the stub sent, for a benchmark that runs it as a process."""
        stats = {
            "streams_completed": self.streams_completed,
            "tokens_streamed": self.tokens_streamed,
            "tokens_sent": self.tokens_sent,
        }
        return _json_response(stats)

    def _metrics(self, _: _Request) -> _Response:
        text = _metrics_text(self.behaviour.model, self._running)
        return 200, text, "text/plain; version=0.0.4; charset=utf-8"

    def _tokenize(self, request: _Request) -> _Response:
        body = request.json()
        words = _prompt_words(body, chat="messages" in body)
        tokens = [_token_id(word) for word in words]
        self._vocab.update(zip(tokens, words, strict=True))
        return _json_response(
            {"count": len(tokens), "tokens": tokens, "max_model_len": MAX_MODEL_LEN}
        )

    def _detokenize(self, request: _Request) -> _Response:
        tokens = request.json().get("tokens")
        if not isinstance(tokens, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in tokens
        ):
            raise _HttpError(400, '"tokens" must be a list of integers')
        return _json_response({"prompt": " ".join(self._vocab.get(t, f"w{t}") for t in tokens)})


class ThreadedStub:
    """A `StubServer` on its own event loop in a background thread, for synchronous tests."""

    def __init__(
        self, behaviour: StubBehaviour | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.server = StubServer(behaviour, host, port)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def port(self) -> int:
        return self.server.port

    def set_behaviour(self, behaviour: StubBehaviour) -> None:
        self.server.behaviour = behaviour

    def __enter__(self) -> ThreadedStub:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=_run_loop, args=(loop,), name="stub", daemon=True)
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.server.start(), loop).result(timeout=30)
        except BaseException:
            self._shutdown()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._shutdown()

    def _shutdown(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.server.stop(), loop).result(timeout=30)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=30)
            self._loop = self._thread = None


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
        leftovers = asyncio.all_tasks(loop)
        for task in leftovers:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


# --- as a process ---


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Fake vLLM OpenAI-compatible streaming server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--ttft-ms", type=float, default=0.0)
    parser.add_argument("--itl-ms", type=float, default=0.0)
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    parser.add_argument("--default-max-tokens", type=int, default=16)
    parser.add_argument("--model", default="stub")
    parser.add_argument("--shape", choices=SHAPES, default="stub")
    parser.add_argument("--spaced", action="store_true", help="JSON with spaces after : and ,")
    parser.add_argument("--event-writes", action="store_true", help="one write per SSE event")
    parser.add_argument("--continuous-usage", action="store_true")
    return parser.parse_args(argv)


async def _serve_until_signal(server: StubServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    try:
        print(f"READY {server.base_url}", flush=True)
        await stop.wait()
    finally:
        await server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    behaviour = StubBehaviour(
        ttft_ms=args.ttft_ms,
        itl_ms=args.itl_ms,
        tokens_per_chunk=args.tokens_per_chunk,
        default_max_tokens=args.default_max_tokens,
        model=args.model,
        shape=args.shape,
        spaced=args.spaced,
        event_writes=args.event_writes,
        continuous_usage=args.continuous_usage,
    )
    asyncio.run(_serve_until_signal(StubServer(behaviour, args.host, args.port)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
