"""StreamTally: counting a stream's events from the bytes must agree with parsing every event.

Test data: vLLM 0.32.0's own bytes (tests/data/streams/vllm-stream-0.32.0.txt, captured from the
real server; see the header of that file), and generated streams in the shapes servers send:
compact and spaced JSON, running usage on every event, empty texts, quotes, backslashes and
non-ASCII text (raw UTF-8 as vLLM sends it, and \\u escapes), reasoning deltas, errors, comments.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import pytest
from vllm_capture import captured_streams

from servetune.measure import stream
from servetune.measure.stream import MalformedStream, StreamFailed, StreamTally, read_event


def _captured() -> list[list[bytes]]:
    """The captured completions and chat streams, each as its SSE events (with framing)."""
    return [[line + b"\n\n" for line in lines] for lines in captured_streams()]


@dataclass
class Reference:
    """What a tally must record, computed by parsing every event in full."""

    times: list[float] = field(default_factory=list)
    blanks: list[float] = field(default_factory=list)  # empty-text token events before any text
    chunk_tokens: list[int] = field(default_factory=list)
    prompt: int | None = None
    completion: int | None = None
    done: bool = False

    def event(self, at: float, payload: bytes) -> None:
        event = read_event(payload)
        if event.done:
            self.done = True
            return
        if event.content:
            self.times.append(at)
            if event.completion_tokens is not None:
                self.chunk_tokens.append(event.completion_tokens)
        elif not self.times and stream._is_blank(json.loads(payload)):
            self.blanks.append(at)
        if event.completion_tokens is not None:
            self.completion = event.completion_tokens
        if event.prompt_tokens is not None:
            self.prompt = event.prompt_tokens


class Counter:
    output_tokens = 0


def _tally(pieces: list[tuple[float, bytes]]) -> tuple[StreamTally, Counter]:
    counter = Counter()
    tally = StreamTally(origin=1.0, counter=counter)
    for at, data in pieces:
        tally.feed(at, data)
    return tally, counter


@pytest.mark.parametrize("split", [None, 1, 5, 64, 10_000])
def test_the_captured_vllm_streams(split: int | None) -> None:
    completions, chat = _captured()
    for events, tokens, prompt in ((completions, 4, 5), (chat, 3, 12)):
        if split is None:  # one event per read, as vLLM writes them
            pieces = [(float(i + 2), e) for i, e in enumerate(events)]
        else:
            blob = b"".join(events)
            pieces = [(2.0, blob[i : i + split]) for i in range(0, len(blob), split)]
        tally, counter = _tally(pieces)
        assert len(tally.content_times) == tokens == counter.output_tokens
        assert (tally.prompt_tokens, tally.completion_tokens, tally.done) == (prompt, tokens, True)
        if split is None:  # times are arrival minus origin; chat's role chunk is no token
            first = 1.0 if events is completions else 2.0
            assert tally.content_times == [first + i for i in range(tokens)]


def _vllm_event(text: str, *, spaced: bool, usage: tuple[int, int] | None, finish: bool) -> bytes:
    choice = {
        "index": 0,
        "text": text,
        "logprobs": None,
        "finish_reason": "length" if finish else None,
        "stop_reason": None,
        "prompt_token_ids": None,
        "token_ids": None,
    }
    obj: dict[str, object] = {
        "id": "cmpl-94a0962db627fede",
        "object": "text_completion",
        "created": 1796051462,
        "model": "tiny",
        "choices": [choice],
    }
    if usage is not None:
        obj["usage"] = {
            "prompt_tokens": usage[0],
            "total_tokens": sum(usage),
            "completion_tokens": usage[1],
        }
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(obj, separators=separators, ensure_ascii=False).encode()


TEXTS = [" tok", "", 'say "hi"', "a\\b", "é", "日本", "\n", " end\\"]
ODD = [
    b'{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
    b'{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}',
    b'{"choices":[{"index":0,"text":" \\u00e9"}]}',
    b'{"choices":[{"index":0,"text":" x"}],"usage":null}',
    b'{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":7,"total_tokens":10}}',
]


def _random_stream(rng: random.Random) -> list[bytes]:
    spaced, running = rng.random() < 0.3, rng.random() < 0.4
    payloads, done = [], 0
    for _ in range(rng.randrange(1, 40)):
        if rng.random() < 0.1:
            payloads.append(rng.choice(ODD))
            continue
        text = rng.choice(TEXTS) if rng.random() < 0.3 else " tok"
        done += 1
        usage = (5, done) if running else None
        payloads.append(_vllm_event(text, spaced=spaced, usage=usage, finish=rng.random() < 0.05))
    payloads.append(b"[DONE]")
    events = [b"data: " + p + b"\n\n" for p in payloads]
    if rng.random() < 0.2:
        events.insert(rng.randrange(len(events)), b": keep-alive\n\n")
    return events


def test_fast_counting_agrees_with_parsing_every_event() -> None:
    rng = random.Random(7)
    for _ in range(400):
        events = _random_stream(rng)
        reference = Reference()
        for i, event in enumerate(events):
            if event.startswith(b"data: "):
                reference.event(float(i), event[6:-2])
        per_event = rng.random() < 0.5
        if per_event:
            pieces = [(float(i), e) for i, e in enumerate(events)]
        else:  # random splits; times then differ from the reference, counts must not
            blob, pieces, pos = b"".join(events), [], 0
            while pos < len(blob):
                step = rng.randrange(1, 300)
                pieces.append((0.0, blob[pos : pos + step]))
                pos += step
        tally, counter = _tally(pieces)
        assert len(tally.content_times) == len(reference.times) == counter.output_tokens
        if per_event:
            assert tally.content_times == [t - 1.0 for t in reference.times]
            assert tally.blank_times == [t - 1.0 for t in reference.blanks]
        else:
            assert len(tally.blank_times) == len(reference.blanks)
        assert tally.chunk_tokens == reference.chunk_tokens
        assert (tally.prompt_tokens, tally.completion_tokens) == (
            reference.prompt,
            reference.completion,
        )
        assert tally.done == reference.done


def test_one_event_per_read_parses_only_the_unusual_events(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []
    real_load = stream._load

    def counting_load(payload: bytes) -> dict[str, object]:
        parsed.append(payload)
        return real_load(payload)

    monkeypatch.setattr(stream, "_load", counting_load)
    for spaced in (False, True):
        parsed.clear()
        events = [
            _vllm_event(" tok", spaced=spaced, usage=None, finish=i == 255) for i in range(256)
        ]
        events.append(b'{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":256}}')
        tally, _ = _tally([(1.0, b"data: " + e + b"\n\n") for e in [*events, b"[DONE]"]])
        assert len(tally.content_times) == 256 and tally.completion_tokens == 256
        assert len(parsed) == 3  # the first content event, the finish event, the usage event


def test_after_a_read_of_several_events_single_events_are_counted_from_bytes_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    framed: list[bytes] = []
    real_feed = stream.SseParser.feed

    def spy(self: stream.SseParser, data: bytes) -> list[bytes]:
        framed.append(data)
        return real_feed(self, data)

    monkeypatch.setattr(stream.SseParser, "feed", spy)
    event = b"data: " + _vllm_event(" tok", spaced=False, usage=None, finish=False) + b"\n\n"
    reads = [event, event * 2, event[:40], event[40:] + event[:7], event[7:]] + [event] * 100
    tally, counter = _tally([(float(i), data) for i, data in enumerate(reads)])
    assert len(tally.content_times) == counter.output_tokens == 105
    # Only the reads that did not hold one whole event went through the SSE framing.
    assert framed == reads[1:5]


def test_running_usage_on_every_event_is_read_without_parsing_the_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[bytes] = []
    real_load = stream._load

    def spy(payload: bytes) -> object:
        parsed.append(payload)
        return real_load(payload)

    monkeypatch.setattr(stream, "_load", spy)
    events = [_vllm_event(" tok", spaced=False, usage=(5, i + 1), finish=False) for i in range(50)]
    tally, _ = _tally([(1.0, b"data: " + e + b"\n\n") for e in events])
    assert tally.chunk_tokens == list(range(1, 51))
    assert (tally.prompt_tokens, tally.completion_tokens) == (5, 50)
    assert len(parsed) == 1


def test_errors_and_malformed_events_raise() -> None:
    tally = StreamTally()
    tally.feed(0.0, b"data: " + _vllm_event(" a", spaced=False, usage=None, finish=False) + b"\n\n")
    with pytest.raises(StreamFailed, match="overloaded"):
        tally.feed(0.1, b'data: {"error": {"message": "overloaded", "code": 503}}\n\n')
    with pytest.raises(MalformedStream):
        StreamTally().feed(0.0, b"data: {not json\n\n")
    with pytest.raises(MalformedStream):  # looks like the learned event up to the text only
        tally.feed(0.2, b'data: {"id":"cmpl-94a0962db627fede","object"\n\n')


def _framed(payloads: list[bytes]) -> list[tuple[float, bytes]]:
    return [(float(i + 2), b"data: " + p + b"\n\n") for i, p in enumerate([*payloads, b"[DONE]"])]


USAGE_8 = b'{"choices":[],"usage":{"prompt_tokens":16,"completion_tokens":8,"total_tokens":24}}'


def test_a_stream_of_tokens_that_decode_to_no_text_is_timed_by_its_token_events() -> None:
    # A random-weight model on the CPU answered 8 tokens that all decode to "" (pieces of a
    # multi-byte character): usage counts them, vLLM's client times them, so do we.
    blank = _vllm_event("", spaced=False, usage=None, finish=False)
    for reads in (
        _framed([blank] * 8 + [USAGE_8]),
        [(2.0, b"".join(d for _, d in _framed([blank] * 8 + [USAGE_8])))],
    ):
        tally, counter = _tally(reads)
        assert tally.content_times == [] and counter.output_tokens == 0
        assert len(tally.token_times()) == 8 and tally.completion_tokens == 8
    tally, _ = _tally(_framed([blank] * 8 + [USAGE_8]))
    assert tally.token_times() == [1.0 + i for i in range(8)]


def test_token_events_without_text_time_nothing_when_usage_counts_no_tokens_or_text_came() -> None:
    blank = _vllm_event("", spaced=False, usage=None, finish=False)
    tally, _ = _tally(_framed([blank] * 3))  # no usage: nothing says these were tokens
    assert tally.blank_times and tally.token_times() == []
    role = b'{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}'
    tally, _ = _tally(_framed([role, USAGE_8]))  # chat's opening role delta is no token
    assert tally.blank_times == [] and tally.token_times() == []
    chat_blank = b'{"choices":[{"index":0,"delta":{"content":""}}]}'
    tally, _ = _tally(_framed([role, chat_blank, USAGE_8]))
    assert tally.token_times() == [2.0]
    text = _vllm_event(" a", spaced=False, usage=None, finish=False)
    tally, _ = _tally(_framed([blank, blank, text, blank, USAGE_8]))  # text came: text times it
    assert tally.token_times() == tally.content_times == [3.0]
    assert tally.blank_times == [1.0, 2.0]
