"""The Grafana dashboard `alerts` writes beside the rules: which limit fires (the `ALERTS`
series of the rules), and the signals each limit is judged on, against the caps of the serve
command, with only the metric names the release exports. It reads the raw vLLM metrics (it
works without the recording rules), filtered by the dashboard's model and instance variables.
"""

from __future__ import annotations

from servetune.judge.advice import KV_ROOM
from servetune.monitor.alerts import RATE, Ruleset
from servetune.monitor.limits import Said
from servetune.texts import Language

DASHBOARD_FILE = "grafana-dashboard.json"
SELECTOR = 'model_name=~"$model_name", instance=~"$instance"'
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
BY = "instance, model_name"


def _filtered(metric: str, extra: str = "") -> str:
    return f"{metric}{{{SELECTOR}{', ' + extra if extra else ''}}}"


def _sum(metric: str, extra: str = "") -> str:
    return f"sum by ({BY}) ({_filtered(metric, extra)})"


def _rate(metric: str) -> str:
    return f"sum by ({BY}) (rate({_filtered(metric)}[$__rate_interval]))"


def _quantile(metric: str, q: float) -> str:
    bucket = _filtered(metric + "_bucket")
    return f"histogram_quantile({q:g}, sum by (le, {BY}) (rate({bucket}[$__rate_interval])))"


def _target(expr: str, legend: str) -> dict[str, object]:
    return {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend}


def _panel(title: str, targets: list[dict[str, object]], unit: str) -> dict[str, object]:
    refs = [{**t, "refId": chr(ord("A") + i)} for i, t in enumerate(targets)]
    return {
        "type": "timeseries",
        "title": title,
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": refs,
    }


def _cap(value: int | None, legend: str) -> list[dict[str, object]]:
    return [_target(f"vector({value})", legend)] if value else []


def _latency(metric: str | None, legend: str) -> list[dict[str, object]]:
    if metric is None:
        return []
    return [
        _target(_quantile(metric, 0.5), f"p50 {legend} {{{{instance}}}}"),
        _target(_quantile(metric, 0.99), f"p99 {legend} {{{{instance}}}}"),
    ]


def _requests(rules: Ruleset) -> list[dict[str, object]]:
    m = rules.metrics
    found = []
    if m.running:
        found.append(_target(_sum(m.running), "running {{instance}}"))
    if m.waiting:
        found.append(_target(_sum(m.waiting), "waiting {{instance}}"))
    if m.deferred:
        found.append(_target(_sum(m.deferred, 'reason="deferred"'), "deferred {{instance}}"))
    return found + _cap(rules.caps.seqs_ceiling, "cap (--max-num-seqs)")


def _panels(rules: Ruleset, language: Language) -> list[dict[str, object]]:
    m = rules.metrics

    def title(key: str) -> str:
        return Said(f"dash.{key}").text(language)

    limit = _target('ALERTS{alertname=~"VllmLimit.*", alertstate="firing"}', "{{limit}}")
    panels = [
        {**_panel(title("limit"), [limit], "none"), "type": "state-timeline"},
        _panel(title("running"), _requests(rules), "none"),
    ]
    if m.kv_cache_usage:
        kv = [_target(_sum(m.kv_cache_usage).replace("sum by", "max by"), "{{instance}}")]
        panels.append(
            _panel(title("kv"), [*kv, _target(f"vector({KV_ROOM:g})", "room")], "percentunit")
        )
    rates = [(m.preemptions, "preemptions"), (m.admission_rejections, "admission")]
    for metric, key in rates:
        if metric:
            panels.append(_panel(title(key), [_target(_rate(metric), "{{instance}}")], "reqps"))
    tokens = [(m.prompt_tokens, "prompt"), (m.generation_tokens, "generation")]
    targets = [
        _target(_rate(metric), f"{legend} {{{{instance}}}}") for metric, legend in tokens if metric
    ]
    panels.append(_panel(title("tokens"), targets, "none"))
    for metric, key in ((m.ttft, "ttft"), (m.itl, "itl"), (m.queue, "queue")):
        if metric:
            panels.append(_panel(title(key), _latency(metric, key.upper()), "s"))
    if m.step_tokens:
        step = [_target(_quantile(m.step_tokens, 0.99), "p99 {{instance}}")]
        budget = _cap(rules.caps.max_num_batched_tokens, "budget (--max-num-batched-tokens)")
        panels.append(_panel(title("step"), step + budget, "none"))
    return _laid_out(panels)


def _laid_out(panels: list[dict[str, object]]) -> list[dict[str, object]]:
    """Two panels a row, the limit timeline alone across the top."""
    placed = [{**panels[0], "id": 1, "gridPos": {"h": 6, "w": 24, "x": 0, "y": 0}}]
    for n, panel in enumerate(panels[1:]):
        grid = {"h": 8, "w": 12, "x": 12 * (n % 2), "y": 6 + 8 * (n // 2)}
        placed.append({**panel, "id": n + 2, "gridPos": grid})
    return placed


def _variable(name: str, running: str | None) -> dict[str, object]:
    query = f"label_values({running}, {name})" if running else ""
    return {
        "name": name,
        "type": "query",
        "datasource": DATASOURCE,
        "query": query,
        "definition": query,
        "includeAll": True,
        "multi": True,
        "refresh": 2,
        "current": {"text": "All", "value": "$__all"},
    }


def document(rules: Ruleset, language: Language = "en") -> dict[str, object]:
    """The dashboard (Grafana's JSON model, schema 39)."""
    running = rules.metrics.running
    datasource = {"name": "datasource", "type": "datasource", "query": "prometheus"}
    return {
        "title": Said("dash.title", version=rules.release.asked).text(language),
        "uid": f"servetune-vllm-{rules.release.asked.replace('.', '-')}",
        "tags": ["vllm", "servetune"],
        "schemaVersion": 39,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [datasource, _variable("model_name", running), _variable("instance", running)]
        },
        "panels": _panels(rules, language),
        "description": f"servetune alerts: rate window {RATE} in the rules, $__rate_interval here",
    }
