"""`--workers`: the same seeded run from one process and from two gives the same run."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servetune.cli.main import main
from servetune.errors import UsageError
from servetune.measure import workers
from servetune.measure.bench import BenchConfig, BenchRun, Progress, run_bench
from servetune.measure.results import document, summarize
from servetune.measure.workload import Prompt, WorkloadSpec

from stub_server import StubBehaviour, ThreadedStub


@pytest.fixture(scope="module")
def stub() -> Iterator[ThreadedStub]:
    with ThreadedStub(StubBehaviour(ttft_ms=40, itl_ms=10)) as running:
        yield running


def config(stub: ThreadedStub, n: int, **extra: Any) -> BenchConfig:
    spec = WorkloadSpec(
        num_prompts=extra.pop("num_prompts", 40),
        random_input_len=24,
        random_output_len=6,
        random_range_ratio=0.5,
    )
    return BenchConfig(
        base_url=stub.base_url,
        model="stub",
        workload=spec,
        request_rate=20.0,
        seed=11,
        prompt_seed=5,
        workers=n,
        **extra,
    )


def schedule_of(run: BenchRun) -> list[tuple[int, float, int | None, int]]:
    return [(r.index, r.scheduled_s, r.input_len, r.max_tokens) for r in run.records]


def test_one_and_two_workers_make_the_same_run(stub: ThreadedStub) -> None:
    stub.server.reset()
    one = asyncio.run(run_bench(config(stub, 1)))
    sent_one = sorted(
        r.body["prompt"] for r in stub.server.received if r.path == "/v1/completions" and r.body
    )
    stub.server.reset()
    two = asyncio.run(run_bench(config(stub, 2)))
    sent_two = sorted(
        r.body["prompt"] for r in stub.server.received if r.path == "/v1/completions" and r.body
    )
    assert two.workers == 2 and not two.partial
    # The same requests, on the same seeded schedule, with the same prompts.
    assert schedule_of(one) == schedule_of(two)
    assert [r.index for r in two.records] == list(range(40))
    assert sent_one == sent_two and len(sent_two) == 40
    a, b = summarize(one), summarize(two)
    assert a.completed == b.completed == 40 and a.failed == b.failed == 0
    assert a.total_output_tokens == b.total_output_tokens == sum(r.max_tokens for r in one.records)
    assert a.total_input_tokens == b.total_input_tokens
    # Statistics within noise: the stub answers after 40 ms, then every 10 ms; a busy machine
    # adds delay (never removes it) and the two runs see the same machine.
    ttft = [d.median * 1000 for d in (a.ttft, b.ttft) if d.median is not None]
    tpot = [d.median * 1000 for d in (a.tpot, b.tpot) if d.median is not None]
    assert len(ttft) == len(tpot) == 2
    assert all(38 < t < 80 for t in ttft) and abs(ttft[0] - ttft[1]) < 20
    assert all(9 < t < 25 for t in tpot) and abs(tpot[0] - tpot[1]) < 6
    # Sent on schedule from both processes (a busy 2-core machine: a loose bound).
    for s in (a, b):
        assert s.send_lag.median is not None and s.send_lag.median < 0.05
    # Identical in form: the same keys everywhere in the result file.
    doc_one, doc_two = document(one, a), document(two, b)
    assert set(doc_one) == set(doc_two)
    assert set(doc_one["servetune"]) == set(doc_two["servetune"])
    assert set(doc_one["servetune"]["requests"][0]) == set(doc_two["servetune"]["requests"][0])
    assert doc_two["servetune"]["config"]["workers"] == 2


def test_the_concurrency_cap_is_shared_out(stub: ThreadedStub) -> None:
    run = asyncio.run(run_bench(config(stub, 2, max_concurrency=3, num_prompts=12)))
    summary = summarize(run)
    assert summary.completed == 12
    assert summary.max_concurrent_requests <= 3
    prompts = [Prompt(f"p{i}", None, 4, 4) for i in range(5)]
    shares = workers.jobs(
        config(stub, 2, max_concurrency=3),
        prompts,
        [0.1 * i for i in range(5)],
        continuous_usage=False,
    )
    assert [j.concurrency for j in shares] == [2, 1]
    assert [p.text for p in shares[1].prompts] == ["p1", "p3"]
    assert shares[1].arrivals == [0.1, 0.30000000000000004]


def test_a_stop_reaches_every_worker(stub: ThreadedStub) -> None:
    stub.set_behaviour(StubBehaviour(ttft_ms=40, itl_ms=200))

    async def go() -> BenchRun:
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(2.5, stop.set)
        return await run_bench(config(stub, 2, num_prompts=30), stop=stop)

    try:
        run = asyncio.run(go())
    finally:
        stub.set_behaviour(StubBehaviour(ttft_ms=40, itl_ms=10))
    assert run.partial
    assert {r.error for r in run.records if not r.ok} <= {"cancelled"}
    assert any(r.error == "cancelled" for r in run.records)


def test_worker_count() -> None:
    assert workers.worker_count("3") == 3
    assert workers.worker_count("auto") >= 1
    for bad in ("0", "-1", "two"):
        with pytest.raises(UsageError):
            workers.worker_count(bad)
    assert [workers.share(10, 3, i) for i in range(3)] == [4, 3, 3]


def test_more_workers_than_slots_is_a_usage_error_that_names_the_fields(
    stub: ThreadedStub,
) -> None:
    with pytest.raises(UsageError) as caught:
        asyncio.run(run_bench(config(stub, 3, max_concurrency=2)))
    # a library caller reads the fields; the CLI says them as flags (tests/cli)
    assert caught.value.message == "max_concurrency 2 is below workers 3"
    assert caught.value.fields == ("max_concurrency", "workers")


def test_no_workers_is_a_usage_error_that_names_the_field(stub: ThreadedStub) -> None:
    with pytest.raises(UsageError) as caught:
        asyncio.run(run_bench(config(stub, 0)))
    assert caught.value.message == "workers must be at least 1"


def test_the_cli_says_the_fields_as_its_flags(capsys: pytest.CaptureFixture[str]) -> None:
    options = ["--workers", "3", "--max-concurrency", "2"]
    argv = ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", *options]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "error: --max-concurrency 2 is below --workers 3\n"
        "hint: each worker needs at least one concurrency slot: use fewer workers\n"
    )


def test_a_bad_worker_count_reads_as_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError) as caught:
        workers.worker_count("0")
    assert caught.value.message == "workers must be a positive integer or auto, not '0'"
    assert main(["bench", "--base-url", "http://x", "--model", "m", "--workers", "0"]) == 2
    assert capsys.readouterr().err == (
        "error: argument --workers: --workers must be a positive integer or auto, not '0'\n"
        "hint: see `servetune bench --help`\n"
    )


def test_the_cli_runs_workers_into_one_result_file(stub: ThreadedStub, tmp_path: Path) -> None:
    out = tmp_path / "two.json"
    code = main(
        [
            "bench",
            "--base-url",
            stub.base_url,
            "--model",
            "stub",
            "--num-prompts",
            "10",
            "--random-input-len",
            "8",
            "--random-output-len",
            "3",
            "--request-rate",
            "50",
            "--workers",
            "2",
            "--prompt-seed",
            "4",
            "--output",
            str(out),
            "--format",
            "json",
        ]
    )
    assert code == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["completed"] == 10
    block = doc["servetune"]
    assert block["workers"] == 2 and block["config"]["workers"] == 2
    assert block["prefix_cache"]["prompt_seed"] == 4
    assert [r["index"] for r in block["requests"]] == list(range(10))


@pytest.mark.parametrize("rate", [math.inf, 40.0])
def test_timed_runs_share_out_too(stub: ThreadedStub, rate: float) -> None:
    """--duration: a closed loop (each worker keeps its slots busy) or a timed schedule."""
    extra: dict[str, Any] = {"duration_s": 1.5, "request_rate": rate, "max_concurrency": 4}
    cfg = config(stub, 2, num_prompts=10)
    run = asyncio.run(run_bench(BenchConfig(**{**cfg.__dict__, **extra})))
    indices = [r.index for r in run.records]
    assert len(indices) == len(set(indices)) > 4 and not run.partial
    assert {i % 2 for i in indices} == {0, 1}  # both workers sent
    assert all(r.ok for r in run.records if r.sent_s is not None and r.sent_s < 1.2)


def test_progress_comes_from_every_worker(stub: ThreadedStub) -> None:
    seen: list[Progress] = []
    run = asyncio.run(run_bench(config(stub, 2, num_prompts=30), progress=seen.append))
    assert len(run.records) == 30 and seen
    assert all(p.total == 30 and p.done + p.failed <= 30 for p in seen)
    assert max(p.done for p in seen) >= 5  # snapshots every 0.5 s over a 1.5 s run
    assert max(p.output_tokens for p in seen) > 0
