"""`watch`, `postmortem` and `alerts` as text and JSON, in the language asked for: the live panel
(redrawn in place on a terminal), one line per interval otherwise, the summary, the postmortem's
timeline and its plot, what `alerts` wrote and what `alerts --lint` found. JSON is each result's
`to_json()`, English whatever the language.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from servetune import texts
from servetune.errors import MissingExtra
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from servetune.monitor.alerts import Ruleset
    from servetune.monitor.lint import LintReport
    from servetune.monitor.names import NameCheck
    from servetune.monitor.postmortem import Postmortem
    from servetune.monitor.watch import Ending, Summary, Tick
    from servetune.texts import Language

_NONE = "-"


def _t(key: str, language: Language, **facts: object) -> str:
    return texts.format("monitor", key, language, **facts)


def _number(value: float | None, spec: str = ",.0f") -> str:
    return _NONE if value is None else format(value, spec)


def _ms(value: float | None) -> str:
    return _NONE if value is None else f"{value:,.0f} ms"


def _kv(value: float | None) -> str:
    return _NONE if value is None else f"{value:.0%}"


def _cap(tick: Tick, language: Language) -> str:
    return str(tick.cap) if tick.cap is not None else _t("panel.cap-unknown", language)


def json_line(doc: object) -> str:
    """One JSON Lines record (compact, one line, non-ASCII kept readable)."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"


def interval_line(tick: Tick, language: Language = "en") -> str:
    """One line per interval (the view when stdout is not a terminal)."""
    if tick.gap is not None:
        return (
            _t("line.gap", language, elapsed=tick.elapsed_s, reason=tick.gap.text(language)) + "\n"
        )
    line = _t(
        "line.interval",
        language,
        elapsed=tick.elapsed_s,
        running=_number(tick.running),
        cap=_cap(tick, language),
        waiting=_number(tick.waiting),
        kv=_kv(tick.kv_cache_usage),
        preemptions=_number(tick.preemptions_per_s, ".2f"),
        prompt=_number(tick.prompt_tokens_per_s),
        generation=_number(tick.generation_tokens_per_s),
        ttft=f"{_number(tick.ttft_p50_ms)}/{_ms(tick.ttft_p99_ms)}",
        itl=f"{_number(tick.itl_p50_ms)}/{_ms(tick.itl_p99_ms)}",
        limit=tick.verdict.limit,
        evidence=tick.verdict.evidence.text(language),
    )
    return line + "\n"


def _numbers(tick: Tick, language: Language) -> list[str]:
    """The panel's lines of numbers: requests, KV cache, tokens, latencies."""
    return [
        _t(
            "panel.running",
            language,
            running=_number(tick.running),
            cap=_cap(tick, language),
            waiting=_number(tick.waiting),
        ),
        _t(
            "panel.kv",
            language,
            kv=_kv(tick.kv_cache_usage),
            preemptions=_number(tick.preemptions_per_s, ".2f"),
        ),
        _t(
            "panel.tokens",
            language,
            prompt=_number(tick.prompt_tokens_per_s),
            generation=_number(tick.generation_tokens_per_s),
        ),
        _t(
            "panel.latency",
            language,
            ttft50=_ms(tick.ttft_p50_ms),
            ttft99=_ms(tick.ttft_p99_ms),
            itl50=_ms(tick.itl_p50_ms),
            itl99=_ms(tick.itl_p99_ms),
        ),
    ]


def panel(tick: Tick, url: str, window_s: float, language: Language = "en") -> list[str]:
    """The live panel's lines for the latest interval."""
    verdict = tick.verdict
    name = _t(f"limit.{verdict.limit}", language)
    lines = [
        _t("panel.title", language, url=url, seconds=tick.elapsed_s, window=window_s),
        *_numbers(tick, language),
        _t("panel.limit", language, limit=verdict.limit, name=name),
        _t("panel.evidence", language, evidence=verdict.evidence.text(language)),
    ]
    if verdict.next_step is not None:
        lines.append(_t("panel.next", language, next=verdict.next_step.text(language)))
    if tick.gap is not None:
        lines.append(_t("panel.gap", language, reason=tick.gap.text(language)))
    return lines


def redraw(lines: list[str], previous_height: int) -> str:
    """The panel drawn over the previous one: up to its first line, clear below, draw."""
    up = f"\x1b[{previous_height}F\x1b[J" if previous_height else ""
    return up + "\n".join(lines) + "\n"


def summary_text(summary: Summary, language: Language = "en") -> str:
    """The watch's last words: seconds under each limit, the dominant one, its next step."""
    parts = _t("summary.separator", language).join(
        _t("summary.part", language, limit=limit, seconds=seconds)
        for limit, seconds in sorted(summary.by_limit.items(), key=lambda item: -item[1])
    )
    lines = [
        _t(
            "summary.watched",
            language,
            seconds=summary.seconds,
            parts=parts or _NONE,
            dominant=summary.dominant,
        )
    ]
    if summary.next_step is not None:
        lines.append(_t("summary.next", language, next=summary.next_step.text(language)))
    return "\n".join(lines) + "\n"


def ending_text(ending: Ending, language: Language = "en") -> str:
    """Why the watch stopped, where it did not simply run out its duration."""
    if ending.kind != "gone":
        return ""
    reason = ending.reason.text(language) if ending.reason is not None else _NONE
    return _t("end.gone", language, reason=reason) + "\n"


def _incident_lines(result: Postmortem, language: Language) -> list[str]:
    if not result.incidents:
        return [_t("pm.no-incidents", language)]
    return [_t("pm.incidents", language)] + [
        _t(
            "pm.incident",
            language,
            start=result.when(i.start),
            end=result.when(i.end),
            seconds=i.end - i.start,
            peak=i.peak_waiting,
            limit=i.limit,
        )
        for i in result.incidents
    ]


def _conclusion(result: Postmortem, language: Language) -> list[str]:
    name = _t(f"limit.{result.dominant}", language)
    lines = [_t("pm.dominant", language, dominant=result.dominant, name=name)]
    if result.next_step is not None:
        lines.append(_t("pm.next", language, next=result.next_step.text(language)))
    else:
        key = "pm.unknown-next" if result.dominant == "unknown" else "pm.no-next"
        lines.append(_t(key, language))
    return lines


def postmortem_text(result: Postmortem, language: Language = "en") -> str:
    """The timeline, the incidents, the dominant limit and the next step."""
    when = result.when
    title = _t(
        "pm.title", language, source=result.source, start=when(result.start), end=when(result.end)
    )
    timeline = [
        _t(
            "pm.interval",
            language,
            start=when(i.start),
            end=when(i.end),
            limit=i.limit,
            evidence=i.evidence.text(language),
        )
        for i in result.intervals
    ]
    lines = [title, "", _t("pm.timeline", language), *timeline, ""]
    lines += [*_incident_lines(result, language), "", *_conclusion(result, language)]
    return "\n".join(lines) + "\n"


def _values(values: list[float | None]) -> list[float]:
    """A series for matplotlib: an unknown value is a break in the line (nan)."""
    return [math.nan if v is None else v for v in values]


def _draw(fig: Figure, result: Postmortem) -> None:
    """Requests (left axis) and KV cache use (right axis) against minutes, incidents shaded."""
    ax = fig.subplots()
    start = result.start
    t = [(p.t - start) / 60 for p in result.points]
    ax.plot(t, _values([p.running for p in result.points]), label="running")
    ax.plot(t, _values([p.waiting for p in result.points]), label="waiting")
    for incident in result.incidents:
        ax.axvspan(
            (incident.start - start) / 60, (incident.end - start) / 60, color="tab:red", alpha=0.15
        )
    ax.set(
        xlabel=f"minutes from {result.when(start)}",
        ylabel="requests",
        title=f"{result.source}: dominant limit {result.dominant}",
    )
    kv = ax.twinx()
    kv.plot(
        t,
        _values([p.kv_cache_usage for p in result.points]),
        color="tab:green",
        label="KV cache use",
    )
    kv.set(ylabel="KV cache use", ylim=(0, 1.05))
    ax.legend(loc="upper left")
    kv.legend(loc="upper right")
    ax.grid(alpha=0.3)


def write_plot(path: Path, result: Postmortem) -> Path:
    """Running, waiting and KV cache use over time with the incidents shaded, as PNG (SVG when
    the path ends in .svg). Axis labels stay English: matplotlib's default font has no CJK."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtra("report", ErrorText("feature.postmortem-plot")) from exc
    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    _draw(fig, result)
    from servetune.render import figure

    return figure.save(fig, path)


# --- alerts ------------------------------------------------------------------------------------


def _caps_text(rules: Ruleset, language: Language) -> str:
    caps = rules.caps
    if caps.max_num_seqs is None and caps.max_num_batched_tokens is None:
        return _t("alerts.caps-none", language)
    return _t(
        "alerts.caps",
        language,
        seqs=_number(caps.max_num_seqs),
        budget=_number(caps.max_num_batched_tokens),
        source=caps.source,
    )


def _names_of(asked: str, table: str, language: Language) -> str:
    return "" if asked == table else _t("alerts.names-of", language, table=table)


def alerts_text(
    rules: Ruleset,
    files: Mapping[str, tuple[Path, Mapping[str, object]]],
    language: Language = "en",
) -> str:
    """What `alerts` wrote, its alerts in order with their knobs, what it left out and why.
    `files`: kind (rules, operator, tests, dashboard) -> (path, facts of its line)."""
    release = rules.release
    lines = [
        _t(
            "alerts.title",
            language,
            version=release.asked,
            names_of=_names_of(release.asked, release.table, language),
            engine=release.engine.upper(),
            caps=_caps_text(rules, language),
        ),
        _t("alerts.written", language),
        *(
            _t(f"alerts.file.{kind}", language, path=path, **facts)
            for kind, (path, facts) in files.items()
        ),
        _t("alerts.list", language),
        *(
            _t("alerts.alert", language, alert=a.name, limit=a.limit, knob=a.knob.text(language))
            for a in rules.alerts
        ),
    ]
    if rules.skipped:
        lines.append(_t("alerts.skipped", language))
        lines += [
            _t("alerts.skip", language, limit=s.limit, reason=s.reason.text(language))
            for s in rules.skipped
        ]
    if "rules" in files and "tests" in files:
        lines.append(_t("alerts.check", language, rules=files["rules"][0], tests=files["tests"][0]))
    return "\n".join(lines) + "\n"


def _why(check: NameCheck, flag: str, engine: str, language: Language) -> str | None:
    """The reason line of a name that is not simply live."""
    if check.status == "hidden":
        return _t("lint.why.hidden", language, flag=flag)
    if check.status == "other-engine":
        return _t("lint.why.other-engine", language, engine=engine)
    if check.reason is None:
        return None
    key = f"lint.why.{check.reason}"
    if check.use is None and texts.has("monitor", key + ":bare"):
        key += ":bare"
    return _t(key, language, use=check.use or _NONE, last=check.last, first=check.first)


def lint_text(report: LintReport, language: Language = "en") -> str:
    """Each vLLM name the file queries, its status in the release, where it is used, why it is
    dead and what to query instead; dead ones first."""
    release = report.release
    if not report.findings:
        return _t("lint.none", language, file=report.file) + "\n"
    other = "V0" if release.engine == "v1" else "V1"
    lines = [
        _t(
            "lint.title",
            language,
            file=report.file,
            count=len(report.findings),
            version=release.asked,
            names_of=_names_of(release.asked, release.table, language),
            engine=release.engine.upper(),
        )
    ]
    order = {"dead": 0, "hidden": 1, "other-engine": 2, "live": 3}
    separator = _t("lint.where.separator", language)
    for finding in sorted(report.findings, key=lambda f: order[f.check.status]):
        check = finding.check
        where = separator.join(w.text(language) for w in finding.where)
        status = _t(f"lint.status.{check.status}", language)
        lines.append(_t("lint.name", language, status=status, name=check.name, where=where))
        why = _why(check, release.hidden_flag, other, language)
        if why is not None:
            lines.append(_t("lint.reason", language, reason=why))
    dead = report.dead
    lines.append(_t("lint.dead", language, dead=dead) if dead else _t("lint.clean", language))
    return "\n".join(lines) + "\n"
