"""What `plan` says, in English."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "header": "Plan: {model} on {machine}, {load}, {input_len} in / {output_len} out tokens",
    "load.closed": "{users} users at once (each sends the next request when the last ends)",
    "load.open": "{rate} requests/s arriving at random ({num} requests)",
    "col.config": "configuration",
    "col.gpus": "GPUs",
    "col.out": "out tok/s",
    "col.req": "req/s",
    "col.ttft": "TTFT mean/p99 ms",
    "col.tpot": "TPOT mean/p99 ms",
    "col.users": "users OK",
    "col.verdict": "verdict",
    "col.verdict.meets": "meets",
    "col.verdict.marginal": "marginal",
    "col.verdict.fails": "fails",
    "row.this": "this command",
    "bound": "What limits it: {bound}. KV cache: {kv} tokens.",
    "bound.kv-cache": "the KV cache (requests wait or are preempted for lack of blocks)",
    "bound.max-num-seqs": "--max-num-seqs (requests wait while the KV cache has room)",
    "bound.max-num-batched-tokens": "--max-num-batched-tokens (prefill waits for token budget)",
    "bound.compute": "compute (prefill FLOPs)",
    "bound.memory-bandwidth": "memory bandwidth (each decode step reads the weights and KV)",
    "bound.interconnect": "the interconnect (tensor-parallel all-reduce)",
    "kv.unknown": "unknown",
    "targets": "Targets (p{percentile}): {targets}.",
    "targets.verdict": "{targets} {verdict}.",
    "verdict.meets": "MEETS the targets",
    "verdict.marginal": (
        "MARGINAL: a target lies within 10% or inside the prediction's 80% interval"
    ),
    "verdict.fails": "FAILS a target",
    "capacity": "At most {users} users meet the targets: {qps} requests/s per GPU.",
    "capacity.none": "Even one user misses the targets on this configuration.",
    "what_if.header": "What if (one change each):",
    "what_if.refused": "left out: {note}",
    "what_if.refused.rules": "vLLM would refuse it: {rules}",
    "what_if.refused.error": "{error}",
    "batching.header": "Continuous vs static batching, same load:",
    "batching.line": (
        "continuous (vLLM, the shared taxi): {c_out} tok/s, mean TTFT {c_ttft} ms, mean "
        "latency {c_e2el} ms; static (the bus that waits to fill and runs to its longest "
        "passenger): {s_out} tok/s, mean TTFT {s_ttft} ms, mean latency {s_e2el} ms: "
        "{factor}x the throughput."
    ),
    "answer.header": "Answer:",
    "answer.lag.yes": (
        "Will {users} users lag? Yes: {detail} The targets hold up to about {ok} users."
    ),
    "answer.lag.yes.none": "Will {users} users lag? Yes: {detail}",
    "answer.lag.no": ("Will {users} users lag? No: {detail} There is room up to about {ok} users."),
    "answer.lag.marginal": (
        "Will {users} users lag? Too close to call: {detail} A target lies within 10% or "
        "inside the prediction's 80% interval; about {ok} users is the limit."
    ),
    "answer.lag.unknown": (
        "Will {users} users lag? Mean time to first token {ttft} ms, mean time per output token "
        "{tpot} ms (give --slo ttft:MS --slo tpot:MS to get a yes or no)."
    ),
    "answer.detail": "p{percentile} TTFT {ttft} ms and p{percentile} TPOT {tpot} ms.",
    "answer.qps": "QPS per GPU within the targets: {qps}.",
    "answer.qps.none": "QPS per GPU within the targets: none (the targets are not met).",
    "answer.qps.unknown": "QPS per GPU: {qps} at this load (no targets given).",
    "answer.best": "The change that buys the most: {change} ({gpus}): {what}.",
    "answer.best.users": "{users} users within the targets instead of {base}",
    "answer.best.throughput": "{out} output tok/s instead of {base}",
    "answer.best.none": "No what-if could be predicted for this configuration.",
    "notes": "Notes:",
    "plot.written": "plot: {path}",
    "refused": "This configuration cannot run; check finds:",
    "corrected": (
        "Planned as corrected: the command as given would not run ({rules}) and check knows "
        "the fix; every figure below is for this command:"
    ),
    "note.uncalibrated": (
        "uncalibrated: the step-time constants are defaults fitted to published runs "
        "(bandwidth efficiency {bandwidth}, compute efficiency {compute}, {step_ms} ms per "
        "step, {seq_us} us per request per step); give --calibrate RESULT measured on this "
        "setup for accurate numbers"
    ),
    "note.calibrated": (
        "calibrated on {runs} run(s): bandwidth efficiency {bandwidth}, compute efficiency "
        "{compute}, {step_ms} ms per step, {seq_us} us per request per step; largest error "
        "on those runs {worst}%"
    ),
    "note.moe": (
        "MoE: each step reads the experts its tokens are routed to (E x (1 - (1 - k/E)^B) per "
        "layer for B tokens choosing k of E; the busiest GPU under expert parallelism), "
        "fitted on published MoE runs"
    ),
    "note.mla": (
        "MLA: one latent per token on every GPU (the KV cache is not split by TP), prefill as "
        "MHA and decode over the latent (vLLM's absorbed path)"
    ),
    "note.interval": (
        "80% intervals (from the held-out published runs of the {group} group): output "
        "{out} tok/s, mean TPOT {tpot} ms, mean TTFT {ttft} ms; a target inside one is marginal"
    ),
}
