"""Published vLLM benchmark runs (tests/data/corpus/runs.json) as `plan` accuracy cases.

Each record is one measured point from a public source: its URL, `split` (`fit` or
`held-out`, fixed by source when it was added: tests/data/corpus/README.md), the GPUs, the vLLM
release, the serve command as published, the workload and the figures as quoted. A record is
tried as a new user would try it: the command goes through `check` on the record's GPUs and
release; what `plan` would answer is predicted; what it would not is kept with the reason
(no command or load published, the model or GPU not known, refused by `check`).

The load is what really ran where the quote says it (total input and generated tokens over the
successful requests: replies that end at EOS are shorter than asked), else the asked lengths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from servetune.errors import HardwareError, ServetuneError
from servetune.plan import planner, predict, sharegpt
from servetune.plan.accuracy import METRICS, Case, kind_of
from servetune.plan.parallel import GPUS_PER_NODE
from servetune.plan.simulate import Load
from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.hardware import parse_gpus

Reason = str  # no-command, no-load, no-figures, unknown-model, unknown-gpu, refused:<rule>...
SHAREGPT_RANGE = sharegpt.SPREAD  # ShareGPT's per-request spread (plan.sharegpt says why)


@dataclass(frozen=True)
class Unanswered:
    """A record `plan` gives no prediction for, and why."""

    name: str
    split: str
    reason: Reason
    kind: str = ""


_QUOTE_NUMBERS = {
    "completed": (r"Successful requests:\s*([\d.,]+)", r'"completed":\s*([\d.]+)'),
    "input": (r"Total input tokens:\s*([\d.,]+)", r'"total_input_tokens":\s*([\d.]+)'),
    "output": (r"Total generated tokens:\s*([\d.,]+)", r'"total_output_tokens":\s*([\d.]+)'),
}


# A markdown table of runs, one per row, under the summary's own names ("Total input tokens",
# "num-prompts"): the columns that give the totals.
_TABLE_COLUMNS = {
    "completed": ("successful requests", "num-prompts", "num prompts", "completed"),
    "input": ("total input tokens",),
    "output": ("total generated tokens", "total output tokens"),
}


def _table_totals(quote: str) -> dict[str, float]:
    """The totals of a quote that tabulates its one run (`| Total input tokens | ... |`), with
    the header's row and one row of figures; none from a table of several runs."""
    lines = [ln.strip() for ln in quote.splitlines() if ln.strip().startswith("|")]
    for number, line in enumerate(lines[:-1]):
        header = [cell.strip().lower() for cell in line.strip("|").split("|")]
        rows = [r for r in lines[number + 1 :] if not re.fullmatch(r"[|:\-\s]+", r)]
        # one run's table only: a sweep's rows are other runs
        if "total input tokens" not in header or len(rows) != 1:
            continue
        cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
        found: dict[str, float] = {}
        for key, names in _TABLE_COLUMNS.items():
            index = next((header.index(n) for n in names if n in header), None)
            if index is not None and index < len(cells):
                try:
                    found[key] = float(cells[index].replace(",", ""))
                except ValueError:
                    continue
        return found
    return {}


def quoted_totals(quote: str) -> dict[str, float]:
    """Successful requests and total input/generated tokens, where the quote prints them
    (vLLM's text summary, its --save-result JSON, or a table of the run's summary)."""
    found = {}
    for key, patterns in _QUOTE_NUMBERS.items():
        for pattern in patterns:
            if match := re.search(pattern, quote):
                found[key] = float(match.group(1).replace(",", ""))
                break
    return found or _table_totals(quote)


_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Z_][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|\S*)\s*$", re.M)
_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}|\$([A-Z_][A-Z0-9_]*)")


def expand_shell(text: str, known: Mapping[str, str]) -> str:
    """The command with the shell variables a published script sets (`NAME=value`,
    `${NAME:-default}`) or the record names (`$MODEL`) filled in, as its author ran it."""
    values = dict(known)

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        return values.get(name, match.group(2) or "")

    for name, value in _ASSIGN.findall(text):  # in order: a value may use an earlier one
        values.setdefault(name, _VAR.sub(sub, value.strip("\"'")))
    return _VAR.sub(sub, text)


def version_of(raw: object) -> str | None:
    """The release a record names ('0.17.0 (image ...)', '0.11.0rc2'), as check reads it."""
    match = re.match(r"v?(\d+\.\d+(?:\.\d+)?)", str(raw or ""))
    return match.group(1) if match else None


def _range_ratio(workload: Mapping[str, object]) -> tuple[float, float]:
    """(length spread, factor on the asked length's mean) of the random dataset's draw.
    vLLM's `bench serve` draws [L(1-r), L(1+r)] (0.9 onwards); the older benchmark_serving.py
    that InferenceX vendors draws [rL, L]: a mean of (1+r)/2 L."""
    if workload.get("dataset") == "sharegpt":
        return SHAREGPT_RANGE, 1.0
    flags = str(workload.get("tool_flags") or "")
    match = re.search(r"--random-range-ratio[ =]([\d.]+)", flags)
    if not match:
        return 0.0, 1.0
    r = float(match.group(1))
    if "benchmark_serving.py" in str(workload.get("tool") or ""):
        return (1 - r) / (1 + r), (1 + r) / 2
    return r, 1.0


def _mean_len(
    total: float | None, done: float | None, asked: object, factor: float
) -> float | None:
    """The mean length that ran (a quoted total over the successful requests), else the asked
    one (times the dataset's factor on its mean), else None."""
    if total is not None and done:
        return total / done
    return asked * factor if isinstance(asked, int | float) else None


def _sharegpt_output_len(workload: Mapping[str, object]) -> int | None:
    match = re.search(
        r"--sharegpt[-_]output[-_]len[ =](\d+)", str(workload.get("tool_flags") or "")
    )
    return int(match.group(1)) if match else None


def lengths_assumed(rec: Mapping[str, object]) -> bool:
    """Whether the record's lengths are ShareGPT's published means (plan.sharegpt): a ShareGPT
    run that quotes no token totals and asks no lengths."""
    workload = rec.get("workload")
    if not isinstance(workload, dict) or workload.get("dataset") != "sharegpt":
        return False
    totals = quoted_totals(str(rec.get("quote") or ""))
    published = [workload.get(k) for k in ("input_len", "output_len")]
    return not ({"input", "output"} <= totals.keys() or all(published))


def _users(workload: Mapping[str, object], done: int) -> tuple[int | None, float | None]:
    """(concurrency, request rate) of the run: a cap, else a finite rate, else all at once."""
    concurrency, rate = workload.get("max_concurrency"), workload.get("request_rate")
    finite_rate = float(rate) if isinstance(rate, int | float) and rate < 1e4 else None
    cap = int(concurrency) if isinstance(concurrency, int | float) and concurrency > 0 else None
    return (cap if cap else (None if finite_rate else done)), finite_rate


def _sharegpt_load(workload: Mapping[str, object], done: object) -> Load:
    n = int(done) if isinstance(done, int | float) and done > 0 else sharegpt.NUM_PROMPTS
    concurrency, rate = _users(workload, n)
    return sharegpt.load(n, concurrency, rate, _sharegpt_output_len(workload))


def _load(rec: Mapping[str, object]) -> Load | None:
    workload = rec.get("workload")
    if not isinstance(workload, dict):
        return None
    totals = quoted_totals(str(rec.get("quote") or ""))
    done = totals.get("completed") or workload.get("num_prompts")
    if lengths_assumed(rec):
        return _sharegpt_load(workload, done)
    if not isinstance(done, int | float) or done <= 0:
        return None
    spread, factor = _range_ratio(workload)
    input_len = _mean_len(totals.get("input"), done, workload.get("input_len"), factor)
    output_len = _mean_len(totals.get("output"), done, workload.get("output_len"), factor)
    if input_len is None or output_len is None:
        return None
    concurrency, rate = _users(workload, int(done))
    return Load(
        input_len=max(1, round(input_len)),
        output_len=max(2, round(output_len)),
        num_prompts=int(done),
        concurrency=concurrency,
        request_rate=rate,
        range_ratio=spread,
    )


def _options(rec: Mapping[str, object]) -> CheckOptions:
    version = version_of(rec.get("vllm_version"))
    return CheckOptions(gpus=str(rec["gpus"]), vllm_version=version, detect_hardware=False)


def assumed_command(rec: Mapping[str, object]) -> str | None:
    """The command a record that publishes none is planned with: the model it names served
    with vLLM's defaults over all its GPUs (`vllm serve MODEL --tensor-parallel-size N`), what
    a user asking "how fast on this machine" would start; over several nodes of 8 GPUs, tensor
    parallel within a node and pipeline parallel over the nodes, as vLLM's docs say to
    (docs/serving/parallelism_scaling.md, 0.10 on: "Set tensor_parallel_size to the number of
    GPUs per node and pipeline_parallel_size to the number of nodes"); None where the record
    names no model or a mixed machine (the split over its cards is not known). GPUs `--gpus`
    cannot read give the bare command, which check then refuses for its GPUs as it would any
    other."""
    model, gpus = rec.get("model"), str(rec.get("gpus") or "")
    if not model or not gpus:
        return None
    try:
        machine = parse_gpus(gpus)
    except HardwareError:
        return f"vllm serve {model}"
    if machine.cards:
        return None
    nodes, node = machine.count // GPUS_PER_NODE, GPUS_PER_NODE
    if nodes > 1 and machine.count % node == 0:  # vLLM's guidance for more than one node
        return f"vllm serve {model} --tensor-parallel-size {node} --pipeline-parallel-size {nodes}"
    tp = f" --tensor-parallel-size {machine.count}" if machine.count > 1 else ""
    return f"vllm serve {model}{tp}"


def _command(rec: Mapping[str, object]) -> str | None:
    if rec.get("command"):
        return str(rec["command"])
    return assumed_command(rec)


def _check(rec: Mapping[str, object]) -> Report:
    # what the script's environment sets: the model the record names, a port
    known = {"MODEL": str(rec.get("model") or ""), "PORT": "8000"}
    command = expand_shell(str(_command(rec)), known)
    return check_text(command, _options(rec))


def _unknown(report: Report) -> Reason | None:
    if report.model is None:
        return "unknown-model"
    if report.hardware is None or report.hardware.spec is None:
        return "unknown-gpu"
    if report.estimate is None:
        return "model-shape-unknown"
    return None


SetupFn = Callable[[Report, CheckOptions], "predict.Setup | Reason"]


def _refused(report: Report) -> Reason:
    return "refused:" + ",".join(sorted({f.rule for f in report.errors}))


def refuse_on_errors(report: Report, options: CheckOptions) -> predict.Setup | Reason:
    """What `plan` did before it planned corrected commands: refuse on any `check` error."""
    del options
    return _refused(report) if report.errors else predict.setup(report)


def as_plan_does(report: Report, options: CheckOptions) -> predict.Setup | Reason:
    """What `plan` does: a command check knows the fix for is planned corrected."""
    plannable = planner.corrected(report, options)
    if plannable is None:
        return _refused(report)
    fixed = plannable.report if isinstance(plannable, planner.Corrected) else plannable
    return predict.setup(fixed)


_MEAN_LATENCY = re.compile(r"Mean (?:Latency|E2EL)\s*\((m?s)\):\s*([\d.,]+)")


def _mean_latency_ms(rec: Mapping[str, object]) -> float | None:
    raw = rec.get("measured")
    if isinstance(raw, dict) and isinstance(e2el := raw.get("mean_e2el_ms"), int | float):
        return float(e2el)
    match = _MEAN_LATENCY.search(str(rec.get("quote") or ""))
    if match is None:
        return None
    value = float(match.group(2).replace(",", ""))
    return value * 1000 if match.group(1) == "s" else value


def _measured(rec: Mapping[str, object], load: Load | None = None) -> dict[str, float]:
    """The published figures plan is scored on. A mean TPOT that cannot be the time between
    tokens is left out: where TTFT + TPOT x (output - 1) falls short of a third of the same
    run's mean latency, the client counted tokens that arrived in bursts (GPUStack's runner:
    0.33 ms beside 17.5 s for 2,000 tokens), not the decode step."""
    raw = rec.get("measured")
    if not isinstance(raw, dict):
        return {}
    got = {m: float(v) for m in METRICS if isinstance(v := raw.get(m), int | float)}
    latency = _mean_latency_ms(rec)
    tpot, ttft = got.get("mean_tpot_ms"), got.get("mean_ttft_ms", 0.0)
    decoded = load.output_len - 1 if load is not None else 0
    if latency and tpot is not None and decoded > 0 and ttft + tpot * decoded < latency / 3:
        del got["mean_tpot_ms"]
    return got


def _report(rec: Mapping[str, object]) -> Report | Reason:
    """check's report of the record's command, or why there is none to plan from."""
    if _command(rec) is None:
        return "no-command"
    try:
        report = _check(rec)
    except ServetuneError as exc:
        return f"check-error:{type(exc).__name__}"
    return _unknown(report) or report


def case_of(rec: Mapping[str, object], make_setup: SetupFn) -> Case | Unanswered:
    """One record as plan answers it (`make_setup` decides what plan does with the report)."""
    name, split = str(rec["id"]), str(rec.get("split", "held-out"))
    load = _load(rec)
    measured = _measured(rec, load)
    report = _report(rec)
    if isinstance(report, str):
        return Unanswered(name, split, report)
    kind = kind_of(report)
    if load is None or not measured:
        return Unanswered(name, split, "no-load" if load is None else "no-figures", kind)
    setup_ = make_setup(report, _options(rec))
    if isinstance(setup_, str):
        return Unanswered(name, split, setup_, kind)
    fixed = () if setup_.report is report else tuple(f.rule for f in report.errors)
    url = str(rec.get("url", ""))
    assumed = not rec.get("command")
    kind = kind_of(setup_.report)
    return Case(
        name, setup_, load, measured, split, url, kind, fixed, assumed, lengths_assumed(rec)
    )


def corpus_cases(
    path: Path, make_setup: SetupFn = as_plan_does
) -> tuple[list[Case], list[Unanswered]]:
    """Every record of the corpus file: the answered ones as cases, the others with why."""
    records = json.loads(path.read_text(encoding="utf-8"))["records"]
    cases: list[Case] = []
    unanswered: list[Unanswered] = []
    for rec in records:
        got = case_of(rec, make_setup)
        if isinstance(got, Case):
            cases.append(got)
        else:
            unanswered.append(got)
    return cases, unanswered
