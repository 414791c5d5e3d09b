"""The report's figures, drawn as inline SVG: line and step charts, dot clouds, a forest plot of
changes with their intervals, bars with intervals, and a timeline of coloured spans.

Why not matplotlib (the `report` extra, which tune's report uses): a figure drawn here needs no
extra, its words are the page's text in the page's font (zh-TW labels show; matplotlib's bundled
fonts have no CJK glyphs), it scales with the page (a `viewBox`, no fixed pixel size: a phone and
an A4 page both fit it), and it prints as sharp as the text around it.

Every figure is a `<figure class="figure" data-figure="NAME">` holding one `<svg>` and its
caption; the browser test measures each one. Numbers are given in the data's own units; this
module only maps them onto the drawing.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

WIDTH, HEIGHT = 560.0, 290.0
LEFT, RIGHT, TOP, BOTTOM = 62.0, 14.0, 30.0, 48.0
# Colour-blind-safe (Okabe-Ito); index 0 is "before"/the first series, 1 "after"/the second.
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f7f7f")
VERDICT_COLOURS = {
    "better": "#009e73",
    "worse": "#d55e00",
    "no-change": "#7f7f7f",
    "insufficient-data": "#bbbbbb",
}
Style = Literal["line", "step", "dots"]


@dataclass(frozen=True)
class Series:
    """One named set of (x, y) points, drawn as a line, a step line or dots."""

    label: str
    points: tuple[tuple[float, float], ...]
    style: Style = "line"
    colour: int = 0


@dataclass(frozen=True)
class Marker:
    """A labelled vertical line (a percentile, a limit)."""

    x: float
    label: str
    colour: int = 6


@dataclass(frozen=True)
class Span:
    """A shaded stretch of the x axis (an incident)."""

    start: float
    end: float
    colour: str = "#d55e00"


@dataclass(frozen=True)
class Interval:
    """One row of a forest plot or one bar: a value with its interval (None: unknown)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    colour: str = PALETTE[0]
    note: str = ""


@dataclass(frozen=True)
class Axes:
    """What a chart's axes say, and any fixed range (None: from the data)."""

    x_label: str
    y_label: str
    y_min: float | None = None
    y_max: float | None = None
    y_percent: bool = False  # y values are 0-1 shares, shown as percent
    markers: tuple[Marker, ...] = ()
    spans: tuple[Span, ...] = field(default_factory=tuple)


# --- the frame ----------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def figure(name: str, caption: str, svg: str) -> str:
    """A figure of the page: the drawing and its caption."""
    return (
        f'<figure class="figure" data-figure="{_esc(name)}">{svg}'
        f"<figcaption>{_esc(caption)}</figcaption></figure>"
    )


def _svg(title: str, body: list[str], height: float = HEIGHT) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH:g} {height:g}" '
        f'role="img" aria-label="{_esc(title)}"><title>{_esc(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "middle", css: str = "") -> str:
    extra = f' class="{css}"' if css else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{_esc(text)}</text>'


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2 or 5 times a power of ten apart)."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 12))
    return ticks


def tick_text(value: float, percent: bool = False) -> str:
    """A tick label: few digits, thousands separated."""
    if percent:
        return f"{value * 100:.0f}%"
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.0f}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class _Scale:
    low: float
    high: float
    start: float  # drawing coordinate of `low`
    end: float  # drawing coordinate of `high`

    def __call__(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.start + (value - self.low) / span * (self.end - self.start)


def _grid(
    x: _Scale, y: _Scale, x_ticks: list[float], y_ticks: list[float], axes: Axes
) -> list[str]:
    parts = []
    for t in y_ticks:
        py = y(t)
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{py:.1f}" y2="{py:.1f}"/>'
        )
        parts.append(_text(LEFT - 6, py + 4, tick_text(t, axes.y_percent), "end", "tick"))
    for t in x_ticks:
        px = x(t)
        parts.append(
            f'<line class="grid" x1="{px:.1f}" x2="{px:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}"/>'
        )
        parts.append(_text(px, HEIGHT - BOTTOM + 16, tick_text(t), "middle", "tick"))
    parts.append(
        f'<rect class="frame" x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
        f'height="{HEIGHT - TOP - BOTTOM}"/>'
    )
    parts.append(_text((LEFT + WIDTH - RIGHT) / 2, HEIGHT - 8, axes.x_label, "middle", "label"))
    parts.append(
        f'<text class="label" text-anchor="middle" transform="translate(14 '
        f'{(TOP + HEIGHT - BOTTOM) / 2:.1f}) rotate(-90)">{_esc(axes.y_label)}</text>'
    )
    return parts


# --- charts -------------------------------------------------------------------------------------


def _range(values: Sequence[float], low: float | None, high: float | None) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)]
    lo = low if low is not None else min(finite, default=0.0)
    hi = high if high is not None else max(finite, default=1.0)
    return (lo, hi) if hi > lo else (lo, lo + (abs(lo) or 1.0))


def _path(series: Series, x: _Scale, y: _Scale) -> str:
    colour = PALETTE[series.colour % len(PALETTE)]
    points = [(x(a), y(b)) for a, b in series.points if math.isfinite(a) and math.isfinite(b)]
    if series.style == "dots":
        dots = "".join(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="1.8"/>' for a, b in points)
        return f'<g class="dots" fill="{colour}" fill-opacity="0.55">{dots}</g>'
    if series.style == "step":
        stepped: list[tuple[float, float]] = []
        for a, b in points:
            if stepped:
                stepped.append((a, stepped[-1][1]))
            stepped.append((a, b))
        points = stepped
    d = " ".join(f"{'M' if i == 0 else 'L'}{a:.1f},{b:.1f}" for i, (a, b) in enumerate(points))
    return f'<path class="series" d="{d}" stroke="{colour}"/>'


def _legend(series: Sequence[Series]) -> list[str]:
    parts, x = [], LEFT
    for s in series:
        colour = PALETTE[s.colour % len(PALETTE)]
        parts.append(f'<rect x="{x:.1f}" y="9" width="12" height="12" fill="{colour}"/>')
        parts.append(_text(x + 16, 19, s.label, "start", "legend"))
        x += 28 + 7.5 * len(s.label) * (2 if _wide(s.label) else 1)
    return parts


def _wide(text: str) -> bool:
    return any(ord(c) > 0x2E80 for c in text)


def _markers(markers: Sequence[Marker], x: _Scale) -> list[str]:
    parts = []
    for i, m in enumerate(markers):
        px = x(m.x)
        colour = PALETTE[m.colour % len(PALETTE)]
        parts.append(
            f'<line class="marker" x1="{px:.1f}" x2="{px:.1f}" y1="{TOP}" '
            f'y2="{HEIGHT - BOTTOM}" stroke="{colour}"/>'
        )
        parts.append(_text(px + 3, TOP + 13 + 13 * (i % 3), m.label, "start", "mark"))
    return parts


def _spans(spans: Sequence[Span], x: _Scale) -> list[str]:
    return [
        f'<rect class="span" x="{x(s.start):.1f}" y="{TOP}" '
        f'width="{max(x(s.end) - x(s.start), 1.5):.1f}" height="{HEIGHT - TOP - BOTTOM}" '
        f'fill="{s.colour}"/>'
        for s in spans
    ]


def chart(title: str, series: Sequence[Series], axes: Axes) -> str:
    """Lines, steps or dots over shared axes, with markers and shaded spans."""
    xs = [a for s in series for a, _ in s.points] + [m.x for m in axes.markers]
    xs += [v for s in axes.spans for v in (s.start, s.end)]
    ys = [b for s in series for _, b in s.points]
    x_ticks = nice_ticks(*_range(xs, None, None))
    y_ticks = nice_ticks(*_range(ys, axes.y_min, axes.y_max))
    x = _Scale(x_ticks[0], x_ticks[-1], LEFT, WIDTH - RIGHT)
    y = _Scale(y_ticks[0], y_ticks[-1], HEIGHT - BOTTOM, TOP)
    body = [*_spans(axes.spans, x), *_grid(x, y, x_ticks, y_ticks, axes)]
    body += [_path(s, x, y) for s in series]
    body += _markers(axes.markers, x) + _legend([s for s in series if s.label])
    return _svg(title, body)


# --- intervals: the forest plot and bars ---------------------------------------------------------


def _row_height(rows: Sequence[Interval]) -> float:
    return TOP + 24.0 * len(rows) + BOTTOM


def forest(title: str, rows: Sequence[Interval], x_label: str) -> str:
    """One row per item: its value as a dot, its interval as a whisker, a line at zero, and
    each row's note (its verdict) in a column of its own on the right."""
    height = _row_height(rows)
    values = [v for r in rows for v in (r.value, r.low, r.high) if v is not None]
    ticks = nice_ticks(*_range([*values, 0.0], None, None), 6)
    left, notes = 150.0, 96.0
    x = _Scale(ticks[0], ticks[-1], left, WIDTH - RIGHT - notes)
    body = []
    for t in ticks:
        px = x(t)
        css = "zero" if t == 0 else "grid"
        body.append(
            f'<line class="{css}" x1="{px:.1f}" x2="{px:.1f}" y1="{TOP}" y2="{height - BOTTOM}"/>'
        )
        body.append(_text(px, height - BOTTOM + 16, f"{t:+g}" if t else "0", "middle", "tick"))
    for i, row in enumerate(rows):
        py = TOP + 12 + 24 * i
        body.append(_text(left - 8, py + 4, row.label, "end", "rowlabel"))
        body += _whisker(replace(row, note=""), x, py)
        if row.note:
            note = _text(WIDTH - RIGHT, py + 4, row.note, "end", "note")
            body.append(note.replace("<text ", f'<text fill="{row.colour}" ', 1))
    body.append(_text((left + WIDTH - RIGHT - notes) / 2, height - 8, x_label, "middle", "label"))
    return _svg(title, body, height)


def _whisker(row: Interval, x: _Scale, py: float) -> list[str]:
    parts = []
    if row.low is not None and row.high is not None:
        a, b = x(row.low), x(row.high)
        parts.append(
            f'<line class="whisker" x1="{a:.1f}" x2="{b:.1f}" y1="{py:.1f}" y2="{py:.1f}" '
            f'stroke="{row.colour}"/>'
        )
        parts += [
            f'<line class="whisker" x1="{end:.1f}" x2="{end:.1f}" y1="{py - 5:.1f}" '
            f'y2="{py + 5:.1f}" stroke="{row.colour}"/>'
            for end in (a, b)
        ]
    if row.value is not None:
        parts.append(f'<circle cx="{x(row.value):.1f}" cy="{py:.1f}" r="4.5" fill="{row.colour}"/>')
    return parts


def bars(title: str, rows: Sequence[Interval], x_label: str) -> str:
    """Horizontal bars from zero, each with its interval where known."""
    height = _row_height(rows)
    values = [v for r in rows for v in (r.value, r.high) if v is not None]
    ticks = nice_ticks(0.0, max(values, default=1.0), 5)
    left = 190.0
    x = _Scale(0.0, ticks[-1], left, WIDTH - RIGHT - 40)
    body = []
    for t in ticks:
        px = x(t)
        body.append(
            f'<line class="grid" x1="{px:.1f}" x2="{px:.1f}" y1="{TOP}" y2="{height - BOTTOM}"/>'
        )
        body.append(_text(px, height - BOTTOM + 16, tick_text(t), "middle", "tick"))
    for i, row in enumerate(rows):
        py = TOP + 12 + 24 * i
        body.append(_text(left - 8, py + 4, row.label, "end", "rowlabel"))
        if row.value is not None:
            body.append(
                f'<rect x="{left}" y="{py - 8:.1f}" width="{max(x(row.value) - left, 1.0):.1f}" '
                f'height="16" fill="{row.colour}" fill-opacity="0.8"/>'
            )
            body.append(
                _text(x(row.high or row.value) + 4, py + 4, tick_text(row.value), "start", "tick")
            )
        body += _whisker(Interval("", None, row.low, row.high, "#222"), x, py)
    body.append(_text((left + WIDTH - RIGHT) / 2, height - 8, x_label, "middle", "label"))
    return _svg(title, body, height)


# --- a timeline of coloured spans ---------------------------------------------------------------


@dataclass(frozen=True)
class Band:
    """One stretch of time in one category (a limit), drawn on the category's lane."""

    start: float
    end: float
    lane: str


def timeline(
    title: str,
    bands: Sequence[Band],
    lanes: Sequence[tuple[str, str]],
    spans: Sequence[Span],
    x_label: str,
) -> str:
    """Lanes (key, label) one above another; each band drawn on its lane; spans shaded across."""
    height = TOP + 26.0 * len(lanes) + BOTTOM
    xs = [v for b in bands for v in (b.start, b.end)] + [v for s in spans for v in (s.start, s.end)]
    ticks = nice_ticks(*_range(xs, None, None), 6)
    left = 200.0
    x = _Scale(ticks[0], ticks[-1], left, WIDTH - RIGHT)
    lane_at = {key: i for i, (key, _) in enumerate(lanes)}
    body = [
        f'<rect class="span" x="{x(s.start):.1f}" y="{TOP}" '
        f'width="{max(x(s.end) - x(s.start), 1.5):.1f}" height="{height - TOP - BOTTOM}" '
        f'fill="{s.colour}"/>'
        for s in spans
    ]
    for t in ticks:
        px = x(t)
        body.append(
            f'<line class="grid" x1="{px:.1f}" x2="{px:.1f}" y1="{TOP}" y2="{height - BOTTOM}"/>'
        )
        body.append(_text(px, height - BOTTOM + 16, tick_text(t), "middle", "tick"))
    for i, (_, label) in enumerate(lanes):
        body.append(_text(left - 8, TOP + 17 + 26 * i, label, "end", "rowlabel"))
    for band in bands:
        i = lane_at[band.lane]
        colour = PALETTE[i % len(PALETTE)]
        body.append(
            f'<rect x="{x(band.start):.1f}" y="{TOP + 5 + 26 * i:.1f}" '
            f'width="{max(x(band.end) - x(band.start), 2.0):.1f}" height="16" fill="{colour}"/>'
        )
    body.append(_text((left + WIDTH - RIGHT) / 2, height - 8, x_label, "middle", "label"))
    return _svg(title, body, height)


STYLE = """
figure.figure{margin:1em 0;break-inside:avoid;page-break-inside:avoid}
figure.figure svg{display:block;width:100%;height:auto;max-width:720px;font-size:13px;
 font-family:inherit}
figcaption{font-size:.85em;color:#555;margin-top:.2em}
svg .grid{stroke:#e3e3e3;stroke-width:1}svg .zero{stroke:#444;stroke-width:1.2}
svg .frame{fill:none;stroke:#bbb}svg .series{fill:none;stroke-width:1.8}
svg .marker{stroke-dasharray:4 3;stroke-width:1.2}svg .span{fill-opacity:.16}
svg .whisker{stroke-width:2}svg .tick{fill:#555;font-size:12px}svg .label{fill:#333}
svg .legend{fill:#333}svg .mark{fill:#333;font-size:12px}svg .rowlabel{fill:#222}
svg .note{font-size:12px;font-weight:600}
"""
