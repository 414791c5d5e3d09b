"""Monitor: which limit a running vLLM server hits, live (`watch`), after the fact
(`postmortem`), or as Prometheus alerts (`alerts`).

- `scrape`: vLLM's /metrics names by release (0.6 to 0.33, Ray's spelling too) and one page read
  into a `Scrape` (gauges, counter totals, histograms with their buckets).
- `window`: scrapes or log stats lines as `Point`s (counters turned into rates, histograms into
  per-interval bucket counts), and the `Signals` of a sliding window (windowed percentiles from
  the server's own buckets).
- `limits`: the limit taxonomy (ids shared with tune: `judge.advice.ServerLimit`, with its
  thresholds) and `diagnose`, which names the limit of a window with its evidence and next step.
- `caps`: the scheduler's caps, from a serve command (as `check` resolves it) or a startup log.
- `watch`: the live loop (injected clock, sleeper and fetcher) and its summary.
- `postmortem`: a log's stats lines, Prometheus snapshots or range-query exports, bench result
  files, read into a timeline of intervals and incidents.
- `names`: every metric each release defines (read from vLLM's sources, 0.6.0 to 0.33.0), its
  kind and engine, and `check`, which tells a live series from a dead one.
- `alerts`: the limits as one Prometheus rule group (signals, conditions, alerts in `diagnose`'s
  order) for a release and the caps; `rule_files` writes it (plain, as a PrometheusRule, and
  promtool unit tests), `dashboard` the Grafana dashboard beside it.
- `lint`: the vLLM names an existing rule file or dashboard queries, checked against a release.

Results carry `Said` sentences (texts area `monitor`); only `render/monitor.py` says them, and
the files `alerts` writes (their annotations and titles in the language asked for).
"""
