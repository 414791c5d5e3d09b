"""The report's plan section, from `plan --format json`: the answer in `plan`'s own words, the
configuration and its what-ifs as bars (with their intervals where the file gives them), and
continuous against static batching.

The file is read as untrusted JSON and narrowed where each value is used. A plan that check
refused (`"error": "cannot-run"`) shows its findings.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from servetune.judge.runs import Json
from servetune.render import report_svg as svg
from servetune.texts import Voice

_VERDICTS = ("meets", "marginal", "fails")
_BOUNDS = (
    "kv-cache",
    "max-num-seqs",
    "max-num-batched-tokens",
    "compute",
    "memory-bandwidth",
    "interconnect",
)
_COLOURS = {"meets": "#009e73", "marginal": "#e69f00", "fails": "#d55e00", None: svg.PALETTE[0]}


def is_plan(doc: Json) -> bool:
    return ("prediction" in doc and "what_if" in doc) or doc.get("error") == "cannot-run"


def _esc(text: object) -> str:
    return html.escape(str(text))


def _obj(value: object) -> Json:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _n(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


@dataclass(frozen=True)
class Option:
    """One configuration the plan predicts: the command as given, or one what-if."""

    name: str
    gpus: str
    prediction: Json
    verdict: str | None
    note: str | None

    def value(self, key: str) -> float | None:
        return _num(self.prediction.get(key))

    def interval(self, key: str) -> tuple[float | None, float | None]:
        """The prediction's interval of `key`, as the file spells it (`intervals: {key: [low,
        high]}` or `{key}_low` / `{key}_high`); (None, None) when it gives none."""
        found = _obj(self.prediction.get("intervals")).get(key)
        if isinstance(found, list) and len(found) == 2:
            return _num(found[0]), _num(found[1])
        if isinstance(found, dict):
            return _num(found.get("low")), _num(found.get("high"))
        return _num(self.prediction.get(f"{key}_low")), _num(self.prediction.get(f"{key}_high"))


def _verdict(value: object) -> str | None:
    return value if value in _VERDICTS else None


def options(doc: Json, plan: Voice) -> list[Option]:
    """The command as planned, then each what-if the plan could predict or left out."""
    found = [
        Option(
            plan("row.this"), "", _obj(doc.get("prediction")), _verdict(doc.get("verdict")), None
        )
    ]
    for raw in _list(doc.get("what_if")):
        w = _obj(raw)
        note = said if isinstance(said := w.get("note"), str) else None
        found.append(
            Option(
                str(w.get("change", "?")),
                str(w.get("gpus", "")),
                _obj(w.get("prediction")),
                _verdict(w.get("verdict")),
                note,
            )
        )
    return found


# --- the answer ---------------------------------------------------------------------------------


def _best(found: Sequence[Option], targets: bool) -> Option | None:
    scored = [o for o in found[1:] if o.prediction]
    key = "max_concurrency_meeting_slo" if targets else "output_throughput"
    return max(scored, key=lambda o: o.value(key) or 0.0, default=None)


def _best_sentence(found: Sequence[Option], targets: bool, plan: Voice) -> str:
    best, base = _best(found, targets), found[0]
    if best is None:
        return plan("answer.best.none")
    if targets:
        what = plan(
            "answer.best.users",
            users=int(best.value("max_concurrency_meeting_slo") or 0),
            base=int(base.value("max_concurrency_meeting_slo") or 0),
        )
    else:
        what = plan(
            "answer.best.throughput",
            out=_n(best.value("output_throughput")),
            base=_n(base.value("output_throughput")),
        )
    return plan("answer.best", change=best.name, gpus=best.gpus, what=what)


def answer(doc: Json, found: Sequence[Option], plan: Voice) -> list[str]:
    """What limits it, whether it meets the targets, how many users and QPS, the best change."""
    base = found[0]
    kv = base.value("kv_cache_tokens")
    bound = doc.get("bound")
    said = []
    if bound in _BOUNDS:
        said.append(
            plan("bound", bound=plan(f"bound.{bound}"), kv=_n(kv) if kv else plan("kv.unknown"))
        )
    targets = base.verdict is not None
    if targets:
        said.append(plan(f"verdict.{base.verdict}") + ".")
        users, qps = base.value("max_concurrency_meeting_slo"), base.value("qps_per_gpu")
        if users:
            said.append(plan("capacity", users=int(users), qps=_n(qps, 2)))
        else:
            said.append(plan("capacity.none"))
        said.append(
            plan("answer.qps", qps=_n(qps, 2)) if qps is not None else plan("answer.qps.none")
        )
    said.append(_best_sentence(found, targets, plan))
    return said


# --- the what-ifs -------------------------------------------------------------------------------


def table(found: Sequence[Option], plan: Voice) -> str:
    cols = ("config", "gpus", "out", "ttft", "tpot", "users", "verdict")
    head = "".join(f'<th scope="col">{_esc(plan(f"col.{c}"))}</th>' for c in cols)
    rows = []
    for o in found:
        if not o.prediction:
            note = _esc(plan("what_if.refused", note=o.note or "-"))
            named = f"<td>{_esc(o.name)}</td><td>{_esc(o.gpus)}</td>"
            rows.append(f'<tr>{named}<td colspan="5">{note}</td></tr>')
            continue
        users = o.value("max_concurrency_meeting_slo")
        cells = [
            o.name,
            o.gpus,
            _n(o.value("output_throughput")),
            f"{_n(o.value('mean_ttft_ms'))}/{_n(o.value('p99_ttft_ms'))}",
            f"{_n(o.value('mean_tpot_ms'), 1)}/{_n(o.value('p99_tpot_ms'), 1)}",
            _n(users) if users else "-",
            plan(f"col.verdict.{o.verdict}") if o.verdict else "-",
        ]
        rows.append("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in cells) + "</tr>")
    return f'<table class="plan">{"<tr>" + head + "</tr>"}{"".join(rows)}</table>'


def _bars(name: str, title: str, found: Sequence[Option], key: str, axis: str) -> tuple[str, bool]:
    rows = []
    for o in found:
        if not o.prediction:
            continue
        low, high = o.interval(key)
        rows.append(
            svg.Interval(o.name, o.value(key), low, high, _COLOURS.get(o.verdict, svg.PALETTE[0]))
        )
    has_intervals = any(r.low is not None for r in rows)
    return svg.figure(name, title, svg.bars(title, rows, axis)), has_intervals


def what_if_figures(found: Sequence[Option], words: Voice) -> str:
    figures, intervals = [], False
    wanted = [
        (
            "what-if-throughput",
            words("fig.what_if_throughput"),
            "output_throughput",
            words("axis.tokens_per_s"),
        )
    ]
    if found[0].verdict is not None:
        wanted.append(
            (
                "what-if-users",
                words("fig.what_if_users"),
                "max_concurrency_meeting_slo",
                words("axis.users"),
            )
        )
    for name, title, key, axis in wanted:
        drawn, has = _bars(name, title, found, key, axis)
        figures.append(drawn)
        intervals = intervals or has
    note = "" if intervals else f'<p class="missing">{_esc(words("plan.no_intervals"))}</p>'
    return '<div class="figures">' + "".join(figures) + "</div>" + note


# --- batching -----------------------------------------------------------------------------------


def batching(doc: Json, plan: Voice, words: Voice) -> str:
    both = _obj(doc.get("batching"))
    c, s = _obj(both.get("continuous")), _obj(both.get("static"))
    if not c or not s:
        return ""

    def v(side: Mapping[str, object], key: str) -> float | None:
        return _num(side.get(key))

    c_out, s_out = v(c, "output_throughput"), v(s, "output_throughput")
    factor = c_out / s_out if c_out is not None and s_out else None
    line = plan(
        "batching.line",
        c_out=_n(c_out),
        c_ttft=_n(v(c, "mean_ttft_ms")),
        c_e2el=_n(v(c, "mean_e2el_ms")),
        s_out=_n(s_out),
        s_ttft=_n(v(s, "mean_ttft_ms")),
        s_e2el=_n(v(s, "mean_e2el_ms")),
        factor=_n(factor, 1),
    )
    names = (words("legend.continuous"), words("legend.static"))
    figures = []
    for key, title, axis in (
        ("output_throughput", words("fig.batching_throughput"), words("axis.tokens_per_s")),
        ("mean_ttft_ms", words("fig.batching_ttft"), words("axis.ms")),
    ):
        rows = [
            svg.Interval(names[i], v(side, key), colour=svg.PALETTE[i])
            for i, side in enumerate((c, s))
        ]
        figures.append(svg.figure(f"batching-{key}", title, svg.bars(title, rows, axis)))
    return (
        f"<h3>{_esc(plan('batching.header').rstrip(':：'))}</h3><p>{_esc(line)}</p>"
        '<div class="figures">' + "".join(figures) + "</div>"
    )


def refused(doc: Json, plan: Voice) -> str:
    errors = [_obj(e) for e in _list(doc.get("errors"))]
    items = "".join(
        f"<li>[{_esc(e.get('rule', '?'))}] {_esc(e.get('title', ''))}</li>" for e in errors
    )
    return f'<p class="banner">{_esc(plan("refused"))}</p><ul>{items}</ul>'


def section_body(doc: Json, plan: Voice, words: Voice) -> str:
    """The whole plan section but its heading and provenance."""
    if doc.get("error") == "cannot-run":
        return refused(doc, plan)
    found = options(doc, plan)
    said = answer(doc, found, plan)
    notes = [n for n in _list(doc.get("notes")) if isinstance(n, str)]
    parts = [
        f"<h3>{_esc(plan('answer.header').rstrip(':：'))}</h3>",
        '<ul class="answer">' + "".join(f"<li>{_esc(s)}</li>" for s in said) + "</ul>",
        f"<h3>{_esc(plan('what_if.header').rstrip(':：'))}</h3>",
        table(found, plan),
        what_if_figures(found, words),
        batching(doc, plan, words),
    ]
    if notes:
        parts.append(f"<h3>{_esc(plan('notes').rstrip(':：'))}</h3>")
        parts.append('<ul lang="en">' + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts)
