"""`postmortem` on real stats lines of several releases, on /metrics exports and bench results,
through the command line (text in both languages, JSON schema, plot)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from servetune.cli.main import main
from servetune.monitor import postmortem
from servetune.monitor.caps import Caps, from_command

Page = Callable[..., str]


def _analyse(data: Path, *names: str, caps: Caps | None = None) -> postmortem.Postmortem:
    sources = [
        postmortem.read_source(name, (data / name).read_text(encoding="utf-8"), 0.0)
        for name in names
    ]
    return postmortem.analyse(postmortem.combine(sources), caps or Caps())


@pytest.mark.parametrize(
    ("name", "limit"),
    [
        ("v0-one-request.log", "none"),
        ("v0-busy-no-queue.log", "none"),  # 16 running, KV at 92-95%, nobody waiting
        ("v1-busy-no-queue.log", "none"),
        ("v1-docker-timestamps.log", "none"),  # one request waiting once is no queue
        ("v1-cpu-s390x.log", "none"),
        ("v1-idle-spec-decode.log", "none"),
        ("v1-kv-full-queue.log", "kv-cache"),
        ("v1-cache-full.log", "kv-cache"),
        ("v1-queue-kv-room.log", "unknown"),  # a queue with KV room: which cap, unconfirmed
        ("v0-pending.log", "unknown"),
    ],
)
def test_the_dominant_limit_of_each_excerpt(data: Path, name: str, limit: str) -> None:
    assert _analyse(data, name).dominant == limit


def test_an_incident_is_a_queue_with_its_depth(data: Path) -> None:
    result = _analyse(data, "v1-kv-full-queue.log")
    (incident,) = result.incidents
    assert (incident.peak_waiting, incident.limit) == (43, "kv-cache")
    assert result.when(incident.start) == "05-19 10:13:01"
    assert result.when(incident.end) == "05-19 10:13:51"
    assert _analyse(data, "v1-docker-timestamps.log").incidents == ()


def test_the_serve_command_tells_which_cap_held_the_queue(data: Path) -> None:
    budget = from_command(
        "vllm serve m --max-num-seqs 256 --max-num-batched-tokens 2048",
        gpus=None,
        vllm_version=None,
    )
    assert _analyse(data, "v1-queue-kv-room.log", caps=budget).dominant == "max-num-batched-tokens"
    seqs = from_command("vllm serve m --max-num-seqs 34", gpus=None, vllm_version=None)
    result = _analyse(data, "v1-queue-kv-room.log", caps=seqs)
    assert {i.limit for i in result.intervals} == {"max-num-batched-tokens", "max-num-seqs"}


def test_a_pause_between_two_logs_is_idle(data: Path) -> None:
    result = _analyse(data, "v1-pasted-together.log", "v1-busy-no-queue.log")
    quiet = [i for i in result.intervals if i.evidence.key == "evidence.none:quiet"]
    assert [(result.when(i.start), result.when(i.end)) for i in quiet] == [
        ("07-28 06:41:19", "07-28 06:41:59")
    ]


def test_a_range_query_export(make_page: Page) -> None:
    doc = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": "vllm:num_requests_running", "engine": "0"},
                    "values": [[1000 + 15 * i, str(v)] for i, v in enumerate([2, 32, 32, 32, 32])],
                },
                {
                    "metric": {"__name__": "vllm:num_requests_waiting", "engine": "0"},
                    "values": [[1000 + 15 * i, str(v)] for i, v in enumerate([0, 9, 12, 14, 11])],
                },
                {
                    "metric": {"__name__": "vllm:kv_cache_usage_perc", "engine": "0"},
                    "values": [[1000 + 15 * i, "0.4"] for i in range(5)],
                },
            ],
        },
    }
    source = postmortem.read_source("export.json", json.dumps(doc), 0.0)
    assert source.kind == "prometheus-range"
    result = postmortem.analyse(source, Caps(max_num_seqs=32))
    assert result.dominant == "max-num-seqs"
    assert (result.start, result.end) == (1000.0, 1060.0)


def test_a_bench_result_file() -> None:
    samples = [
        {
            "t_s": float(t),
            "running": 4.0,
            "waiting": 6.0,
            "kv_cache_usage": 0.99,
            "preemptions_total": 3.0 + t,
        }
        for t in range(5)
    ]
    doc = {"servetune": {"server_metrics": {"available": True, "samples": samples}}}
    source = postmortem.read_source("run.json", json.dumps(doc), 0.0)
    assert source.kind == "bench-result"
    assert postmortem.analyse(source, Caps()).dominant == "kv-cache"


def test_snapshots_of_metrics_give_rates_between_them(tmp_path: Path, make_page: Page) -> None:
    one = postmortem.read_source("a.txt", make_page(running=4, preemptions=0), 100.0)
    two = postmortem.read_source("b.txt", make_page(running=4, preemptions=10), 110.0)
    combined = postmortem.combine([one, two])
    assert combined.points[-1].preemptions_per_s == 1.0


def test_an_unknown_file_is_bad_usage(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("nothing here\n")
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stderr", err)
        assert main(["postmortem", str(path)]) == 2
    assert "no vLLM stats lines" in err.getvalue()


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


def test_the_command_line(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = str(data / "v1-kv-full-queue.log")
    text = _run(["postmortem", log, "--lang", "en"], capsys)
    assert text.splitlines()[0] == (
        "Postmortem of v1-kv-full-queue.log: 05-19 10:13:01 to 05-19 10:13:51"
    )
    assert "Dominant limit: kv-cache (the KV cache is full)" in text
    zh = _run(["postmortem", log, "--lang", "zh-TW"], capsys)
    assert "主要瓶頸：kv-cache（KV cache 滿了）" in zh
    doc = json.loads(_run(["postmortem", log, "--format", "json", "--lang", "en"], capsys))
    assert _run(["postmortem", log, "--format", "json", "--lang", "zh-TW"], capsys) == (
        json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    )
    assert list(doc) == [
        "schema_version",
        "source",
        "start",
        "end",
        "intervals",
        "incidents",
        "dominant",
        "next_step",
    ]
    assert doc["incidents"] == [
        {
            "start": "05-19 10:13:01",
            "end": "05-19 10:13:51",
            "peak_waiting": 43,
            "limit": "kv-cache",
        }
    ]
    assert set(doc["intervals"][0]) == {"start", "end", "limit", "evidence"}


def test_the_plot(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "timeline.png"
    _run(["postmortem", str(data / "v1-kv-full-queue.log"), "--plot", str(plot)], capsys)
    assert plot.read_bytes().startswith(b"\x89PNG")
