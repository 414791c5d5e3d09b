"""A run's statistics and its result file.

The file holds every top-level key `vllm bench serve --save-result` writes (the detailed ones
too, except generated texts), with e2el and p50/p90/p95/p99 always present, plus a `servetune`
object: schema version, tool version, the full config (API key redacted), the server command,
per-request records, the client's own lag, and the server's /metrics samples.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from servetune import __version__
from servetune.measure import metrics, server_metrics
from servetune.measure.bench import BenchRun, RequestRecord
from servetune.measure.metrics import Distribution

SCHEMA_VERSION = 1
CLIENT_LAG_LIMIT_S = 0.005  # send-lag p99 above this: the client itself fell behind
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")


@dataclass(frozen=True)
class Summary:
    """Statistics of the measured (non-warmup) requests. Latencies in seconds."""

    completed: int
    failed: int
    total_input_tokens: int
    total_output_tokens: int
    duration_s: float
    request_throughput: float | None
    request_goodput: float | None
    output_throughput: float | None
    total_token_throughput: float | None
    max_output_tokens_per_s: float | None
    max_concurrent_requests: int
    ttft: Distribution
    tpot: Distribution
    itl: Distribution
    e2el: Distribution
    itl_per_token: Distribution
    send_lag: Distribution
    client_queue: Distribution
    achieved_rate: float | None
    client_saturated: bool
    errors_by_kind: dict[str, int]
    output_tokens_source: dict[str, int]
    good_requests: int | None
    good_share: float | None
    server: server_metrics.MetricsSummary | None


def _tokens_per_chunk(rec: RequestRecord) -> list[float]:
    """Tokens each content chunk carried: running usage deltas when the server sends them,
    else the request's output tokens spread evenly over its chunks."""
    chunks = len(rec.content_times)
    counts = rec.chunk_tokens
    if chunks and len(counts) == chunks:
        return [float(b - a) for a, b in zip([0, *counts], counts, strict=False)]
    share = (rec.output_tokens or chunks) / chunks if chunks else 0.0
    return [share] * chunks


def _good(rec: RequestRecord, slo: dict[str, float]) -> bool:
    tpot = _tpot(rec)
    return metrics.meets_slo(slo, rec.ttft_s, tpot, rec.e2el_s)


def _tpot(rec: RequestRecord) -> float | None:
    if rec.e2el_s is None or rec.ttft_s is None or rec.output_tokens is None:
        return None
    return metrics.tpot(rec.e2el_s, rec.ttft_s, rec.output_tokens)


def summarize(run: BenchRun) -> Summary:
    measured = [r for r in run.records if not r.warmup]
    ok = [r for r in measured if r.ok]
    failed = [r for r in measured if not r.ok and r.sent_s is not None]
    duration = run.duration_s
    out_tokens = sum(r.output_tokens or 0 for r in ok)
    in_tokens = sum(
        r.prompt_tokens if r.prompt_tokens is not None else r.input_len or 0 for r in ok
    )
    gaps: list[float] = []
    per_token: list[float] = []
    weighted_chunks: list[tuple[float, float]] = []
    for rec in ok:
        rec_gaps = metrics.itl_gaps(rec.content_times)
        shares = _tokens_per_chunk(rec)
        gaps.extend(rec_gaps)
        per_token.extend(metrics.itl_per_token(rec_gaps, shares[1:]))
        weighted_chunks.extend(zip(rec.content_times, shares, strict=False))
    slo = run.config.goodput_slo_ms
    good = sum(1 for r in ok if _good(r, slo)) if slo else None
    lags = [lag for r in measured if (lag := r.lag_s) is not None]
    send_lag = metrics.distribution(lags)
    sent = [r.sent_s for r in measured if r.sent_s is not None]
    achieved = metrics.throughput(len(sent), max(sent)) if len(sent) > 1 else None
    return Summary(
        completed=len(ok),
        failed=len(failed),
        total_input_tokens=in_tokens,
        total_output_tokens=out_tokens,
        duration_s=duration,
        request_throughput=metrics.throughput(len(ok), duration),
        request_goodput=metrics.throughput(good, duration) if good is not None else None,
        output_throughput=metrics.throughput(out_tokens, duration),
        total_token_throughput=metrics.throughput(in_tokens + out_tokens, duration),
        max_output_tokens_per_s=metrics.peak_per_window(weighted_chunks),
        max_concurrent_requests=metrics.peak_concurrency(
            (r.sent_s or 0.0, r.content_times[-1]) for r in ok
        ),
        ttft=metrics.distribution(t for r in ok if (t := r.ttft_s) is not None),
        tpot=metrics.distribution(t for r in ok if (t := _tpot(r)) is not None),
        itl=metrics.distribution(gaps),
        e2el=metrics.distribution(t for r in ok if (t := r.e2el_s) is not None),
        itl_per_token=metrics.distribution(per_token),
        send_lag=send_lag,
        client_queue=metrics.distribution(q for r in measured if (q := r.queue_s) is not None),
        achieved_rate=achieved,
        client_saturated=(send_lag.percentiles.get(99) or 0.0) > CLIENT_LAG_LIMIT_S,
        errors_by_kind=dict(Counter(r.error for r in measured if r.error is not None)),
        output_tokens_source=dict(Counter(r.output_tokens_source or "none" for r in ok)),
        good_requests=good,
        good_share=good / len(measured) if good is not None and measured else None,
        server=server_metrics.summarize(run.samples) if run.metrics_available else None,
    )


def _ms(value: float | None) -> float | None:
    return None if value is None else value * 1000


def _stats(name: str, dist: Distribution) -> dict[str, float | None]:
    stats: dict[str, float | None] = {
        f"mean_{name}_ms": _ms(dist.mean),
        f"median_{name}_ms": _ms(dist.median),
        f"std_{name}_ms": _ms(dist.std),
    }
    for p in metrics.PERCENTILES:
        stats[f"p{p}_{name}_ms"] = _ms(dist.percentiles.get(p))
    return stats


def _rate(value: float) -> float | str:
    return "inf" if math.isinf(value) else value


def _record(rec: RequestRecord) -> dict[str, Any]:
    return {
        "index": rec.index,
        "warmup": rec.warmup,
        "scheduled_s": rec.scheduled_s,
        "slot_s": rec.slot_s,
        "queue_s": rec.queue_s,
        "sent_s": rec.sent_s,
        "lag_s": rec.lag_s,
        "ttft_s": rec.ttft_s,
        "e2el_s": rec.e2el_s,
        "itls_s": metrics.itl_gaps(rec.content_times),  # vLLM's detailed `itls`, per request
        "input_len": rec.input_len,
        "max_tokens": rec.max_tokens,
        "prompt_tokens": rec.prompt_tokens,
        "output_tokens": rec.output_tokens,
        "output_tokens_source": rec.output_tokens_source,
        "chunks": len(rec.content_times),
        "error": rec.error,
        "error_detail": rec.error_detail,
        "http_status": rec.http_status,
    }


def _distribution_json(dist: Distribution) -> dict[str, Any]:
    return asdict(dist)  # percentile keys become strings in JSON ("99")


def _servetune_block(run: BenchRun, summary: Summary) -> dict[str, Any]:
    from servetune.vllm.serve_command import parse_text

    command: dict[str, Any] | None = None
    if run.config.server_command:
        try:
            parsed = parse_text(run.config.server_command)
            command = {"text": run.config.server_command, "model": parsed.model,
                       "args": dict(parsed.args), "vllm_version_table": parsed.version,
                       "gpus": run.config.gpus}  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - a bad recorded command must not lose the run
            command = {"text": run.config.server_command, "parse_error": str(exc),
                       "gpus": run.config.gpus}  # fmt: skip
    return {
        "schema_version": SCHEMA_VERSION,
        "tool_version": __version__,
        "partial": run.partial,
        "config": run.config.redacted(),
        "seed": run.config.seed,
        "server_command": command,
        "server_version": run.server_version,
        "tokenizer": run.tokenizer_mode,
        "client": {
            "limits": asdict(run.limits),
            "send_lag_s": _distribution_json(summary.send_lag),
            "client_queue_s": _distribution_json(summary.client_queue),
            "achieved_rate": summary.achieved_rate,
            "saturated": summary.client_saturated,
            "lag_limit_s": CLIENT_LAG_LIMIT_S,
        },
        "errors_by_kind": summary.errors_by_kind,
        "output_tokens_source": summary.output_tokens_source,
        "goodput": {
            "slo_ms": dict(run.config.goodput_slo_ms),
            "good_requests": summary.good_requests,
            "good_share": summary.good_share,
        }
        if run.config.goodput_slo_ms
        else None,
        "itl_per_token_ms": _stats("itl_per_token", summary.itl_per_token),
        "server_metrics": {
            "available": run.metrics_available,
            "summary": asdict(summary.server) if summary.server else None,
            "samples": [asdict(s) for s in run.samples],
        },
        "requests": [_record(r) for r in run.records],
    }


def document(run: BenchRun, summary: Summary) -> dict[str, Any]:
    """The result file's JSON object (vLLM's keys first, then `servetune`)."""
    config = run.config
    measured = [r for r in run.records if not r.warmup]
    ok = [r for r in measured if r.ok]
    endpoint_type = "openai-chat" if config.endpoint.endswith("chat/completions") else "openai"
    doc: dict[str, Any] = {
        "date": run.date,
        "endpoint_type": endpoint_type,
        "backend": endpoint_type,
        "label": config.label,
        "model_id": config.model,
        "tokenizer_id": None,
        "num_prompts": len(measured),
        "request_rate": _rate(config.request_rate),
        "burstiness": _rate(config.burstiness),
        "max_concurrency": config.max_concurrency,
        "duration": summary.duration_s,
        "completed": summary.completed,
        "failed": summary.failed,
        "total_input_tokens": summary.total_input_tokens,
        "total_output_tokens": summary.total_output_tokens,
        "request_throughput": summary.request_throughput,
        "request_goodput": summary.request_goodput,
        "output_throughput": summary.output_throughput,
        "total_token_throughput": summary.total_token_throughput,
        "max_output_tokens_per_s": summary.max_output_tokens_per_s,
        "max_concurrent_requests": summary.max_concurrent_requests,
        "rtfx": 0.0,
        "latencies": [r.e2el_s for r in ok],
        "queue_times": [r.queue_s or 0.0 for r in ok],
        "input_lens": [r.prompt_tokens or r.input_len or 0 for r in ok],
        "output_lens": [r.output_tokens or 0 for r in ok],
        "ttfts": [r.ttft_s for r in ok],
        "start_times": [r.sent_s for r in ok],
        "errors": [r.error_detail or r.error or "" for r in measured if not r.ok],
    }
    for name in LATENCY_METRICS:
        doc.update(_stats(name, getattr(summary, name)))
    doc["servetune"] = _servetune_block(run, summary)
    return doc


def default_filename(run: BenchRun) -> str:
    """vLLM's naming: {label or backend}-{rate}qps[-concurrency{N}]-{model}-{date}.json."""
    config = run.config
    base = config.label or "servetune"
    rate = "inf" if math.isinf(config.request_rate) else f"{config.request_rate:g}"
    concurrency = f"-concurrency{config.max_concurrency}" if config.max_concurrency else ""
    model = config.model.rstrip("/").split("/")[-1]
    return f"{base}-{rate}qps{concurrency}-{model}-{run.date}.json"


def write_atomic(path: Path, doc: dict[str, Any]) -> None:
    """Write JSON via a temporary file in the same folder and `os.replace`: a reader never sees
    half a file, and an interrupted write leaves the old file intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            # No indent: json's C encoder only runs for compact output, and result files with
            # per-request records get large.
            fh.write(json.dumps(doc, allow_nan=False, separators=(",", ":")))
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def summary_document(doc: dict[str, Any]) -> dict[str, Any]:
    """The result without per-request arrays: what `--format json` prints."""
    per_request = {"latencies", "queue_times", "input_lens", "output_lens", "ttfts",
                   "start_times", "errors"}  # fmt: skip
    out = {k: v for k, v in doc.items() if k not in per_request and k != "servetune"}
    block = dict(doc["servetune"])
    block.pop("requests", None)
    if block.get("server_metrics"):
        block["server_metrics"] = {
            k: v for k, v in block["server_metrics"].items() if k != "samples"
        }
    out["servetune"] = block
    return out
