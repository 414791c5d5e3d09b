"""`bench`'s terminal views: the live line, and the final table laid out like `vllm bench
serve`'s (50 columns, labels left, values right) followed by servetune's own notes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servetune import texts
from servetune.measure.result_schema import (
    MetricsSummaryDoc,
    PrefixCacheDoc,
    ResultSummary,
    ServetuneBlock,
)
from servetune.render.check import display_width, wrap
from servetune.texts import Language, Voice

TABLE_WIDTH = 50
_LATENCIES = ("ttft", "tpot", "itl", "e2el")
_LATENCY_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2EL"}


def live_line(
    *,
    elapsed_s: float,
    done: int,
    total: int | None,
    failed: int,
    in_flight: int,
    tokens_per_s: float,
    language: Language = "en",
) -> str:
    """The status line shown (and rewritten in place) while a run goes."""
    return texts.Voice("bench", language)(
        "live",
        elapsed=f"{elapsed_s:6.1f}",
        done=done,
        total=f"/{total}" if total else "",
        failed=failed,
        in_flight=in_flight,
        rate=f"{tokens_per_s:,.0f}",
    )


def _centre(title: str, fill: str) -> str:
    """`title` centred in the table's width, like `f"{title:=^50}"` but counting wide characters
    as two columns."""
    room = max(0, TABLE_WIDTH - display_width(title))
    left = room // 2
    return fill * left + title + fill * (room - left)


def _row(label: str, value: object, say: Voice, digits: int = 2) -> str:
    if value is None:
        shown = say("na")
    elif isinstance(value, float):
        shown = f"{value:.{digits}f}"
    else:
        shown = str(value)
    gap = max(0, 40 - display_width(label)) + max(0, 10 - display_width(shown))
    return label + " " * gap + shown


def _latency_rows(doc: Mapping[str, Any], name: str, say: Voice) -> list[str]:
    metric = _LATENCY_NAMES[name]
    lines = [_centre(say(f"latency.{name}"), "-")]
    lines.append(_row(say("latency.mean", metric=metric), doc.get(f"mean_{name}_ms"), say))
    median = say("latency.median", metric=metric)
    lines.append(_row(median, doc.get(f"median_{name}_ms"), say))
    for p in (90, 95, 99):
        label = say("latency.percentile", metric=metric, p=p)
        lines.append(_row(label, doc.get(f"p{p}_{name}_ms"), say))
    return lines


def _counts(doc: ResultSummary, say: Voice) -> list[str]:
    rows = [
        ("completed", doc["completed"]),
        ("failed", doc["failed"]),
        ("duration", doc["duration"]),
        ("input_tokens", doc["total_input_tokens"]),
        ("output_tokens", doc["total_output_tokens"]),
        ("request_throughput", doc["request_throughput"]),
    ]
    if doc.get("request_goodput") is not None:
        rows.append(("request_goodput", doc["request_goodput"]))
    rows += [
        ("output_throughput", doc["output_throughput"]),
        ("peak_output_throughput", doc["max_output_tokens_per_s"]),
        ("peak_concurrency", doc["max_concurrent_requests"]),
        ("total_throughput", doc["total_token_throughput"]),
    ]
    return [_row(say(f"row.{key}"), value, say) for key, value in rows]


def bench_text(doc: ResultSummary, path: str | None, language: Language = "en") -> str:
    """The final table, laid out like `vllm bench serve`'s, then servetune's own checks."""
    block = doc["servetune"]
    say = texts.Voice("bench", language)
    lines = [_centre(say("title"), "=")]
    if block.get("partial"):
        lines.append(say("partial"))
    lines += _counts(doc, say)
    for name in _LATENCIES:
        lines += _latency_rows(doc, name, say)
    lines.append("=" * TABLE_WIDTH)
    lines += _notes(block, say)
    if path:
        lines.append(say("note.written", path=path))
    return "\n".join(lines) + "\n"


def _notes(block: ServetuneBlock, say: Voice) -> list[str]:
    notes: list[str] = []
    if block.get("errors_by_kind"):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(block["errors_by_kind"].items()))
        notes.append(say("note.errors", kinds=kinds))
    client = block["client"]
    lag = client["send_lag_s"]["percentiles"].get("99")
    if lag is not None:
        notes.append(say("note.send_lag", ms=f"{lag * 1000:.2f}"))
    if client["saturated"]:
        limit_ms = f"{client['lag_limit_s'] * 1000:g}"
        notes += wrap(say("note.saturated", limit_ms=limit_ms), "")
    goodput = block.get("goodput")
    share = goodput["good_share"] if goodput else None
    if share is not None:
        notes.append(say("note.good_share", percent=f"{share * 100:.1f}"))
    summary = block["server_metrics"].get("summary")
    if summary:
        notes.append(_server_note(summary, say))
    prefix = block.get("prefix_cache")
    if prefix:
        notes += _prefix_cache_notes(prefix, say)
    return notes


def _prefix_cache_notes(prefix: PrefixCacheDoc, say: Voice) -> list[str]:
    rate = prefix["hit_rate"]
    shown = say("na") if rate is None else f"{rate:.1%}"
    how = say(f"note.isolation.{prefix['isolation']}", seed=prefix["prompt_seed"])
    notes = [say("note.prefix_cache", rate=shown, how=how)]
    if prefix["unexpected_hits"]:
        expected = f"{prefix['expected_hit_rate'] or 0.0:.1%}"
        notes += wrap(say("note.prefix_cache_warning", rate=shown, expected=expected), "")
    return notes


def _server_note(summary: MetricsSummaryDoc, say: Voice) -> str:
    def num(value: float | None) -> str:
        return say("na") if value is None else f"{value:g}"

    kv = summary["peak_kv_cache_usage"]
    return say(
        "note.server",
        running=num(summary["peak_running"]),
        waiting=num(summary["peak_waiting"]),
        kv_cache=say("na") if kv is None else f"{kv:.0%}",
        preemptions=num(summary["preemptions"]),
    )
