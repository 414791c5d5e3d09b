"""tune's terminal summary: your command and the best one with their capacities and limits,
the changes, one row per trial, the time spent, and the next step, in the chosen language.

tune.json is `TuneResult.to_json`; report.html is `servetune.render.tune_report`.
"""

from __future__ import annotations

from pathlib import Path

from servetune import texts
from servetune.texts import Language, Voice
from servetune.tune.output import REPORT_FILE, changes
from servetune.tune.search import TuneResult
from servetune.tune.trial import TrialResult


def _capacity_line(trial: TrialResult, say: Voice) -> str:
    c = trial.capacity
    if c is None or trial.status != "ok":
        return say("summary.none")
    sure = "?" if c.sure is None else f"{c.sure:.0%}"
    tokens = "?" if c.output_throughput is None else f"{c.output_throughput:,.0f}"
    return say("summary.capacity", users=c.max_concurrency, sure=sure, tokens=tokens)


def _limit_words(trial: TrialResult, say: Voice) -> str:
    if trial.limit is None:
        return "-"
    return f"{trial.limit} ({say('limit.' + trial.limit)})"


def _trial_row(trial: TrialResult, baseline: TrialResult, say: Voice) -> str:
    diff = ", ".join(f"{f} {v}" for f, _, v in changes(trial.flags, baseline.flags)) or "-"
    users = trial.capacity.max_concurrency if trial.capacity else "-"
    number = f"{trial.index + 1:>2}"
    limit = trial.limit or "-"
    return f"  {number}. {trial.status:<15} {users!s:>5} {say('summary.users')}  {limit:<22} {diff}"


def _best_lines(result: TuneResult, say: Voice) -> list[str]:
    best, baseline = result.best, result.baseline
    if best is None:
        return []
    lines = [say("summary.best") + _capacity_line(best, say), "  " + result.commands[best.index]]
    diff = changes(best.flags, baseline.flags)
    lines.append(say("summary.diff"))
    lines += [f"  {f}: {old} -> {new}" for f, old, new in diff] or ["  " + say("summary.no-diff")]
    return lines


def summary_text(result: TuneResult, language: Language = "en") -> str:
    """The summary tune prints when it is done."""
    say = texts.Voice("tune", language)
    baseline = result.baseline
    lines = [
        say("summary.baseline") + _capacity_line(baseline, say),
        "  " + say("summary.limit", limit=_limit_words(baseline, say)),
        *_best_lines(result, say),
        "",
        say("summary.trials"),
        *(_trial_row(t, baseline, say) for t in result.trials),
        "",
        say(
            "summary.starts",
            starts=result.server_starts,
            start_s=f"{result.start_s:.0f} s",
            measure_s=f"{result.measure_s:.0f} s",
        ),
        say("summary.report", path=result.config.output / REPORT_FILE),
        say("summary.next", text=result.next_step.text(language)),
    ]
    return "\n".join(lines) + "\n"


def interrupted_text(output: Path, language: Language = "en") -> str:
    """What tune says when Ctrl-C stopped it."""
    return texts.Voice("tune", language)("interrupted", output=output) + "\n"
