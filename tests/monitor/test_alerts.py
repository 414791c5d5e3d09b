"""`alerts`: one alert per limit, in `diagnose`'s order, with the caps as thresholds and only
the metric names of the release; the files pass `promtool check rules` and `promtool test
rules` (a scenario per alert, in which only that alert fires), and lint clean themselves."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from servetune.monitor import dashboard, lint, names, rule_files
from servetune.monitor.alerts import ORDER, Ruleset, ruleset
from servetune.monitor.caps import Caps
from servetune.texts import Language

CAPS = Caps(max_num_seqs=256, max_num_batched_tokens=8192, source="serve-command")
DP2 = Caps(max_num_seqs=128, max_num_batched_tokens=2048, data_parallel_size=2, source="log")


def _limits(rules: Ruleset) -> tuple[list[str], list[str]]:
    return [a.limit for a in rules.alerts], [s.limit for s in rules.skipped]


def test_one_alert_per_limit_in_the_order_diagnose_names_them() -> None:
    rules = ruleset(CAPS, "0.33.0")
    assert _limits(rules) == (list(ORDER), [])
    assert [a.name for a in rules.alerts][:3] == [
        "VllmLimitStalled",
        "VllmLimitAdmission",
        "VllmLimitKvCache",
    ]
    last = rules.alerts[-1]
    assert last.unless == ORDER[:-1]
    assert last.expr.startswith(
        "servetune:vllm_limit:compute\nunless on (job, instance, model_name)"
    )


def test_the_caps_become_thresholds() -> None:
    seqs = {a.limit: a for a in ruleset(CAPS, "0.33.0").alerts}["max-num-seqs"]
    assert "servetune:vllm_running:sum >= 244" in seqs.condition  # 95% of 256 (advice)
    assert seqs.next_step.text() == (
        "Raise --max-num-seqs from 256 to 512: requests wait while the KV cache has room."
    )
    budget = {a.limit: a for a in ruleset(DP2, "0.33.0").alerts}["max-num-batched-tokens"]
    assert "servetune:vllm_running:sum < 244" in budget.condition  # 2 engines of 128
    assert "rate(vllm:iteration_tokens_total_bucket[2m])" in budget.evidence_query


def test_without_caps_the_sequence_cap_is_unconfirmed_and_the_budget_left_out() -> None:
    rules = ruleset(Caps(), "0.33.0")
    seqs = {a.limit: a for a in rules.alerts}["max-num-seqs"]
    assert seqs.cap_confirmed is False
    assert "max_over_time(servetune:vllm_running:sum[5m])" in seqs.condition
    assert [(s.limit, s.reason.text()) for s in rules.skipped] == [
        ("max-num-batched-tokens", "needs the caps: give --serve-command or --file")
    ]


@pytest.mark.parametrize(
    ("version", "kv", "itl", "left_out"),
    [
        ("0.6.3", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", 2),
        ("0.11.0", "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", 2),
        ("0.20.0", "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", 1),
        ("0.32.0", "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", 0),
    ],
)
def test_each_release_its_own_names(version: str, kv: str, itl: str, left_out: int) -> None:
    rules = ruleset(CAPS, version)
    assert (rules.metrics.kv_cache_usage, rules.metrics.itl) == (kv, itl)
    assert len(rules.skipped) == left_out  # admission (0.32+), deferred (0.20+)
    assert {s.reason.key for s in rules.skipped} <= {"alerts.skip.metric"}


@pytest.mark.parametrize("version", names.known_releases())
def test_the_files_of_every_release_lint_clean(version: str) -> None:
    rules = ruleset(CAPS, version)
    text = rule_files.dump(rule_files.rules_document(rules))
    board = json.dumps(dashboard.document(rules))
    for report in (lint.lint(text, "rules", version), lint.lint(board, "dashboard", version)):
        assert report.findings
        assert {f.check.status for f in report.findings} == {"live"}, report.to_json()


def _plain(doc: object) -> Any:
    """A document as JSON reads it back (typed Any, for the tests' indexing)."""
    return json.loads(json.dumps(doc))


def test_the_operator_resource_holds_the_same_group() -> None:
    rules = ruleset(CAPS, "0.33.0")
    resource = rule_files.operator_document(rules)
    assert resource["kind"] == "PrometheusRule"
    assert resource["spec"] == rule_files.rules_document(rules)


def test_annotations_name_the_limit_its_evidence_and_knob() -> None:
    rules = ruleset(CAPS, "0.33.0")
    group = _plain(rule_files.group(rules))
    alert = next(r for r in group["rules"] if r.get("alert") == "VllmLimitKvCache")
    assert alert["labels"] == {"severity": "warning", "limit": "kv-cache"}
    assert alert["annotations"] == {
        "summary": "vLLM {{ $labels.instance }} ({{ $labels.model_name }}): the KV cache is full",
        "description": "The KV cache is full: vllm:num_preemptions_total grows, or requests "
        "wait with the cache at 90% or more.",
        "limit": "kv-cache",
        "evidence_query": "max by (job, instance, model_name) (vllm:kv_cache_usage_perc)",
        "knob": "--gpu-memory-utilization, --max-model-len, then replicas",
        "next_step": "Give the KV cache more room: raise --gpu-memory-utilization or shorten "
        "--max-model-len; once that is spent, add a replica.",
    }
    zh = _plain(rule_files.group(rules, "zh-TW"))["rules"][-1]["annotations"]
    assert zh["summary"].endswith("GPU 每一步的運算時間（算力）")


def test_to_json() -> None:
    doc = _plain(ruleset(CAPS, "0.15.1").to_json())
    assert list(doc) == [
        "schema_version",
        "vllm_version",
        "names_of",
        "engine",
        "caps",
        "alerts",
        "skipped",
    ]
    assert (doc["vllm_version"], doc["names_of"], doc["engine"]) == ("0.15.1", "0.14.1", "v1")
    first = doc["alerts"][0]
    assert list(first) == [
        "alert",
        "limit",
        "expr",
        "condition",
        "for",
        "severity",
        "evidence_query",
        "knob",
        "why",
        "next_step",
        "cap_confirmed",
    ]


def test_every_alert_has_a_scenario_where_it_alone_fires() -> None:
    rules = ruleset(CAPS, "0.33.0")
    tests = _plain(rule_files.promtool_tests(rules))["tests"]
    assert len(tests) == len(rules.alerts) + 1
    for test, alert in zip(tests[1:], rules.alerts, strict=True):
        firing = [c["alertname"] for c in test["alert_rule_test"] if c["exp_alerts"]]
        assert firing == [alert.name]
    assert not any(c["exp_alerts"] for c in tests[0]["alert_rule_test"])


# --- promtool --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip(
            "promtool not found: these tests run the generated rules through Prometheus' own "
            "checker (Debian/Ubuntu: apt-get install prometheus; `make test` installs it where "
            "apt-get can)"
        )
    return found


def _write(rules: Ruleset, folder: Path, language: Language) -> tuple[Path, Path]:
    files = (folder / rule_files.RULES_FILE, folder / rule_files.TESTS_FILE)
    files[0].write_text(rule_files.dump(rule_files.rules_document(rules, language)), "utf-8")
    files[1].write_text(rule_files.dump(rule_files.promtool_tests(rules, language)), "utf-8")
    return files


@pytest.mark.parametrize(
    ("version", "caps", "language"),
    [
        ("0.33.0", CAPS, "en"),
        ("0.33.0", Caps(), "zh-TW"),
        ("0.32.0", DP2, "en"),
        ("0.20.0", CAPS, "en"),
        ("0.11.0", Caps(), "en"),
        ("0.8.5", CAPS, "zh-TW"),
        ("0.6.3", CAPS, "en"),
    ],
)
def test_promtool_checks_and_tests_the_rules(
    promtool: str, tmp_path: Path, version: str, caps: Caps, language: Language
) -> None:
    rules, tests = _write(ruleset(caps, version), tmp_path, language)
    checked = subprocess.run(
        [promtool, "check", "rules", str(rules)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run(
        [promtool, "test", "rules", str(tests)], capture_output=True, text=True, check=False
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_promtool_catches_a_scenario_whose_alert_does_not_fire(
    promtool: str, tmp_path: Path
) -> None:
    """The unit tests are not vacuous: expect no alert anywhere, and they fail."""
    _, tests = _write(ruleset(CAPS, "0.33.0"), tmp_path, "en")
    doc = yaml.safe_load(tests.read_text(encoding="utf-8"))
    for test in doc["tests"]:
        for check in test["alert_rule_test"]:
            check["exp_alerts"] = []
    tests.write_text(yaml.safe_dump(doc), encoding="utf-8")
    tested = subprocess.run(
        [promtool, "test", "rules", str(tests)], capture_output=True, text=True, check=False
    )
    assert tested.returncode == 1
    assert "VllmLimitMaxNumSeqs" in tested.stdout + tested.stderr
