"""Pure parts of bench: SSE framing, metric formulas, schedules, /metrics parsing, workloads."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest

from servetune.errors import UsageError
from servetune.measure import metrics, schedule, server_metrics, workload
from servetune.measure.results import write_atomic
from servetune.measure.stream import DONE, MalformedStream, SseParser, read_event

COMPLETION = b'data: {"choices":[{"index":0,"text":" hi","finish_reason":null}]}\n\n'
ROLE = b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
CHAT = b'data: {"choices":[{"index":0,"delta":{"content":" hi"}}]}\n\n'
USAGE = (
    b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}\n\n'
)


def events(stream: bytes, split_every: int) -> list[bytes]:
    parser = SseParser()
    out: list[bytes] = []
    for i in range(0, len(stream), split_every):
        out.extend(parser.feed(stream[i : i + split_every]))
    return out


@pytest.mark.parametrize("split_every", [1, 3, 7, 64, 10_000])
def test_sse_framing_survives_any_split(split_every: int) -> None:
    stream = COMPLETION + b": keep-alive comment\n\n" + COMPLETION + USAGE + b"data: [DONE]\n\n"
    payloads = events(stream, split_every)
    assert len(payloads) == 4
    assert payloads[-1] == b"[DONE]"
    assert [read_event(p).content for p in payloads[:2]] == [" hi", " hi"]


def test_sse_crlf_and_multiline_data() -> None:
    parser = SseParser()
    got = parser.feed(b'event: x\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: [DONE]\r\n\r\n')
    assert got == [b'{"a":\n1}', b"[DONE]"]


def test_cut_stream_leaves_pending_bytes() -> None:
    parser = SseParser()
    assert parser.feed(COMPLETION + COMPLETION[:20]) == [COMPLETION[6:-2]]
    assert parser.pending == COMPLETION[:20]


def test_events_content_role_usage_done_and_errors() -> None:
    assert read_event(ROLE[6:-2]).content == ""  # a role-only delta is not a token
    assert read_event(CHAT[6:-2]).content == " hi"
    usage = read_event(USAGE[6:-2])
    assert (usage.completion_tokens, usage.prompt_tokens, usage.content) == (2, 5, "")
    assert read_event(b"[DONE]") is DONE
    assert read_event(b'{"error": {"message": "boom"}}').error == "boom"
    reasoning = b'{"choices":[{"delta":{"reasoning_content":"hmm"}}]}'
    assert read_event(reasoning).content == "hmm"
    with pytest.raises(MalformedStream):
        read_event(b"{not json")
    with pytest.raises(MalformedStream):
        read_event(b"[1, 2]")


def test_distribution_matches_numpy_linear_percentiles() -> None:
    values = [5.0, 1.0, 3.0, 2.0, 4.0, 10.0]
    dist = metrics.distribution(values)
    # numpy.percentile(values, 90) = 7.5, (…, 50) = 3.5, (…, 99) = 9.75; numpy.std = 2.9103…
    assert dist.percentiles[90] == pytest.approx(7.5)
    assert dist.median == pytest.approx(3.5)
    assert dist.percentiles[99] == pytest.approx(9.75)
    assert dist.std == pytest.approx(2.9107, abs=1e-3)
    assert (dist.count, dist.min, dist.max, dist.mean) == (6, 1.0, 10.0, 25 / 6)


def test_empty_distribution_is_none_not_zero() -> None:
    dist = metrics.distribution([])
    assert (dist.count, dist.mean, dist.median, dist.max) == (0, None, None, None)


def test_request_formulas() -> None:
    assert metrics.ttft(1.0, 1.25) == pytest.approx(0.25)
    assert metrics.e2el(1.0, 2.0) == pytest.approx(1.0)
    assert metrics.tpot(1.0, 0.25, 4) == pytest.approx(0.25)  # (1.0 - 0.25) / 3
    assert metrics.tpot(1.0, 0.25, 1) is None
    assert metrics.itl_gaps([0.0, 0.1, 0.3]) == pytest.approx([0.1, 0.2])
    # A 0.3 s gap before a 3-token chunk is three 0.1 s per-token gaps.
    assert metrics.itl_per_token([0.1, 0.3], [1, 3]) == pytest.approx([0.1, 0.1, 0.1, 0.1])


def test_throughput_peaks_and_concurrency() -> None:
    assert metrics.throughput(10, 2.0) == 5.0
    assert metrics.throughput(10, 0.0) is None
    assert metrics.peak_per_window([(0.1, 1), (0.5, 2), (1.2, 1)]) == 3.0
    assert metrics.peak_concurrency([(0, 2), (1, 3), (2, 4), (2.5, 3)]) == 3  # end before start


def test_goodput_slo() -> None:
    slo = {"ttft": 100.0, "tpot": 20.0}
    assert metrics.meets_slo(slo, 0.09, 0.019, 1.0)
    assert not metrics.meets_slo(slo, 0.11, 0.019, 1.0)
    assert metrics.meets_slo(slo, 0.09, None, 1.0)  # 1-token output: TPOT counts as 0


def test_schedule_is_seeded_and_rescaled() -> None:
    a = schedule.arrival_times(100, 10.0, 1.0, random.Random(3))
    b = schedule.arrival_times(100, 10.0, 1.0, random.Random(3))
    assert a == b
    assert a[-1] == pytest.approx(10.0)  # last arrival at n / rate, as vLLM does
    assert all(x < y for x, y in itertools.pairwise(a))
    even = schedule.arrival_times(4, 2.0, math.inf, random.Random(0))
    assert even == pytest.approx([0.5, 1.0, 1.5, 2.0])
    assert schedule.arrival_times(3, math.inf, 1.0, random.Random(0)) == [0.0, 0.0, 0.0]
    timed = list(schedule.arrivals_until(2.0, 10.0, math.inf, random.Random(0)))
    assert len(timed) == 19 and timed[-1] < 2.0


def test_burstiness_changes_the_spread() -> None:
    def cv(b: float) -> float:
        times = schedule.arrival_times(2000, 10.0, b, random.Random(1))
        gaps = metrics.itl_gaps([0.0, *times])
        d = metrics.distribution(gaps)
        assert d.std is not None and d.mean is not None
        return d.std / d.mean

    assert cv(0.25) > 1.5 > cv(1.0) > 0.8 > cv(4.0)  # gamma CV = 1/sqrt(shape)


METRICS_TEXT = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="tiny"} 3.0
vllm:num_requests_running{engine="1",model_name="tiny"} 2.0
vllm:num_requests_waiting{engine="0",model_name="tiny"} 7.0
vllm:kv_cache_usage_perc{engine="0",model_name="tiny"} 0.5
vllm:num_preemptions_total{engine="0",model_name="tiny"} 4.0
vllm:prompt_tokens_total{engine="0",model_name="tiny"} 100.0
"""


def test_metrics_parse_and_summary() -> None:
    first = server_metrics.sample(0.0, METRICS_TEXT)
    assert (first.running, first.waiting, first.kv_cache_usage) == (5.0, 7.0, 0.5)
    later = server_metrics.sample(1.0, METRICS_TEXT.replace("} 4.0", "} 9.0"))
    summary = server_metrics.summarize([first, later])
    assert summary.preemptions == 5.0
    assert summary.peak_waiting == 7.0
    old = server_metrics.sample(0.0, 'vllm:gpu_cache_usage_perc{model_name="m"} 0.25\n')
    assert old.kv_cache_usage == 0.25 and old.running is None
    assert server_metrics.summarize([]).peak_running is None


def test_jsonl_workload(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"prompt": "hello"}\n\n{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}\n',
        encoding="utf-8",
    )
    prompts = workload.jsonl_prompts(path, default_output=64)
    assert prompts[0].text == "hello" and prompts[0].max_tokens == 64
    assert prompts[1].messages is not None and prompts[1].max_tokens == 5
    path.write_text('{"prompt": "ok"}\n{"nope": 1}\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"p\.jsonl:2"):
        workload.jsonl_prompts(path, 64)
    path.write_text("{broken\n", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid JSON"):
        workload.jsonl_prompts(path, 64)


def test_sharegpt_workload(tmp_path: Path) -> None:
    data = [
        {
            "conversations": [
                {"from": "human", "value": "What is up?"},
                {"from": "gpt", "value": "one two three four five six seven eight nine ten"},
            ]
        },
        {"conversations": [{"from": "human", "value": "lonely"}]},
        {"id": "no conversations"},
    ]
    path = tmp_path / "sg.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    prompts = workload.sharegpt_prompts(path, None)
    assert len(prompts) == 1
    assert prompts[0].text == "What is up?" and prompts[0].max_tokens == 13  # 10 words x 1.3
    assert workload.sharegpt_prompts(path, 50)[0].max_tokens == 50
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError):
        workload.sharegpt_prompts(path, None)


def test_random_workload_without_a_tokenizer_is_one_word_per_token() -> None:
    import asyncio

    spec = workload.WorkloadSpec(
        num_prompts=5, random_input_len=20, random_output_len=7, random_prefix_len=4
    )
    prompts, mode = asyncio.run(workload.random_prompts(spec, random.Random(0)))
    assert mode == "approximate"
    assert all(p.text is not None and len(p.text.split()) == 24 for p in prompts)
    assert all(p.max_tokens == 7 and p.input_len == 24 for p in prompts)
    texts = [p.text for p in prompts]
    assert len({t.split()[:4].__repr__() for t in texts if t}) == 1  # a shared prefix


def test_write_atomic(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "r.json"
    write_atomic(path, {"a": 1})
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1}
    with pytest.raises(ValueError, match="Out of range float"):
        write_atomic(path, {"a": math.nan})
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1}  # the old file is intact
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_chunked_decoder_at_every_split() -> None:
    from servetune.measure.chunked import ChunkedDecoder

    body = b"data: one\n\n" * 3 + b"x" * 300
    wire = b""
    for start in range(0, len(body), 37):
        piece = body[start : start + 37]
        wire += f"{len(piece):x};ext=1\r\n".encode() + piece + b"\r\n"
    wire += b"0\r\n\r\n"
    for split in (1, 2, 5, 64, len(wire)):
        decoder = ChunkedDecoder()
        out = b"".join(decoder.feed(wire[i : i + split]) for i in range(0, len(wire), split))
        assert out == body
        assert decoder.done and decoder.clean_end


def test_chunked_decoder_rejects_a_bad_size() -> None:
    from servetune.measure.chunked import ChunkedDecoder, MalformedChunk

    with pytest.raises(MalformedChunk, match="bad chunk size"):
        ChunkedDecoder().feed(b"zz\r\nhello\r\n")
