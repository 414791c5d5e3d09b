"""`postmortem`: the same verdicts as `watch`, after the fact, from what the user kept.

Sources, told apart by their content:
- a vLLM log: its periodic stats lines (`vllm.log.stats_lines`, every release 0.6 to 0.33), timed
  by vLLM's own stamps (month-day, no year: a year is assumed, and a stamp earlier than the one
  before it starts the next year); data-parallel engines logging at the same second add up. vLLM
  logs stats only while busy, so a gap longer than QUIET_SPACINGS intervals reads as idle;
- a Prometheus text snapshot (one /metrics page a file, timed by the file's modification time);
- a Prometheus range-query export (`/api/v1/query_range` JSON, `resultType` `matrix`);
- a servetune bench result file (its `/metrics` samples).

Each source becomes points (`monitor.window`), each point is judged over the window ending at it
(`monitor.limits.diagnose`), and runs of one limit become the timeline's intervals; a run of
points with requests waiting is an incident.
"""

from __future__ import annotations

import itertools
import json
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from servetune.errors import UsageError
from servetune.judge.advice import WAITING_MIN
from servetune.monitor import window
from servetune.monitor.caps import Caps
from servetune.monitor.limits import Limit, Said, Verdict, diagnose, dominant
from servetune.monitor.scrape import Scrape, read
from servetune.texts import ErrorText
from servetune.vllm.log import StatsLine, stats_lines

Kind = Literal["vllm-log", "prometheus-text", "prometheus-range", "bench-result"]
SCHEMA_VERSION = 1
QUIET_SPACINGS = 3.0  # a pause this many logging intervals long: the server was idle
_BASE_YEAR = 2000  # a leap year, so that a 02-29 stamp reads


@dataclass(frozen=True)
class Source:
    """One file, read: its kind, its points in time order, and whether its times are vLLM's
    month-day stamps (shown as such) or plain seconds."""

    name: str
    kind: Kind
    points: tuple[window.Point, ...]
    stamped: bool = False
    scrapes: tuple[tuple[float, Scrape], ...] = ()  # the pages behind the points, where scraped


@dataclass(frozen=True)
class Interval:
    start: float
    end: float
    limit: Limit
    evidence: Said


@dataclass(frozen=True)
class Incident:
    """A queue that built up: from the first interval with requests waiting to the last."""

    start: float
    end: float
    peak_waiting: int
    limit: Limit


@dataclass(frozen=True)
class Postmortem:
    source: str
    stamped: bool
    start: float
    end: float
    intervals: tuple[Interval, ...]
    incidents: tuple[Incident, ...]
    dominant: Limit
    next_step: Said | None
    points: tuple[window.Point, ...]

    def when(self, t: float) -> str | float:
        """A time as the source gave it: vLLM's `MM-DD HH:MM:SS`, else seconds."""
        if self.stamped:
            return datetime.fromtimestamp(t, UTC).strftime("%m-%d %H:%M:%S")
        return round(t, 3)

    def to_json(self) -> dict[str, object]:
        """The postmortem's JSON document (schema_version 1; English)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "start": self.when(self.start),
            "end": self.when(self.end),
            "intervals": [
                {
                    "start": self.when(i.start),
                    "end": self.when(i.end),
                    "limit": i.limit,
                    "evidence": i.evidence.text(),
                }
                for i in self.intervals
            ],
            "incidents": [
                {
                    "start": self.when(i.start),
                    "end": self.when(i.end),
                    "peak_waiting": i.peak_waiting,
                    "limit": i.limit,
                }
                for i in self.incidents
            ],
            "dominant": self.dominant,
            "next_step": self.next_step.text() if self.next_step else None,
        }


# --- reading the sources ------------------------------------------------------------------------


def _stamp_seconds(stamps: Sequence[str]) -> list[float]:
    """vLLM's `MM-DD HH:MM:SS` stamps as seconds, a year assumed, a new year where they wrap."""
    year, previous, found = _BASE_YEAR, None, []
    for stamp in stamps:
        moment = datetime.strptime(f"{year}-{stamp}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        if previous is not None and moment < previous:
            year += 1
            moment = moment.replace(year=year)
        found.append(moment.timestamp())
        previous = moment
    return found


def _merge_engines(group: Sequence[StatsLine]) -> StatsLine:
    """Data-parallel engines' lines of one moment as one: counts and rates add up, the KV cache
    is the fullest engine's."""
    first = group[0]
    if len(group) == 1:
        return first

    def total(name: str) -> int | None:
        values = [getattr(line, name) for line in group if getattr(line, name) is not None]
        return sum(values) if values else None

    return StatsLine(
        stamp=first.stamp,
        engine="all",
        prompt_tokens_per_s=sum(line.prompt_tokens_per_s for line in group),
        generation_tokens_per_s=sum(line.generation_tokens_per_s for line in group),
        running=sum(line.running for line in group),
        waiting=total("waiting"),
        kv_cache_usage=max(line.kv_cache_usage for line in group),
        deferred=total("deferred"),
        preemptions=total("preemptions"),
    )


def _moments(lines: Sequence[StatsLine]) -> list[StatsLine]:
    merged: list[StatsLine] = []
    group: list[StatsLine] = []
    for line in lines:
        same = (
            group and line.stamp == group[0].stamp and line.engine not in {g.engine for g in group}
        )
        if group and not same:
            merged.append(_merge_engines(group))
            group = []
        group.append(line)
    if group:
        merged.append(_merge_engines(group))
    return merged


def _log_point(line: StatsLine, t: float, dt: float) -> window.Point:
    preemptions = line.preemptions / dt if line.preemptions is not None and dt > 0 else None
    return window.Point(
        t=t,
        dt=dt,
        running=float(line.running),
        waiting=None if line.waiting is None else float(line.waiting),
        kv_cache_usage=line.kv_cache_usage,
        deferred=None if line.deferred is None else float(line.deferred),
        preemptions_per_s=preemptions,
        prompt_tokens_per_s=line.prompt_tokens_per_s,
        generation_tokens_per_s=line.generation_tokens_per_s,
    )


def spacing(times: Sequence[float]) -> float:
    """The usual time between two stats lines (vLLM's default: 10 s; V0 logged every 5 s)."""
    steps = [b - a for a, b in itertools.pairwise(times) if b > a]
    return statistics.median(steps) if steps else 10.0


def from_log(name: str, text: str) -> Source | None:
    """A log's stats lines as points; None when the text has none."""
    lines = _moments(stats_lines(text))
    if not lines:
        return None
    stamped = all(line.stamp is not None for line in lines)
    stamps = [line.stamp or "" for line in lines]
    times = _stamp_seconds(stamps) if stamped else [10.0 * i for i in range(len(lines))]
    usual = spacing(times)
    found = []
    for i, (line, t) in enumerate(zip(lines, times, strict=True)):
        dt = t - times[i - 1] if i else usual
        quiet = dt > QUIET_SPACINGS * usual
        found.append(_log_point(line, t, usual if quiet else dt))
    return Source(name, "vllm-log", tuple(found), stamped)


def _range_pages(doc: Mapping[str, object]) -> list[tuple[float, str]]:
    """A Prometheus range-query export as one text page per time stamp."""
    data = doc.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    by_time: dict[float, list[str]] = defaultdict(list)
    for entry in result if isinstance(result, list) else []:
        metric = entry.get("metric", {}) if isinstance(entry, dict) else {}
        name = str(metric.get("__name__", ""))
        labels = ",".join(f'{k}="{v}"' for k, v in metric.items() if k != "__name__")
        for stamp, value in entry.get("values", []) if name else []:
            by_time[float(stamp)].append(f"{name}{{{labels}}} {value}")
    return [(t, "\n".join(lines)) for t, lines in sorted(by_time.items())]


def _bench_scrapes(doc: Mapping[str, object]) -> list[tuple[float, Scrape]] | None:
    block = doc.get("servetune")
    metrics = block.get("server_metrics") if isinstance(block, dict) else None
    samples = metrics.get("samples") if isinstance(metrics, dict) else None
    if not isinstance(samples, list):
        return None
    found = []
    for s in samples:
        preemptions = s.get("preemptions_total")
        counters = {} if preemptions is None else {"preemptions": float(preemptions)}
        scrape = Scrape(
            running=s.get("running"),
            waiting=s.get("waiting"),
            kv_cache_usage=s.get("kv_cache_usage"),
            counters=counters,
        )
        found.append((float(s["t_s"]), scrape))
    return found


def from_json(name: str, text: str) -> Source | None:
    """A range-query export or a bench result file; None for any other JSON."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    bench = _bench_scrapes(doc)
    if bench is not None:
        return Source(name, "bench-result", tuple(window.points(bench)), scrapes=tuple(bench))
    pages = _range_pages(doc)
    if not pages:
        return None
    scrapes = tuple((t, read(page)) for t, page in pages)
    return Source(name, "prometheus-range", tuple(window.points(scrapes)), scrapes=scrapes)


def read_source(name: str, text: str, modified: float) -> Source:
    """One file, whatever it holds among the kinds above."""
    found = from_json(name, text) if text.lstrip().startswith("{") else None
    if found is None and ("# TYPE vllm:" in text or "\nvllm:" in text):
        page = read(text)
        point = window.point(modified, page, None)
        return Source(name, "prometheus-text", (point,), scrapes=((modified, page),))
    found = found or from_log(name, text)
    if found is None:
        raise UsageError(
            ErrorText("monitor.no-samples", name=name),
            ErrorText("hint.postmortem-input"),
        )
    return found


def combine(sources: Sequence[Source]) -> Source:
    """Several files as one series in time order (all stamped by vLLM, or all in seconds)."""
    if len({s.stamped for s in sources}) > 1:
        raise UsageError(ErrorText("monitor.mixed-clocks"))
    if all(s.scrapes for s in sources):  # rates between the files' pages, too
        scrapes = sorted((x for s in sources for x in s.scrapes), key=lambda x: x[0])
        points = tuple(window.points(scrapes))
    else:
        points = tuple(sorted((p for s in sources for p in s.points), key=lambda p: p.t))
    names = ", ".join(s.name for s in sources)
    return Source(names, sources[0].kind, points, sources[0].stamped)


# --- the timeline -------------------------------------------------------------------------------


def judged(points: Sequence[window.Point], caps: Caps, window_s: float) -> list[Verdict]:
    """Each point's verdict over the window that ends at it."""
    verdicts = []
    for i in range(len(points)):
        history = points[: i + 1]
        signals = window.signals(window.recent(history, window_s), window.stalled_for(history))
        verdicts.append(diagnose(signals, caps))
    return verdicts


def _runs(points: Sequence[window.Point], verdicts: Sequence[Verdict]) -> list[Interval]:
    """Consecutive points of one limit as one interval (with the evidence that started it); a
    pause in a log as a `none` interval."""
    found: list[Interval] = []
    for i, (p, verdict) in enumerate(zip(points, verdicts, strict=True)):
        start = p.t - p.dt
        before = points[i - 1].t if i else start
        if start - before > 1e-6:  # a pause in the log: vLLM was idle
            quiet = Said("evidence.none:quiet", seconds=start - before)
            found.append(Interval(before, start, "none", quiet))
        last = found[-1] if found else None
        joins = last is not None and last.limit == verdict.limit and abs(last.end - start) < 1e-6
        if last is not None and joins and last.evidence.key != "evidence.none:quiet":
            found[-1] = Interval(last.start, p.t, last.limit, last.evidence)
        else:
            found.append(Interval(start, p.t, verdict.limit, verdict.evidence))
    return found


def _incidents(points: Sequence[window.Point], verdicts: Sequence[Verdict]) -> list[Incident]:
    """Runs of points with requests waiting that their window counts as a queue (a verdict
    other than `none`: one request caught between two steps is no incident)."""
    found: list[Incident] = []
    run: list[int] = []
    for i, p in enumerate([*points, None]):
        queued = p is not None and (p.waiting or 0) >= WAITING_MIN
        if queued and verdicts[i].limit != "none":
            run.append(i)
            continue
        if run:
            seconds: dict[Limit, float] = defaultdict(float)
            for j in run:
                seconds[verdicts[j].limit] += points[j].dt
            peak = max(points[j].waiting or 0 for j in run)
            start = points[run[0]].t - points[run[0]].dt
            found.append(Incident(start, points[run[-1]].t, round(peak), dominant(seconds)))
            run = []
    return found


def analyse(source: Source, caps: Caps, window_s: float = 30.0) -> Postmortem:
    """The timeline, incidents, dominant limit and next step of one source."""
    points = source.points
    if not points:
        raise UsageError(ErrorText("monitor.nothing", name=source.name))
    verdicts = judged(points, caps, window_s)
    intervals = _runs(points, verdicts)
    seconds: dict[Limit, float] = defaultdict(float)
    for interval in intervals:
        seconds[interval.limit] += interval.end - interval.start
    limit = dominant(seconds) if any(seconds.values()) else verdicts[-1].limit  # one snapshot
    step = next((v.next_step for v in reversed(verdicts) if v.limit == limit), None)
    return Postmortem(
        source=source.name,
        stamped=source.stamped,
        start=intervals[0].start,
        end=intervals[-1].end,
        intervals=tuple(intervals),
        incidents=tuple(_incidents(points, verdicts)),
        dominant=limit,
        next_step=step,
        points=tuple(points),
    )
