"""The report's comparison section: `compare`'s conclusion, each metric's change with its
interval as a forest plot, the verdict table, the knobs that changed, the warnings and the next
step (all in `compare`'s own words, the `judge` area), and the two sides' distributions
overlaid."""

from __future__ import annotations

import html
from collections.abc import Sequence

from servetune.judge.compare import CONFIDENCE, Comparison, ConfigChange, signed_pct
from servetune.judge.runs import FAMILIES, Samples, Side
from servetune.render import report_svg as svg
from servetune.render.report_bench import distribution_figure
from servetune.texts import Voice


def _esc(text: object) -> str:
    return html.escape(str(text))


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3g}"


def _ci(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{low:+.1f}..{high:+.1f}%"


def runs_line(c: Comparison, judge: Voice) -> str:
    return judge(
        "compare.runs",
        before=c.runs_before,
        after=c.runs_after,
        confidence=f"{CONFIDENCE:.0%}",
        method=judge(f"compare.method.{c.ci_method}"),
    )


def forest_figure(c: Comparison, judge: Voice, words: Voice) -> str:
    rows = [
        svg.Interval(
            label=m.name,
            value=m.change_pct,
            low=m.ci_low_pct,
            high=m.ci_high_pct,
            colour=svg.VERDICT_COLOURS[m.verdict],
            note=judge(f"verdict.{m.verdict}"),
        )
        for m in c.metrics
    ]
    title = words("fig.forest", confidence=f"{CONFIDENCE:.0%}")
    drawn = svg.forest(title, rows, words("axis.change_pct"))
    return svg.figure("forest", title, drawn)


def verdict_table(c: Comparison, judge: Voice) -> str:
    names = ("metric", "before", "after", "change", "ci", "verdict")
    head = "".join(f'<th scope="col">{_esc(judge(f"compare.column.{n}"))}</th>' for n in names)
    rows = []
    for m in c.metrics:
        change = signed_pct(m.change_pct) if m.change_pct is not None else "-"
        cells = [
            f"<td>{_esc(m.name)}</td>",
            f'<td class="num">{_number(m.before)}</td>',
            f'<td class="num">{_number(m.after)}</td>',
            f'<td class="num">{_esc(change)}</td>',
            f'<td class="num">{_esc(_ci(m.ci_low_pct, m.ci_high_pct))}</td>',
            f'<td class="verdict {m.verdict}">{_esc(judge(f"verdict.{m.verdict}"))}</td>',
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="verdicts"><tr>{head}</tr>{"".join(rows)}</table>'


def change_text(ch: ConfigChange, judge: Voice) -> str:
    """A changed flag as compare prints it: `--max-num-seqs: 128 -> 256`."""
    unset, default = judge("compare.unset"), judge("compare.default")
    b = (ch.before or unset) + (default if ch.before_default and ch.before else "")
    a = (ch.after or unset) + (default if ch.after_default and ch.after else "")
    return f"{ch.flag}: {b} -> {a}"


def _items(texts: Sequence[str], empty: str) -> str:
    if not texts:
        return f'<p class="missing">{_esc(empty)}</p>'
    return "<ul>" + "".join(f"<li>{_esc(t)}</li>" for t in texts) + "</ul>"


def knobs(c: Comparison, judge: Voice, words: Voice) -> str:
    empty = words("compare.no_knobs") if c.config_known else words("compare.knobs_unknown")
    return _items([change_text(ch, judge) for ch in c.config_changes], empty)


def warnings(c: Comparison, words: Voice) -> str:
    said = [f"[{w.rule}] {w.text(words.language)}" for w in c.warnings]
    return _items(said, words("compare.no_warnings"))


def next_step(c: Comparison, judge: Voice, words: Voice) -> str:
    step = c.next_step_in(judge.language)
    if step is None:
        return f'<p class="missing">{_esc(words("compare.no_next"))}</p>'
    return f'<p class="next">{_esc(judge("compare.next_step", step=step))}</p>'


def pooled(side: Side, family: str) -> Samples | None:
    """A side's requests of one family, all runs together (None: a run lacks them)."""
    found = [r.samples[family] for r in side.runs if family in r.samples]
    if not found or len(found) < len(side.runs):
        return None
    if len(found) == 1:
        return found[0]
    ordered = tuple(sorted(x for s in found for x in s.ordered))
    units = tuple(u for s in found for u in s.units)
    mean = sum(s for s, _ in units) / max(sum(n for _, n in units), 1)
    return Samples(units, ordered, mean, 0.0)


def overlaid(before: Side, after: Side, judge: Voice, words: Voice) -> str:
    figures = []
    for family in FAMILIES:
        b, a = pooled(before, family), pooled(after, family)
        if b is None or a is None:
            continue
        sides = [(judge("side.before"), b), (judge("side.after"), a)]
        figures.append(distribution_figure(family, sides, words, markers=False))
    if not figures:
        return f'<p class="missing">{_esc(words("bench.no_samples"))}</p>'
    return '<div class="figures">' + "".join(figures) + "</div>"


def section_body(c: Comparison, before: Side, after: Side, judge: Voice, words: Voice) -> str:
    """The whole comparison section but its heading and provenance."""
    h3 = "<h3>{}</h3>".format
    return "".join(
        [
            f'<p class="conclusion">{_esc(c.conclusion_in(judge.language))}</p>',
            f"<p>{_esc(runs_line(c, judge))}</p>",
            f'<p class="hint">{_esc(words("compare.reading"))}</p>',
            forest_figure(c, judge, words),
            h3(_esc(words("compare.verdicts"))),
            verdict_table(c, judge),
            h3(_esc(words("compare.knobs"))),
            knobs(c, judge, words),
            h3(_esc(words("compare.warnings"))),
            warnings(c, words),
            h3(_esc(words("compare.next"))),
            next_step(c, judge, words),
            h3(_esc(words("compare.distributions"))),
            overlaid(before, after, judge, words),
        ]
    )
