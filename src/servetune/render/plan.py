"""The terminal view of a `plan` result (or of a command check refuses) and its
continuous-vs-static plot. The JSON view is `PlanResult.to_json`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from servetune import texts
from servetune.errors import MissingExtra
from servetune.plan import predict
from servetune.plan.planner import PlanResult
from servetune.plan.simulate import Load
from servetune.render.check import display_width, wrap
from servetune.texts import ErrorText, Language, Voice


def _n(value: float | None, digits: int = 0) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:,.{digits}f}"


def _load(load: Load, say: Voice) -> str:
    if load.concurrency is not None:
        return say("load.closed", users=load.concurrency)
    return say("load.open", rate=_n(load.request_rate, 2), num=load.num_prompts)


def _left(text: str, width: int) -> str:
    """`text` padded to `width` columns (wide characters count two)."""
    return text + " " * max(0, width - display_width(text))


def _right(text: str, width: int) -> str:
    return " " * max(0, width - display_width(text)) + text


def _line(name: str, gpus: str, cells: tuple[str, str, str, str, str] | None) -> str:
    """One row of the table: configuration, GPUs, then out, TTFT, TPOT, users and verdict."""
    if cells is None:
        return f"  {_left(name, 28)} {_left(gpus, 20)}"
    out, ttft, tpot, users, verdict = cells
    numbers = f"{_right(out, 9)} {_right(ttft, 13)} {_right(tpot, 11)} {_right(users, 6)}"
    return f"  {_left(name, 28)} {_left(gpus, 20)} {numbers} {verdict}"


def _row(name: str, gpus: str, outcome: predict.Outcome | None, say: Voice) -> str:
    if outcome is None:
        return _line(name, gpus, None)
    p = outcome.prediction
    verdict = say(f"col.verdict.{outcome.verdict}") if outcome.verdict else "-"
    users = _n(p.max_concurrency_meeting_slo) if p.max_concurrency_meeting_slo else "-"
    ttft = f"{_n(p.mean_ttft_ms)}/{_n(p.p99_ttft_ms)}"
    tpot = f"{_n(p.mean_tpot_ms, 1)}/{_n(p.p99_tpot_ms, 1)}"
    return _line(name, gpus, (_n(p.output_throughput), ttft, tpot, users, verdict))


def _head(say: Voice) -> str:
    cols = ("config", "gpus", "out", "ttft", "tpot", "users", "verdict")
    c = {k: say(f"col.{k}") for k in cols}
    cells = (c["out"], c["ttft"], c["tpot"], c["users"], c["verdict"])
    return _line(c["config"], c["gpus"], cells)


def _targets(slo: predict.Slo) -> str:
    parts = [
        f"{name} {value:g} ms"
        for name, value in (("TTFT", slo.ttft_ms), ("TPOT", slo.tpot_ms), ("E2EL", slo.e2el_ms))
        if value is not None
    ]
    return ", ".join(parts)


def _summary(result: PlanResult, say: Voice) -> list[str]:
    base, p = result.base, result.base.prediction
    kv = _n(p.kv_cache_tokens) if p.kv_cache_tokens is not None else say("kv.unknown")
    lines = wrap(say("bound", bound=say(f"bound.{base.bound}"), kv=kv), "  ")
    if base.verdict is not None:
        verdict = say(f"verdict.{base.verdict}")
        targets = say("targets", percentile=result.slo.percentile, targets=_targets(result.slo))
        lines += wrap(say("targets.verdict", targets=targets, verdict=verdict), "  ")
        if p.max_concurrency_meeting_slo:
            lines += wrap(
                say("capacity", users=p.max_concurrency_meeting_slo, qps=_n(p.qps_per_gpu, 2)),
                "  ",
            )
        else:
            lines += wrap(say("capacity.none"), "  ")
    return lines


def _what_ifs(result: PlanResult, say: Voice) -> list[str]:
    if not result.what_ifs:
        return []
    lines = ["", say("what_if.header"), _head(say)]
    for w in result.what_ifs:
        lines.append(_row(w.change, w.gpus, w.outcome, say))
        if w.outcome is None and w.note:
            lines += wrap(say("what_if.refused", note=w.note.text(say.language)), "      ")
    return lines


def _batching(result: PlanResult, say: Voice) -> list[str]:
    c, s = result.base.prediction, result.static
    factor = c.output_throughput / s.output_throughput if s.output_throughput else math.nan
    line = say(
        "batching.line",
        c_out=_n(c.output_throughput),
        c_ttft=_n(c.mean_ttft_ms),
        c_e2el=_n(c.mean_e2el_ms),
        s_out=_n(s.output_throughput),
        s_ttft=_n(s.mean_ttft_ms),
        s_e2el=_n(s.mean_e2el_ms),
        factor=_n(factor, 1),
    )
    return ["", say("batching.header"), *wrap(line, "  ")]


def _lag(result: PlanResult, say: Voice) -> str:
    p, users = result.base.prediction, result.load.concurrency
    who = users if users is not None else f"{_n(result.load.request_rate, 2)} req/s"
    if result.base.verdict is None:
        return say(
            "answer.lag.unknown",
            users=who,
            ttft=_n(p.mean_ttft_ms),
            tpot=_n(p.mean_tpot_ms, 1),
        )
    detail = say(
        "answer.detail",
        percentile=result.slo.percentile,
        ttft=_n(p.slo_ttft_ms),
        tpot=_n(p.slo_tpot_ms, 1),
    )
    ok = p.max_concurrency_meeting_slo
    key = {"fails": "answer.lag.yes", "meets": "answer.lag.no", "marginal": "answer.lag.marginal"}[
        result.base.verdict
    ]
    if ok is None:
        key = "answer.lag.yes.none"
    return say(key, users=who, detail=detail, ok=ok if ok is not None else "-")


def _qps(result: PlanResult, say: Voice) -> str:
    p = result.base.prediction
    if result.slo.empty:
        per_gpu = p.request_throughput / max(result.report.settings.gpus_needed, 1)
        return say("answer.qps.unknown", qps=_n(per_gpu, 2))
    if p.qps_per_gpu is None:
        return say("answer.qps.none")
    return say("answer.qps", qps=_n(p.qps_per_gpu, 2))


def _best(result: PlanResult, say: Voice) -> str:
    best = result.best
    if best is None or best.outcome is None:
        return say("answer.best.none")
    p, base = best.outcome.prediction, result.base.prediction
    if not result.slo.empty:
        what = say(
            "answer.best.users",
            users=p.max_concurrency_meeting_slo or 0,
            base=base.max_concurrency_meeting_slo or 0,
        )
    else:
        what = say(
            "answer.best.throughput",
            out=_n(p.output_throughput),
            base=_n(base.output_throughput),
        )
    return say("answer.best", change=best.change, gpus=best.gpus, what=what)


def _corrected(result: PlanResult, say: Voice) -> list[str]:
    """The first lines when plan planned check's corrected command: why, and the command."""
    fixed = result.corrected
    if fixed is None:
        return []
    rules = ", ".join(dict.fromkeys(f.rule for f in fixed.fixed))
    lines = wrap(say("corrected", rules=rules), "")
    return [*lines, *("  " + line for line in fixed.command.splitlines()), ""]


def plan_text(result: PlanResult, lang: Language = "en") -> str:
    """The table, what-ifs, batching comparison and the plain-language answer."""
    say = texts.Voice("plan", lang)
    report, load = result.report, result.load
    machine = f"{report.hardware.count}x {report.hardware.name}" if report.hardware else "?"
    model = report.model.model_id if report.model else report.command.model or "?"
    header = say(
        "header",
        model=model,
        machine=machine,
        load=_load(load, say),
        input_len=load.input_len,
        output_len=load.output_len,
    )
    gpus = f"{report.hardware.count}x{report.hardware.name}" if report.hardware else "?"
    lines = [
        *_corrected(result, say),
        *wrap(header, ""),
        "",
        _head(say),
        _row(say("row.this"), gpus, result.base, say),
    ]
    lines += _summary(result, say) + _what_ifs(result, say) + _batching(result, say)
    lines += ["", say("answer.header")]
    for sentence in (_lag(result, say), _qps(result, say), _best(result, say)):
        lines += wrap(sentence, "  ", "- ")
    if result.notes:
        lines += ["", say("notes")]
        for note in result.notes:
            lines += wrap(note.text(lang), "  ", "- ")
    return "\n".join(lines) + "\n"


def refused_text(errors: Sequence[tuple[str, str]], lang: Language = "en") -> str:
    """What plan says of a command check refuses: the (rule, title) of each error finding."""
    lines = [texts.Voice("plan", lang)("refused")]
    lines += [f"  [{rule}] {title}" for rule, title in errors]
    return "\n".join(lines) + "\n"


def refused_json(errors: Sequence[tuple[str, str]]) -> dict[str, object]:
    """The `--format json` object for a command check refuses."""
    return {
        "schema_version": 1,
        "error": "cannot-run",
        "errors": [{"rule": rule, "title": title} for rule, title in errors],
    }


def plot_written(path: Path, lang: Language = "en") -> str:
    """The line that says where `--plot` went (after a blank one)."""
    return "\n" + texts.Voice("plan", lang)("plot.written", path=path) + "\n"


def write_plot(path: Path, sweep: list[tuple[int, predict.Prediction, predict.Prediction]]) -> Path:
    """Continuous vs static batching over a range of users: throughput and mean TTFT, as PNG
    (or SVG when the path ends in .svg)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtra("report", ErrorText("feature.plan-plot")) from exc
    fig = Figure(figsize=(9.0, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    users = [u for u, _, _ in sweep]
    left.plot(
        users, [c.output_throughput for _, c, _ in sweep], marker="o", label="continuous (vLLM)"
    )
    left.plot(
        users, [s.output_throughput for _, _, s in sweep], marker="s", label="static batching"
    )
    left.set(xlabel="users at once", ylabel="output tokens/s", title="Throughput")
    right.plot(users, [c.mean_ttft_ms for _, c, _ in sweep], marker="o", label="continuous (vLLM)")
    right.plot(users, [s.mean_ttft_ms for _, _, s in sweep], marker="s", label="static batching")
    right.set(xlabel="users at once", ylabel="ms", title="Mean time to first token", yscale="log")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3)
        ax.legend()
    from servetune.render import figure

    return figure.save(fig, path)
