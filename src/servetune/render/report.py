"""`servetune report`: one self-contained HTML page (it opens offline: no network, no other
file) from whatever the user has: bench result files or folders (servetune's or `vllm bench
serve --save-result`), a before/after comparison, a tune directory, a `plan --format json`
file, a `postmortem --format json` file. Several inputs make several sections of one page.

Each section says where its numbers came from (the command lines, the servetune and vLLM
versions, the GPUs, when it was measured) and uses the words of the terminal view of the same
result (`texts`), in the language asked for. The figures are inline SVG (`report_svg`), except
tune's, which tune's own report draws (`tune_report`, matplotlib: the `report` extra).

The page reads on a phone (one column, nothing wider than the screen at 400 px) and prints on
A4 (`@page`, no figure split across pages).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from servetune import __version__
from servetune.errors import UsageError
from servetune.judge.runs import Json, Side
from servetune.render import report_svg
from servetune.render.report_runs import BenchRecord, Provenance, load_records
from servetune.texts import ErrorText, Language, Voice

__all__ = ["ReportRequest", "Section", "build", "page", "write"]

Kind = Literal["bench", "compare", "tune", "plan", "postmortem"]
HINT = ErrorText("hint.report-input")


@dataclass(frozen=True)
class ReportRequest:
    """What to put on the page: inputs (`paths`), a comparison (`before` and `after`), a
    title (None: the default one)."""

    paths: tuple[Path, ...] = ()
    before: tuple[Path, ...] = ()
    after: tuple[Path, ...] = ()
    title: str | None = None


@dataclass(frozen=True)
class Section:
    """One part of the page: its kind, heading, HTML body and where its data came from."""

    kind: Kind
    heading: str
    body: str
    provenance: tuple[Provenance, ...]
    note: str = ""  # a line under the provenance (a prediction is not a measurement)


# --- the page around the sections ---------------------------------------------------------------

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK TC",
 "PingFang TC","Microsoft JhengHei",sans-serif;margin:0 auto;max-width:1060px;padding:1em;
 color:#222;line-height:1.45;overflow-wrap:anywhere}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.8em;
 border-bottom:2px solid #0072b2;padding-bottom:.2em}h3{font-size:1.05em;margin-top:1.4em}
nav ul{padding-left:1.2em}.made{color:#555;font-size:.9em}
table{border-collapse:collapse;font-size:.9em;max-width:100%;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}
td.num{text-align:right;white-space:nowrap;overflow-wrap:normal}
th.group{background:#e8eef5;text-align:center}caption{font-weight:600;text-align:left;
 padding:.3em 0}
pre,code{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.85em}
pre{background:#f7f7f7;padding:.6em;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0}
.banner{background:#fff1e6;border-left:5px solid #d55e00;padding:.6em .8em;font-weight:600}
.conclusion{font-weight:600}.next{background:#eef7f1;border-left:5px solid #009e73;
 padding:.5em .8em}.missing,.hint{color:#555;font-style:italic}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,420px),1fr));
 gap:.4em 1.2em}
dl.about{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;font-size:.9em;
 margin:.4em 0}dl.about dt{font-weight:600}dl.about dd{margin:0;min-width:0}
.about-box{background:#fafafa;border:1px solid #e3e3e3;padding:.4em .8em;margin:1.5em 0 .8em}
h4{font-size:.95em;margin:.8em 0 .3em}table.sources{font-size:.8em}
.tables{display:flex;flex-wrap:wrap;gap:0 2em;align-items:flex-start}
.verdict.better{color:#00734f;font-weight:600}.verdict.worse{color:#b34700;font-weight:600}
.best{background:#eef8ee}.add{color:#1a7f37}.del{color:#cf222e}
.plots{display:flex;flex-wrap:wrap;gap:1em}.plot{width:520px;max-width:100%;height:auto}
@media (max-width:520px){body{padding:.5em;font-size:15px}
 dl.about{grid-template-columns:1fr}dl.about dd{margin-bottom:.4em}
 table{font-size:.75em}td,th{padding:.2em .25em}td.num{overflow-wrap:normal}}
@page{size:A4;margin:14mm}
@media print{body{max-width:none;padding:0;font-size:10pt}nav{display:none}
 h2{break-before:auto;break-after:avoid}h3{break-after:avoid}
 table,pre,.banner{break-inside:avoid}}
"""


def _esc(text: object) -> str:
    return html.escape(str(text))


def _commands(p: Provenance, words: Voice) -> str:
    shown = "".join(f"<pre>{_esc(c)}</pre>" for c in p.commands)
    if not shown:
        return _esc(words("about.unknown"))
    rebuilt = f'<p class="hint">{_esc(words("about.rebuilt"))}</p>' if p.rebuilt else ""
    return shown + rebuilt


def _facts(p: Provenance, words: Voice) -> list[tuple[str, str]]:
    unknown = words("about.unknown")
    return [
        ("about.source", p.source),
        ("about.measured", p.measured or unknown),
        ("about.servetune", p.servetune_version or unknown),
        ("about.vllm", p.vllm_version or unknown),
        ("about.gpus", p.gpus or unknown),
    ]


def _one_source(p: Provenance, words: Voice) -> str:
    rows = [f"<dt>{_esc(words(key))}</dt><dd>{_esc(value)}</dd>" for key, value in _facts(p, words)]
    rows.append(f"<dt>{_esc(words('about.commands'))}</dt><dd>{_commands(p, words)}</dd>")
    return f'<dl class="about">{"".join(rows)}</dl>'


def _sources(found: Sequence[Provenance], words: Voice) -> str:
    """Several sources (a comparison's runs): one row each, then their distinct commands."""
    keys = [key for key, _ in _facts(found[0], words)]
    head = "".join(f'<th scope="col">{_esc(words(key))}</th>' for key in keys)
    rows = "".join(
        "<tr>" + "".join(f"<td>{_esc(v)}</td>" for _, v in _facts(p, words)) + "</tr>"
        for p in found
    )
    commands = list(dict.fromkeys(c for p in found for c in p.commands))
    shown = "".join(f"<pre>{_esc(c)}</pre>" for c in commands)
    rebuilt = any(p.rebuilt for p in found)
    note = f'<p class="hint">{_esc(words("about.rebuilt"))}</p>' if rebuilt else ""
    heading = f"<h4>{_esc(words('about.commands'))}</h4>"
    return f'<table class="sources"><tr>{head}</tr>{rows}</table>{heading}{shown}{note}'


def _about(section: Section, words: Voice) -> str:
    """Where the section's numbers came from."""
    found = section.provenance
    inner = _one_source(found[0], words) if len(found) == 1 else _sources(found, words)
    note = f'<p class="hint">{_esc(section.note)}</p>' if section.note else ""
    heading = f"<h3>{_esc(words('about.title'))}</h3>"
    return f'<div class="about-box" data-about="{section.kind}">{heading}{inner}{note}</div>'


def page(sections: Sequence[Section], language: Language = "en", title: str | None = None) -> str:
    """The whole HTML page: a heading, a list of its sections, then each section."""
    words = Voice("report", language)
    heading = title or words("page.title")
    toc = "".join(
        f'<li><a href="#section-{i}">{_esc(s.heading)}</a></li>' for i, s in enumerate(sections, 1)
    )
    body = [
        f"<header><h1>{_esc(heading)}</h1>",
        f'<p class="made">{_esc(words("page.made", version=__version__))}</p>',
        f"<nav><ul>{toc}</ul></nav></header>" if len(sections) > 1 else "</header>",
    ]
    for i, s in enumerate(sections, 1):
        body.append(
            f'<section id="section-{i}" data-section="{s.kind}"><h2>{_esc(s.heading)}</h2>'
            f"{s.body}{_about(s, words)}</section>"
        )
    lang = "zh-Hant-TW" if language == "zh-TW" else "en"
    head = (
        '<head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(heading)}</title><style>{_CSS}{report_svg.STYLE}</style></head>"
    )
    return f'<!DOCTYPE html><html lang="{lang}">{head}<body>{"".join(body)}</body></html>\n'


def write(path: Path, html_page: str) -> Path:
    """Write the page atomically (a temporary file beside it, then `os.replace`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Not mkstemp: its file is private (0600), and a page is made to be passed on; a name of
    # this process's own, opened with the user's umask, is as safe from other writers.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(html_page, encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# --- the sections of each kind ------------------------------------------------------------------


def _bench_sections(records: Sequence[BenchRecord], language: Language) -> list[Section]:
    from servetune.render import report_bench

    bench, words = Voice("bench", language), Voice("report", language)
    return [
        Section(
            "bench",
            words("section.bench", source=Path(r.run.source).name),
            report_bench.section_body(r, bench, words),
            (r.provenance,),
        )
        for r in records
    ]


def _compare_section(request: ReportRequest, language: Language) -> Section:
    from servetune.judge.compare import compare
    from servetune.render import report_compare

    before, after = load_records(request.before), load_records(request.after)
    b_side = Side(tuple(r.run for r in before))
    a_side = Side(tuple(r.run for r in after))
    result = compare(b_side, a_side)
    judge, words = Voice("judge", language), Voice("report", language)
    line = [
        "servetune",
        "compare",
        "--before",
        *map(str, request.before),
        "--after",
        *map(str, request.after),
    ]
    provenance = (
        Provenance(words("compare.this"), (" ".join(line),), False, __version__, None, None, None),
        *(r.provenance for r in (*before, *after)),
    )
    body = report_compare.section_body(result, b_side, a_side, judge, words)
    return Section("compare", words("section.compare"), body, provenance)


def _tune_section(folder: Path, language: Language) -> Section:
    from servetune.render import report_tune, tune_report

    result = report_tune.load_tune(folder)
    words = Voice("report", language)
    body = "".join(tune_report.body(result, language))
    heading = words("section.tune", source=folder.name or str(folder))
    return Section("tune", heading, body, (report_tune.tune_provenance(result),))


def _json_doc(path: Path) -> Json | None:
    """The file's JSON object, or None when it is not one JSON object (a bench file may hold
    several, one per run, as `--append-result` writes them)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _plan_section(path: Path, doc: Json, language: Language) -> Section:
    from servetune.render import report_plan

    words = Voice("report", language)
    body = report_plan.section_body(doc, Voice("plan", language), words)
    planned = doc.get("planned_command")
    commands = (planned,) if isinstance(planned, str) else ()
    provenance = Provenance(str(path), commands, False, None, None, None, None)
    heading = words("section.plan", source=path.name)
    return Section("plan", heading, body, (provenance,), words("plan.predicted"))


def _postmortem_section(path: Path, doc: Json, language: Language) -> Section:
    from servetune.render import report_postmortem

    words = Voice("report", language)
    body = report_postmortem.section_body(doc, Voice("monitor", language), words)
    start, end = doc.get("start"), doc.get("end")
    when = None
    if start is not None:
        when = f"{report_postmortem.when(start)} - {report_postmortem.when(end)}"
    provenance = Provenance(str(path), (), False, None, None, None, when)
    return Section("postmortem", words("section.postmortem", source=path.name), body, (provenance,))


def _classify(path: Path) -> tuple[Kind, Json | None]:
    from servetune.render.report_plan import is_plan
    from servetune.render.report_postmortem import is_postmortem
    from servetune.render.report_tune import is_tune_dir

    if is_tune_dir(path):
        return "tune", None
    if not path.exists():
        raise UsageError(ErrorText("report.no-such-path", path=path), HINT)
    doc = _json_doc(path) if path.is_file() else None
    if doc is not None and is_plan(doc):
        return "plan", doc
    if doc is not None and is_postmortem(doc):
        return "postmortem", doc
    return "bench", None


def sections(request: ReportRequest, language: Language = "en") -> list[Section]:
    """The page's sections, in the order the inputs were given (the comparison first)."""
    if bool(request.before) != bool(request.after):
        raise UsageError(ErrorText("report.needs-both"))
    if not request.paths and not request.before:
        raise UsageError(ErrorText("report.nothing"), HINT)
    found = [_compare_section(request, language)] if request.before else []
    for path in request.paths:
        kind, doc = _classify(path)
        if kind == "tune":
            found.append(_tune_section(path, language))
        elif kind == "plan" and doc is not None:
            found.append(_plan_section(path, doc, language))
        elif kind == "postmortem" and doc is not None:
            found.append(_postmortem_section(path, doc, language))
        else:
            found += _bench_sections(load_records([path]), language)
    return found


def build(request: ReportRequest, language: Language = "en") -> str:
    """The page for `request`, in `language`."""
    return page(sections(request, language), language, request.title)
