"""The report's bench section: the summary laid out like `vllm bench serve`'s table (in `bench`'s
own words), the TTFT/TPOT/ITL/E2EL distributions with p50/p90/p99 marked, each request's
latency against its send time, output tokens/s and requests in flight over the run, the
server's /metrics samples, and the client's send lag (with a banner when it fell behind).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from servetune.judge.runs import FAMILIES, Samples
from servetune.measure import metrics
from servetune.render import report_svg as svg
from servetune.render.report_runs import BenchRecord, Request, ServerSample
from servetune.texts import Voice

NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2EL"}
CDF_POINTS = 300  # points drawn per distribution: enough for a smooth curve, a small page
_COUNTS = (
    ("completed", "completed"),
    ("failed", "failed"),
    ("duration", "duration"),
    ("input_tokens", "total_input_tokens"),
    ("output_tokens", "total_output_tokens"),
    ("request_throughput", "request_throughput"),
    ("request_goodput", "request_goodput"),
    ("output_throughput", "output_throughput"),
    ("peak_output_throughput", "max_output_tokens_per_s"),
    ("peak_concurrency", "max_concurrent_requests"),
    ("total_throughput", "total_token_throughput"),
)
_INTEGERS = frozenset(
    {"completed", "failed", "total_input_tokens", "total_output_tokens", "max_concurrent_requests"}
)


def _esc(text: object) -> str:
    return html.escape(str(text))


def _shown(key: str, value: object, na: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return na
    return f"{value:.0f}" if key in _INTEGERS else f"{value:.2f}"


# --- the summary table --------------------------------------------------------------------------


def _row(label: str, value: str) -> str:
    return f'<tr><th scope="row">{_esc(label)}</th><td class="num">{_esc(value)}</td></tr>'


def summary_table(record: BenchRecord, bench: Voice) -> str:
    """vLLM's table, in two: the counts and throughputs, then the latency sections (side by
    side where the page is wide enough)."""
    doc, na = record.doc, bench("na")
    counts = [
        _row(bench(f"row.{label}"), _shown(key, doc.get(key), na))
        for label, key in _COUNTS
        if key != "request_goodput" or doc.get(key) is not None
    ]
    latencies = []
    for family in FAMILIES:
        group = _esc(bench(f"latency.{family}"))
        latencies.append(f'<tr><th colspan="2" class="group">{group}</th></tr>')
        latencies += _latency_rows(record, family, bench)
    title = _esc(bench("title").strip())
    return (
        f'<div class="tables"><table class="summary"><caption>{title}</caption>'
        f'{"".join(counts)}</table><table class="summary latency">{"".join(latencies)}</table>'
        "</div>"
    )


def _latency_rows(record: BenchRecord, family: str, bench: Voice) -> list[str]:
    name, na = NAMES[family], bench("na")
    labels = [
        ("mean", bench("latency.mean", metric=name)),
        ("median", bench("latency.median", metric=name)),
    ]
    labels += [(f"p{p}", bench("latency.percentile", metric=name, p=p)) for p in (90, 95, 99)]
    rows = []
    for stat, label in labels:
        value = record.run.values.get(f"{stat}_{family}_ms")
        rows.append(_row(label, na if value is None else f"{value:.2f}"))
    return rows


def notes(record: BenchRecord, bench: Voice) -> list[str]:
    """bench's notes under its table, in its words (a vLLM file has none of these facts)."""
    block = record.doc.get("servetune")
    if not isinstance(block, dict):
        return []
    found = []
    kinds = block.get("errors_by_kind")
    if isinstance(kinds, dict) and kinds:
        found.append(
            bench("note.errors", kinds=", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
        )
    if record.run.send_lag_p99_s is not None:
        found.append(bench("note.send_lag", ms=f"{record.run.send_lag_p99_s * 1000:.2f}"))
    goodput = block.get("goodput")
    share = goodput.get("good_share") if isinstance(goodput, dict) else None
    if isinstance(share, int | float):
        found.append(bench("note.good_share", percent=f"{share * 100:.1f}"))
    server = record.run.server
    if server is not None:

        def num(value: float | None) -> str:
            return bench("na") if value is None else f"{value:g}"

        kv = server.peak_kv_cache_usage
        found.append(
            bench(
                "note.server",
                running=num(server.peak_running),
                waiting=num(server.peak_waiting),
                kv_cache=bench("na") if kv is None else f"{kv:.0%}",
                preemptions=num(server.preemptions),
            )
        )
    return found


def banners(record: BenchRecord, bench: Voice) -> list[str]:
    """What must not be missed: an interrupted run, a client that fell behind its schedule."""
    found = []
    if record.partial:
        found.append(bench("partial"))
    if record.run.client_saturated:
        limit = record.lag_limit_s or 0.005
        found.append(bench("note.saturated", limit_ms=f"{limit * 1000:g}"))
    return [f'<p class="banner" role="alert">{_esc(text)}</p>' for text in found]


# --- distributions ------------------------------------------------------------------------------


def cdf_points(ordered: Sequence[float], scale: float = 1000.0) -> tuple[tuple[float, float], ...]:
    """The empirical CDF of sorted values (in seconds) as (ms, share) points, at most
    CDF_POINTS of them, evenly spaced in rank."""
    n = len(ordered)
    if n == 0:
        return ()
    step = max(1, -(-n // CDF_POINTS))  # ceiling: at most CDF_POINTS + 1 points
    ranks = [*range(0, n, step), n - 1]
    return tuple((ordered[i] * scale, (i + 1) / n) for i in dict.fromkeys(ranks))


def percentile_markers(ordered: Sequence[float], colour: int = 6) -> tuple[svg.Marker, ...]:
    return tuple(
        svg.Marker(metrics.percentile(ordered, p) * 1000, f"p{p}", colour) for p in (50, 90, 99)
    )


def distribution_figure(
    name: str, sides: Sequence[tuple[str, Samples]], words: Voice, *, markers: bool
) -> str:
    """One latency family's CDF per side (one side: its p50/p90/p99 marked)."""
    series = [
        svg.Series(label, cdf_points(samples.ordered), "line", i)
        for i, (label, samples) in enumerate(sides)
    ]
    marks = percentile_markers(sides[0][1].ordered) if markers else ()
    title = words("fig.cdf", metric=NAMES[name])
    axes = svg.Axes(words("axis.ms"), words("axis.share"), 0.0, 1.0, True, marks)
    return svg.figure(f"cdf-{name}", title, svg.chart(title, series, axes))


def distributions(record: BenchRecord, words: Voice) -> str:
    figures = [
        distribution_figure(f, [("", record.run.samples[f])], words, markers=True)
        for f in FAMILIES
        if f in record.run.samples
    ]
    if not figures:
        return f'<p class="missing">{_esc(words("bench.no_samples"))}</p>'
    return '<div class="figures">' + "".join(figures) + "</div>"


# --- over the run -------------------------------------------------------------------------------


def _token_times(req: Request) -> list[float]:
    """When each output token arrived (s from the start): after the first, by its gaps; without
    gaps, spread evenly from the first token to the end."""
    if req.sent_s is None or req.ttft_s is None:
        return []
    first = req.sent_s + req.ttft_s
    if req.itls_s:
        times, t = [first], first
        for gap in req.itls_s:
            t += gap
            times.append(t)
        return times
    count = max(req.output_tokens or 1, 1)
    span = req.sent_s + req.e2el_s - first
    return [first + span * i / max(count - 1, 1) for i in range(count)]


def token_rate(requests: Sequence[Request], bins: int = 50) -> tuple[tuple[float, float], ...]:
    """Output tokens/s in `bins` equal stretches of the run."""
    times = sorted(t for r in requests for t in _token_times(r))
    if not times:
        return ()
    end = max(times[-1], 1e-6)
    width = end / bins
    counts = [0] * bins
    for t in times:
        counts[min(int(t / width), bins - 1)] += 1
    return tuple((i * width, c / width) for i, c in enumerate(counts))


def in_flight(requests: Sequence[Request]) -> tuple[tuple[float, float], ...]:
    """Requests sent and not yet finished, at every send and finish."""
    events = sorted(
        (t, step)
        for r in requests
        if r.sent_s is not None
        for t, step in ((r.sent_s, 1), (r.sent_s + r.e2el_s, -1))
    )
    level, points = 0, [(0.0, 0.0)]
    for t, step in events:
        level += step
        points.append((t, float(level)))
    return tuple(points)


def over_the_run(record: BenchRecord, words: Voice) -> str:
    timed = [r for r in record.requests if r.sent_s is not None]
    if not timed:
        return f'<p class="missing">{_esc(words("bench.no_times"))}</p>'
    latency = [
        svg.Series(
            "TTFT",
            tuple((r.sent_s or 0.0, r.ttft_s * 1000) for r in timed if r.ttft_s is not None),
            "dots",
            0,
        ),
        svg.Series("E2EL", tuple((r.sent_s or 0.0, r.e2el_s * 1000) for r in timed), "dots", 1),
    ]
    time_axis = words("axis.time_s")
    figures = [
        _figure(
            "latency-by-send",
            words("fig.latency_by_send"),
            latency,
            svg.Axes(words("axis.send_s"), words("axis.ms"), 0.0),
        ),
        _figure(
            "output-tokens",
            words("fig.tokens"),
            [svg.Series("", token_rate(timed), "step", 2)],
            svg.Axes(time_axis, words("axis.tokens_per_s"), 0.0),
        ),
        _figure(
            "in-flight",
            words("fig.in_flight"),
            [svg.Series("", in_flight(timed), "step", 3)],
            svg.Axes(time_axis, words("axis.requests"), 0.0),
        ),
    ]
    return '<div class="figures">' + "".join(figures) + "</div>"


def _figure(name: str, title: str, series: Sequence[svg.Series], axes: svg.Axes) -> str:
    return svg.figure(name, title, svg.chart(title, series, axes))


def _series(samples: Sequence[ServerSample], label: str, field: str, colour: int) -> svg.Series:
    points = tuple((s.t_s, value) for s in samples if (value := getattr(s, field)) is not None)
    return svg.Series(label, points, "line", colour)


def server_metrics(record: BenchRecord, words: Voice) -> str:
    samples = record.samples
    if not samples:
        return f'<p class="missing">{_esc(words("bench.no_server"))}</p>'
    axis = words("axis.time_s")
    requests = [
        _series(samples, words("legend.running"), "running", 0),
        _series(samples, words("legend.waiting"), "waiting", 1),
    ]
    figures = [
        _figure(
            "server-requests",
            words("fig.server_requests"),
            requests,
            svg.Axes(axis, words("axis.requests"), 0.0),
        ),
        _figure(
            "server-kv",
            words("fig.kv"),
            [_series(samples, "", "kv_cache_usage", 2)],
            svg.Axes(axis, words("axis.kv"), 0.0, 1.0, True),
        ),
        _figure(
            "server-preemptions",
            words("fig.preemptions"),
            [_series(samples, "", "preemptions_total", 4)],
            svg.Axes(axis, words("axis.preemptions"), 0.0),
        ),
    ]
    return '<div class="figures">' + "".join(figures) + "</div>"


def client(record: BenchRecord, words: Voice) -> str:
    lags = sorted(record.send_lags_s)
    if not lags:
        return f'<p class="missing">{_esc(words("bench.no_lag"))}</p>'
    limit = record.lag_limit_s or 0.005
    marks = (svg.Marker(limit * 1000, words("legend.limit"), 1),)
    title = words("fig.send_lag")
    axes = svg.Axes(words("axis.lag_ms"), words("axis.share"), 0.0, 1.0, True, marks)
    series = [svg.Series("", cdf_points(lags), "line", 0)]
    return '<div class="figures">' + _figure("send-lag", title, series, axes) + "</div>"


def section_body(record: BenchRecord, bench: Voice, words: Voice) -> str:
    """The whole bench section but its heading and provenance."""
    said = notes(record, bench)
    listed = (
        '<ul class="notes">' + "".join(f"<li>{_esc(n)}</li>" for n in said) + "</ul>"
        if said
        else ""
    )
    parts = [
        *banners(record, bench),
        f"<h3>{_esc(words('bench.summary'))}</h3>",
        summary_table(record, bench),
        listed,
        f"<h3>{_esc(words('bench.distributions'))}</h3>",
        distributions(record, words),
        f"<h3>{_esc(words('bench.over_time'))}</h3>",
        over_the_run(record, words),
        f"<h3>{_esc(words('bench.server'))}</h3>",
        server_metrics(record, words),
        f"<h3>{_esc(words('bench.client'))}</h3>",
        client(record, words),
    ]
    return "".join(parts)
