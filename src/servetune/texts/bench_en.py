"""What `bench` says, in English: the live line, the final table (laid out and worded like
`vllm bench serve`'s, so the two can be read side by side) and servetune's notes under it."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "live": "{elapsed} s  done {done}{total}  failed {failed}  in flight {in_flight}  {rate} tok/s",
    "title": " Serving Benchmark Result ",
    "partial": "PARTIAL RESULT: the run was interrupted",
    "na": "n/a",
    # --- rows of the table ---
    "row.completed": "Successful requests:",
    "row.failed": "Failed requests:",
    "row.duration": "Benchmark duration (s):",
    "row.input_tokens": "Total input tokens:",
    "row.output_tokens": "Total generated tokens:",
    "row.request_throughput": "Request throughput (req/s):",
    "row.request_goodput": "Request goodput (req/s):",
    "row.output_throughput": "Output token throughput (tok/s):",
    "row.peak_output_throughput": "Peak output token throughput (tok/s):",
    "row.peak_concurrency": "Peak concurrent requests:",
    "row.total_throughput": "Total token throughput (tok/s):",
    # --- latency sections ---
    "latency.ttft": "Time to First Token",
    "latency.tpot": "Time per Output Token (excl. 1st token)",
    "latency.itl": "Inter-token Latency",
    "latency.e2el": "End-to-end Latency",
    "latency.mean": "Mean {metric} (ms):",
    "latency.median": "Median {metric} (ms):",
    "latency.percentile": "P{p} {metric} (ms):",
    # --- notes under the table ---
    "note.errors": "Errors by kind: {kinds}",
    "note.send_lag": "Client send lag p99: {ms} ms",
    "note.saturated": (
        "WARNING: the client itself fell behind its schedule (send lag p99 over {limit_ms} ms); "
        "latencies include its own delay. Lower the rate or run the client on a less busy "
        "machine."
    ),
    "note.good_share": "Requests meeting the SLOs: {percent}%",
    "note.server": (
        "Server: peak running {running}, peak waiting {waiting}, peak KV cache {kv_cache}, "
        "preemptions {preemptions}"
    ),
    "note.prefix_cache": "Prefix cache hit rate: {rate} ({how})",
    "note.isolation.reset": "the server's cache was emptied before the run",
    "note.isolation.fresh-prompts": "fresh prompt texts, --prompt-seed {seed}",
    "note.isolation.none": "earlier runs with these prompts may have filled the cache",
    "note.prefix_cache_warning": (
        "WARNING: the server found {rate} of the prompt tokens in its prefix cache, where this "
        "random workload's shared prefix explains at most {expected}. Those requests skipped "
        "part of their prefill: TTFT and throughput look better than they would on new "
        "prompts. Do not repeat a --prompt-seed against the same server, or start vLLM with "
        "VLLM_SERVER_DEV_MODE=1 so that bench can empty the cache first."
    ),
    "note.written": "Result written to {path}",
}
