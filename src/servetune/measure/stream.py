"""Reading an OpenAI-compatible SSE stream: framing, content, usage. Pure and incremental.

`SseParser.feed` takes body bytes as they arrive and returns the `data:` payloads of the
events they complete. `read_event` interprets one payload of a completions or chat stream.
`StreamTally` does both for a load test's hot path, parsing in full only the events that differ
from an earlier parsed one by more than their text (and running usage).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol


class MalformedStream(Exception):
    """An event whose data is not the JSON an OpenAI-compatible stream sends.

    An internal signal: bench records it as the error kind "malformed"."""


@dataclass
class SseParser:
    """Incremental Server-Sent Events framing (events end with a blank line)."""

    _buffer: bytes = b""

    def feed(self, data: bytes) -> list[bytes]:
        """The data fields of every event completed by `data` (comments and other fields
        dropped; multi-line data joined with newlines)."""
        buffer = self._buffer + data
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")
        *events, self._buffer = buffer.split(b"\n\n")
        payloads: list[bytes] = []
        for event in events:
            if event.startswith(b"data:") and b"\n" not in event:  # the common case
                payloads.append(event[5:].lstrip(b" "))
                continue
            lines = [ln[5:].lstrip(b" ") for ln in event.split(b"\n") if ln.startswith(b"data:")]
            if lines:
                payloads.append(b"\n".join(lines))
        return payloads

    @property
    def pending(self) -> bytes:
        """Bytes of an event not yet terminated (a cut stream leaves them here)."""
        return self._buffer


@dataclass(frozen=True)
class Event:
    """What one stream event says."""

    done: bool = False  # the `[DONE]` sentinel
    content: str = ""  # generated text (completions `text`; chat `delta.content` or reasoning)
    completion_tokens: int | None = None  # from `usage`, when the event carries it
    prompt_tokens: int | None = None
    error: str | None = None  # an error object sent inside the stream


DONE = Event(done=True)


def _delta_text(choice: dict[str, object]) -> str:
    if "text" in choice:
        text = choice["text"]
        return text if isinstance(text, str) else ""
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return ""
    for key in ("content", "reasoning_content", "reasoning"):
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _is_blank(obj: dict[str, object]) -> bool:
    """A token event whose text is empty: a completions choice with `text: ""`, or a chat delta
    with `content: ""` that is not the opening role delta. (vLLM sends these for tokens that
    decode to nothing visible yet: special tokens, the first bytes of a multi-byte character.)"""
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    choice = choices[0]
    if "text" in choice:
        return bool(choice["text"] == "")
    delta = choice.get("delta")
    return isinstance(delta, dict) and "role" not in delta and delta.get("content") == ""


def _load(payload: bytes) -> dict[str, object]:
    try:
        obj = json.loads(payload)
    except ValueError as exc:
        raise MalformedStream(f"not JSON: {payload[:80]!r}") from exc
    if not isinstance(obj, dict):
        raise MalformedStream(f"not a JSON object: {payload[:80]!r}")
    return obj


def _event_of(obj: dict[str, object]) -> Event:
    if "error" in obj:
        error = obj["error"]
        message = error.get("message") if isinstance(error, dict) else error
        return Event(error=str(message)[:300])
    choices = obj.get("choices")
    content = ""
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        content = _delta_text(choices[0])
    usage = obj.get("usage")
    if isinstance(usage, dict):
        completion, prompt = usage.get("completion_tokens"), usage.get("prompt_tokens")
        return Event(
            content=content,
            completion_tokens=completion if isinstance(completion, int) else None,
            prompt_tokens=prompt if isinstance(prompt, int) else None,
        )
    return Event(content=content)


def read_event(payload: bytes) -> Event:
    """Interpret one `data:` payload; `MalformedStream` when it is not such JSON."""
    if payload == b"[DONE]":
        return DONE
    return _event_of(_load(payload))


class StreamFailed(Exception):
    """The server sent an error object inside the stream.

    An internal signal: bench records it as the error kind "server_error"."""


class TokenCounter(Protocol):
    """Whatever keeps a run's live count of content events (read by progress displays)."""

    output_tokens: int


@dataclass(frozen=True, slots=True)
class _Template:
    """A content event of this stream, cut around its text: `head` ends with the text's
    opening quote, `tail` starts at its closing quote and ends the event (usage aside).
    `read_head` and `read_tail` frame the same event as one whole network read carries it."""

    head: bytes
    tail: bytes
    read_head: bytes = b""
    read_tail: bytes = b""

    def __post_init__(self) -> None:
        object.__setattr__(self, "read_head", b"data: " + self.head)
        object.__setattr__(self, "read_tail", self.tail + b"\n\n")


def _learn(payload: bytes, obj: dict[str, object], text: str) -> _Template | None:
    """The template of a parsed content event with one choice, or None when its text cannot be
    located exactly once in the bytes (then every event of the stream is parsed)."""
    choices = obj.get("choices")
    if not isinstance(choices, list) or len(choices) != 1:
        return None
    for encoded in (json.dumps(text, ensure_ascii=False), json.dumps(text)):
        raw = encoded.encode("utf-8")
        at = payload.find(raw)
        if at < 0 or payload.find(raw, at + 1) >= 0 or b'"' in raw[1:-1]:
            continue
        close = at + len(raw) - 1
        usage = payload.find(b'"usage"', close)
        end = len(payload) if usage < 0 else payload.rfind(b",", close, usage)
        if end <= close:
            return None
        return _Template(payload[: at + 1], payload[close:end])
    return None


class StreamTally:
    """One stream's measurements, taken as its body bytes arrive, without a task switch or a
    JSON parse per event in the common case.

    Records, for each event that carries generated text, its arrival time minus `origin`; the
    running usage (`chunk_tokens`) when events carry it; the final usage; `[DONE]`. Until the
    first text, token events with empty text are timed too (`blank_times`): a stream whose every
    token decodes to nothing visible is timed by them (`token_times`), as vLLM's own client
    does. An event equal byte for byte to an earlier parsed content event of the same stream,
    its text and usage aside, is counted from the bytes (a few comparisons); anything else is
    parsed in full.
    `feed` raises `MalformedStream` for an event that is not JSON and `StreamFailed` for an
    error event.
    """

    __slots__ = (
        "_counter",
        "_origin",
        "_parser",
        "_template",
        "blank_times",
        "chunk_tokens",
        "completion_tokens",
        "content_times",
        "done",
        "prompt_tokens",
    )

    def __init__(
        self,
        origin: float = 0.0,
        content_times: list[float] | None = None,
        chunk_tokens: list[int] | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self._origin = origin
        self._counter = counter
        self._parser: SseParser | None = None  # only once a read does not hold one whole event
        self._template: _Template | None = None
        self.content_times: list[float] = [] if content_times is None else content_times
        self.chunk_tokens: list[int] = [] if chunk_tokens is None else chunk_tokens
        self.blank_times: list[float] = []
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.done = False

    def feed(self, at: float, data: bytes) -> None:
        """Body bytes that arrived at `at` (any split of the stream)."""
        parser = self._parser
        if parser is None:
            template = self._template
            # The hot path: a read holding one whole content event shaped like the template
            # (JSON text holds no raw newline, so nothing else can hide in such a read).
            if template is not None and data.startswith(template.read_head):
                start = len(template.read_head)
                close = data.find(b'"', start)  # no quote in the text, not even an escaped one
                if (
                    close > 0
                    and data[close - 1] != 0x5C
                    and data.endswith(template.read_tail)
                    and close + len(template.read_tail) == len(data)
                ):
                    if close > start:
                        self._content(at, None)
                    else:
                        self._blank(at)
                    return
            if (
                data.startswith(b"data: ")
                and data.find(b"\n") == len(data) - 2
                and data.endswith(b"\n\n")
                and b"\r" not in data
            ):  # one whole single-line event of another shape
                self._event(at, data[6:-2])
                return
            parser = self._parser = SseParser()
        for payload in parser.feed(data):
            self._event(at, payload)
        if not parser.pending:
            self._parser = None  # back on the one-event-per-read path

    def _event(self, at: float, payload: bytes) -> None:
        template = self._template
        if template is not None and payload.startswith(template.head):
            start, tail = len(template.head), template.tail
            close = payload.find(b'"', start)  # no quote in the text, not even an escaped one
            if close > 0 and payload[close - 1] != 0x5C and payload.startswith(tail, close):
                end = close + len(tail)
                if end == len(payload):
                    if close > start:
                        self._content(at, None)
                    else:
                        self._blank(at)
                    return
                if self._known_usage(at, payload, end, has_text=close > start):
                    return
        self._parse(at, payload)

    def _known_usage(self, at: float, payload: bytes, end: int, *, has_text: bool) -> bool:
        """A template match followed by `,"usage":{...}}` (continuous usage stats)."""
        try:
            rest = json.loads(b"{" + payload[end + 1 :])
        except ValueError:
            return False
        usage = rest.get("usage") if isinstance(rest, dict) and len(rest) == 1 else None
        if not isinstance(usage, dict):
            return False
        completion = self._usage(usage)
        if has_text:
            self._content(at, completion)
        else:
            self._blank(at)
        return True

    def _content(self, at: float, completion: int | None) -> None:
        self.content_times.append(at - self._origin)
        if completion is not None:
            self.chunk_tokens.append(completion)
        if self._counter is not None:
            self._counter.output_tokens += 1

    def _blank(self, at: float) -> None:
        if not self.content_times:
            self.blank_times.append(at - self._origin)

    def token_times(self) -> list[float]:
        """The times that time this stream: its text events; when none carried text but usage
        counts generated tokens, its empty-text token events (vLLM's rule, which times every
        event with a choice); else none."""
        if self.content_times or not (self.completion_tokens or 0) > 0:
            return self.content_times
        return self.blank_times

    def _usage(self, usage: dict[str, object]) -> int | None:
        completion, prompt = usage.get("completion_tokens"), usage.get("prompt_tokens")
        if isinstance(prompt, int):
            self.prompt_tokens = prompt
        if isinstance(completion, int):
            self.completion_tokens = completion
            return completion
        return None

    def _parse(self, at: float, payload: bytes) -> None:
        if payload == b"[DONE]":
            self.done = True
            return
        obj = _load(payload)
        event = _event_of(obj)
        if event.error is not None:
            raise StreamFailed(event.error)
        usage = obj.get("usage")
        completion = self._usage(usage) if isinstance(usage, dict) else None
        if event.content:
            self._content(at, completion)
            self._template = _learn(payload, obj, event.content) or self._template
        elif _is_blank(obj):
            self._blank(at)
