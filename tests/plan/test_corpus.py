"""The published-runs corpus as plan reads it: the split by source, the load as it really ran,
and the shell variables of a published script filled in."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import plan_runs
import pytest

from servetune.plan import accuracy, corpus, sharegpt, step_time
from servetune.plan.simulate import Load

RUNS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "runs.json"


@pytest.fixture(scope="module")
def records() -> list[dict[str, object]]:
    data: list[dict[str, object]] = json.loads(RUNS.read_text(encoding="utf-8"))["records"]
    return data


@pytest.fixture(scope="module")
def answered() -> tuple[list[accuracy.Case], list[corpus.Unanswered]]:
    cases, unanswered = plan_runs.answered()
    return list(cases), list(unanswered)


def test_the_split_is_the_source_hash_rule(records: list[dict[str, object]]) -> None:
    for rec in records:
        digest = int(hashlib.sha256(str(rec["source_key"]).encode()).hexdigest(), 16)
        assert rec["split"] == ("held-out" if digest % 10 < 4 else "fit"), rec["id"]
    held_out = sum(rec["split"] == "held-out" for rec in records)
    assert held_out >= 0.3 * len(records)


def test_every_record_is_answered_or_says_why(
    records: list[dict[str, object]],
    answered: tuple[list[accuracy.Case], list[corpus.Unanswered]],
) -> None:
    cases, unanswered = answered
    assert len(cases) + len(unanswered) == len(records)
    assert all(c.group in ("fit", "held-out") and c.kind in accuracy.KINDS for c in cases)
    assert all(u.reason for u in unanswered)


def test_the_load_is_what_the_quote_says_ran(
    answered: tuple[list[accuracy.Case], list[corpus.Unanswered]],
) -> None:
    cases = {c.name: c for c in answered[0] if c.group == "fit"}
    # 100 x 32,000 prompt tokens, 9,394 generated over 100 replies (asked 100: some ended at EOS)
    case = cases["gpustack-gpt-oss-20b-a100-tp1-random-32k-input"]
    assert (case.load.input_len, case.load.output_len) == (32000, 94)
    assert case.load.concurrency == 100  # no cap and an infinite rate: all at once
    sharegpt = cases["gpustack-qwen3-14b-h100-tp1-sharegpt"].load
    assert sharegpt.range_ratio == corpus.SHAREGPT_RANGE


def test_quoted_totals_read_both_summary_spellings() -> None:
    text = "Successful requests:   998\nTotal input tokens:   7,984,000\n"
    assert corpus.quoted_totals(text) == {"completed": 998.0, "input": 7984000.0}
    saved = '{"completed": 40, "total_input_tokens": 40960, "total_output_tokens": 5120}'
    assert corpus.quoted_totals(saved) == {"completed": 40.0, "input": 40960.0, "output": 5120.0}


def test_a_published_script_has_its_variables_filled_in() -> None:
    script = 'PORT=${PORT:-8888}\nX="--block-size 64"\nvllm serve $MODEL --port $PORT $X $UNSET'
    out = corpus.expand_shell(script, {"MODEL": "openai/gpt-oss-120b"})
    assert out.splitlines()[-1] == "vllm serve openai/gpt-oss-120b --port 8888 --block-size 64 "


def test_a_release_is_read_from_its_published_spelling() -> None:
    assert corpus.version_of("0.17.0 (image vllm/vllm-openai-rocm:v0.17.0)") == "0.17.0"
    assert corpus.version_of("0.11.0rc2") == "0.11.0"
    assert corpus.version_of(None) is None


def test_long_prompts_into_a_small_cache_are_not_a_recompute_storm(
    answered: tuple[list[accuracy.Case], list[corpus.Unanswered]],
) -> None:
    """100 prompts of 32k tokens on one H100 (vLLM 0.11, a KV cache for ~7 of them): the
    preempted requests find their prefix in the cache, as vLLM's prefix caching keeps it; the
    simulation that recomputed them predicted a third of the measured throughput."""
    cases = {c.name: c for c in answered[0] if c.group == "fit"}
    case = cases["gpustack-qwen3-14b-h100-tp1-random-32k-input"]
    assert case.setup.limits.prefix_caching
    errors = accuracy.errors(case)
    assert abs(errors["output_throughput"]) < 0.15
    assert abs(errors["mean_tpot_ms"]) < 0.2


def test_a100_runs_are_predicted_at_amperes_own_gemm_rate(
    answered: tuple[list[accuracy.Case], list[corpus.Unanswered]],
) -> None:
    """The dense fit records on one A100 (Qwen3-14B, vLLM 0.11): at Hopper's fraction of the
    tensor-core peak they were predicted 20-40% slow; `Efficiency.ampere` gives Ampere its own."""
    cases = [
        c
        for c in answered[0]
        if c.group == "fit"
        and c.kind == "dense TP1"
        and c.setup.cost.device.ampere
        and "A100" in c.setup.cost.device.name
    ]
    assert len(cases) >= 3
    for case in cases:
        errors = accuracy.errors(case)
        assert abs(errors["output_throughput"]) < 0.15, case.name
    hopper = step_time.Efficiency(ampere=1.0)
    slow = [accuracy.errors(c, hopper)["output_throughput"] for c in cases]
    assert max(slow) < -0.15


def test_a_run_that_publishes_no_command_is_planned_with_vllms_defaults_on_its_gpus() -> None:
    rec: dict[str, object] = {"model": "Qwen/Qwen3-32B", "gpus": "8xH200-SXM-141GB"}
    assert corpus.assumed_command(rec) == "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8"
    assert corpus.assumed_command({**rec, "gpus": "1xH100-80GB"}) == "vllm serve Qwen/Qwen3-32B"
    assert corpus.assumed_command({**rec, "gpus": "1xRTX-5070-Ti+1xRTX-5090"}) is None
    assert corpus.assumed_command({"gpus": "2xH100-80GB"}) is None


def test_assumed_commands_are_marked_and_published_ones_are_not(
    records: list[dict[str, object]],
    answered: tuple[list[accuracy.Case], list[corpus.Unanswered]],
) -> None:
    published = {str(r["id"]) for r in records if r.get("command")}
    cases = answered[0]
    assert any(c.assumed_command for c in cases)
    assert all(c.assumed_command == (c.name not in published) for c in cases)


def _sharegpt_record(**workload: object) -> dict[str, object]:
    return {
        "id": "example",
        "split": "fit",
        "gpus": "1xH100-80GB",
        "command": "vllm serve Qwen/Qwen3-8B",
        "workload": {"dataset": "sharegpt", "input_len": None, "output_len": None, **workload},
        "measured": {"output_throughput": 1000.0},
    }


def test_a_sharegpt_run_without_lengths_is_planned_with_sharegpt_s_published_lengths() -> None:
    rec = _sharegpt_record(num_prompts=None, request_rate=8.0, tool_flags="vllm bench serve")
    case = corpus.case_of(rec, corpus.as_plan_does)
    assert isinstance(case, accuracy.Case) and case.assumed_lengths
    load = case.load
    assert (load.input_len, load.output_len) == (sharegpt.PROMPT_LEN, sharegpt.OUTPUT_LEN)
    assert load.num_prompts == 1000 and load.request_rate == 8.0 and load.concurrency is None
    assert load.range_ratio == sharegpt.SPREAD  # each request drawn around the means
    fixed = corpus.case_of(
        _sharegpt_record(num_prompts=200, tool_flags="--sharegpt-output-len 128"),
        corpus.as_plan_does,
    )
    assert isinstance(fixed, accuracy.Case)
    assert (fixed.load.output_len, fixed.load.output_range_ratio) == (128, 0.0)
    assert fixed.load.concurrency == 200  # no rate, no cap: all at once


def test_sharegpt_s_assumed_lengths_match_the_fit_records_that_publish_theirs(
    records: list[dict[str, object]],
    answered: tuple[list[accuracy.Case], list[corpus.Unanswered]],
) -> None:
    """vLLM's sharegpt loader at seed 0 over 1,000 prompts: the prompts' mean within 2% of
    215 whatever the tokenizer; instruct models' replies near 197 on the chat endpoint."""
    fit = [r for r in records if r["split"] == "fit" and not corpus.lengths_assumed(r)]
    sharegpt_runs = [
        r
        for r in fit
        if isinstance(w := r["workload"], dict)
        and w.get("dataset") == "sharegpt"
        and w.get("num_prompts") == 1000
        and "vllm bench serve" in str(w.get("tool"))
    ]
    assert len(sharegpt_runs) >= 10
    for rec in sharegpt_runs:
        totals = corpus.quoted_totals(str(rec["quote"]))
        assert totals["input"] / totals["completed"] == pytest.approx(sharegpt.PROMPT_LEN, 0.02)
        assert totals["output"] / totals["completed"] == pytest.approx(sharegpt.OUTPUT_LEN, 0.03)
    # the records that publish their totals are planned with them, never with the means
    published = {str(r["id"]) for r in sharegpt_runs}
    planned = [c for c in answered[0] if c.name in published]
    assert len(planned) >= 10
    assert not any(c.assumed_lengths for c in planned)


def test_totals_from_a_table_of_one_run_and_none_from_a_sweep() -> None:
    header = "| request-rate | num-prompts | Total input tokens | Total generated tokens |"
    rule = "|---|---|---|---|"
    one = f"{header}\n{rule}\n| 1 | 100 | 22,925 | 21789 |"
    assert corpus.quoted_totals(one) == {"completed": 100, "input": 22925, "output": 21789}
    sweep = f"{one}\n| 2 | 200 | 42889 | 44132 |"
    assert corpus.quoted_totals(sweep) == {}


def test_a_mean_tpot_the_mean_latency_contradicts_is_not_scored() -> None:
    # gpustack-qwen3.5-9b: 0.33 ms "TPOT" beside 17.48 s for 2,000 tokens (bursty stream)
    load = Load(input_len=1000, output_len=2000, num_prompts=200, concurrency=18)
    quote = "Mean TTFT (ms): 54.95\nMean Latency(s): 17.48\nMean TPOT (ms): 0.33"
    rec = {"measured": {"mean_ttft_ms": 54.95, "mean_tpot_ms": 0.33}, "quote": quote}
    assert corpus._measured(rec, load) == {"mean_ttft_ms": 54.95}
    rec["measured"] = {"mean_ttft_ms": 54.95, "mean_tpot_ms": 8.7}
    assert corpus._measured(rec, load) == {"mean_ttft_ms": 54.95, "mean_tpot_ms": 8.7}
