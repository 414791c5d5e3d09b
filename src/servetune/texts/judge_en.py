"""What `compare` and `accept` print, in English (their JSON documents keep their own English
keys and values: those are the contract). `verdict.*` and `status.*` spell the closed sets of
`judge.compare.Verdict` and `judge.accept.CheckStatus`; `check.<id>` names accept's checks and
`evidence.*` says what each check looked at."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    # --- compare ---
    "compare.runs": (
        "before: {before} run(s), after: {after} run(s); {confidence} intervals by resampling "
        "{method}."
    ),
    "compare.method.runs": "runs",
    "compare.method.requests": "requests within a run",
    "compare.column.metric": "metric",
    "compare.column.before": "before",
    "compare.column.after": "after",
    "compare.column.change": "change",
    "compare.column.ci": "CI",
    "compare.column.verdict": "verdict",
    "compare.changed_flags": "Changed flags (before -> after):",
    "compare.unset": "unset",
    "compare.default": " (default)",
    "compare.warnings": "Warnings:",
    "compare.next_step": "Next step: {step}",
    "verdict.better": "better",
    "verdict.worse": "worse",
    "verdict.no-change": "no-change",
    "verdict.insufficient-data": "insufficient",
    # --- compare: what the judge writes (the JSON document carries the English) ---
    "list.comma": ", ",
    "list.semicolon": "; ",
    "side.before": "before",
    "side.after": "after",
    "side.both": "before and after",
    "metric.mean": "mean {family}",
    "metric.percentile": "{stat} {family}",
    "metric.request_throughput": "request throughput",
    "metric.output_throughput": "output throughput",
    "metric.total_token_throughput": "total token throughput",
    "metric.request_goodput": "goodput",
    "metric.other": "{name}",
    "conclusion": "{head}{knobs}.",
    "conclusion.single.both": "Not conclusive: only one run per side{suggest}",
    "conclusion.single.before": "Not conclusive: only one run before{suggest}",
    "conclusion.single.after": "Not conclusive: only one run after{suggest}",
    "conclusion.suggest": " (requests alone suggest {changes})",
    "conclusion.trade_off": "Trade-off: better {better}; worse {worse}",
    "conclusion.better": "After is better: {changes}",
    "conclusion.worse": "After is worse: {changes}",
    "conclusion.no_change": "No change beyond noise",
    "conclusion.nothing": "Not conclusive: no metric could be compared",
    "conclusion.change": "{metric} {change}",
    "conclusion.with_ci": "{change} {ci}",
    "conclusion.ci": "(CI {low}..{high})",
    "conclusion.config_unknown": "; server config unknown",
    "conclusion.no_knob": "; no knob changed",
    "conclusion.knobs": "; {n} knobs changed",
    "conclusion.knob_spelled": "; {n} knob changed: {changes}",
    "conclusion.knobs_spelled": "; {n} knobs changed: {changes}",
    "conclusion.knob": "{flag} {before} -> {after}",
    "config.no_command": "no server command recorded",
    "config.unreadable": "its recorded server command cannot be read ({error})",
    "warning.config-mixed": (
        "{side}: its runs were served with different settings ({flags}); the comparison uses "
        "the first run's ({source})."
    ),
    "warning.config-unknown": (
        "{side}: {why}, so the changed flags are unknown (plain `vllm bench serve` files never "
        'record the server command). Run `servetune bench --server-command "vllm serve ..."`.'
    ),
    "workload.setting": "{option} {before} vs {after}",
    "workload.tokens.input": "mean input tokens per request {before:.0f} vs {after:.0f}",
    "workload.tokens.output": "mean output tokens per request {before:.0f} vs {after:.0f}",
    "warning.workload-inside": (
        "{side}: its runs ran different workloads ({diffs}), so they are not repeats of one "
        "another."
    ),
    "warning.workload-between": (
        "The workload differs ({diffs}): the sides measured different things, so the changes "
        "are not the server's doing. Rerun with the same options."
    ),
    "warning.client-saturated": (
        "{side}: the load generator fell behind its schedule in {behind} of {runs} run(s) "
        "(send-lag p99 up to {worst_ms:.1f} ms, limit {limit_ms:g} ms): its latencies include "
        "the client's own delay. Lower the rate or give the client a less busy machine."
    ),
    "warning.failed-requests": (
        "{side}: {failed} of {total} requests failed; latencies cover the successes only, so a "
        "side that fails its slow requests looks faster."
    ),
    "warning.prefix-cache-hits": (
        "{side}: the server found up to {rate:.1%} of the prompt tokens in its prefix cache in "
        "{hit} of {runs} run(s), where the random workload's shared prefix (--random-prefix-len) "
        "explains at most {expected:.1%}. Those requests skipped part of their prefill: TTFT and "
        "throughput look better than on new prompts, and the two sides were not measured "
        "alike. {cause}"
    ),
    "prefix-cache.earlier-runs": (
        "Nothing kept earlier runs' prompts out of the cache, so a run that repeats another's "
        "prompts (the same --prompt-seed) starts warm. Do not repeat a --prompt-seed against the "
        "same server, or start vLLM with VLLM_SERVER_DEV_MODE=1 so that bench can empty the "
        "cache first."
    ),
    "prefix-cache.during-run": (
        "The cache was emptied before the run, or its prompts were new, so the hits came during "
        "the run: for example another client sending the server the same prompts. Rerun while "
        "nothing else uses the server."
    ),
    "warning.single-run.both": (
        "Both sides have one run: intervals come from resampling requests within a run, which "
        "shows request-to-request noise but not run-to-run drift (changes under {floor:g}% read "
        "as no change), and throughputs get none. Repeat each side 3-5 times before "
        "concluding.{note}"
    ),
    "warning.single-run.before": (
        "Before has one run: intervals come from resampling requests within a run, which shows "
        "request-to-request noise but not run-to-run drift (changes under {floor:g}% read as no "
        "change), and throughputs get none. Repeat each side 3-5 times before concluding.{note}"
    ),
    "warning.single-run.after": (
        "After has one run: intervals come from resampling requests within a run, which shows "
        "request-to-request noise but not run-to-run drift (changes under {floor:g}% read as no "
        "change), and throughputs get none. Repeat each side 3-5 times before concluding.{note}"
    ),
    "warning.single-run.note": (
        " No per-request {families} values were recorded (`vllm bench serve --save-detailed` "
        "records them), so those get no interval."
    ),
    "warning.more-than-one-change": (
        "{n} knobs changed ({flags}): the effect cannot be attributed to any one of them. "
        "Change one knob per comparison."
    ),
    "next.from": " from {seqs}",
    "next.fewer-seqs": (
        "Lower --max-num-seqs{now} (or shorten --max-model-len, or serve a quantized model): "
        "the KV cache was full (peak {kv:.0%}) and requests were preempted and recomputed (up "
        "to {preemptions:.0f} in a run)."
    ),
    "next.more-seqs": (
        "Raise --max-num-seqs above {seqs} (try {twice}): requests waited (peak {waiting:.0f}) "
        "while every sequence slot was busy (peak {running:.0f} running) and the KV cache had "
        "room (peak {kv:.0%})."
    ),
    "next.bigger-budget": (
        "Raise --max-num-batched-tokens above {budget} (try {twice}): requests waited (peak "
        "{waiting:.0f}) while only {running:.0f} of {ceiling} sequences ran and the KV cache "
        "stayed at {kv:.0%}, so the per-step token budget is the limit."
    ),
    # --- accept ---
    "accept.accepted": "ACCEPTED",
    "accept.not_accepted": "NOT ACCEPTED ({failed} failed, {unknown} unknown)",
    "accept.check": "  [{status}] {name}: {evidence}",
    "status.pass": "pass",
    "status.fail": "fail",
    "status.unknown": "unknown",
    "check.hardware": "hardware matches TP",
    "check.quantization": "quantization matches the checkpoint",
    "check.started": "the server started",
    "check.data": "before/after numbers exist",
    "check.one-knob": "only one knob changed",
    "check.quality": "answer quality held",
    # --- accept: each check's evidence (the JSON document carries the English) ---
    "evidence.quoted": "{text}",
    "evidence.hardware.grid": "TP {tp} x PP {pp} x DP {dp} = {gpus}",
    "evidence.hardware.none": "no --gpus and NVML found no GPU; {grid}",
    "evidence.hardware.found": "{count} GPU(s) from {source}; {grid}",
    "evidence.hardware.named": "{count} GPU(s) ({name}) from {source}; {grid}",
    "evidence.hardware.source.given": "--gpus",
    "evidence.hardware.source.nvml": "nvml",
    "evidence.quantization.no-config": "the model's config.json was not found",
    "evidence.quantization.auto": "(auto)",
    "evidence.quantization.plain": "checkpoint: not quantized; --quantization {flag}",
    "evidence.quantization.method": "checkpoint: {method}; --quantization {flag}",
    "evidence.started.ready": "{log}: Application startup complete",
    "evidence.started.failed": "{cause}",
    "evidence.started.failed-unsaid": "the log shows a failed start",
    "evidence.started.starting": "{log}: still starting, no ready line yet",
    "evidence.started.health": "GET {url} answered 200",
    "evidence.started.no-answer": "no --log, and nothing answers {url}",
    "evidence.data.missing": (
        "no --before/--after results given: measure with `servetune bench` first"
    ),
    "evidence.data.unusable": "{error}",
    "evidence.data.found": "results found on both sides{doubts}",
    "evidence.data.doubt": " ({warning})",
    "evidence.knob.unknown": "no server command recorded in the results",
    "evidence.knob.none": "no serving flag changed between the runs",
    "evidence.knob.one": "{change}",
    "evidence.knob.many": "{n} knobs changed: {changes}",
    "evidence.knob.unset": "unset",  # as compare's table says it
    "evidence.quality.unusable": "{error}",
    "evidence.quality.result": (
        "{dataset}, {n} questions: after - before = {difference} points (95% interval {low} to "
        "{high}), {verdict}"
    ),
    "evidence.quality.none": "n/a",
    "evidence.quality.verdict.no-detectable-loss": "no-detectable-loss",
    "evidence.quality.verdict.better": "better",
    "evidence.quality.verdict.worse": "worse",
    "evidence.quality.verdict.insufficient-data": "insufficient-data",
}
