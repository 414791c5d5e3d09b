"""tune's `report.html`: one self-contained page (opens offline) with the curves, the trials and
the winner.

The plots are drawn by matplotlib (the `report` extra, imported only here and only when a
report is written) as SVG and embedded as data URIs, so the page needs no network and no
other file. Plot titles stay in English (matplotlib's bundled fonts have no CJK glyphs); the
page's words follow the language asked for, and in zh-TW the summary is given in both languages.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from servetune import texts
from servetune.errors import MissingExtra
from servetune.texts import ErrorText, Language, Sentence, Voice
from servetune.tune.output import REPORT_FILE, changes
from servetune.tune.search import TuneResult
from servetune.tune.trial import TrialResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_KEY_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2EL"}
_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.3em .6em}
th{background:#f3f3f3}td.num{text-align:right}.best{background:#eef8ee}
pre{background:#f7f7f7;padding:.8em;white-space:pre-wrap;overflow-wrap:anywhere}.add{color:#1a7f37}.del{color:#cf222e}
.plots{display:flex;flex-wrap:wrap;gap:1em}.plot{width:520px;max-width:100%}
"""
_PLOT_WORDS = texts.Voice("tune", "en")  # the plots' words (see the module's docstring)


def _figure() -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtra("report", ErrorText("feature.tune-report")) from exc
    return Figure(figsize=(6.4, 4.0), layout="constrained")


def _svg_uri(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f"data:image/svg+xml;base64,{data}"


def _curve(trial: TrialResult, value: str) -> tuple[list[int], list[float]]:
    """(users, values) over the trial's search probes (repeats left out), by users."""
    points = sorted((p.concurrency, p) for p in trial.probes if p.repeat == 0)
    xs, ys = [], []
    for users, probe in points:
        y = probe.latency_ms.get(value) if value != "throughput" else probe.output_throughput
        if y is not None:
            xs.append(users)
            ys.append(y)
    return xs, ys


def _label(trial: TrialResult, baseline: TrialResult) -> str:
    diff = ", ".join(
        f"{f.removeprefix('--')}={v}" for f, _, v in changes(trial.flags, baseline.flags)
    )
    return f"#{trial.index + 1} " + (diff or "yours")


def _plot(result: TuneResult, value: str) -> str:
    say = _PLOT_WORDS
    fig = _figure()
    ax = fig.add_subplot()
    measured = [t for t in result.trials if t.probes]
    for trial in measured:
        xs, ys = _curve(trial, value)
        style = "-" if trial is result.best else "--"
        ax.plot(xs, ys, style, marker="o", markersize=3, label=_label(trial, result.baseline))
    targets = result.config.targets
    if value in targets.slo_ms:
        ax.axhline(targets.slo_ms[value], color="red", linestyle=":", label=say("report.slo"))
        name = _KEY_NAMES[value]
        ax.set_title(say("report.latency", metric=name, percentile=f"{targets.percentile:g}"))
        ax.set_ylabel("ms")
    else:
        ax.set_title(say("report.throughput"))
        ax.set_ylabel("tok/s")
    ax.set_xlabel("concurrent users (closed loop)")
    ax.set_xscale("log", base=2)
    ax.grid(visible=True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # no curve when no configuration was measured
        ax.legend(fontsize="x-small")
    return _svg_uri(fig)


def _row(trial: TrialResult, result: TuneResult) -> str:
    c = trial.capacity
    diff = ", ".join(f"{f} {v}" for f, _, v in changes(trial.flags, result.baseline.flags))
    cells = [
        str(trial.index + 1),
        html.escape(diff or "-"),
        trial.status,
        str(c.max_concurrency) if c and trial.status == "ok" else "-",
        f"{c.output_throughput:,.0f}" if c and c.output_throughput else "-",
        html.escape(trial.limit or "-"),
        str(trial.runs),
        f"{trial.start_s:.0f} / {trial.measure_s:.0f}",
    ]
    css = ' class="best"' if trial is result.best else ""
    return f"<tr{css}>" + "".join(f"<td>{x}</td>" for x in cells) + "</tr>"


def _table(result: TuneResult, say: Voice) -> str:
    heads = ("trial", "changes", "status", "capacity", "throughput", "limit", "runs", "time")
    head = "".join(f"<th>{html.escape(say('report.col.' + h))}</th>" for h in heads)
    rows = "".join(_row(t, result) for t in result.trials)
    return f"<table><tr>{head}</tr>{rows}</table>"


def _diff(result: TuneResult) -> str:
    best = result.best
    if best is None:
        return "<pre>-</pre>"
    lines = []
    for flag, old, new in changes(best.flags, result.baseline.flags):
        lines.append(f'<span class="del">- {html.escape(flag)} {html.escape(old)}</span>')
        lines.append(f'<span class="add">+ {html.escape(flag)} {html.escape(new)}</span>')
    command = html.escape(result.commands[best.index])
    return f"<pre>{command}</pre><pre>{chr(10).join(lines) or '='}</pre>"


def _plots(result: TuneResult) -> str:
    keys: Sequence[str] = [*result.config.targets.slo_ms, "throughput"]
    imgs = [
        f'<img class="plot" data-metric="{k}" alt="{k}" src="{_plot(result, k)}">' for k in keys
    ]
    return '<div class="plots">' + "".join(imgs) + "</div>"


def _in_both(sentence: Sentence, language: Language) -> list[str]:
    """The sentence in English and, when another, in `language` too."""
    languages: list[Language] = ["en"] if language == "en" else ["en", language]
    return [sentence.text(lang) for lang in languages]


def _paragraphs(said: list[str], css: str = "") -> list[str]:
    return [f"<p{css}>{html.escape(text)}</p>" for text in said]


def _header(result: TuneResult, say: Voice) -> list[str]:
    title = html.escape(say("report.title"))
    targets = ", ".join(f"{k} {v:g}" for k, v in result.config.targets.to_json().items())
    spent = say(
        "report.starts",
        starts=result.server_starts,
        start_s=f"{result.start_s:.0f}",
        measure_s=f"{result.measure_s:.0f}",
    )
    checked = result.interference
    notes = _in_both(checked.note, say.language) if checked else []
    return [
        f"<h1>{title}</h1>",
        *_paragraphs(_in_both(result.next_step, say.language)),
        f"<p>{html.escape(say('report.targets', targets=targets, spent=spent))}</p>",
        *_paragraphs(notes, ' class="interference"'),
    ]


def body(result: TuneResult, language: Language = "en") -> list[str]:
    """The report's content, without the page around it (`servetune report` puts it in its own
    page: one renderer of tune's report, not two)."""
    say = texts.Voice("tune", language)
    return [
        *_header(result, say),
        _plots(result),
        f"<h2>{html.escape(say('summary.trials').rstrip(':：'))}</h2>",
        _table(result, say),
        f"<h2>{html.escape(say('report.command'))}</h2>",
        _diff(result),
    ]


def page(result: TuneResult, language: Language = "en") -> str:
    """The report's HTML."""
    say = texts.Voice("tune", language)
    lang = "zh-Hant-TW" if language == "zh-TW" else "en"
    title = html.escape(say("report.title"))
    head = f'<head><meta charset="utf-8"><title>{title}</title><style>{_CSS}</style></head>'
    content = "".join(body(result, language))
    return f'<!DOCTYPE html><html lang="{lang}">{head}<body>{content}</body></html>\n'


def write(result: TuneResult, language: Language = "en") -> Path:
    """Write DIR/report.html (atomically) and return its path."""
    html_page = page(result, language)
    path = result.config.output / REPORT_FILE
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(html_page, encoding="utf-8")
    tmp.replace(path)
    return path
