"""Monitor: which limit a running vLLM server hits, live (`watch`) or after the fact
(`postmortem`).

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

Results carry `Said` sentences (texts area `monitor`); only `render/monitor.py` says them.
"""
