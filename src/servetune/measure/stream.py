"""Reading an OpenAI-compatible SSE stream: framing, content, usage. Pure and incremental.

`SseParser.feed` takes body bytes as they arrive and returns the `data:` payloads of the
events they complete. `read_event` interprets one payload of a completions or chat stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


class MalformedStream(Exception):  # noqa: N818 - recorded as the error kind "malformed"
    """An event whose data is not the JSON an OpenAI-compatible stream sends."""


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


_TEXT_KEYS = (b'"text":"', b'"content":"')


def quick_content(payload: bytes) -> bool | None:
    """Whether one plain content event carries text, read without parsing JSON; None when it
    needs a full parse (usage, errors, reasoning, other shapes or spacing). An empty text field
    (a chat role chunk, a finish chunk) is not a token."""
    count = plain_content_count([payload])
    return None if count is None else count == 1


def plain_content_count(payloads: list[bytes]) -> int | None:
    """How many of `payloads` carry generated text, when every one of them is a plain content
    event (one compact text field each, no usage, error, reasoning or [DONE]); else None and
    the caller reads them one by one. One network read usually holds only such events, so this
    keeps a load test's per-token cost to a few byte scans."""
    blob = b"\x00".join(payloads)
    if b'"usage"' in blob or b'"error"' in blob or b"reasoning" in blob or b"[DONE]" in blob:
        return None
    for payload in payloads:
        if not (payload.startswith(b"{") and payload.endswith(b"}")):
            return None
    key = _TEXT_KEYS[0] if _TEXT_KEYS[0] in blob else _TEXT_KEYS[1]
    total = blob.count(key)
    if total != len(payloads):
        return None
    return total - blob.count(key + b'"')


def read_event(payload: bytes) -> Event:
    """Interpret one `data:` payload; `MalformedStream` when it is not such JSON."""
    if payload == b"[DONE]":
        return DONE
    try:
        obj = json.loads(payload)
    except ValueError as exc:
        raise MalformedStream(f"not JSON: {payload[:80]!r}") from exc
    if not isinstance(obj, dict):
        raise MalformedStream(f"not a JSON object: {payload[:80]!r}")
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
