"""What `servetune report` says, in English: the page's frame, where the numbers came from, the
headings of each kind of section, the figures' titles, axes and legends. The results' own
sentences (bench's table and notes, compare's conclusion and warnings, plan's answer,
postmortem's timeline) are their areas' texts: the page uses the terminal views' words."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "page.title": "servetune report",
    "written": "Report written to {path}",
    "page.made": "Made by servetune {version}. This page needs no network: everything it shows "
    "is inside it.",
    "section.bench": "Benchmark: {source}",
    "section.compare": "Before and after",
    "section.tune": "Tune: {source}",
    "section.plan": "Plan: {source}",
    "section.postmortem": "Postmortem: {source}",
    # --- where the numbers came from ---
    "about.title": "Where these numbers come from",
    "about.source": "File",
    "about.measured": "Measured",
    "about.servetune": "servetune version",
    "about.vllm": "vLLM version",
    "about.gpus": "GPUs",
    "about.commands": "Command lines",
    "about.unknown": "not recorded in the file",
    "about.rebuilt": "Rebuilt from the settings the file records (options left at their "
    "defaults are not shown).",
    "compare.this": "this comparison",
    # --- bench ---
    "bench.summary": "Summary",
    "bench.distributions": "Latency distributions",
    "bench.over_time": "Over the run",
    "bench.server": "The server's /metrics over the run",
    "bench.client": "The client",
    "bench.no_samples": "This file has no per-request latencies (vLLM writes them with "
    "--save-detailed).",
    "bench.no_times": "This file records no send times (vLLM writes them with --save-detailed).",
    "bench.no_server": "This file has no /metrics samples (servetune bench records them when "
    "the server exports /metrics; vLLM's files never do).",
    "bench.no_lag": "This file records no send lag (only servetune bench measures its own client).",
    # --- figures ---
    "fig.cdf": "{metric}: share of requests within each latency",
    "fig.latency_by_send": "Latency of each request by when it was sent",
    "fig.tokens": "Output tokens per second over the run",
    "fig.in_flight": "Requests in flight over the run",
    "fig.server_requests": "Requests running and waiting on the server",
    "fig.kv": "KV cache use on the server",
    "fig.preemptions": "Preemptions on the server (total so far)",
    "fig.send_lag": "Send lag: how late the client sent each request (limit marked)",
    "fig.forest": "Change of each metric after vs before, with its {confidence} interval",
    "fig.what_if_throughput": "Output tokens/s of each configuration",
    "fig.what_if_users": "Users within the targets, by configuration",
    "fig.batching_throughput": "Output tokens/s: continuous vs static batching",
    "fig.batching_ttft": "Mean time to first token: continuous vs static batching",
    "fig.timeline": "The limit over time (incidents shaded)",
    "fig.incidents": "Requests waiting at each incident's peak",
    "axis.ms": "ms",
    "axis.share": "share of requests",
    "axis.send_s": "sent at (s from the start)",
    "axis.time_s": "time (s from the start)",
    "axis.tokens_per_s": "tokens/s",
    "axis.requests": "requests",
    "axis.kv": "KV cache use",
    "axis.preemptions": "preemptions",
    "axis.lag_ms": "send lag (ms)",
    "axis.change_pct": "change (%)",
    "axis.users": "users",
    "axis.waiting": "requests waiting",
    "axis.minutes_from": "minutes from {start}",
    "axis.seconds_from": "seconds from {start}",
    "legend.running": "running",
    "legend.waiting": "waiting",
    "legend.limit": "limit",
    "legend.continuous": "continuous (vLLM)",
    "legend.static": "static batching",
    # --- compare ---
    "compare.reading": "Each dot is the change after vs before; its bar is the interval the "
    "change lies in. A bar that crosses 0 is no change beyond noise. Lower latency and higher "
    "throughput are better.",
    "compare.verdicts": "Verdicts",
    "compare.knobs": "Knobs changed",
    "compare.no_knobs": "No knob changed.",
    "compare.knobs_unknown": "Unknown: a side's result files record no server command.",
    "compare.warnings": "Warnings",
    "compare.no_warnings": "None.",
    "compare.next": "Next step",
    "compare.no_next": "None: the server's /metrics show no limit (or were not recorded).",
    "compare.distributions": "Distributions, before and after",
    # --- plan ---
    "plan.predicted": "A prediction from a simulation of vLLM's scheduler, not a measurement.",
    "plan.no_intervals": "This file gives no intervals for its predictions.",
    # --- postmortem ---
    "postmortem.english": "The evidence and the next step are quoted from the file, which "
    "postmortem writes in English.",
}
