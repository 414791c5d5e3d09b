"""`compare`: did a change help? Two sets of bench results, metric by metric, beyond noise.

Each side is one or more runs: servetune result files, plain `vllm bench serve --save-result`
files, or `--append-result` files holding one JSON object per run. For every headline metric
the comparison gives both values, the change in percent, a bootstrap interval for that change
and a verdict; it lists the `vllm serve` flags whose effective values differ, warns where the
comparison cannot be trusted, and names at most one next knob to try.

Intervals: with two or more runs on each side the runs are resampled, since what varies between
repeats is what a change must beat. With one run on a side only its requests can be resampled;
that interval knows nothing of run-to-run drift, so the comparison says so.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from servetune._did_you_mean import suggest
from servetune.errors import UsageError
from servetune.judge.advice import next_step, side_peaks
from servetune.judge.conclusion import conclusion, signed_pct
from servetune.judge.runs import (
    FAMILIES,
    FILE_HINT,
    KNOWN_METRICS,
    THROUGHPUTS,
    Run,
    Samples,
    Side,
    Workload,
    load_side,
    metric_parts,
    stat_rank,
    value_text,
)
from servetune.judge.sentence import Joined, Sentence
from servetune.measure import metrics as formulas
from servetune.measure.results import CLIENT_LAG_LIMIT_S, unexpected_prefix_hits
from servetune.review.hardware import Hardware, parse_gpus
from servetune.review.settings import Settings, resolve
from servetune.texts import ErrorText, Language
from servetune.vllm.serve_command import ArgValue, ServeCommand, parse_text

__all__ = ["Comparison", "compare", "load_side", "signed_pct"]

Verdict = Literal["better", "worse", "no-change", "insufficient-data"]
Method = Literal["runs", "requests"]

RESAMPLES = 2000
DEFAULT_SEED = 0
# 99%, not 95%: a comparison reads 14 metrics at once. Comparing synthetic repeats of one setup
# (5 runs a side), 95% intervals called some metric changed in 1 comparison of 6; 99% in 1 of
# 25, while a 20% latency shift still shows at 3 runs a side.
CONFIDENCE = 0.99
# Below this the verdict is "no-change" even when the interval excludes 0: a real 1% shift is
# not worth a knob, and repeats of one setup drift about that much.
PRACTICAL_CHANGE_PCT = 2.0
# With one run on a side its run-to-run drift is unknown and the request-level interval cannot
# cover it; repeats of one setup commonly differ by several percent (more at p99), so smaller
# changes read "no-change".
SINGLE_RUN_CHANGE_PCT = 10.0
# From this many requests on, a resampled mean is normal to well within resampling noise and is
# drawn in O(1) instead of O(n) (seconds for 256k ITL gaps).
NORMAL_MEAN_MIN_UNITS = 200
# Mean tokens per request differing by more than this share make a different workload.
WORKLOAD_TOLERANCE = 0.10

# Student t quantiles for a two-sided CONFIDENCE interval, by degrees of freedom (then normal).
_T = (
    63.657,
    9.925,
    5.841,
    4.604,
    4.032,
    3.707,
    3.499,
    3.355,
    3.250,
    3.169,
    3.106,
    3.055,
    3.012,
    2.977,
    2.947,
    2.921,
    2.898,
    2.878,
    2.861,
    2.845,
    2.831,
    2.819,
    2.807,
    2.797,
    2.787,
    2.779,
    2.771,
    2.763,
    2.756,
    2.750,
)
_Z = 2.575829

HEADLINE = (*(f"{s}_{f}_ms" for f in FAMILIES for s in ("mean", "p50", "p99")), *THROUGHPUTS[:2])

# Flags that change where the server listens or what it logs, not how fast it serves.
_NOT_KNOBS = frozenset(
    {
        "--model",
        "--host",
        "--port",
        "--api-key",
        "--served-model-name",
        "--config",
        "--download-dir",
        "--uvicorn-log-level",
        "--disable-log-requests",
        "--enable-log-requests",
        "--disable-log-stats",
        "--disable-uvicorn-access-log",
        "--allowed-origins",
        "--ssl-keyfile",
        "--ssl-certfile",
        "--root-path",
    }
)


# --- what a comparison says ---------------------------------------------------------------------


@dataclass(frozen=True)
class MetricComparison:
    name: str
    before: float | None
    after: float | None
    change_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    verdict: Verdict


@dataclass(frozen=True)
class ConfigChange:
    """A flag whose effective value differs; `*_default` marks a value vLLM picks itself."""

    flag: str
    before: str | None
    after: str | None
    before_default: bool = False
    after_default: bool = False


@dataclass(frozen=True)
class CompareWarning:
    """A reason to doubt the comparison: its rule id and what it says (`message`: in English,
    as the JSON document carries it; `text(language)` for the terminal)."""

    rule: str
    sentence: Sentence

    @property
    def message(self) -> str:
        return self.sentence.text()

    def text(self, language: Language = "en") -> str:
        return self.sentence.text(language)


@dataclass(frozen=True)
class Comparison:
    metrics: tuple[MetricComparison, ...]
    config_changes: tuple[ConfigChange, ...]
    warnings: tuple[CompareWarning, ...]
    advice: Sentence | None
    runs_before: int
    runs_after: int
    config_known: bool
    ci_method: Method

    @property
    def conclusion(self) -> str:
        """The conclusion in English, as the JSON document carries it."""
        return conclusion(self).text()

    @property
    def next_step(self) -> str | None:
        """The one knob to try next, in English (None when the server metrics show no limit)."""
        return self.advice.text() if self.advice else None

    def conclusion_in(self, language: Language) -> str:
        return conclusion(self).text(language)

    def next_step_in(self, language: Language) -> str | None:
        return self.advice.text(language) if self.advice else None

    def to_json(self) -> dict[str, Any]:
        """The `--format json` document: the three contract keys first, then extras."""
        return {
            "metrics": [
                {
                    "name": m.name,
                    "before": m.before,
                    "after": m.after,
                    "change_pct": m.change_pct,
                    "ci_low_pct": m.ci_low_pct,
                    "ci_high_pct": m.ci_high_pct,
                    "verdict": m.verdict,
                }
                for m in self.metrics
            ],
            "config_changes": [
                {"flag": c.flag, "before": c.before, "after": c.after} for c in self.config_changes
            ],
            "warnings": [{"rule": w.rule, "message": w.message} for w in self.warnings],
            "next_step": self.next_step,
            "conclusion": self.conclusion,
            "runs": {"before": self.runs_before, "after": self.runs_after},
            "ci_method": self.ci_method,
            "confidence": CONFIDENCE,
        }


# --- the bootstrap ------------------------------------------------------------------------------


def _resampled_percentile(ordered: Sequence[float], rank: float, rng: random.Random) -> float:
    """One bootstrap replicate of a percentile in O(1). Resampling n values with replacement
    maps n uniforms through the empirical quantile function, so the resample's k-th smallest
    value is ordered[floor(n U)] with U the k-th smallest of n uniforms: Beta(k, n - k + 1)."""
    n = len(ordered)
    position = rank / 100 * (n - 1)
    low = math.floor(position)
    fraction = position - low
    u_low = rng.betavariate(low + 1, n - low)
    x_low = ordered[min(int(n * u_low), n - 1)]
    if fraction == 0:
        return x_low
    # The next order statistic: the smallest of the n - low - 1 uniforms above u_low.
    u_high = u_low + (1 - u_low) * rng.betavariate(1, n - low - 1)
    return x_low + (ordered[min(int(n * u_high), n - 1)] - x_low) * fraction


def _resampled_stat(samples: Samples, stat: str, rng: random.Random) -> float:
    if stat != "mean":
        return _resampled_percentile(samples.ordered, stat_rank(stat), rng)
    if len(samples.units) >= NORMAL_MEAN_MIN_UNITS:
        return rng.gauss(samples.mean, samples.mean_se)
    picks = rng.choices(samples.units, k=len(samples.units))
    return sum(s for s, _ in picks) / sum(c for _, c in picks)


def _pct(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or before == 0:
        return None
    return (after / before - 1) * 100


def _interval(
    draws: Callable[[], tuple[float, float]], plug_in: float, point: float, n: int, df: int
) -> tuple[float, float] | None:
    """A percentile interval of the change over RESAMPLES replicates of (before, after).

    A percentile bootstrap is as narrow as a z-interval with the variance shrunk by (n-1)/n,
    too narrow for 3-5 runs; it is widened to a t-interval's width (Hesterberg's expanded
    percentile interval, as a scale about the estimate) and moved so that the plug-in change
    the replicates scatter around sits on the reported one.
    """
    if n < 2:
        return None
    changes = sorted(c for _ in range(RESAMPLES) if (c := _pct(*draws())) is not None)
    if len(changes) < RESAMPLES // 2:  # mostly zero denominators: no meaningful ratio
        return None
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = formulas.percentile(changes, tail), formulas.percentile(changes, 100 - tail)
    scale = math.sqrt(n / (n - 1)) * (_T[df - 1] if df <= len(_T) else _Z) / _Z
    return point - scale * max(plug_in - low, 0.0), point + scale * max(high - plug_in, 0.0)


def _over_runs(
    name: str, before: list[Run], after: list[Run], point: float, rng: random.Random
) -> tuple[float, float] | None:
    b, a = [r.values[name] for r in before], [r.values[name] for r in after]

    def mean_of_resample(values: list[float]) -> float:
        return statistics.fmean(rng.choices(values, k=len(values)))

    def draw() -> tuple[float, float]:
        return mean_of_resample(b), mean_of_resample(a)

    return _interval(draw, point, point, min(len(b), len(a)), len(b) + len(a) - 2)


def _side_draw(runs: list[Run], family: str, stat: str, rng: random.Random) -> float:
    """A replicate of a side's value: its runs resampled (when several), then their requests."""
    picked = rng.choices(runs, k=len(runs)) if len(runs) > 1 else runs
    return statistics.fmean(_resampled_stat(r.samples[family], stat, rng) for r in picked)


def _over_requests(
    name: str, before: list[Run], after: list[Run], point: float, rng: random.Random
) -> tuple[float, float] | None:
    if (parts := metric_parts(name)) is None:
        return None  # a throughput is one number per run: nothing inside a run to resample
    stat, family = parts
    if not all(family in r.samples for r in (*before, *after)):
        return None
    plug_in = _pct(
        statistics.fmean(r.samples[family].stat(stat) for r in before),
        statistics.fmean(r.samples[family].stat(stat) for r in after),
    )
    if plug_in is None:
        return None

    def draw() -> tuple[float, float]:
        return _side_draw(before, family, stat, rng), _side_draw(after, family, stat, rng)

    nb, na = (len(s) if len(s) > 1 else len(s[0].samples[family].units) for s in (before, after))
    return _interval(draw, plug_in, point, min(nb, na), nb + na - 2)


def _verdict(
    name: str, change: float | None, ci: tuple[float, float] | None, floor: float
) -> Verdict:
    if change is None or ci is None:
        return "insufficient-data"
    if ci[0] <= 0 <= ci[1] or abs(change) < floor:
        return "no-change"
    lower_is_better = metric_parts(name) is not None
    return "better" if (change < 0) == lower_is_better else "worse"


def _compare_metric(name: str, before: Side, after: Side, rng: random.Random) -> MetricComparison:
    b_runs = [r for r in before.runs if name in r.values]
    a_runs = [r for r in after.runs if name in r.values]
    b = statistics.fmean(r.values[name] for r in b_runs) if b_runs else None
    a = statistics.fmean(r.values[name] for r in a_runs) if a_runs else None
    change, ci = _pct(b, a), None
    by_runs = len(b_runs) > 1 and len(a_runs) > 1
    if change is not None:
        ci = (_over_runs if by_runs else _over_requests)(name, b_runs, a_runs, change, rng)
    floor = PRACTICAL_CHANGE_PCT if by_runs else SINGLE_RUN_CHANGE_PCT
    low, high = ci or (None, None)
    return MetricComparison(name, b, a, change, low, high, _verdict(name, change, ci, floor))


# --- server configuration -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Config:
    """One run's server: effective flag values, which of them vLLM defaulted, the settings."""

    values: Mapping[str, str]
    defaults: frozenset[str]
    settings: Settings


def _arg_text(value: ArgValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return " ".join(value) if isinstance(value, tuple) else value


def _effective(command: ServeCommand, machine: Hardware | None = None) -> _Config:
    """Resolved knobs as vLLM runs them (on the recorded GPUs, else an unknown GPU, alike on
    both sides, so an explicit default equals an absent flag); any other flag as written."""
    s = resolve(command, None, machine)
    max_len = "auto" if s.max_model_len_auto else s.max_model_len
    knobs = {
        "--tensor-parallel-size": s.tensor_parallel_size,
        "--pipeline-parallel-size": s.pipeline_parallel_size,
        "--data-parallel-size": s.data_parallel_size,
        "--max-num-seqs": s.max_num_seqs,
        "--max-num-batched-tokens": s.max_num_batched_tokens,
        "--max-model-len": max_len,
        "--gpu-memory-utilization": s.gpu_memory_utilization,
        "--dtype": s.dtype or s.dtype_flag.lower(),
        "--kv-cache-dtype": s.kv_cache_dtype.lower(),
        "--quantization": s.quantization,
        "--enable-chunked-prefill": _arg_text(s.chunked_prefill),
        "--enforce-eager": _arg_text(s.enforce_eager),
        "--block-size": s.block_size,
        "--kv-cache-memory-bytes": s.kv_cache_memory_bytes,
    }
    values = {"--model": command.model} if command.model else {}
    values.update({flag: value_text(v) for flag, v in knobs.items() if v is not None})
    for flag, raw in command.args.items():
        if flag not in knobs and flag not in _NOT_KNOBS:
            values[flag] = _arg_text(raw)
    return _Config(values, frozenset(f for f in knobs if f not in command.args), s)


def _run_config(run: Run) -> _Config | Sentence:
    """The run's server config, or why it is unknown."""
    if run.command is None:
        return Sentence("config.no_command")
    try:
        machine = parse_gpus(run.gpus) if run.gpus else None
        return _effective(parse_text(run.command, version=run.flag_table), machine)
    except UsageError as exc:  # CommandParseError, or a flag table servetune does not know
        return Sentence("config.unreadable", error=exc)


def _diff(before: _Config, after: _Config) -> tuple[ConfigChange, ...]:
    b, a = before.values, after.values
    return tuple(
        ConfigChange(f, b.get(f), a.get(f), f in before.defaults, f in after.defaults)
        for f in dict.fromkeys([*b, *a])
        if b.get(f) != a.get(f)
    )


def _side_config(label: str, side: Side) -> tuple[_Config | Sentence, CompareWarning | None]:
    """The side's server config (its first known run's) or why it is unknown, and a warning
    when its runs were served differently."""
    configs = [(run, _run_config(run)) for run in side.runs]
    known = [(run, c) for run, c in configs if isinstance(c, _Config)]
    if not known:
        return next(c for _, c in configs if isinstance(c, Sentence)), None
    first = known[0][1]
    mixed = sorted({change.flag for _, c in known[1:] for change in _diff(first, c)})
    if not mixed:
        return first, None
    return first, CompareWarning(
        "config-mixed",
        Sentence(
            "warning.config-mixed",
            side=Sentence(f"side.{label}"),
            flags=", ".join(mixed),
            source=known[0][0].source,
        ),
    )


def _unknown_config_warning(
    before: _Config | Sentence, after: _Config | Sentence
) -> CompareWarning | None:
    unknown = [
        (label, c) for label, c in (("before", before), ("after", after)) if isinstance(c, Sentence)
    ]
    if not unknown:
        return None
    who = "both" if len(unknown) == 2 else unknown[0][0]
    why = Joined(tuple(sorted({c for _, c in unknown}, key=Sentence.text)), "list.semicolon")
    return CompareWarning(
        "config-unknown", Sentence("warning.config-unknown", side=Sentence(f"side.{who}"), why=why)
    )


# --- warnings -----------------------------------------------------------------------------------


def _workload_diff(before: Workload, after: Workload) -> list[Sentence]:
    b, a = before.settings, after.settings
    diffs = [
        Sentence("workload.setting", option=key, before=b[key], after=a[key])
        for key in b
        if key in a and b[key] != a[key]
    ]
    for side in ("input", "output"):
        if f"--random-{side}-len" in b and f"--random-{side}-len" in a:
            continue  # the asked lengths were compared above
        tokens_b, tokens_a = before.mean_tokens.get(side), after.mean_tokens.get(side)
        if tokens_b and tokens_a and abs(tokens_a / tokens_b - 1) > WORKLOAD_TOLERANCE:
            diffs.append(Sentence(f"workload.tokens.{side}", before=tokens_b, after=tokens_a))
    return diffs


def _workload_warnings(before: Side, after: Side) -> list[CompareWarning]:
    found = []
    for label, side in (("before", before), ("after", after)):
        first = side.runs[0].workload
        inside = sorted(
            {d for r in side.runs[1:] for d in _workload_diff(first, r.workload)}, key=Sentence.text
        )
        if inside:
            found.append(
                CompareWarning(
                    "workload-differs",
                    Sentence(
                        "warning.workload-inside",
                        side=Sentence(f"side.{label}"),
                        diffs=Joined(tuple(inside), "list.semicolon"),
                    ),
                )
            )
    between = _workload_diff(before.runs[0].workload, after.runs[0].workload)
    if between:
        found.append(
            CompareWarning(
                "workload-differs",
                Sentence(
                    "warning.workload-between", diffs=Joined(tuple(between), "list.semicolon")
                ),
            )
        )
    return found


def _client_warning(label: str, side: Side) -> CompareWarning | None:
    behind = [
        r for r in side.runs if r.client_saturated or (r.send_lag_p99_s or 0.0) > CLIENT_LAG_LIMIT_S
    ]
    if not behind:
        return None
    worst = max(r.send_lag_p99_s or 0.0 for r in behind) * 1000
    return CompareWarning(
        "client-saturated",
        Sentence(
            "warning.client-saturated",
            side=Sentence(f"side.{label}"),
            behind=len(behind),
            runs=len(side.runs),
            worst_ms=worst,
            limit_ms=CLIENT_LAG_LIMIT_S * 1000,
        ),
    )


def _failure_warning(label: str, side: Side) -> CompareWarning | None:
    failed = sum(r.failed for r in side.runs)
    if not failed:
        return None
    total = failed + sum(r.completed for r in side.runs)
    return CompareWarning(
        "failed-requests",
        Sentence(
            "warning.failed-requests", side=Sentence(f"side.{label}"), failed=failed, total=total
        ),
    )


def _prefix_cache_warning(label: str, side: Side) -> CompareWarning | None:
    """Runs whose prompts the server's prefix cache served beyond what the workload's shared
    prefix explains (bench's own rule): part of their prefill was skipped. Unknown rates (old
    files, vLLM's files, servers without /metrics) say nothing."""
    cached = [r.prefix_cache for r in side.runs]
    hit = [p for p in cached if unexpected_prefix_hits(p.hit_rate, p.expected_hit_rate)]
    if not hit:
        return None
    worst = max(hit, key=lambda p: (p.hit_rate or 0.0) - (p.expected_hit_rate or 0.0))
    # Emptied or fresh prompts everywhere: the hits came during the run, not from earlier runs.
    during = all(p.isolation in ("reset", "fresh-prompts") for p in hit)
    return CompareWarning(
        "prefix-cache-hits",
        Sentence(
            "warning.prefix-cache-hits",
            side=Sentence(f"side.{label}"),
            hit=len(hit),
            runs=len(side.runs),
            rate=worst.hit_rate or 0.0,
            expected=worst.expected_hit_rate or 0.0,
            cause=Sentence(f"prefix-cache.{'during-run' if during else 'earlier-runs'}"),
        ),
    )


def _single_run_warning(before: Side, after: Side) -> CompareWarning | None:
    single = [
        (label, s.runs[0])
        for label, s in (("before", before), ("after", after))
        if len(s.runs) == 1
    ]
    if not single:
        return None
    who = "both" if len(single) == 2 else single[0][0]
    missing = sorted({f.upper() for _, run in single for f in FAMILIES if f not in run.samples})
    note = Sentence("warning.single-run.note", families="/".join(missing)) if missing else ""
    return CompareWarning(
        "single-run", Sentence(f"warning.single-run.{who}", floor=SINGLE_RUN_CHANGE_PCT, note=note)
    )


def _knob_warning(changes: Sequence[ConfigChange]) -> CompareWarning | None:
    if len(changes) < 2:
        return None
    return CompareWarning(
        "more-than-one-change",
        Sentence(
            "warning.more-than-one-change", n=len(changes), flags=", ".join(c.flag for c in changes)
        ),
    )


# --- the comparison -----------------------------------------------------------------------------


def _metric_names(requested: Sequence[str] | None, before: Side, after: Side) -> list[str]:
    if not requested:
        runs = (*before.runs, *after.runs)
        goodput = ["request_goodput"] if any("request_goodput" in r.values for r in runs) else []
        return [*HEADLINE, *goodput]
    for name in requested:
        if name not in KNOWN_METRICS:
            close = suggest(name, KNOWN_METRICS)
            message = ErrorText("compare.unknown-metric", name=name, names=", ".join(HEADLINE))
            raise UsageError(
                message, ErrorText("hint.did-you-mean", guess=close) if close else None
            )
    return list(dict.fromkeys(requested))


def _warnings(before: Side, after: Side, changes: Sequence[ConfigChange]) -> list[CompareWarning]:
    optional = [_single_run_warning(before, after), _knob_warning(changes)]
    optional += [
        w(label, side)
        for w in (_client_warning, _failure_warning, _prefix_cache_warning)
        for label, side in (("before", before), ("after", after))
    ]
    return (
        [w for w in optional[:2] if w]
        + _workload_warnings(before, after)
        + [w for w in optional[2:] if w]
    )


def compare(
    before: Side,
    after: Side,
    metrics: Sequence[str] | None = None,
    *,
    rng: random.Random | None = None,
) -> Comparison:
    """Compare two sides metric by metric (`metrics`: result-file keys, default the headline
    ones). Each metric draws from its own generator seeded from `rng`, so asking for fewer
    metrics leaves the others' intervals as they were."""
    if not before.runs or not after.runs:
        raise UsageError(ErrorText("compare.empty-side"), FILE_HINT)
    names = _metric_names(metrics, before, after)
    base = (rng or random.Random(DEFAULT_SEED)).getrandbits(64)
    rows = tuple(_compare_metric(n, before, after, random.Random(f"{base}:{n}")) for n in names)
    b_side, b_mixed = _side_config("before", before)
    a_side, a_mixed = _side_config("after", after)
    b_config = b_side if isinstance(b_side, _Config) else None
    a_config = a_side if isinstance(a_side, _Config) else None
    changes = _diff(b_config, a_config) if b_config and a_config else ()
    config_warnings = [b_mixed, a_mixed, _unknown_config_warning(b_side, a_side)]
    advice = None
    for side, config in ((after, a_config), (before, b_config)):
        if (peaks := side_peaks(side)) is not None:
            advice = next_step(peaks, config.settings if config else None)
            break
    return Comparison(
        metrics=rows,
        config_changes=changes,
        warnings=tuple(_warnings(before, after, changes) + [w for w in config_warnings if w]),
        advice=advice,
        runs_before=len(before.runs),
        runs_after=len(after.runs),
        config_known=b_config is not None and a_config is not None,
        ci_method="runs" if len(before.runs) > 1 and len(after.runs) > 1 else "requests",
    )
