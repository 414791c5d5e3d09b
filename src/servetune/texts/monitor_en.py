"""What `watch`, `postmortem` and `alerts` say, in English: the evidence of each limit, the next
step, the names of the limits in plain words, the labels of the live panel, the interval lines,
the summary and the postmortem's timeline, the alert rules' annotations and dashboard titles.

Keys: `evidence.<limit>[:<variant>]`, `next.<limit>[:<variant>]`, `limit.<id>`, `gap.<kind>`,
`panel.*`, `line.*`, `summary.*`, `end.*`, `pm.*`; `alerts.*` (the rules' annotations and the
text view of `alerts`), `lint.*` (`alerts --lint`), `dash.*` (the Grafana dashboard's titles).
KV cache usage `kv` is a 0-1 fraction (`{kv:.0%}`); rates are per second; latencies in ms.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "evidence.none": "no queue: {running} running, {waiting} waiting, KV cache at {kv:.0%}",
    "evidence.none:idle": "idle: no request running or waiting",
    "evidence.none:quiet": "no stats lines for {seconds:.0f} s: idle (vLLM logs them only "
    "while busy)",
    "evidence.kv-cache:preempting": "{preemptions:.2f} preemptions/s with the KV cache at {kv:.0%}",
    "evidence.kv-cache:full": "KV cache at {kv:.0%} with {waiting} requests waiting",
    "evidence.max-num-seqs": "{running} running at the cap of {cap}, {waiting} waiting, KV "
    "cache at {kv:.0%}",
    "evidence.max-num-seqs:unconfirmed": "running held at {running} while {waiting} wait, KV "
    "cache at {kv:.0%} (cap unconfirmed: give --serve-command or --log)",
    "evidence.max-num-batched-tokens": "{waiting} waiting with {free} sequence slots free and "
    "the KV cache at {kv:.0%}: the step token budget ({budget}) starves the prefills",
    "evidence.compute": "no queue, but inter-token latency rises from {low:.0f} ms to "
    "{high:.0f} ms as running grows from {few} to {many}",
    "evidence.admission": "the server refuses {rejections:.2f} requests/s at admission",
    "evidence.deferred": "{deferred} of {waiting} waiting requests are deferred by vLLM",
    "evidence.stalled": "{requests} requests in the engine and no token generated for "
    "{seconds:.0f} s",
    "evidence.unknown:no-data": "no sample in the window",
    "evidence.unknown:queue": "{waiting} waiting with {running} running and the KV cache at "
    "{kv:.0%}; which cap holds them is unconfirmed: give --serve-command or --log",
    "evidence.unknown:gap": "no scrape: {reason}",
    "next.kv-cache": "Give the KV cache more room: raise --gpu-memory-utilization or shorten "
    "--max-model-len; once that is spent, add a replica.",
    "next.max-num-seqs": "Raise --max-num-seqs from {seqs} to {twice}: requests wait while the "
    "KV cache has room.",
    "next.max-num-seqs:unconfirmed": "Raise --max-num-seqs above {running}: requests wait while "
    "the KV cache has room.",
    "next.max-num-batched-tokens": "Raise --max-num-batched-tokens from {budget} to {twice}, so "
    "that each step admits more prompt tokens.",
    "next.compute": "The step time itself is the limit: add a replica (or more "
    "--tensor-parallel-size); the scheduler's caps will not help.",
    "next.admission": "The front door turns requests away: raise --max-num-queued-reqs, or add "
    "a replica behind the load balancer.",
    "next.deferred": "vLLM holds these requests for a reason of its own, not for a slot or KV "
    "room (a LoRA adapter beyond --max-loras, a KV transfer): find what they wait for first.",
    "next.stalled": "The engine holds requests but makes no tokens: read its log (servetune "
    "doctor LOG) and restart it; a /health probe alone does not see this.",
    "limit.none": "nothing binds",
    "limit.kv-cache": "the KV cache is full",
    "limit.max-num-seqs": "the sequence cap (--max-num-seqs)",
    "limit.max-num-batched-tokens": "the step token budget (--max-num-batched-tokens)",
    "limit.compute": "the GPU's step time (compute)",
    "limit.admission": "admission (requests refused)",
    "limit.deferred": "requests deferred by vLLM",
    "limit.stalled": "the engine is stalled",
    "limit.unknown": "unknown",
    "gap.timeout": "the scrape timed out",
    "gap.refused": "the connection was refused",
    "gap.http": "the server answered HTTP {status}",
    "gap.error": "the scrape failed ({detail})",
    "panel.title": "servetune watch {url}: {seconds:.0f} s watched, window {window:.0f} s",
    "panel.running": "running     {running} / {cap}      waiting {waiting}",
    "panel.kv": "KV cache    {kv}         preemptions {preemptions}/s",
    "panel.tokens": "tokens/s    prompt {prompt}   generation {generation}",
    "panel.latency": "latency     TTFT p50 {ttft50} p99 {ttft99}   ITL p50 {itl50} p99 {itl99}",
    "panel.limit": "limit       {limit}: {name}",
    "panel.evidence": "because     {evidence}",
    "panel.next": "next        {next}",
    "panel.gap": "last scrape {reason}",
    "panel.cap-unknown": "cap ?",
    "line.interval": "{elapsed:>6.0f} s  running {running}/{cap}  waiting {waiting}  KV {kv}  "
    "preempt {preemptions}/s  prompt {prompt} tok/s  gen {generation} tok/s  TTFT p50/p99 "
    "{ttft}  ITL p50/p99 {itl}  {limit}: {evidence}",
    "line.gap": "{elapsed:>6.0f} s  gap: {reason}",
    "summary.watched": "Watched {seconds:.0f} s: {parts}. Dominant limit: {dominant}.",
    "summary.part": "{limit} {seconds:.0f} s",
    "summary.separator": ", ",
    "summary.next": "Next step: {next}",
    "end.gone": "The server went away ({reason}); the watch ends.",
    "pm.title": "Postmortem of {source}: {start} to {end}",
    "pm.timeline": "Timeline:",
    "pm.interval": "  {start} to {end}  {limit}: {evidence}",
    "pm.incidents": "Incidents (a queue built up):",
    "pm.incident": "  {start} to {end} ({seconds:.0f} s): up to {peak} waiting, {limit}",
    "pm.no-incidents": "No queue built up.",
    "pm.dominant": "Dominant limit: {dominant} ({name})",
    "pm.next": "Next step: {next}",
    "pm.no-next": "Next step: none needed.",
    "pm.unknown-next": "Next step: give the server's command (--serve-command or --file) to "
    "tell which of its caps holds the queue.",
    "alerts.summary": "vLLM {server}: {name}",
    "alerts.why.stalled": "Requests are in the engine, but no token was generated for "
    "{seconds:.0f} s.",
    "alerts.why.admission": "The server turns requests away at admission "
    "(vllm:admission_rejections_total grows).",
    "alerts.why.kv-cache": "The KV cache is full: {preemptions} grows, or requests wait with the "
    "cache at {kv:.0%} or more.",
    "alerts.why.deferred": "Most of the waiting requests ({share:.0%} or more) are deferred by "
    "vLLM, not held by a cap.",
    "alerts.why.max-num-seqs": "Requests wait with KV room left while {at} or more of the {cap} "
    "sequences the cap allows run.",
    "alerts.why.max-num-seqs:unconfirmed": "Requests wait with KV room left while the running "
    "count stays flat for {window}: a cap holds it (unconfirmed: generate the rules with "
    "--serve-command).",
    "alerts.why.max-num-batched-tokens": "Requests wait with KV room and sequence slots left "
    "(under {at} running): the step token budget ({budget}) starves the prefills.",
    "alerts.why.compute": "No queue, but inter-token latency is {itl:g}x its mean of the last "
    "hour while running grew {running:g}x: the step time itself is the limit.",
    "alerts.next.max-num-seqs:unconfirmed": "Raise --max-num-seqs above the running count the "
    "evidence query shows: requests wait while the KV cache has room.",
    "alerts.knob.stalled": "restart the server (read its log first: servetune doctor LOG)",
    "alerts.knob.admission": "--max-num-queued-reqs, or replicas behind the load balancer",
    "alerts.knob.kv-cache": "--gpu-memory-utilization, --max-model-len, then replicas",
    "alerts.knob.deferred": "what vLLM defers requests for (--max-loras, KV transfers), not a cap",
    "alerts.knob.max-num-seqs": "--max-num-seqs",
    "alerts.knob.max-num-batched-tokens": "--max-num-batched-tokens",
    "alerts.knob.compute": "replicas, or --tensor-parallel-size",
    "alerts.skip.metric": "this release does not export {metric}",
    "alerts.skip.caps": "needs the caps: give --serve-command or --file",
    "alerts.title": "Alert rules for vLLM {version}{names_of}, {engine} engine; caps: {caps}.",
    "alerts.names-of": " (the /metrics names of {table})",
    "alerts.caps": "max-num-seqs {seqs}, max-num-batched-tokens {budget} ({source})",
    "alerts.caps-none": "none given (with --serve-command they become thresholds)",
    "alerts.written": "Wrote:",
    "alerts.file.rules": "  {path}  Prometheus rules: {alerts} alerts, {records} recording rules",
    "alerts.file.operator": "  {path}  the same rules as a Prometheus Operator PrometheusRule",
    "alerts.file.tests": "  {path}  promtool unit tests: a healthy server, and one per alert",
    "alerts.file.dashboard": "  {path}  Grafana dashboard: {panels} panels",
    "alerts.list": "Alerts, in the order watch names a limit:",
    "alerts.alert": "  {alert:<30} {limit:<24} knob: {knob}",
    "alerts.skipped": "Left out:",
    "alerts.skip": "  {limit:<24} {reason}",
    "alerts.check": "Check them: promtool check rules {rules} && promtool test rules {tests}",
    "lint.title": "{file}: {count} vLLM metric names checked against vLLM {version}{names_of}, "
    "{engine} engine.",
    "lint.none": "{file}: no vLLM metric name in its queries (nothing to check).",
    "lint.clean": "No dead name: every vLLM metric it queries exists in that release.",
    "lint.dead": "{dead} dead: the queries that use them can never match.",
    "lint.name": "  {status:<12} {name}  {where}",
    "lint.reason": "               {reason}",
    "lint.status.live": "ok",
    "lint.status.hidden": "hidden",
    "lint.status.other-engine": "other engine",
    "lint.status.dead": "DEAD",
    "lint.why.gone": "gone after {last}; use {use}",
    "lint.why.gone:bare": "gone after {last}",
    "lint.why.not-yet": "not exported before {first}",
    "lint.why.no-total": "a counter: Prometheus scrapes it as {use}",
    "lint.why.bare-histogram": "a histogram: query {use} (or _sum, _count)",
    "lint.why.suffix": "not a histogram: query {use}",
    "lint.why.never": "no release of vLLM exports it; did you mean {use}?",
    "lint.why.never:bare": "no release of vLLM exports it",
    "lint.why.hidden": "exported only with {flag}",
    "lint.why.other-engine": "only in the {engine} engine, which this release runs only when "
    "asked (VLLM_USE_V1)",
    "lint.where.alert": "alert {name}",
    "lint.where.record": "record {name}",
    "lint.where.panel": 'panel "{name}"',
    "lint.where.path": "at {path}",
    "lint.where.separator": ", ",
    "dash.title": "vLLM limits ({version})",
    "dash.limit": "Limit firing (servetune alerts)",
    "dash.running": "Running against the cap, waiting",
    "dash.kv": "KV cache usage",
    "dash.preemptions": "Preemptions per second",
    "dash.admission": "Requests refused at admission per second",
    "dash.tokens": "Tokens per second",
    "dash.ttft": "Time to first token",
    "dash.itl": "Inter-token latency",
    "dash.queue": "Queue time",
    "dash.step": "Tokens per engine step against the budget",
}
