"""vLLM's /metrics names by release (monitor/names.py, read from every release's sources): the
real 0.32.0 page agrees with the table, and the renames, removals and spellings the alert files
in the wild trip over are told apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from servetune.errors import UsageError
from servetune.measure.server_metrics import NAMES
from servetune.monitor import names
from servetune.monitor.scrape import COUNTERS, GAUGES, HISTOGRAMS, WAITING_BY_REASON


def _check(series: str, version: str) -> names.NameCheck:
    return names.check(series, names.release(version))


def test_every_family_of_the_real_0_32_page_is_live_in_0_32(data: Path) -> None:
    page = (data / "metrics-0.32.0.txt").read_text(encoding="utf-8")
    types = re.findall(r"^# TYPE (vllm:\S+) (\w+)$", page, flags=re.MULTILINE)
    families = {(n, kind) for n, kind in types if not n.endswith("_created")}
    assert len(families) == 39
    where = names.release("0.32.0")
    for name, kind in families:
        family = names.families()[name]
        assert (family.kind, names.state(family, where)) == (kind, "live"), name


def test_the_scrape_tables_name_metrics_some_release_has() -> None:
    tables = [*GAUGES.values(), *COUNTERS.values(), *HISTOGRAMS.values(), (WAITING_BY_REASON,)]
    spelled = {n for t in tables for n in t} | {n for t in NAMES.values() for n in t}
    unknown = {n for n in spelled if n not in names.families()}
    assert unknown == {"vllm:num_preemptions"}  # the bench's fallback, never scraped so
    assert _check("vllm:num_preemptions", "0.33.0").reason == "no-total"


@pytest.mark.parametrize("version", ["0.6.3", "0.8.5", "0.11.0", "0.33.0"])
def test_a_counter_without_total_is_dead_in_every_release(version: str) -> None:
    found = _check("vllm:num_preemptions", version)
    assert (found.status, found.reason, found.use) == (
        "dead",
        "no-total",
        "vllm:num_preemptions_total",
    )
    assert _check("vllm:num_preemptions_total", version).status == "live"


def test_gpu_prefix_cache_counters_hidden_in_0_11_and_gone_in_0_12() -> None:
    name = "vllm:gpu_prefix_cache_hits_total"
    assert _check(name, "0.10.2").status == "live"
    assert _check(name, "0.11.2").status == "hidden"
    gone = _check(name, "0.12.0")
    assert (gone.status, gone.reason, gone.last, gone.use) == (
        "dead",
        "gone",
        "0.11.2",
        "vllm:prefix_cache_hits_total",
    )
    assert names.release("0.11.0").hidden_flag == "--show-hidden-metrics-for-version=0.10"


def test_time_per_output_token_hidden_from_0_12_and_gone_after_0_14() -> None:
    name = "vllm:time_per_output_token_seconds_bucket"
    assert _check(name, "0.11.0").status == "live"
    assert _check(name, "0.14.1").status == "hidden"
    gone = _check(name, "0.16.0")
    assert (gone.reason, gone.last, gone.use) == (
        "gone",
        "0.14.1",
        "vllm:inter_token_latency_seconds_bucket",
    )


def test_the_kv_cache_gauge_renamed() -> None:
    assert _check("vllm:kv_cache_usage_perc", "0.9.1").reason == "not-yet"
    assert _check("vllm:kv_cache_usage_perc", "0.9.1").first == "0.9.2"
    assert _check("vllm:gpu_cache_usage_perc", "0.33.0").use == "vllm:kv_cache_usage_perc"


def test_v0_gauges_and_engines() -> None:
    throughput = "vllm:avg_generation_throughput_toks_per_s"
    assert _check(throughput, "0.6.3").status == "live"
    assert _check(throughput, "0.8.5").use == "rate(vllm:generation_tokens_total[1m])"
    # 0.8.2 still ships V0 (VLLM_USE_V1=0), which alone has swapping
    assert _check("vllm:num_requests_swapped", "0.8.2").status == "other-engine"
    assert names.release("0.7.3").engine == "v0"
    assert names.release("0.8.0").engine == "v1"


def test_spelling_mistakes_and_shapes() -> None:
    assert _check("vllm:time_to_first_token_seconds", "0.33.0").reason == "bare-histogram"
    assert _check("vllm:num_requests_running_bucket", "0.33.0").reason == "suffix"
    typo = _check("vllm:num_requests_runing", "0.33.0")
    assert (typo.reason, typo.use) == ("never", "vllm:num_requests_running")
    assert _check("vllm:prompt_tokens_created", "0.33.0").status == "live"
    assert _check("ray_vllm_num_requests_running", "0.33.0").status == "live"
    assert _check("ray_vllm:kv_cache_usage_perc", "0.33.0").family == "vllm:kv_cache_usage_perc"


def test_releases_resolve() -> None:
    assert names.release(None).table == names.known_releases()[-1] == "0.33.0"
    assert names.release("0.15.1").table == "0.14.1"  # no sdist of 0.15.x: the one before
    assert names.release("v0.40.2").table == "0.33.0"
    assert names.release("0.9.0.1").table == "0.9.0.1"
    with pytest.raises(UsageError, match=r"from 0\.6\.0 on"):
        names.release("0.5.4")
    with pytest.raises(UsageError, match="not a vLLM version"):
        names.release("latest")
