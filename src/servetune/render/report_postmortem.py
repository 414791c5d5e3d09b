"""The report's postmortem section, from `postmortem --format json`: the timeline of limits with
the incidents shaded, the incidents' queues, the dominant limit and the next step, in
`postmortem`'s own words (the `monitor` area).

The file's evidence and next step are English sentences (JSON is English whatever the language):
they are shown as written, marked `lang="en"`. Times are vLLM's `MM-DD HH:MM:SS` stamps (a year
assumed, a new year where they wrap, as postmortem reads them) or seconds.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from datetime import UTC, datetime

from servetune.judge.runs import Json
from servetune.monitor.limits import LIMITS
from servetune.render import report_svg as svg
from servetune.texts import Voice

_BASE_YEAR = 2000  # a leap year, so that a 02-29 stamp reads (postmortem's own choice)
MINUTES_FROM_S = 600.0  # a timeline longer than this is drawn in minutes


def is_postmortem(doc: Json) -> bool:
    return "intervals" in doc and "incidents" in doc and "dominant" in doc


def _esc(text: object) -> str:
    return html.escape(str(text))


def _list(value: object) -> list[Json]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


class Clock:
    """The file's times as seconds, read in order: a stamp earlier than the one before it
    starts the next year (postmortem's own reading)."""

    def __init__(self) -> None:
        self.year = _BASE_YEAR
        self.last: datetime | None = None

    def seconds(self, value: object) -> float | None:
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            return float(value) if math.isfinite(value) else None
        if not isinstance(value, str):
            return None
        try:
            moment = self._stamp(value)
            if self.last is not None and moment < self.last:
                self.year += 1
                moment = self._stamp(value)
        except ValueError:
            return None
        self.last = moment
        return moment.timestamp()

    def _stamp(self, value: str) -> datetime:
        return datetime.strptime(f"{self.year}-{value}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)


def when(value: object) -> str:
    """A time as the file gives it: a stamp as written, seconds without a sign on zero."""
    if isinstance(value, float):
        return f"{value + 0.0:g}"  # + 0.0: -0.0 reads 0
    return "?" if value is None else str(value)


def _limit_name(limit: object, monitor: Voice) -> str:
    return monitor(f"limit.{limit}") if limit in LIMITS else str(limit)


def timeline_figure(doc: Json, monitor: Voice, words: Voice) -> str:
    clock = Clock()
    start = clock.seconds(doc.get("start")) or 0.0
    intervals = [
        (clock.seconds(i.get("start")), clock.seconds(i.get("end")), str(i.get("limit")))
        for i in _list(doc.get("intervals"))
    ]
    again = Clock()  # the incidents are a second pass over the same stretch of time
    again.seconds(doc.get("start"))
    incidents = [
        (again.seconds(i.get("start")), again.seconds(i.get("end")))
        for i in _list(doc.get("incidents"))
    ]
    ends = [e for _, e, _ in intervals if e is not None]
    span = (max(ends, default=start) - start) or 1.0
    unit = 60.0 if span > MINUTES_FROM_S else 1.0
    axis = words(
        "axis.minutes_from" if unit == 60.0 else "axis.seconds_from", start=when(doc.get("start"))
    )

    def at(t: float | None) -> float:
        return ((t or start) - start) / unit

    used = list(dict.fromkeys(limit for _, _, limit in intervals))
    lanes = [(limit, _limit_name(limit, monitor)) for limit in used]
    bands = [svg.Band(at(a), max(at(b), at(a)), limit) for a, b, limit in intervals]
    shaded = [svg.Span(at(a), max(at(b), at(a) + 0.01 * span / unit)) for a, b in incidents]
    title = words("fig.timeline")
    return svg.figure("timeline", title, svg.timeline(title, bands, lanes, shaded, axis))


def incident_figure(doc: Json, words: Voice) -> str:
    incidents = _list(doc.get("incidents"))
    if not incidents:
        return ""
    rows = [
        svg.Interval(
            when(i.get("start")),
            peak if isinstance(peak := i.get("peak_waiting"), int | float) else None,
            colour="#d55e00",
        )
        for i in incidents
    ]
    title = words("fig.incidents")
    return svg.figure("incidents", title, svg.bars(title, rows, words("axis.waiting")))


def _lines(doc: Json, monitor: Voice) -> tuple[list[str], list[str]]:
    timeline = [
        monitor(
            "pm.interval",
            start=when(i.get("start")),
            end=when(i.get("end")),
            limit=i.get("limit"),
            evidence=i.get("evidence", ""),
        ).strip()
        for i in _list(doc.get("intervals"))
    ]
    clock = Clock()
    clock.seconds(doc.get("start"))
    incidents = []
    for i in _list(doc.get("incidents")):
        a, b = clock.seconds(i.get("start")), clock.seconds(i.get("end"))
        incidents.append(
            monitor(
                "pm.incident",
                start=when(i.get("start")),
                end=when(i.get("end")),
                seconds=(b or 0.0) - (a or 0.0),
                peak=i.get("peak_waiting", "?"),
                limit=i.get("limit"),
            ).strip()
        )
    return timeline, incidents


def conclusion(doc: Json, monitor: Voice) -> list[str]:
    dominant = doc.get("dominant")
    said = [monitor("pm.dominant", dominant=dominant, name=_limit_name(dominant, monitor))]
    step = doc.get("next_step")
    if isinstance(step, str):
        said.append(monitor("pm.next", next=step))
    else:
        said.append(monitor("pm.unknown-next" if dominant == "unknown" else "pm.no-next"))
    return said


def _items(texts: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{_esc(t)}</li>" for t in texts) + "</ul>"


def section_body(doc: Json, monitor: Voice, words: Voice) -> str:
    """The whole postmortem section but its heading and provenance."""
    title = monitor(
        "pm.title",
        source=doc.get("source", "?"),
        start=when(doc.get("start")),
        end=when(doc.get("end")),
    )
    timeline, incidents = _lines(doc, monitor)
    said = conclusion(doc, monitor)
    no_incident = f"<p>{_esc(monitor('pm.no-incidents'))}</p>"
    return "".join(
        [
            f"<p>{_esc(title)}</p>",
            '<ul class="conclusion">' + "".join(f"<li>{_esc(s)}</li>" for s in said) + "</ul>",
            timeline_figure(doc, monitor, words),
            incident_figure(doc, words),
            f"<h3>{_esc(monitor('pm.timeline').rstrip(':：'))}</h3>",
            f'<div class="evidence">{_items(timeline)}</div>',
            f"<h3>{_esc(monitor('pm.incidents').rstrip(':：'))}</h3>" if incidents else "",
            _items(incidents) if incidents else no_incident,
            f'<p class="hint">{_esc(words("postmortem.english"))}</p>'
            if words.language != "en"
            else "",
        ]
    )
