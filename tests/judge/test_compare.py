"""`compare`: known injected differences must show, identical setups must not, and every warning
and next step fires on the data that calls for it. Result files are synthetic, in both formats:
servetune's (with its `servetune` block) and plain `vllm bench serve --save-result`."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from servetune.errors import UsageError
from servetune.judge.compare import (
    HEADLINE,
    Comparison,
    compare,
    load_side,
)
from servetune.judge.runs import Side
from servetune.measure import metrics
from servetune.render.judge import comparison_text

from result_files import Setup, ours, plain_vllm, write_runs

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"
LATENCY_HEADLINE = [m for m in HEADLINE if m.endswith("_ms")]
THROUGHPUT_HEADLINE = ["request_throughput", "output_throughput"]


def sides(
    tmp_path: Path, before: Setup, after: Setup, runs: int = 5, fmt: str = "ours"
) -> tuple[Side, Side]:
    b = write_runs(tmp_path / "before", before, range(1, runs + 1), fmt)
    a = write_runs(tmp_path / "after", after, range(101, 101 + runs), fmt)
    return load_side([b]), load_side([a])


def verdicts(c: Comparison) -> dict[str, str]:
    return {m.name: m.verdict for m in c.metrics}


def rules(c: Comparison) -> list[str]:
    return [w.rule for w in c.warnings]


# --- injected differences and identical setups --------------------------------------------------


def test_a_20_percent_latency_increase_reads_worse_with_an_interval_above_zero(
    tmp_path: Path,
) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(latency=1.2)))
    for m in c.metrics:
        if m.name == "p99_ttft_ms":
            # The p99 of 200 requests is the second-slowest one: a 20% shift hides in its noise
            # about half the time at 5 runs a side, and then "no-change" is the honest answer.
            assert m.verdict in ("worse", "no-change"), m
        elif m.name in LATENCY_HEADLINE:
            assert m.verdict == "worse", m
            assert m.change_pct is not None and 14 < m.change_pct < 26
            assert m.ci_low_pct is not None and m.ci_high_pct is not None
            assert 0 < m.ci_low_pct < m.change_pct < m.ci_high_pct
        else:
            assert m.verdict == "no-change", m
    assert c.conclusion.startswith("After is worse: ")
    assert c.warnings == ()


def test_a_20_percent_throughput_gain_reads_better(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(throughput=1.2)))
    got = verdicts(c)
    assert [got[m] for m in THROUGHPUT_HEADLINE] == ["better", "better"]
    assert all(got[m] == "no-change" for m in LATENCY_HEADLINE)
    out = next(m for m in c.metrics if m.name == "output_throughput")
    assert out.ci_low_pct is not None and out.ci_low_pct > 0
    assert c.conclusion.startswith("After is better: ")


def test_a_latency_drop_reads_better_in_plain_vllm_files(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(latency=0.8), fmt="plain"))
    got = verdicts(c)
    assert all(got[m] == "better" for m in LATENCY_HEADLINE), got


@pytest.mark.parametrize("base", [0, 1000, 2000])
@pytest.mark.parametrize("fmt", ["ours", "plain"])
def test_identical_setups_repeated_are_no_change_for_every_metric(
    tmp_path: Path, base: int, fmt: str
) -> None:
    setup = Setup(goodput=True)
    b = write_runs(tmp_path / "b", setup, range(base, base + 5), fmt)
    a = write_runs(tmp_path / "a", setup, range(base + 500, base + 505), fmt)
    c = compare(load_side([b]), load_side([a]))
    assert set(verdicts(c).values()) == {"no-change"}, verdicts(c)
    knobs = "no knob changed" if fmt == "ours" else "server config unknown"
    assert c.conclusion == f"No change beyond noise; {knobs}."
    assert "request_goodput" in verdicts(c)


def test_the_same_runs_on_both_sides_change_nothing(tmp_path: Path) -> None:
    folder = write_runs(tmp_path / "runs", Setup(), range(3))
    c = compare(load_side([folder]), load_side([folder]))
    # Each side is resampled on its own, so the interval has a width even here.
    for m in c.metrics:
        assert m.change_pct == 0 and m.ci_low_pct is not None and m.ci_high_pct is not None
        assert m.ci_low_pct < 0 < m.ci_high_pct
    assert set(verdicts(c).values()) == {"no-change"}


def test_the_interval_is_reproducible_and_seeded(tmp_path: Path) -> None:
    b, a = sides(tmp_path, Setup(), Setup(latency=1.1), runs=3)
    first, again = compare(b, a), compare(b, a)
    assert first.to_json() == again.to_json()
    other = compare(b, a, rng=random.Random(7))
    assert other.to_json() != first.to_json()
    only = compare(b, a, ["p99_ttft_ms"])  # a metric's interval does not depend on the others
    assert only.metrics[0] == next(m for m in first.metrics if m.name == "p99_ttft_ms")


def test_single_run_per_side_resamples_requests_and_says_so(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(latency=1.2), runs=1))
    assert rules(c) == ["single-run"]
    assert "resampling requests" in c.warnings[0].message
    assert c.ci_method == "requests" and c.to_json()["ci_method"] == "requests"
    got = verdicts(c)
    assert all(got[m] == "worse" for m in LATENCY_HEADLINE if m != "p99_ttft_ms"), got
    assert [got[m] for m in THROUGHPUT_HEADLINE] == ["insufficient-data"] * 2
    assert c.conclusion.startswith("Not conclusive: only one run per side (requests alone suggest")


def test_single_plain_runs_have_no_per_request_ttft_without_save_detailed(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(), runs=1, fmt="plain"))
    got = verdicts(c)
    assert got["mean_ttft_ms"] == got["p99_itl_ms"] == "insufficient-data"
    assert got["mean_e2el_ms"] == got["p99_e2el_ms"] == "no-change"  # from `latencies`
    assert "No per-request ITL/TPOT/TTFT values" in c.warnings[0].message
    detailed = compare(*sides(tmp_path / "d", Setup(), Setup(), runs=1, fmt="detailed"))
    assert all(verdicts(detailed)[m] == "no-change" for m in LATENCY_HEADLINE)


def test_one_run_against_several_resamples_both_levels(tmp_path: Path) -> None:
    b = write_runs(tmp_path / "b", Setup(), [1])
    a = write_runs(tmp_path / "a", Setup(latency=1.3), range(10, 14))
    c = compare(load_side([b]), load_side([a]))
    assert rules(c) == ["single-run"] and "Before has one run" in c.warnings[0].message
    assert verdicts(c)["mean_e2el_ms"] == "worse"
    assert c.conclusion.startswith("Not conclusive: only one run before")


# --- reading files ------------------------------------------------------------------------------


def test_plain_vllm_median_is_p50_and_e2el_comes_from_latencies(tmp_path: Path) -> None:
    path = write_runs(tmp_path, Setup(), [1], "plain") / "run-1.json"
    doc = json.loads(path.read_text())
    assert "p50_ttft_ms" not in doc and "mean_e2el_ms" not in doc
    run = load_side([path]).runs[0]
    assert run.values["p50_ttft_ms"] == doc["median_ttft_ms"]
    want = metrics.percentile(sorted(doc["latencies"]), 99) * 1000
    assert run.values["p99_e2el_ms"] == pytest.approx(want)


def test_servetune_files_skip_warmup_and_failed_requests(tmp_path: Path) -> None:
    path = write_runs(tmp_path, Setup(failed=3, requests=50), [1]) / "run-1.json"
    run = load_side([path]).runs[0]
    assert len(run.samples["ttft"].units) == 50
    assert max(run.samples["e2el"].ordered) < 9.0  # the warm-up's 99 s is not among them


def test_appended_result_files_hold_one_run_per_object(tmp_path: Path) -> None:
    # vLLM's --append-result writes "\n" + one object per run; one-object-per-line works too.
    text = "".join("\n" + json.dumps(plain_vllm(Setup(), s)) for s in range(3))
    (tmp_path / "appended.json").write_text(text, encoding="utf-8")
    (tmp_path / "more.json").write_text(
        json.dumps(ours(Setup(), 9), indent=1) + "\n" + json.dumps(ours(Setup(), 8))
    )
    side = load_side([tmp_path])
    assert [r.source.rsplit("/", 1)[-1] for r in side.runs] == [
        "appended.json#1",
        "appended.json#2",
        "appended.json#3",
        "more.json#1",
        "more.json#2",
    ]
    assert len(load_side([tmp_path / "more.json", tmp_path / "appended.json"]).runs) == 5


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("this is not json", "not JSON"),
        ("", "empty"),
        ('{"foo": 1}', "not a bench result"),
        ("[1, 2]", "not a bench result"),
        ('{"completed": 1, "duration": 2}\n{"oops"', "not JSON"),
        (b"\xff\xfe\x00", "cannot read"),
    ],
)
def test_bad_files_are_usage_errors_naming_the_file(
    tmp_path: Path, content: str | bytes, says: str
) -> None:
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=says) as info:
        load_side([path])
    assert "bad.json" in info.value.message
    assert info.value.hint is not None and "--save-result" in info.value.hint


def test_missing_paths_and_empty_folders_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_side([tmp_path / "nope.json"])
    with pytest.raises(UsageError, match=r"no \*\.json files"):
        load_side([tmp_path])
    with pytest.raises(UsageError, match="no result files"):
        load_side([])


def test_the_reference_vllm_files_load_and_compare(tmp_path: Path) -> None:
    plain = REFERENCE / "vllm-bench-result-example-0.32.0.json"
    detailed = REFERENCE / "vllm-bench-result-detailed-example-0.32.0.json"
    if not plain.exists():
        pytest.skip("../shared/reference is not beside this checkout")
    run = load_side([detailed]).runs[0]
    assert run.values["p50_ttft_ms"] == pytest.approx(66.38855400001376)
    assert set(run.samples) == {"ttft", "tpot", "itl", "e2el"}
    c = compare(load_side([plain]), load_side([plain]))
    assert set(verdicts(c).values()) <= {"no-change", "insufficient-data"}
    assert rules(c) == ["single-run", "config-unknown"]
    assert c.warnings[1].message.startswith("before and after: no server command recorded")
    same = compare(load_side([detailed]), load_side([detailed]))
    assert all(m.change_pct == 0 for m in same.metrics)


# --- metrics asked for --------------------------------------------------------------------------


def test_metric_option_restricts_and_rejects_unknown_names_with_a_suggestion(
    tmp_path: Path,
) -> None:
    b, a = sides(tmp_path, Setup(), Setup(), runs=2)
    c = compare(b, a, ["p99_ttft_ms", "output_throughput", "p90_itl_ms", "median_e2el_ms"])
    assert [m.name for m in c.metrics] == [
        "p99_ttft_ms",
        "output_throughput",
        "p90_itl_ms",
        "median_e2el_ms",
    ]
    with pytest.raises(UsageError, match="unknown metric 'p99_ttft'") as info:
        compare(b, a, ["p99_ttft"])
    assert info.value.hint == "did you mean p99_ttft_ms?"


def test_goodput_is_a_headline_metric_only_when_recorded(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(), runs=2))
    assert [m.name for m in c.metrics] == list(HEADLINE)


def test_missing_values_are_insufficient_data_not_zero(tmp_path: Path) -> None:
    b, a = sides(tmp_path, Setup(), Setup(), runs=2)
    c = compare(b, a, ["request_goodput"])
    assert c.to_json()["metrics"] == [
        {
            "name": "request_goodput",
            "before": None,
            "after": None,
            "change_pct": None,
            "ci_low_pct": None,
            "ci_high_pct": None,
            "verdict": "insufficient-data",
        }
    ]
    assert c.conclusion.startswith("Not conclusive: no metric could be compared")


# --- config changes -----------------------------------------------------------------------------


def _config(tmp_path: Path, before: str | None, after: str | None) -> Comparison:
    return compare(
        *sides(tmp_path, Setup(command=before), Setup(command=after), runs=2), ["mean_ttft_ms"]
    )


def test_one_knob_changed_is_reported_with_effective_values(tmp_path: Path) -> None:
    c = _config(tmp_path, "vllm serve my/model --max-num-seqs 128", "vllm serve my/model")
    assert c.to_json()["config_changes"] == [
        {"flag": "--max-num-seqs", "before": "128", "after": "256"}
    ]
    assert c.config_changes[0].after_default and not c.config_changes[0].before_default
    assert "more-than-one-change" not in rules(c)
    assert c.conclusion.endswith("; 1 knob changed: --max-num-seqs 128 -> 256.")
    assert "--max-num-seqs: 128 -> 256 (default)" in comparison_text(c)


def test_an_explicit_default_is_no_change(tmp_path: Path) -> None:
    c = _config(
        tmp_path,
        "vllm serve my/model --max-num-seqs 256 --max-model-len 32k --dtype half --port 8001",
        "vllm serve my/model --max-model-len 32000 --dtype float16 --gpu-memory-utilization 0.92",
    )
    assert c.config_changes == ()
    assert c.warnings == ()
    assert c.conclusion.endswith("; no knob changed.")


def test_two_knobs_changed_warns_that_the_effect_cannot_be_attributed(tmp_path: Path) -> None:
    c = _config(
        tmp_path,
        "vllm serve my/model --max-num-seqs 128",
        "vllm serve my/model --max-num-seqs 128 --max-num-batched-tokens 8192 --enable-prefix-caching",
    )
    assert [ch.flag for ch in c.config_changes] == [
        "--max-num-batched-tokens",
        "--enable-prefix-caching",
    ]
    warning = next(w for w in c.warnings if w.rule == "more-than-one-change")
    assert "--max-num-batched-tokens, --enable-prefix-caching" in warning.message
    assert "cannot be attributed" in warning.message


def test_a_flag_absent_on_one_side_is_null(tmp_path: Path) -> None:
    c = _config(tmp_path, "vllm serve my/model", "vllm serve my/model --quantization fp8")
    assert c.to_json()["config_changes"] == [
        {"flag": "--quantization", "before": None, "after": "fp8"}
    ]


def test_no_recorded_command_means_config_unknown(tmp_path: Path) -> None:
    c = _config(tmp_path, "vllm serve my/model", None)
    assert c.config_changes == ()
    assert rules(c) == ["config-unknown"] and c.warnings[0].message.startswith("after:")
    assert c.conclusion.endswith("; server config unknown.")


def test_runs_of_one_side_with_different_commands_warn(tmp_path: Path) -> None:
    b = write_runs(tmp_path / "b", Setup(command="vllm serve my/model --max-num-seqs 64"), [1])
    write_runs(tmp_path / "b", Setup(), [2])
    a = write_runs(tmp_path / "a", Setup(), [3, 4])
    c = compare(load_side([b]), load_side([a]), ["mean_ttft_ms"])
    warning = next(w for w in c.warnings if w.rule == "config-mixed")
    assert warning.message.startswith("before:") and "--max-num-seqs" in warning.message


# --- workload and client ------------------------------------------------------------------------


def test_different_input_lengths_warn_workload_differs(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(input_len=1024), runs=2), ["mean_ttft_ms"])
    assert rules(c) == ["workload-differs"]
    assert "--random-input-len 512 vs 1024" in c.warnings[0].message
    plain = compare(
        *sides(tmp_path / "p", Setup(), Setup(input_len=1024), runs=2, fmt="plain"),
        ["mean_ttft_ms"],
    )
    assert "mean input tokens per request 512 vs 1024" in plain.warnings[0].message


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"request_rate": "inf"}, "--request-rate 10 vs inf"),
        ({"max_concurrency": 8}, "--max-concurrency unlimited vs 8"),
        ({"extra": {"model_id": "other/model"}}, "--model my/model vs other/model"),
    ],
)
def test_rate_concurrency_and_model_differences_warn(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(**change), runs=2), ["mean_ttft_ms"])
    assert rules(c) == ["workload-differs"] and says in c.warnings[0].message


def test_a_saturated_client_warns(tmp_path: Path) -> None:
    c = compare(
        *sides(tmp_path, Setup(), Setup(saturated=True, send_lag_p99_s=0.012), runs=2),
        ["mean_ttft_ms"],
    )
    assert rules(c) == ["client-saturated"]
    assert c.warnings[0].message.startswith("after: the load generator fell behind")
    assert "12.0 ms" in c.warnings[0].message
    lagging = compare(
        *sides(tmp_path / "l", Setup(send_lag_p99_s=0.02), Setup(), runs=2), ["mean_ttft_ms"]
    )
    assert rules(lagging) == ["client-saturated"]


def test_failed_requests_warn(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(failed=20), runs=2), ["mean_ttft_ms"])
    assert rules(c) == ["failed-requests"] and "40 of 440 requests failed" in c.warnings[0].message


# --- the next step ------------------------------------------------------------------------------


def _next(
    tmp_path: Path, server: dict[str, float], command: str = "vllm serve my/model"
) -> str | None:
    b, a = sides(tmp_path, Setup(command=command), Setup(command=command, server=server), runs=2)
    return compare(b, a, ["mean_ttft_ms"]).next_step


def test_next_step_full_kv_cache_with_preemptions_means_fewer_sequences(tmp_path: Path) -> None:
    step = _next(
        tmp_path,
        {"peak_running": 256, "peak_waiting": 40, "peak_kv_cache_usage": 1.0, "preemptions": 12},
    )
    assert step is not None and step.startswith("Lower --max-num-seqs from 256")
    assert "--max-model-len" in step and "(up to 12 in a run)" in step


def test_next_step_waiting_at_the_sequence_ceiling_with_kv_room_means_more_sequences(
    tmp_path: Path,
) -> None:
    step = _next(
        tmp_path,
        {"peak_running": 128, "peak_waiting": 30, "peak_kv_cache_usage": 0.6, "preemptions": 0},
        "vllm serve my/model --max-num-seqs 128",
    )
    assert step is not None and step.startswith("Raise --max-num-seqs above 128 (try 256)")


def test_next_step_waiting_with_little_running_and_kv_means_a_bigger_token_budget(
    tmp_path: Path,
) -> None:
    step = _next(
        tmp_path,
        {"peak_running": 12, "peak_waiting": 30, "peak_kv_cache_usage": 0.2, "preemptions": 0},
        "vllm serve my/model --max-num-batched-tokens 512",
    )
    assert step is not None and step.startswith(
        "Raise --max-num-batched-tokens above 512 (try 1024)"
    )
    assert "only 12 of 256 sequences" in step


def test_no_next_step_without_a_limit_or_without_server_metrics(tmp_path: Path) -> None:
    healthy = {"peak_running": 40, "peak_waiting": 0, "peak_kv_cache_usage": 0.3, "preemptions": 0}
    assert _next(tmp_path / "h", healthy) is None
    assert (
        compare(*sides(tmp_path / "n", Setup(), Setup(), runs=2), ["mean_ttft_ms"]).next_step
        is None
    )


def test_next_step_falls_back_to_the_before_side(tmp_path: Path) -> None:
    server = {
        "peak_running": 256,
        "peak_waiting": 5,
        "peak_kv_cache_usage": 0.995,
        "preemptions": 3,
    }
    b, a = sides(tmp_path, Setup(server=server), Setup(), runs=2)
    step = compare(b, a, ["mean_ttft_ms"]).next_step
    assert step is not None and step.startswith("Lower --max-num-seqs from 128")


# --- output -------------------------------------------------------------------------------------


def test_json_shape_is_the_contract(tmp_path: Path) -> None:
    c = compare(
        *sides(tmp_path, Setup(), Setup(latency=1.2, command="vllm serve my/model"), runs=3)
    )
    doc = json.loads(json.dumps(c.to_json(), allow_nan=False))
    assert list(doc)[:3] == ["metrics", "config_changes", "warnings"]
    assert set(doc) == {
        "metrics",
        "config_changes",
        "warnings",
        "next_step",
        "conclusion",
        "runs",
        "ci_method",
        "confidence",
    }
    assert [m["name"] for m in doc["metrics"]] == list(HEADLINE)
    for m in doc["metrics"]:
        assert list(m) == [
            "name",
            "before",
            "after",
            "change_pct",
            "ci_low_pct",
            "ci_high_pct",
            "verdict",
        ]
        assert all(isinstance(m[k], float) for k in list(m)[1:6])
        assert m["verdict"] in {"better", "worse", "no-change", "insufficient-data"}
    assert doc["config_changes"] == [{"flag": "--max-num-seqs", "before": "128", "after": "256"}]
    assert all(list(w) == ["rule", "message"] for w in doc["warnings"])
    assert doc["runs"] == {"before": 3, "after": 3} and doc["ci_method"] == "runs"


def test_text_puts_the_conclusion_first_and_fits_80_columns(tmp_path: Path) -> None:
    server = {
        "peak_running": 256,
        "peak_waiting": 40,
        "peak_kv_cache_usage": 1.0,
        "preemptions": 12,
    }
    c = compare(
        *sides(
            tmp_path,
            Setup(),
            Setup(latency=1.2, command="vllm serve my/model", server=server, saturated=True),
            runs=3,
        )
    )
    text = comparison_text(c)
    lines = text.splitlines()
    assert lines[0].startswith("After is worse: ")
    assert "(CI +" in lines[0]
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert "before: 3 run(s), after: 3 run(s); 99% intervals by resampling runs." in text
    row = next(line for line in lines if line.startswith("p50_ttft_ms"))
    assert row.split()[-1] == "worse"
    assert "[client-saturated]" in text and "Next step: Lower --max-num-seqs" in text


def test_text_of_single_plain_runs_fits_80_columns_and_says_no_data(tmp_path: Path) -> None:
    c = compare(*sides(tmp_path, Setup(), Setup(latency=1.2), runs=1, fmt="plain"))
    text = comparison_text(c)
    assert text.startswith("Not conclusive: only one run per side (requests alone suggest ")
    assert all(len(line) <= 80 for line in text.splitlines())
    row = next(line for line in text.splitlines() if line.startswith("mean_ttft_ms"))
    assert row.split()[-2:] == ["-", "insufficient"]
    flat = " ".join(text.split())
    assert "resampling requests within a run" in flat and "[single-run]" in flat
