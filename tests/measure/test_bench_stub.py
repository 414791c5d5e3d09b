"""`bench` against a local streaming stub whose timing and faults we control exactly."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from servetune.cli.main import main
from servetune.measure.bench import BenchConfig, BenchRun, run_bench
from servetune.measure.results import Summary, document, summarize
from servetune.measure.workload import WorkloadSpec

from stub_server import StubBehaviour, ThreadedStub

SERVETUNE = Path(sys.executable).parent / "servetune"


@pytest.fixture
def stub() -> Iterator[ThreadedStub]:
    with ThreadedStub(StubBehaviour()) as running:
        yield running


def bench(stub: ThreadedStub, **overrides: Any) -> tuple[BenchRun, Summary, dict[str, Any]]:
    spec = WorkloadSpec(
        num_prompts=overrides.pop("num_prompts", 8),
        random_input_len=16,
        random_output_len=overrides.pop("output_len", 8),
    )
    config = BenchConfig(base_url=stub.base_url, model="stub", workload=spec, **overrides)
    run = asyncio.run(run_bench(config))
    summary = summarize(run)
    # the tests read keys by name, built at run time: the file as plain JSON data
    return run, summary, cast("dict[str, Any]", document(run, summary))


def test_latencies_match_the_stub_settings(stub: ThreadedStub) -> None:
    stub.set_behaviour(StubBehaviour(ttft_ms=60, itl_ms=15))
    _, summary, doc = bench(stub, max_concurrency=4)
    assert summary.completed == 8 and summary.failed == 0
    assert doc["total_output_tokens"] == 64
    # 60 ms to the first token, then 7 gaps of 15 ms: E2EL 165 ms. A busy machine only adds
    # delay (the stub shares this process): a little slack below, more above.
    assert 58 <= doc["median_ttft_ms"] <= 85
    assert 13 <= doc["median_tpot_ms"] <= 25
    assert 13 <= doc["median_itl_ms"] <= 25
    assert 160 <= doc["median_e2el_ms"] <= 220
    for key in ("p50", "p90", "p95", "p99"):
        for metric in ("ttft", "tpot", "itl", "e2el"):
            assert isinstance(doc[f"{key}_{metric}_ms"], float)
    assert doc["servetune"]["output_tokens_source"] == {"usage": 8}


@pytest.mark.parametrize("continuous", [True, False])
def test_multi_token_chunks(stub: ThreadedStub, continuous: bool) -> None:
    stub.set_behaviour(
        StubBehaviour(ttft_ms=40, itl_ms=30, tokens_per_chunk=3, continuous_usage=continuous)
    )
    _, summary, doc = bench(stub, output_len=9, max_concurrency=4)
    assert doc["total_output_tokens"] == 72  # 8 requests x 9 tokens, from usage
    # 3 chunks of 3 tokens: 2 gaps of 30 ms. TPOT spreads them over 8 tokens: 60 / 8 = 7.5 ms.
    assert doc["median_tpot_ms"] == pytest.approx(7.5, abs=2)
    assert doc["median_itl_ms"] == pytest.approx(30, abs=5)  # vLLM's ITL: one gap per chunk
    per_token = doc["servetune"]["itl_per_token_ms"]
    assert per_token["median_itl_per_token_ms"] == pytest.approx(10, abs=2)
    assert summary.itl_per_token.count == 8 * 6  # 2 gaps x 3 tokens per request


@pytest.mark.parametrize("endpoint", ["/v1/completions", "/v1/chat/completions"])
def test_tokens_that_decode_to_no_text_are_a_success_timed_by_their_events(
    stub: ThreadedStub, endpoint: str
) -> None:
    # As vLLM with a random-weight model on the CPU sometimes answers: every token "".
    stub.set_behaviour(StubBehaviour(ttft_ms=40, itl_ms=10, token_text=""))
    _, _, doc = bench(stub, endpoint=endpoint, output_len=9, max_concurrency=4)
    assert (doc["completed"], doc["failed"]) == (8, 0)
    assert doc["total_output_tokens"] == 72  # from usage
    assert 38 <= doc["median_ttft_ms"] <= 70  # the first token event (the role delta is none)
    assert doc["median_itl_ms"] == pytest.approx(10, abs=5)


def test_no_usage_and_no_text_is_still_an_empty_answer(stub: ThreadedStub) -> None:
    stub.set_behaviour(StubBehaviour(token_text="", usage=False))
    _, summary, doc = bench(stub, output_len=4, max_concurrency=4)
    assert doc["completed"] == 0 and summary.errors_by_kind == {"empty": 8}


def test_chat_role_chunk_is_not_the_first_token(stub: ThreadedStub) -> None:
    stub.set_behaviour(StubBehaviour(ttft_ms=50, itl_ms=5, role_chunk=True))
    _, _, doc = bench(stub, endpoint="/v1/chat/completions", max_concurrency=4)
    assert doc["completed"] == 8
    assert 48 <= doc["median_ttft_ms"] <= 75  # the role chunk came at once; the content at 50
    body = [r for r in stub.server.received if r.path.endswith("/completions")][-1].body
    assert body is not None and body["messages"][0]["role"] == "user"


@pytest.mark.parametrize(
    ("behaviour", "kind", "timeout"),
    [
        (StubBehaviour(cut_after_chunks=2), "stream_cut", 600.0),
        (StubBehaviour(malformed_after_chunks=2), "malformed", 600.0),
        (StubBehaviour(fail_every=2, fail_status=500), "http_500", 600.0),
        (StubBehaviour(fail_every=2, fail_status=429), "http_429", 600.0),
        (StubBehaviour(hang=True), "timeout", 0.5),
    ],
)
def test_faults_are_recorded_and_classified(
    stub: ThreadedStub, behaviour: StubBehaviour, kind: str, timeout: float
) -> None:
    stub.set_behaviour(behaviour)
    run, summary, doc = bench(stub, request_timeout_s=timeout, max_concurrency=2)
    assert summary.errors_by_kind.get(kind, 0) >= 1
    assert doc["servetune"]["errors_by_kind"] == summary.errors_by_kind
    assert summary.completed + summary.failed == 8
    failed = [r for r in run.records if r.error == kind]
    assert all(r.error_detail for r in failed)
    if kind.startswith("http_"):
        assert summary.completed == 4  # every other request succeeds, and is measured
        assert doc["mean_ttft_ms"] is not None
        assert all(r.http_status == int(kind[5:]) for r in failed)
    else:
        assert summary.completed == 0
        assert doc["mean_ttft_ms"] is None  # not measured is null, never 0
        assert doc["errors"]


def test_goodput(stub: ThreadedStub) -> None:
    stub.set_behaviour(StubBehaviour(ttft_ms=30, itl_ms=5))
    _, summary, doc = bench(stub, goodput_slo_ms={"ttft": 500.0}, max_concurrency=8)
    assert summary.good_requests == 8 and doc["request_goodput"] is not None
    _, summary, doc = bench(stub, goodput_slo_ms={"tpot": 0.5}, max_concurrency=8)
    assert summary.good_requests == 0 and doc["request_goodput"] == 0.0
    assert doc["servetune"]["goodput"]["good_share"] == 0.0


def test_warmup_is_left_out(stub: ThreadedStub) -> None:
    run, summary, doc = bench(stub, warmup=3, max_concurrency=2)
    assert len(run.records) == 11
    assert summary.completed == 8 and doc["num_prompts"] == 8
    assert sum(1 for r in doc["servetune"]["requests"] if r["warmup"]) == 3


def test_rate_schedule_and_client_lag(stub: ThreadedStub) -> None:
    run, summary, _ = bench(stub, num_prompts=20, request_rate=40.0, burstiness=math.inf)
    sent = sorted(r.sent_s for r in run.records if r.sent_s is not None)
    assert sent[-1] == pytest.approx(0.5, abs=0.05)  # 20 requests evenly at 40/s
    assert summary.achieved_rate == pytest.approx(40, rel=0.15)
    # An idle client keeps to its schedule (generous bounds: CI machines are shared).
    assert summary.send_lag.median is not None and summary.send_lag.median < 0.01
    assert summary.send_lag.percentiles[99] < 0.1
    assert all(r.scheduled_s <= (r.sent_s or 0) for r in run.records)


def test_500_streams_are_really_concurrent(stub: ThreadedStub) -> None:
    stub.set_behaviour(StubBehaviour(ttft_ms=1500, itl_ms=0))
    _, summary, _ = bench(stub, num_prompts=500, output_len=2)
    assert summary.completed == 500
    assert summary.max_concurrent_requests == 500
    # A pool capped at 100 connections would need 5 waves of 1.5 s (7.5 s); one wave is 1.5 s,
    # and the bound leaves a busy machine 3 s to open and answer 500 streams.
    assert summary.duration_s < 4.5


def test_timed_run(stub: ThreadedStub) -> None:
    spec = WorkloadSpec(num_prompts=5, random_input_len=8, random_output_len=4)
    config = BenchConfig(
        base_url=stub.base_url,
        model="stub",
        workload=spec,
        duration_s=1.0,
        request_rate=20.0,
        burstiness=math.inf,
    )
    run = asyncio.run(run_bench(config))
    sent = [r for r in run.records if r.sent_s is not None]
    assert 17 <= len(sent) <= 20  # arrivals every 50 ms before 1 s, prompts reused
    assert all(r.ok for r in sent)


def test_stop_event_gives_a_partial_run(stub: ThreadedStub) -> None:
    stub.set_behaviour(StubBehaviour(ttft_ms=50, itl_ms=50))
    spec = WorkloadSpec(num_prompts=50, random_input_len=8, random_output_len=40)
    config = BenchConfig(base_url=stub.base_url, model="stub", workload=spec, max_concurrency=5)

    async def scenario() -> BenchRun:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.5, stop.set)
        return await run_bench(config, stop=stop)

    run = asyncio.run(scenario())
    assert run.partial
    kinds = {r.error for r in run.records if r.sent_s is not None}
    assert "cancelled" in kinds
    summary = summarize(run)
    assert summary.failed >= 1 and summary.completed < 50


def test_cli_writes_the_result_and_redacts_the_key(
    stub: ThreadedStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    code = main(
        [
            "bench",
            "--base-url",
            stub.base_url + "/v1",
            "--model",
            "stub",
            "--num-prompts",
            "4",
            "--random-input-len",
            "8",
            "--random-output-len",
            "4",
            "--api-key",
            "sk-secret-123",
            "--server-command",
            "vllm serve Qwen/Qwen3-8B -tp 2 --max-num-seqs 64",
            "--label",
            "before",
            "--output",
            str(out),
            "--format",
            "json",
            "--gpus",
            "2xH100",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    summary = json.loads(printed)  # nothing but the JSON on stdout
    assert summary["completed"] == 4 and "latencies" not in summary
    text = out.read_text(encoding="utf-8")
    assert "sk-secret-123" not in text
    doc = json.loads(text)
    assert doc["label"] == "before"
    assert doc["servetune"]["config"]["api_key"] == "<redacted>"
    command = doc["servetune"]["server_command"]
    assert command["model"] == "Qwen/Qwen3-8B"
    assert command["args"] == {"--tensor-parallel-size": "2", "--max-num-seqs": "64"}
    assert command["gpus"] == "2xH100"
    assert stub.server.received[-1].headers["authorization"] == "Bearer sk-secret-123"


def test_cli_text_table_and_save_result_naming(
    stub: ThreadedStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "bench",
            "--base-url",
            stub.base_url,
            "--model",
            "org/stub",
            "--num-prompts",
            "3",
            "--random-input-len",
            "8",
            "--random-output-len",
            "4",
            "--save-result",
            "--result-dir",
            str(tmp_path),
            "--max-concurrency",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Serving Benchmark Result" in out and "Mean TTFT (ms):" in out
    (written,) = tmp_path.iterdir()
    assert written.name.startswith("servetune-infqps-concurrency2-stub-")


def test_cli_exit_1_when_every_request_fails(
    stub: ThreadedStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.set_behaviour(StubBehaviour(fail_every=1, fail_status=503))
    out = tmp_path / "r.json"
    code = main(
        [
            "bench",
            "--base-url",
            stub.base_url,
            "--model",
            "stub",
            "--num-prompts",
            "3",
            "--random-input-len",
            "8",
            "--output",
            str(out),
        ]
    )
    capsys.readouterr()
    assert code == 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["failed"] == 3 and doc["servetune"]["errors_by_kind"] == {"http_503": 3}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--base-url", "http://127.0.0.1:9", "--model", "m"], "cannot reach the server"),
        (["--base-url", "ftp://x", "--model", "m"], "not an http(s) base URL"),
        (["--base-url", "http://x", "--model", "m", "--goodput", "ttft=5"], "bad --goodput"),
        (["--base-url", "http://x", "--model", "m", "--dataset-name", "jsonl"], "--dataset-path"),
        (["--base-url", "http://x", "--model", "m", "--duration", "5"], "--request-rate"),
        (["--base-url", "http://x", "--model", "m", "--num-prompts", "0"], "positive"),
        (["--base-url", "http://x", "--model", "m", "--workers", "0"], "positive integer or auto"),
        (
            [
                "--base-url",
                "http://127.0.0.1:9",
                "--model",
                "m",
                "--workers",
                "3",
                "--max-concurrency",
                "2",
            ],
            "below --workers",
        ),
    ],
)
def test_cli_bad_usage_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_ctrl_c_writes_a_partial_result(tmp_path: Path) -> None:
    out = tmp_path / "partial.json"
    with ThreadedStub(StubBehaviour(ttft_ms=20, itl_ms=100)) as slow:
        proc = subprocess.Popen(
            [
                str(SERVETUNE),
                "bench",
                "--base-url",
                slow.base_url,
                "--model",
                "stub",
                "--num-prompts",
                "100",
                "--random-input-len",
                "8",
                "--random-output-len",
                "50",
                "--max-concurrency",
                "4",
                "--output",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        deadline = time.monotonic() + 30
        while (
            time.monotonic() < deadline
            and sum(1 for r in slow.server.received if r.path.endswith("completions")) < 6
        ):
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["servetune"]["partial"] is True
    assert "PARTIAL" in stdout.decode()
    assert doc["completed"] + doc["failed"] >= 1


def test_a_busy_client_sees_its_own_lag(stub: ThreadedStub) -> None:
    """Block the client's event loop now and then: the send lag must show it."""
    spec = WorkloadSpec(num_prompts=40, random_input_len=8, random_output_len=2)
    config = BenchConfig(
        base_url=stub.base_url, model="stub", workload=spec, request_rate=100.0, burstiness=math.inf
    )

    async def scenario() -> BenchRun:
        async def hog() -> None:
            for _ in range(15):
                time.sleep(0.03)  # a synchronous stall, as an overloaded client has
                await asyncio.sleep(0.01)

        hogger = asyncio.create_task(hog())
        run = await run_bench(config)
        await hogger
        return run

    summary = summarize(asyncio.run(scenario()))
    assert summary.send_lag.percentiles[99] > 0.005
    assert summary.client_saturated


def test_progress_snapshots_and_the_live_line(stub: ThreadedStub) -> None:
    import io

    from servetune.cli.bench import _LiveLine
    from servetune.measure.bench import Progress

    stub.set_behaviour(StubBehaviour(ttft_ms=200, itl_ms=50))
    spec = WorkloadSpec(num_prompts=6, random_input_len=8, random_output_len=6)
    config = BenchConfig(base_url=stub.base_url, model="stub", workload=spec, max_concurrency=3)
    seen: list[Progress] = []
    screen = io.StringIO()
    live = _LiveLine(screen)

    def progress(p: Progress) -> None:
        seen.append(p)
        live(p)

    asyncio.run(run_bench(config, progress=progress))
    live.close()
    assert seen and all(p.total == 6 for p in seen)
    assert max(p.in_flight for p in seen) <= 3
    assert "done" in screen.getvalue() and "tok/s" in screen.getvalue()


def test_an_unwritable_output_path_keeps_the_result(
    stub: ThreadedStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    code = main(
        [
            "bench",
            "--base-url",
            stub.base_url,
            "--model",
            "stub",
            "--num-prompts",
            "2",
            "--random-input-len",
            "8",
            "--output",
            str(blocker / "r.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    saved = Path(err.split("the result was saved to ")[1].split()[0].rstrip(";"))
    assert json.loads(saved.read_text(encoding="utf-8"))["completed"] == 2
    saved.unlink()
