"""The terminal view of a `plan` result and its continuous-vs-static plot (the JSON view is
`plan.planner.result_json`)."""

from __future__ import annotations

import io
import math
from pathlib import Path

from servetune import texts
from servetune.errors import ServetuneError
from servetune.plan import predict
from servetune.plan.planner import PlanResult
from servetune.plan.simulate import Load
from servetune.render.check import wrap
from servetune.texts import Language


def _t(key: str, lang: Language, **facts: object) -> str:
    return texts.format("plan", key, lang, **facts)


def _n(value: float | None, digits: int = 0) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:,.{digits}f}"


def _load(load: Load, lang: Language) -> str:
    if load.concurrency is not None:
        return _t("load.closed", lang, users=load.concurrency)
    return _t("load.open", lang, rate=_n(load.request_rate, 2), num=load.num_prompts)


def _row(name: str, gpus: str, outcome: predict.Outcome | None) -> str:
    if outcome is None:
        return f"  {name:<28} {gpus:<20}"
    p = outcome.prediction
    verdict = outcome.verdict or "-"
    users = _n(p.max_concurrency_meeting_slo) if p.max_concurrency_meeting_slo else "-"
    ttft = f"{_n(p.mean_ttft_ms)}/{_n(p.p99_ttft_ms)}"
    tpot = f"{_n(p.mean_tpot_ms, 1)}/{_n(p.p99_tpot_ms, 1)}"
    out = _n(p.output_throughput)
    return f"  {name:<28} {gpus:<20} {out:>9} {ttft:>13} {tpot:>11} {users:>6} {verdict}"


def _head(lang: Language) -> str:
    cols = ("config", "gpus", "out", "ttft", "tpot", "users", "verdict")
    c = {k: _t(f"col.{k}", lang) for k in cols}
    return (
        f"  {c['config']:<28} {c['gpus']:<20} {c['out']:>9} {c['ttft']:>13} {c['tpot']:>11} "
        f"{c['users']:>6} {c['verdict']}"
    )


def _targets(slo: predict.Slo) -> str:
    parts = [
        f"{name} {value:g} ms"
        for name, value in (("TTFT", slo.ttft_ms), ("TPOT", slo.tpot_ms), ("E2EL", slo.e2el_ms))
        if value is not None
    ]
    return ", ".join(parts)


def _summary(result: PlanResult, lang: Language) -> list[str]:
    base, p = result.base, result.base.prediction
    kv = _n(p.kv_cache_tokens) if p.kv_cache_tokens is not None else _t("kv.unknown", lang)
    lines = wrap(_t("bound", lang, bound=_t(f"bound.{base.bound}", lang), kv=kv), "  ")
    if base.verdict is not None:
        verdict = _t(f"verdict.{base.verdict}", lang)
        targets = _t(
            "targets", lang, percentile=result.slo.percentile, targets=_targets(result.slo)
        )
        lines += wrap(f"{targets} {verdict}.", "  ")
        if p.max_concurrency_meeting_slo:
            lines += wrap(
                _t("capacity", lang, users=p.max_concurrency_meeting_slo, qps=_n(p.qps_per_gpu, 2)),
                "  ",
            )
        else:
            lines += wrap(_t("capacity.none", lang), "  ")
    return lines


def _what_ifs(result: PlanResult, lang: Language) -> list[str]:
    if not result.what_ifs:
        return []
    lines = ["", _t("what_if.header", lang), _head(lang)]
    for w in result.what_ifs:
        lines.append(_row(w.change, w.gpus, w.outcome))
        if w.outcome is None and w.note:
            lines += wrap(_t("what_if.refused", lang, note=w.note), "      ")
    return lines


def _batching(result: PlanResult, lang: Language) -> list[str]:
    c, s = result.base.prediction, result.static
    factor = c.output_throughput / s.output_throughput if s.output_throughput else math.nan
    line = _t(
        "batching.line",
        lang,
        c_out=_n(c.output_throughput),
        c_ttft=_n(c.mean_ttft_ms),
        c_e2el=_n(c.mean_e2el_ms),
        s_out=_n(s.output_throughput),
        s_ttft=_n(s.mean_ttft_ms),
        s_e2el=_n(s.mean_e2el_ms),
        factor=_n(factor, 1),
    )
    return ["", _t("batching.header", lang), *wrap(line, "  ")]


def _lag(result: PlanResult, lang: Language) -> str:
    p, users = result.base.prediction, result.load.concurrency
    who = users if users is not None else f"{_n(result.load.request_rate, 2)} req/s"
    if result.base.verdict is None:
        return _t(
            "answer.lag.unknown",
            lang,
            users=who,
            ttft=_n(p.mean_ttft_ms),
            tpot=_n(p.mean_tpot_ms, 1),
        )
    detail = _t(
        "answer.detail",
        lang,
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
    return _t(key, lang, users=who, detail=detail, ok=ok if ok is not None else "-")


def _qps(result: PlanResult, lang: Language) -> str:
    p = result.base.prediction
    if result.slo.empty:
        per_gpu = p.request_throughput / max(result.report.settings.gpus_needed, 1)
        return _t("answer.qps.unknown", lang, qps=_n(per_gpu, 2))
    if p.qps_per_gpu is None:
        return _t("answer.qps.none", lang)
    return _t("answer.qps", lang, qps=_n(p.qps_per_gpu, 2))


def _best(result: PlanResult, lang: Language) -> str:
    best = result.best
    if best is None or best.outcome is None:
        return _t("answer.best.none", lang)
    p, base = best.outcome.prediction, result.base.prediction
    if not result.slo.empty:
        what = _t(
            "answer.best.users",
            lang,
            users=p.max_concurrency_meeting_slo or 0,
            base=base.max_concurrency_meeting_slo or 0,
        )
    else:
        what = _t(
            "answer.best.throughput",
            lang,
            out=_n(p.output_throughput),
            base=_n(base.output_throughput),
        )
    return _t("answer.best", lang, change=best.change, gpus=best.gpus, what=what)


def plan_text(result: PlanResult, lang: Language = "en") -> str:
    """The table, what-ifs, batching comparison and the plain-language answer."""
    report, load = result.report, result.load
    machine = f"{report.hardware.count}x {report.hardware.name}" if report.hardware else "?"
    model = report.model.model_id if report.model else report.command.model or "?"
    header = _t(
        "header",
        lang,
        model=model,
        machine=machine,
        load=_load(load, lang),
        input_len=load.input_len,
        output_len=load.output_len,
    )
    gpus = f"{report.hardware.count}x{report.hardware.name}" if report.hardware else "?"
    lines = [
        *wrap(header, ""),
        "",
        _head(lang),
        _row(_t("row.this", lang), gpus, result.base),
    ]
    lines += _summary(result, lang) + _what_ifs(result, lang) + _batching(result, lang)
    lines += ["", _t("answer.header", lang)]
    for sentence in (_lag(result, lang), _qps(result, lang), _best(result, lang)):
        lines += wrap(sentence, "  ", "- ")
    if result.notes:
        lines += ["", _t("notes", lang)]
        for note in result.notes:
            lines += wrap(note.text(lang), "  ", "- ")
    return "\n".join(lines) + "\n"


class PlotUnavailable(ServetuneError):
    """matplotlib is not installed."""


def write_plot(path: Path, sweep: list[tuple[int, predict.Prediction, predict.Prediction]]) -> Path:
    """Continuous vs static batching over a range of users: throughput and mean TTFT, as PNG
    (or SVG when the path ends in .svg)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise PlotUnavailable(
            "matplotlib is not installed: no plot", "pip install 'servetune[report]'"
        ) from exc
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
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg" if path.suffix.lower() == ".svg" else "png", dpi=110)
    try:
        path.write_bytes(buffer.getvalue())
    except OSError as exc:
        raise ServetuneError(
            f"cannot write the plot {path}: {exc}", "choose another --plot path"
        ) from exc
    return path
