"""Reading /metrics pages: the real vLLM 0.32.0 page, older and Ray spellings, windowed rates and
percentiles from the server's buckets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from servetune.measure import server_metrics
from servetune.monitor import window
from servetune.monitor.scrape import Histogram, canonical, read

Page = Callable[..., str]


def _real(data: Path) -> str:
    return (data / "metrics-0.32.0.txt").read_text(encoding="utf-8")


def test_the_real_page(data: Path) -> None:
    scrape = read(_real(data))
    assert (scrape.running, scrape.waiting, scrape.kv_cache_usage) == (0.0, 0.0, 0.0)
    assert scrape.deferred == 0.0
    assert scrape.swapped is None  # V0 only
    assert scrape.counters == {
        "preemptions": 0.0,
        "prompt_tokens": 36.0,
        "generation_tokens": 22.0,
        "admission_rejections": 0.0,
    }
    assert set(scrape.histograms) == {"ttft", "itl", "queue", "step_tokens"}
    ttft = scrape.histograms["ttft"]
    assert (ttft.count, ttft.buckets[-1]) == (4.0, (float("inf"), 4.0))


def test_percentiles_read_the_buckets_as_prometheus_does(data: Path) -> None:
    ttft = read(_real(data)).histograms["ttft"]
    # 2 of 4 under 10 ms, the 4th under 40 ms: the median is the 0.01 bound, p99 interpolated.
    assert window.quantile(ttft, 0.5) == pytest.approx(0.01)
    assert window.quantile(ttft, 0.99) == pytest.approx(0.02 + 0.02 * 0.96)
    above = Histogram(((1.0, 0.0), (float("inf"), 3.0)), 3.0, 9.0)
    assert window.quantile(above, 0.5) == 1.0  # in the +Inf bucket: the highest finite bound
    assert window.quantile(Histogram(((float("inf"), 0.0),), 0.0, 0.0), 0.5) is None


def test_older_names_and_the_newest_wins(data: Path) -> None:
    page = _real(data)
    old = page.replace("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc").replace(
        "vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"
    )
    line = 'gpu_cache_usage_perc{engine="0",model_name="tiny"}'
    scrape = read(old.replace(f"{line} 0.0", f"{line} 0.5"))
    assert scrape.kv_cache_usage == 0.5
    assert scrape.histograms["itl"].count == 18.0
    both = page + 'vllm:gpu_cache_usage_perc{engine="0",model_name="tiny"} 0.7\n'
    assert read(both).kv_cache_usage == 0.0  # kv_cache_usage_perc, the newer name


def test_ray_spelling(data: Path) -> None:
    assert canonical("ray_vllm:num_requests_running") == "vllm:num_requests_running"
    assert canonical("ray_vllm_num_requests_waiting") == "vllm:num_requests_waiting"
    page = _real(data)
    assert read(page.replace("vllm:", "ray_vllm:")) == read(page)


def test_engines_add_up_but_the_kv_cache_is_the_fullest(data: Path) -> None:
    page = _real(data) + (
        'vllm:num_requests_running{engine="1",model_name="tiny"} 3.0\n'
        'vllm:kv_cache_usage_perc{engine="1",model_name="tiny"} 0.4\n'
    )
    scrape = read(page)
    assert (scrape.running, scrape.kv_cache_usage) == (3.0, 0.4)


def test_the_bench_reading_is_unchanged(data: Path) -> None:
    assert server_metrics.parse(_real(data)) == {
        "running": 0.0,
        "waiting": 0.0,
        "kv_cache_usage": 0.0,
        "preemptions_total": 0.0,
        "prefix_cache_queries": 36.0,
        "prefix_cache_hits": 0.0,
    }


def test_counters_become_rates_and_a_reset_gives_none(make_page: Page) -> None:
    pages = [make_page(generation_tokens=n) for n in (100, 300, 50)]
    points = window.points([(t * 2.0, read(p)) for t, p in enumerate(pages)])
    assert [p.generation_tokens_per_s for p in points] == [None, 100.0, None]
