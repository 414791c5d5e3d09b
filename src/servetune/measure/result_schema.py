"""The result file's shape, once: what `bench` writes (`results.py`), what `compare` and `accept`
read (`judge/runs.py`) and what the bench table shows (`render/bench.py`).

Every top-level key `vllm bench serve --save-result` writes, then servetune's own block. Times
in the per-request records are seconds from the run's start; `_ms` keys are milliseconds. A
reader treats a file as a claim of this shape (it may come from vLLM, or from an older
servetune): keys a writer of that kind leaves out are `NotRequired`, and every value is still
checked before use.

Schema versions: 1 first; 2 adds `prefix_cache`, `workers` and the prefix-cache fields of
`server_metrics`.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

RESULT_SCHEMA_VERSION = 2

Isolation = Literal["reset", "fresh-prompts", "none"]


class DistributionDoc(TypedDict):
    count: int
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    percentiles: dict[str, float]  # "50", "90", "95", "99"


class LimitsDoc(TypedDict):
    connect_timeout_s: float
    request_timeout_s: float
    max_idle_connections: int


class ClientDoc(TypedDict):
    limits: LimitsDoc
    send_lag_s: DistributionDoc
    client_queue_s: DistributionDoc
    achieved_rate: float | None
    saturated: bool
    lag_limit_s: float


class GoodputDoc(TypedDict):
    slo_ms: dict[str, float]
    good_requests: int | None
    good_share: float | None


class ServerCommandDoc(TypedDict):
    """The recorded `vllm serve` command: parsed, or the reason it could not be."""

    text: str
    gpus: str | None
    model: NotRequired[str]
    args: NotRequired[dict[str, str | bool | list[str]]]
    vllm_version_table: NotRequired[str]
    parse_error: NotRequired[str]


class MetricsSampleDoc(TypedDict):
    t_s: float
    running: float | None
    waiting: float | None
    kv_cache_usage: float | None
    preemptions_total: float | None
    prefix_cache_queries: NotRequired[float | None]
    prefix_cache_hits: NotRequired[float | None]


class MetricsSummaryDoc(TypedDict):
    samples: int
    peak_running: float | None
    peak_waiting: float | None
    peak_kv_cache_usage: float | None
    preemptions: float | None
    prefix_cache_queries: NotRequired[float | None]
    prefix_cache_hits: NotRequired[float | None]
    prefix_cache_hit_rate: NotRequired[float | None]


class ServerMetricsDoc(TypedDict):
    available: bool
    summary: MetricsSummaryDoc | None
    samples: NotRequired[list[MetricsSampleDoc]]  # left out of `--format json`


class PrefixCacheDoc(TypedDict):
    """How the run kept earlier runs' prompts out of the server's prefix cache, and how much of
    its own prompts the server found there."""

    isolation: Isolation  # reset: emptied before the run; fresh-prompts: a new prompt seed
    reset: bool
    prompt_seed: int | None
    hit_rate: float | None  # prefix-cache hits / queries during the run (server /metrics)
    expected_hit_rate: float | None  # the shared --random-prefix-len prefix's share, at most
    unexpected_hits: bool  # a random workload hit the cache well beyond that share


class RequestDoc(TypedDict):
    index: int
    warmup: bool
    scheduled_s: float
    slot_s: float | None
    queue_s: float | None
    sent_s: float | None
    lag_s: float | None
    ttft_s: float | None
    e2el_s: float | None
    itls_s: list[float]
    input_len: int | None
    max_tokens: int
    prompt_tokens: int | None
    output_tokens: int | None
    output_tokens_source: Literal["usage", "chunks"] | None
    chunks: int
    error: str | None
    error_detail: str | None
    http_status: int | None


class ServetuneBlock(TypedDict):
    schema_version: int
    tool_version: str
    partial: bool
    config: dict[str, object]  # BenchConfig.redacted(): every option, the API key never
    seed: int
    workers: NotRequired[int]
    prefix_cache: NotRequired[PrefixCacheDoc]
    server_command: ServerCommandDoc | None
    server_version: str | None
    tokenizer: str
    client: ClientDoc
    errors_by_kind: dict[str, int]
    output_tokens_source: dict[str, int]
    goodput: GoodputDoc | None
    itl_per_token_ms: dict[str, float | None]
    server_metrics: ServerMetricsDoc
    requests: NotRequired[list[RequestDoc]]  # left out of `--format json`


class LatencyStats(TypedDict):
    """mean, median, std and p50/p90/p95/p99 of each latency family, in ms (None: no sample)."""

    mean_ttft_ms: float | None
    median_ttft_ms: float | None
    std_ttft_ms: float | None
    p50_ttft_ms: float | None
    p90_ttft_ms: float | None
    p95_ttft_ms: float | None
    p99_ttft_ms: float | None
    mean_tpot_ms: float | None
    median_tpot_ms: float | None
    std_tpot_ms: float | None
    p50_tpot_ms: float | None
    p90_tpot_ms: float | None
    p95_tpot_ms: float | None
    p99_tpot_ms: float | None
    mean_itl_ms: float | None
    median_itl_ms: float | None
    std_itl_ms: float | None
    p50_itl_ms: float | None
    p90_itl_ms: float | None
    p95_itl_ms: float | None
    p99_itl_ms: float | None
    mean_e2el_ms: float | None
    median_e2el_ms: float | None
    std_e2el_ms: float | None
    p50_e2el_ms: float | None
    p90_e2el_ms: float | None
    p95_e2el_ms: float | None
    p99_e2el_ms: float | None


class VllmKeys(LatencyStats):
    """The run's numbers under the names `vllm bench serve` gives them."""

    date: str
    endpoint_type: str
    backend: str
    label: str | None
    model_id: str
    tokenizer_id: str | None
    num_prompts: int
    request_rate: float | str  # "inf" for an unlimited rate
    burstiness: float | str
    max_concurrency: int | None
    duration: float
    completed: int
    failed: int
    total_input_tokens: int
    total_output_tokens: int
    request_throughput: float | None
    request_goodput: float | None
    output_throughput: float | None
    total_token_throughput: float | None
    max_output_tokens_per_s: float | None
    max_concurrent_requests: int
    rtfx: float


class ResultSummary(VllmKeys):
    """The run without per-request arrays, records or samples: what `bench --format json`
    prints."""

    servetune: ServetuneBlock  # a vLLM file has no such block: readers check


class ResultDoc(ResultSummary):
    """A whole result file: the summary plus vLLM's per-request arrays (successes only, as
    servetune writes them; vLLM keeps a failed request in each with a latency of 0, and with
    --save-detailed adds `itls` and `generated_texts`)."""

    latencies: list[float | None]
    queue_times: list[float]
    input_lens: list[int]
    output_lens: list[int]
    ttfts: list[float | None]
    start_times: list[float | None]
    errors: list[str]
