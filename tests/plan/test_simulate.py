"""The scheduler simulation: exact timings on small cases, vLLM's limits, and the laws a queue obeys."""

from __future__ import annotations

import statistics

import pytest

from servetune.plan import simulate
from servetune.plan.simulate import Limits, Load, Step, simulate_continuous, simulate_static


def cost(step: Step) -> float:
    """10 ms per step plus 0.1 ms per prompt token: easy to reason about by hand."""
    return 0.010 + 0.0001 * step.prefill_tokens


def test_one_request_prefills_in_one_step_then_decodes_one_token_per_step() -> None:
    result = simulate_continuous(Load(100, 10, 1, concurrency=1), Limits(256, 2048, None), cost)
    (req,) = result.requests
    assert req.first_token - req.arrival == pytest.approx(0.020)  # 10 ms + 100 x 0.1 ms
    assert req.finish - req.arrival == pytest.approx(0.020 + 9 * 0.010)
    assert result.steps == 10


def test_a_prompt_larger_than_the_budget_is_chunked_over_steps() -> None:
    result = simulate_continuous(Load(5000, 2, 1, concurrency=1), Limits(256, 2048, None), cost)
    (req,) = result.requests
    # chunks of 2048, 2048, 904 tokens: three steps before the first token
    assert req.first_token == pytest.approx(3 * 0.010 + 5000 * 0.0001)
    assert result.steps == 4


def test_max_num_seqs_caps_the_running_requests_and_the_rest_wait() -> None:
    result = simulate_continuous(Load(200, 50, 200, concurrency=64), Limits(16, 8192, None), cost)
    assert result.peak_running == 16
    assert result.peak_waiting == 64 - 16
    assert len(result.requests) == 200


def test_a_small_kv_cache_preempts_and_still_finishes_every_request() -> None:
    roomy = simulate_continuous(Load(500, 300, 100, concurrency=40), Limits(256, 8192, None), cost)
    tight = simulate_continuous(Load(500, 300, 100, concurrency=40), Limits(256, 8192, 8000), cost)
    assert roomy.preemptions == 0
    assert tight.preemptions > 0
    assert len(tight.requests) == 100
    assert tight.duration_s > roomy.duration_s


def test_closed_loop_obeys_littles_law() -> None:
    load = Load(300, 100, 600, concurrency=32, range_ratio=0.5, seed=3)
    result = simulate_continuous(load, Limits(256, 2048, None), cost)
    throughput = len(result.requests) / result.duration_s
    mean_latency = statistics.mean(r.finish - r.arrival for r in result.requests)
    assert throughput * mean_latency == pytest.approx(32, rel=0.05)


def test_continuous_batching_beats_static_on_mixed_lengths() -> None:
    load = Load(500, 200, 400, concurrency=32, range_ratio=0.9, seed=1)
    limits = Limits(64, 4096, None)
    taxi, bus = simulate_continuous(load, limits, cost), simulate_static(load, limits, cost)
    assert len(taxi.requests) == len(bus.requests) == 400
    taxi_ttft = statistics.mean(r.first_token - r.arrival for r in taxi.requests)
    bus_ttft = statistics.mean(r.first_token - r.arrival for r in bus.requests)
    assert bus.duration_s > 1.2 * taxi.duration_s  # every seat waits for the longest reply
    assert bus_ttft > 2 * taxi_ttft


def test_static_batches_deliver_every_reply_at_the_end_of_the_batch() -> None:
    load = Load(100, 20, 8, concurrency=4, range_ratio=0.5, seed=2)
    bus = simulate_static(load, Limits(4, 4096, None), cost)
    ends = sorted({round(r.finish, 9) for r in bus.requests})
    assert len(ends) == 2  # two trips of four passengers


def test_open_loop_poisson_arrivals_are_seeded() -> None:
    load = Load(200, 50, 300, request_rate=20.0, seed=5)
    a = simulate_continuous(load, Limits(256, 2048, None), cost)
    b = simulate_continuous(load, Limits(256, 2048, None), cost)
    assert [r.arrival for r in a.requests] == [r.arrival for r in b.requests]
    assert 300 / 20.0 * 0.8 < a.duration_s < 300 / 20.0 * 1.3


def test_the_admission_delay_adds_to_ttft_and_takes_no_engine_time() -> None:
    load, limits = Load(100, 10, 3, concurrency=1), Limits(256, 2048, None)
    plain = simulate_continuous(load, limits, cost)
    delayed = simulate_continuous(load, limits, cost, admit_delay_s=0.050)
    for a, b in zip(plain.requests, delayed.requests, strict=True):
        assert b.first_token - b.arrival == pytest.approx(a.first_token - a.arrival + 0.050)
        assert b.finish - b.first_token == pytest.approx(a.finish - a.first_token)
    assert delayed.steps == plain.steps
    bus = simulate_static(load, limits, cost, admit_delay_s=0.050)
    assert min(r.first_token - r.arrival for r in bus.requests) >= 0.050


def test_replies_can_vary_more_than_prompts() -> None:
    load = Load(200, 100, 200, concurrency=8, output_range_ratio=0.5, seed=4)
    result = simulate_continuous(load, Limits(256, 4096, None), cost)
    assert {r.input_len for r in result.requests} == {200}
    outputs = [r.output_len for r in result.requests]
    assert min(outputs) >= 50 and max(outputs) <= 150 and len(set(outputs)) > 20


def test_a_cache_without_a_single_block_runs_nothing_and_reports_it_full() -> None:
    result = simulate_continuous(Load(100, 10, 5, concurrency=2), Limits(16, 2048, 8), cost)
    assert result.requests == () and result.kv_peak_fraction == 1.0


@pytest.mark.parametrize(
    ("load", "limits"),
    [
        (Load(300, 120, 200, concurrency=24, range_ratio=0.5, seed=1), Limits(256, 2048, None)),
        (Load(500, 300, 100, concurrency=40), Limits(256, 8192, 8000)),  # preempts
        (Load(200, 80, 300, request_rate=30.0, seed=2), Limits(16, 1024, 20000)),
    ],
)
def test_the_decode_fast_path_gives_the_same_timings_as_stepping(
    load: Load, limits: Limits, monkeypatch: pytest.MonkeyPatch
) -> None:
    def context_cost(step: Step) -> float:  # depends on the context read, as decode steps do
        return 0.010 + 0.0001 * step.prefill_tokens + 1e-7 * step.decode_context

    fast = simulate_continuous(load, limits, context_cost)
    monkeypatch.setattr(simulate, "_decode_run", lambda *a, now, next_arrival: (now, 0))
    slow = simulate_continuous(load, limits, context_cost)
    assert fast.steps == slow.steps and fast.preemptions == slow.preemptions
    for name in ("mean_step", "peak_running", "peak_waiting", "kv_peak_fraction",
                 "budget_full_fraction", "queued_with_free_seats"):  # fmt: skip
        assert getattr(fast, name) == getattr(slow, name), name
    assert fast.mean_running == pytest.approx(slow.mean_running)
    for a, b in zip(fast.requests, slow.requests, strict=True):
        assert (a.arrival, a.first_token, a.finish) == pytest.approx(
            (b.arrival, b.first_token, b.finish), rel=1e-9
        )


def test_prefix_caching_gives_a_preempted_request_its_prefix_back() -> None:
    """Long prompts into a cache that holds a few: without prefix caching every preemption
    recomputes the whole prompt; with it (V1's default) only what was evicted."""
    load = Load(6000, 200, 12, concurrency=12)
    plain = simulate_continuous(load, Limits(256, 2048, 30000), cost)
    cached = simulate_continuous(load, Limits(256, 2048, 30000, prefix_caching=True), cost)
    assert plain.preemptions > 10 * max(cached.preemptions, 1)
    assert len(cached.requests) == len(plain.requests) == 12
    assert cached.duration_s < 0.5 * plain.duration_s
