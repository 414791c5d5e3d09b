"""The files `alerts` writes from a `Ruleset`: the Prometheus rule file, the same group as a
Prometheus Operator `PrometheusRule`, and promtool unit tests with one scenario per alert (the
server in that limit: only its alert fires) and a healthy one (none fires).

Annotations are said in the language asked for (on-call people read them); the rest (names,
queries, labels) is the same in every language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from servetune.monitor.alerts import FOR, GROUP, Alert, Ruleset
from servetune.monitor.limits import Limit, Said
from servetune.texts import Language

RULES_FILE = "vllm-alerts.yaml"
OPERATOR_FILE = "vllm-prometheusrule.yaml"
TESTS_FILE = "vllm-alerts.test.yaml"
SERVER = "{{ $labels.instance }} ({{ $labels.model_name }})"  # a Prometheus template
LABELS = {"job": "vllm", "instance": "vllm-0:8000", "model_name": "demo"}
STEP = "1m"


def _annotations(alert: Alert, language: Language, server: str = SERVER) -> dict[str, str]:
    name = Said(f"limit.{alert.limit}")
    return {
        "summary": Said("alerts.summary", server=server, name=name).text(language),
        "description": alert.why.text(language),
        "limit": alert.limit,
        "evidence_query": alert.evidence_query,
        "knob": alert.knob.text(language),
        "next_step": alert.next_step.text(language),
    }


def _labels(alert: Alert) -> dict[str, str]:
    return {"severity": alert.severity, "limit": alert.limit}


def group(rules: Ruleset, language: Language = "en") -> dict[str, object]:
    """The one rule group: signals, then each limit's condition, then the alerts in order."""
    recorded = [*rules.signals, *rules.conditions()]
    return {
        "name": GROUP,
        "rules": [
            *({"record": r.record, "expr": r.expr} for r in recorded),
            *(
                {
                    "alert": a.name,
                    "expr": a.expr,
                    "for": FOR,
                    "labels": _labels(a),
                    "annotations": _annotations(a, language),
                }
                for a in rules.alerts
            ),
        ],
    }


def rules_document(rules: Ruleset, language: Language = "en") -> dict[str, object]:
    return {"groups": [group(rules, language)]}


def operator_document(rules: Ruleset, language: Language = "en") -> dict[str, object]:
    """The same group as the Prometheus Operator's custom resource."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "vllm-limits",
            "labels": {
                "app.kubernetes.io/name": "vllm",
                "app.kubernetes.io/managed-by": "servetune",
            },
        },
        "spec": {"groups": [group(rules, language)]},
    }


# --- promtool unit tests ----------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A server in one limit (None: healthy), as series values a minute apart."""

    limit: Limit | None
    steps: int = 15
    gauges: Mapping[str, float] = field(default_factory=dict)
    per_minute: Mapping[str, float] = field(default_factory=dict)  # counters' increments
    series: Mapping[str, str] = field(default_factory=dict)  # explicit promtool values

    @property
    def eval_time(self) -> str:
        return f"{self.steps - 5}m"


_HEALTHY_GAUGES = {"running": 4.0, "waiting": 0.0, "kv_cache_usage": 0.2, "deferred": 0.0}
_HEALTHY_RATES = {
    "preemptions": 0.0,
    "generation_tokens": 600.0,
    "prompt_tokens": 1200.0,
    "admission_rejections": 0.0,
    "itl_sum": 2.0,  # 20 ms between tokens
    "itl_count": 100.0,
}


def _compute_scenario() -> Scenario:
    """An hour at 4 running and 20 ms between tokens, then 16 running at 80 ms, no queue."""
    return Scenario(
        "compute",
        steps=80,
        series={
            "running": "4x59 16x20",
            "itl_sum": "0+2x59 126+8x20",
        },
    )


def scenarios(rules: Ruleset) -> list[Scenario]:
    """The healthy server, and one server per alert in its limit."""
    ceiling = rules.caps.seqs_ceiling
    found = {
        "stalled": Scenario(
            "stalled", gauges={"running": 8, "waiting": 2}, per_minute={"generation_tokens": 0}
        ),
        "admission": Scenario("admission", per_minute={"admission_rejections": 30}),
        "kv-cache": Scenario(
            "kv-cache",
            gauges={"running": 40, "waiting": 10, "kv_cache_usage": 0.99},
            per_minute={"preemptions": 5},
        ),
        "deferred": Scenario("deferred", gauges={"waiting": 6, "deferred": 5}),
        "max-num-seqs": Scenario(
            "max-num-seqs", gauges={"running": ceiling or 32, "waiting": 10, "kv_cache_usage": 0.4}
        ),
        "max-num-batched-tokens": Scenario(
            "max-num-batched-tokens",
            gauges={"running": max(1, (ceiling or 4) // 4), "waiting": 10, "kv_cache_usage": 0.3},
        ),
        "compute": _compute_scenario(),
    }
    return [Scenario(None), *(found[a.limit] for a in rules.alerts)]


def _series_name(rules: Ruleset, key: str) -> str | None:
    m = rules.metrics
    plain = {
        "running": m.running,
        "waiting": m.waiting,
        "kv_cache_usage": m.kv_cache_usage,
        "preemptions": m.preemptions,
        "generation_tokens": m.generation_tokens,
        "prompt_tokens": m.prompt_tokens,
        "admission_rejections": m.admission_rejections,
        "deferred": m.deferred,
        "itl_sum": m.itl and m.itl + "_sum",
        "itl_count": m.itl and m.itl + "_count",
    }
    return plain[key]


def _selector(key: str) -> str:
    labels = {**LABELS, **({"reason": "deferred"} if key == "deferred" else {})}
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _values(scenario: Scenario, key: str) -> str:
    if key in scenario.series:
        return scenario.series[key]
    last = scenario.steps
    if key in _HEALTHY_GAUGES:
        return f"{scenario.gauges.get(key, _HEALTHY_GAUGES[key]):g}x{last}"
    return f"0+{scenario.per_minute.get(key, _HEALTHY_RATES[key]):g}x{last}"


def _input_series(rules: Ruleset, scenario: Scenario) -> list[dict[str, str]]:
    found = []
    for key in (*_HEALTHY_GAUGES, *_HEALTHY_RATES):
        name = _series_name(rules, key)
        if name is not None:
            values = _values(scenario, key)
            found.append({"series": name + _selector(key), "values": values})
    return found


def _expected(alert: Alert, language: Language) -> dict[str, object]:
    server = f"{LABELS['instance']} ({LABELS['model_name']})"
    return {
        "exp_labels": {**_labels(alert), **LABELS},
        "exp_annotations": _annotations(alert, language, server),
    }


def promtool_tests(rules: Ruleset, language: Language = "en") -> dict[str, object]:
    """promtool's unit tests of the rule file: in each scenario, only its alert fires."""
    tests = []
    for scenario in scenarios(rules):
        checks = [
            {
                "eval_time": scenario.eval_time,
                "alertname": a.name,
                "exp_alerts": [_expected(a, language)] if a.limit == scenario.limit else [],
            }
            for a in rules.alerts
        ]
        tests.append(
            {
                "name": f"a server in {scenario.limit or 'no limit'}",
                "interval": STEP,
                "input_series": _input_series(rules, scenario),
                "alert_rule_test": checks,
            }
        )
    return {"rule_files": [RULES_FILE], "evaluation_interval": STEP, "tests": tests}


def header(rules: Ruleset) -> str:
    """The comment that opens each YAML file: what made it, for which release and caps."""
    caps = rules.caps
    release = rules.release
    names_of = "" if release.table == release.asked else f" (names of {release.table})"
    return (
        f"# Generated by `servetune alerts` for vLLM {release.asked}{names_of}, "
        f"{release.engine.upper()} engine.\n"
        f"# Caps ({caps.source}): max_num_seqs={caps.max_num_seqs}, "
        f"max_num_batched_tokens={caps.max_num_batched_tokens}, "
        f"data_parallel_size={caps.data_parallel_size}.\n"
    )


def dump(document: Mapping[str, object], comment: str = "") -> str:
    """YAML with multi-line strings (the queries) as literal blocks."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, text)
    body = yaml.dump(dict(document), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return comment + body
