"""What `tune` says, in English: the limits it names, its next step, its summary and report.

`limit.<id>` explains each limit in one sentence; `next.*` is tune.json's `next_step`;
`summary.*` are the terminal summary's words; `report.*` the HTML report's; `interference.*`
the interference check's verdict; `interrupted` what it says on Ctrl-C.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "limit.kv-cache": (
        "the KV cache: it filled up, requests were preempted or waited for blocks while "
        "sequence slots were free"
    ),
    "limit.max-num-seqs": (
        "--max-num-seqs: every sequence slot was busy while requests waited and the KV cache "
        "had room"
    ),
    "limit.max-num-batched-tokens": (
        "--max-num-batched-tokens: prefills were starved; requests waited while slots and KV "
        "room were free, so the per-step token budget held them back"
    ),
    "limit.compute": (
        "compute: no queue and no full cache, the step time itself missed the targets"
    ),
    "limit.client": (
        "the load generator: it fell behind its own schedule, so its numbers are not the "
        "server's; run tune from a less busy machine"
    ),
    "limit.failed-start": "the server did not start",
    "limit.slo-unreachable": "the targets were missed even with one user",
    "next.better": (
        "Serve with the best command: {best} users within the targets instead of {baseline}, "
        "output throughput at capacity {pct} ({ci}). Confirm it with `servetune bench` "
        "repeats at {best} users before you roll it out."
    ),
    "next.same": (
        "Keep your command: none of the {tried} configurations tried beat it beyond the noise. "
        "Its limit is {limit}."
    ),
    "next.none": (
        "No configuration met the targets ({limit}). Loosen the targets, shorten the "
        "requests, or give the model more GPUs, then run tune again with the same --output."
    ),
    "summary.best": "Best: ",
    "summary.baseline": "Your command: ",
    "summary.capacity": "{users} users within the targets ({sure} sure), {tokens} output tok/s",
    "summary.none": "no capacity (nothing met the targets)",
    "summary.limit": "limit: {limit}",
    "summary.trials": "Trials:",
    "summary.users": "users",
    "summary.starts": ("{starts} server starts; {start_s} starting, {measure_s} measuring"),
    "summary.report": "Report: {path}",
    "summary.next": "Next step: {text}",
    "interrupted": (
        "interrupted: finished trials are kept in {output}; rerun the same command to resume"
    ),
    "summary.diff": "Changes against your command:",
    "summary.no-diff": "(none: your command is the best)",
    "report.title": "servetune tune report",
    "report.targets": "Targets: {targets} ms; {spent}",
    "report.starts": "{starts} starts, {start_s} s starting, {measure_s} s measuring",
    "report.latency": "{metric} p{percentile} (ms) by concurrent users",
    "report.throughput": "Output throughput (tok/s) by concurrent users",
    "report.col.trial": "trial",
    "report.col.changes": "changes",
    "report.col.status": "status",
    "report.col.capacity": "capacity (users)",
    "report.col.throughput": "output tok/s",
    "report.col.limit": "limit",
    "report.col.runs": "runs",
    "report.col.time": "start / measure (s)",
    "report.command": "The best command, against yours",
    "report.slo": "target",
    # --interference-check (tune/parallel.py); diff and threshold are percentages
    "interference.comparable": (
        "Interference check: your command beside other trials reached {diff} output throughput "
        "at capacity against alone (threshold {threshold}); the trials run side by side are "
        "comparable."
    ),
    "interference.not-comparable": (
        "Interference check: your command beside other trials reached {diff} output throughput "
        "at capacity against alone (threshold {threshold}): the numbers of trials run side by "
        "side are not comparable with those run alone; every trial after the check ran alone "
        "on its node."
    ),
}
