"""A run's statistics and its result file.

The file holds every top-level key `vllm bench serve --save-result` writes (the detailed ones
too, except generated texts), with e2el and p50/p90/p95/p99 always present, plus a `servetune`
object: schema version, tool version, the full config (API key redacted), the server command,
per-request records, the client's own lag, the server's /metrics samples and how the run kept
the server's prefix cache out of its numbers. The shape is typed in `result_schema.py`.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import cast

from servetune import __version__
from servetune.measure import metrics, server_metrics
from servetune.measure.bench import BenchRun, RequestRecord
from servetune.measure.metrics import Distribution
from servetune.measure.result_schema import (
    RESULT_SCHEMA_VERSION,
    DistributionDoc,
    Isolation,
    LatencyStats,
    MetricsSummaryDoc,
    PrefixCacheDoc,
    RequestDoc,
    ResultDoc,
    ResultSummary,
    ServerCommandDoc,
    ServerMetricsDoc,
    ServetuneBlock,
    VllmKeys,
)

CLIENT_LAG_LIMIT_S = 0.005  # send-lag p99 above this: the client itself fell behind
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
# A random workload whose prompts share nothing but the --random-prefix-len prefix should find
# at most that share in the cache; more than this many points above it is worth a warning.
PREFIX_HIT_MARGIN = 0.05


def unexpected_prefix_hits(hit_rate: float | None, expected_hit_rate: float | None) -> bool:
    """Whether a run found more of its prompt tokens in the server's prefix cache than its
    workload explains: hit_rate > expected_hit_rate + PREFIX_HIT_MARGIN. Either unknown (None:
    no /metrics counters, or not a random workload) is no finding. `bench` and `compare` both
    judge by this."""
    if hit_rate is None or expected_hit_rate is None:
        return False
    return hit_rate > expected_hit_rate + PREFIX_HIT_MARGIN


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
    single_tokens = True  # every chunk carried one token: per-token ITL is the chunk ITL
    for rec in ok:
        rec_gaps = metrics.itl_gaps(rec.content_times)
        shares = _tokens_per_chunk(rec)
        gaps.extend(rec_gaps)
        rec_per_token = metrics.itl_per_token(rec_gaps, shares[1:])
        single_tokens = single_tokens and len(rec_per_token) == len(rec_gaps)
        per_token.extend(rec_per_token)
        weighted_chunks.extend(zip(rec.content_times, shares, strict=False))
    itl = metrics.distribution(gaps)
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
        itl=itl,
        e2el=metrics.distribution(t for r in ok if (t := r.e2el_s) is not None),
        itl_per_token=itl if single_tokens else metrics.distribution(per_token),
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


def _family(dist: Distribution) -> tuple[float | None, ...]:
    """mean, median, std, p50, p90, p95, p99 in ms."""
    spread = (_ms(dist.mean), _ms(dist.median), _ms(dist.std))
    return spread + tuple(_ms(dist.percentiles.get(p)) for p in metrics.PERCENTILES)


def _stats(name: str, dist: Distribution) -> dict[str, float | None]:
    keys = ("mean", "median", "std", *(f"p{p}" for p in metrics.PERCENTILES))
    return {f"{key}_{name}_ms": value for key, value in zip(keys, _family(dist), strict=True)}


def _latency_stats(summary: Summary) -> LatencyStats:
    t, o, i, e = (_family(d) for d in (summary.ttft, summary.tpot, summary.itl, summary.e2el))
    return LatencyStats(
        mean_ttft_ms=t[0],
        median_ttft_ms=t[1],
        std_ttft_ms=t[2],
        p50_ttft_ms=t[3],
        p90_ttft_ms=t[4],
        p95_ttft_ms=t[5],
        p99_ttft_ms=t[6],
        mean_tpot_ms=o[0],
        median_tpot_ms=o[1],
        std_tpot_ms=o[2],
        p50_tpot_ms=o[3],
        p90_tpot_ms=o[4],
        p95_tpot_ms=o[5],
        p99_tpot_ms=o[6],
        mean_itl_ms=i[0],
        median_itl_ms=i[1],
        std_itl_ms=i[2],
        p50_itl_ms=i[3],
        p90_itl_ms=i[4],
        p95_itl_ms=i[5],
        p99_itl_ms=i[6],
        mean_e2el_ms=e[0],
        median_e2el_ms=e[1],
        std_e2el_ms=e[2],
        p50_e2el_ms=e[3],
        p90_e2el_ms=e[4],
        p95_e2el_ms=e[5],
        p99_e2el_ms=e[6],
    )


def _rate(value: float) -> float | str:
    return "inf" if math.isinf(value) else value


def _record(rec: RequestRecord) -> RequestDoc:
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


def _distribution_json(dist: Distribution) -> DistributionDoc:
    return {
        "count": dist.count,
        "mean": dist.mean,
        "std": dist.std,
        "min": dist.min,
        "max": dist.max,
        "percentiles": {str(p): v for p, v in dist.percentiles.items()},  # JSON keys are text
    }


def _server_command(run: BenchRun) -> ServerCommandDoc | None:
    from servetune.vllm.serve_command import parse_text

    text, gpus = run.config.server_command, run.config.gpus
    if not text:
        return None
    try:
        parsed = parse_text(text)
    except Exception as exc:  # noqa: BLE001 - a bad recorded command must not lose the run
        return {"text": text, "gpus": gpus, "parse_error": str(exc)}
    args = {k: list(v) if isinstance(v, tuple) else v for k, v in parsed.args.items()}
    found: ServerCommandDoc = {
        "text": text,
        "gpus": gpus,
        "args": args,
        "vllm_version_table": parsed.version,
    }
    if parsed.model is not None:
        found["model"] = parsed.model
    return found


def _isolation(run: BenchRun) -> Isolation:
    if run.prefix_cache_reset:
        return "reset"
    if run.prompt_seed is not None and run.config.prompt_seed is None:
        return "fresh-prompts"
    return "none"


def _prefix_cache(run: BenchRun, summary: Summary) -> PrefixCacheDoc:
    """How earlier runs were kept out of the cache, and the hit rate against what a random
    workload's shared prefix explains (its share of the prompt tokens, at most)."""
    rate = summary.server.prefix_cache_hit_rate if summary.server else None
    spec = run.config.workload
    expected = None
    if spec.dataset_name == "random":
        prefix = spec.random_prefix_len
        expected = prefix / (prefix + spec.random_input_len)
    return {
        "isolation": _isolation(run),
        "reset": run.prefix_cache_reset,
        "prompt_seed": run.prompt_seed,
        "hit_rate": rate,
        "expected_hit_rate": expected,
        "unexpected_hits": unexpected_prefix_hits(rate, expected),
    }


def _server_metrics(run: BenchRun, summary: Summary) -> ServerMetricsDoc:
    found = cast(MetricsSummaryDoc, asdict(summary.server)) if summary.server else None
    return {
        "available": run.metrics_available,
        "summary": found,  # asdict of MetricsSummary: the same fields, by construction
        "samples": [
            {
                "t_s": s.t_s,
                "running": s.running,
                "waiting": s.waiting,
                "kv_cache_usage": s.kv_cache_usage,
                "preemptions_total": s.preemptions_total,
                "prefix_cache_queries": s.prefix_cache_queries,
                "prefix_cache_hits": s.prefix_cache_hits,
            }
            for s in run.samples
        ],
    }


def _servetune_block(run: BenchRun, summary: Summary) -> ServetuneBlock:
    return {
        "schema_version": RESULT_SCHEMA_VERSION,
        "tool_version": __version__,
        "partial": run.partial,
        "config": run.config.redacted(),
        "seed": run.config.seed,
        "workers": run.workers,
        "prefix_cache": _prefix_cache(run, summary),
        "server_command": _server_command(run),
        "server_version": run.server_version,
        "tokenizer": run.tokenizer_mode,
        "client": {
            "limits": {
                "connect_timeout_s": run.limits.connect_timeout_s,
                "request_timeout_s": run.limits.request_timeout_s,
                "max_idle_connections": run.limits.max_idle_connections,
            },
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
        "server_metrics": _server_metrics(run, summary),
        "requests": [_record(r) for r in run.records],
    }


def _vllm_keys(run: BenchRun, summary: Summary) -> VllmKeys:
    config = run.config
    endpoint_type = "openai-chat" if config.endpoint.endswith("chat/completions") else "openai"
    return {
        "date": run.date,
        "endpoint_type": endpoint_type,
        "backend": endpoint_type,
        "label": config.label,
        "model_id": config.model,
        "tokenizer_id": None,
        "num_prompts": sum(1 for r in run.records if not r.warmup),
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
        **_latency_stats(summary),
    }


def document(run: BenchRun, summary: Summary) -> ResultDoc:
    """The result file's JSON object (vLLM's keys first, then `servetune`)."""
    measured = [r for r in run.records if not r.warmup]
    ok = [r for r in measured if r.ok]
    return {
        **_vllm_keys(run, summary),
        "latencies": [r.e2el_s for r in ok],
        "queue_times": [r.queue_s or 0.0 for r in ok],
        "input_lens": [r.prompt_tokens or r.input_len or 0 for r in ok],
        "output_lens": [r.output_tokens or 0 for r in ok],
        "ttfts": [r.ttft_s for r in ok],
        "start_times": [r.sent_s for r in ok],
        "errors": [r.error_detail or r.error or "" for r in measured if not r.ok],
        "servetune": _servetune_block(run, summary),
    }


def default_filename(run: BenchRun) -> str:
    """vLLM's naming: {label or backend}-{rate}qps[-concurrency{N}]-{model}-{date}.json."""
    config = run.config
    base = config.label or "servetune"
    rate = "inf" if math.isinf(config.request_rate) else f"{config.request_rate:g}"
    concurrency = f"-concurrency{config.max_concurrency}" if config.max_concurrency else ""
    model = config.model.rstrip("/").split("/")[-1]
    return f"{base}-{rate}qps{concurrency}-{model}-{run.date}.json"


def write_atomic(path: Path, doc: Mapping[str, object]) -> None:
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


_PER_REQUEST = frozenset(ResultDoc.__annotations__) - frozenset(ResultSummary.__annotations__)


def summary_document(doc: ResultDoc) -> ResultSummary:
    """The result without per-request arrays, records or samples: what `--format json` prints."""
    block = doc["servetune"].copy()
    block.pop("requests", None)
    server = block["server_metrics"].copy()
    server.pop("samples", None)
    block["server_metrics"] = server
    kept = {key: value for key, value in doc.items() if key not in _PER_REQUEST}
    # The keys of ResultDoc less those it adds to ResultSummary: a ResultSummary.
    return cast(ResultSummary, {**kept, "servetune": block})
