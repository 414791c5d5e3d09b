"""Bench runs as read from result files: servetune's own, plain `vllm bench serve
--save-result` files, and `--append-result` files holding one JSON object per run.

A `Run` keeps each metric's value as its file states it, per-request samples where the file has
them (for request-level resampling), the workload, the recorded server command and GPUs, and the
client's and server's own health figures. `compare` works on `Side`s of such runs.

A file is read as raw JSON, `Json` (`Mapping[str, object]`): nothing about its shape is taken
on trust, since it may come from vLLM, an older servetune, or a hand edit. Each value is
narrowed once, where it is read (`_object`, `_list`, `_num`, `_text`), into the typed `Run`;
the keys are the ones `measure/result_schema.py` types for the writer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from servetune.errors import UsageError
from servetune.measure import metrics as formulas
from servetune.measure.server_metrics import MetricsSummary
from servetune.texts import ErrorText

Json = Mapping[str, object]  # a JSON object as read from a file, before anything is checked

FAMILIES = ("ttft", "tpot", "itl", "e2el")
_STATS = ("mean", "median", "p50", "p90", "p95", "p99")
THROUGHPUTS = (
    "request_throughput",
    "output_throughput",
    "total_token_throughput",
    "request_goodput",
)
KNOWN_METRICS = (*(f"{s}_{f}_ms" for f in FAMILIES for s in _STATS), *THROUGHPUTS)
FILE_HINT = ErrorText("hint.result-files")


# --- what a side holds --------------------------------------------------------------------------


@dataclass(frozen=True)
class Samples:
    """One latency family of one run, per request, in seconds.

    `units` holds each request's (sum, count): one value for TTFT, TPOT and E2EL, all its gaps
    for ITL, so a resampled mean keeps a request's gaps together. `ordered` is every value,
    sorted. `mean_se` is the bootstrap standard error of the mean (delta method, ratio of sums).
    """

    units: tuple[tuple[float, int], ...]
    ordered: tuple[float, ...]
    mean: float
    mean_se: float

    def stat(self, stat: str) -> float:
        return self.mean if stat == "mean" else formulas.percentile(self.ordered, stat_rank(stat))


@dataclass(frozen=True)
class Workload:
    """What a run asked of the server (`--flag` -> text) and measured tokens per request."""

    settings: Mapping[str, str]
    mean_tokens: Mapping[str, float]  # "input" / "output"


@dataclass(frozen=True)
class PrefixCache:
    """What the run's file says of the server's prefix cache (None: not recorded, as in vLLM's
    own files and servetune's before result schema 2)."""

    hit_rate: float | None  # prefix-cache hits / queries during the run
    expected_hit_rate: float | None  # what a random workload's shared prefix explains, at most
    isolation: str | None  # how earlier runs were kept out: reset, fresh-prompts or none


@dataclass(frozen=True)
class Run:
    """One bench run, as far as its file tells. Metric values in the file's units."""

    source: str
    values: Mapping[str, float]
    samples: Mapping[str, Samples]  # latency family -> per-request samples, when recorded
    workload: Workload
    command: str | None  # the recorded `vllm serve` command
    flag_table: str | None  # the vLLM flag table servetune read it with
    gpus: str | None  # the recorded `--gpus` spec (vLLM's defaults depend on the GPU)
    failed: int
    completed: int
    client_saturated: bool | None
    send_lag_p99_s: float | None
    server: MetricsSummary | None
    prefix_cache: PrefixCache


@dataclass(frozen=True)
class Side:
    runs: tuple[Run, ...]


# --- reading result files -----------------------------------------------------------------------


def load_side(paths: Sequence[Path]) -> Side:
    """Every run in `paths`: files, or folders (each `*.json` directly inside, by name)."""
    files = [f for p in paths for f in _files(Path(p))]
    if not files:
        raise UsageError(ErrorText("runs.none"), FILE_HINT)
    return Side(tuple(run for f in files for run in _load_file(f)))


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        # vLLM writes `<name>.pytorch.json` beside a result when SAVE_TO_PYTORCH_BENCHMARK_FORMAT
        # is set: another format of the same run, so not a run of its own.
        found = sorted(p for p in path.glob("*.json") if not p.name.endswith(".pytorch.json"))
        if not found:
            raise UsageError(ErrorText("runs.empty-folder", path=path), FILE_HINT)
        return found
    if not path.is_file():
        raise UsageError(ErrorText("runs.no-such", path=path), FILE_HINT)
    return [path]


def _load_file(path: Path) -> list[Run]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(ErrorText("cannot-read", path=path, reason=exc), FILE_HINT) from exc
    objects = _json_objects(text, path)
    if len(objects) == 1:
        return [_run(objects[0], str(path))]
    return [_run(obj, f"{path}#{i}") for i, obj in enumerate(objects, 1)]


def _json_objects(text: str, path: Path) -> list[object]:
    """The JSON values in `text`: one, or one per run as `--append-result` writes them."""
    decoder = json.JSONDecoder()
    objects: list[object] = []
    pos = len(text) - len(text.lstrip())
    while pos < len(text):
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            said = ErrorText(
                "runs.not-json", path=path, reason=exc.msg, line=exc.lineno, column=exc.colno
            )
            raise UsageError(said, FILE_HINT) from exc
        objects.append(obj)
        pos = len(text) - len(text[pos:].lstrip())
    if not objects:
        raise UsageError(ErrorText("runs.empty-file", path=path), FILE_HINT)
    return objects


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _mapping(value: object) -> Json | None:
    """`value` when it is a JSON object (whose keys JSON makes text), else None."""
    return value if isinstance(value, dict) else None


def _object(parent: Json | None, key: str) -> Json | None:
    """The JSON object at `parent[key]`, or None (no parent, no such key, or not an object)."""
    return None if parent is None else _mapping(parent.get(key))


def _list(value: object) -> list[object] | None:
    return value if isinstance(value, list) else None


def _get(parent: Json | None, key: str) -> object:
    return None if parent is None else parent.get(key)


def _run(obj: object, source: str) -> Run:
    doc = _mapping(obj)
    if doc is None or "completed" not in doc or "duration" not in doc:
        raise UsageError(ErrorText("runs.not-a-result", source=source), FILE_HINT)
    block = _object(doc, "servetune")
    samples = _samples(doc, block)
    command = _object(block, "server_command")
    client = _object(block, "client")
    server = _server(_object(_object(block, "server_metrics"), "summary"))
    return Run(
        source=source,
        values=_values(doc, samples),
        samples=samples,
        workload=_workload(doc, block),
        command=_text(_get(command, "text")),
        flag_table=_text(_get(command, "vllm_version_table")),
        gpus=_text(_get(command, "gpus")),
        failed=int(_num(doc.get("failed")) or 0),
        completed=int(_num(doc.get("completed")) or 0),
        client_saturated=_saturated(client),
        send_lag_p99_s=_lag_p99(client),
        server=server,
        prefix_cache=_prefix_cache(block, server),
    )


def _saturated(client: Json | None) -> bool | None:
    saturated = _get(client, "saturated")
    return saturated if isinstance(saturated, bool) else None


def _lag_p99(client: Json | None) -> float | None:
    return _num(_get(_object(_object(client, "send_lag_s"), "percentiles"), "99"))


def _prefix_cache(block: Json | None, server: MetricsSummary | None) -> PrefixCache:
    found = _object(block, "prefix_cache")
    rate = _num(_get(found, "hit_rate"))
    if rate is None and server is not None:
        rate = server.prefix_cache_hit_rate
    return PrefixCache(
        hit_rate=rate,
        expected_hit_rate=_num(_get(found, "expected_hit_rate")),
        isolation=_text(_get(found, "isolation")),
    )


def _server(summary: Json | None) -> MetricsSummary | None:
    if summary is None:
        return None
    return MetricsSummary(
        samples=int(_num(summary.get("samples")) or 0),
        peak_running=_num(summary.get("peak_running")),
        peak_waiting=_num(summary.get("peak_waiting")),
        peak_kv_cache_usage=_num(summary.get("peak_kv_cache_usage")),
        preemptions=_num(summary.get("preemptions")),
        prefix_cache_queries=_num(summary.get("prefix_cache_queries")),
        prefix_cache_hits=_num(summary.get("prefix_cache_hits")),
        prefix_cache_hit_rate=_num(summary.get("prefix_cache_hit_rate")),
    )


def _make_samples(units: list[tuple[float, int]], values: list[float]) -> Samples | None:
    if not units:
        return None
    n, count = len(units), sum(c for _, c in units)
    mean = sum(s for s, _ in units) / count
    spread = sum((s - mean * c) ** 2 for s, c in units) / n
    return Samples(tuple(units), tuple(sorted(values)), mean, math.sqrt(spread / n) / (count / n))


@dataclass(frozen=True)
class _Row:
    """One measured request's latencies in seconds: its TTFT, TPOT and E2EL (None: not
    recorded) and its inter-token gaps."""

    single: Mapping[str, float | None]
    itl: list[float]


def _samples(doc: Json, block: Json | None) -> dict[str, Samples]:
    rows = _rows_from_records(_get(block, "requests")) or _rows_from_arrays(doc)
    found: dict[str, Samples] = {}
    for family in FAMILIES:
        if family == "itl":
            gaps = [row.itl for row in rows if row.itl]
            made = _make_samples([(sum(g), len(g)) for g in gaps], [x for g in gaps for x in g])
        else:
            values = [v for row in rows if (v := row.single[family]) is not None]
            made = _make_samples([(v, 1) for v in values], values)
        if made is not None:
            found[family] = made
    return found


def _row(ttft: float | None, e2el: float | None, gaps: object, tokens: object) -> _Row:
    out = _num(tokens)
    tpot = None
    if ttft is not None and e2el is not None and out is not None:
        tpot = formulas.tpot(e2el, ttft, int(out))
    itl = [x for g in _list(gaps) or [] if (x := _num(g)) is not None]
    return _Row({"ttft": ttft, "e2el": e2el, "tpot": tpot}, itl)


def _measured(record: Json) -> bool:
    """A servetune request record of a measured (not warm-up) success."""
    ok = not record.get("warmup") and record.get("error") is None
    return ok and _num(record.get("e2el_s")) is not None


def _rows_from_records(records: object) -> list[_Row]:
    """servetune's per-request records: the measured (not warm-up) successes."""
    found = (_mapping(r) for r in _list(records) or [])
    return [
        _row(_num(r.get("ttft_s")), _num(r.get("e2el_s")), r.get("itls_s"), r.get("output_tokens"))
        for r in found
        if r is not None and _measured(r)
    ]


def _rows_from_arrays(doc: Json) -> list[_Row]:
    """vLLM's per-request arrays (all but `latencies` need --save-detailed). vLLM keeps a failed
    request in every array, with a latency of 0 and its error in `errors`."""
    latencies = _list(doc.get("latencies"))
    if latencies is None:
        return []
    n = len(latencies)

    def aligned(key: str) -> list[object]:
        value = _list(doc.get(key))
        return value if value is not None and len(value) == n else [None] * n

    errors, ttfts, itls, outs = (aligned(k) for k in ("errors", "ttfts", "itls", "output_lens"))
    return [
        _row(_num(ttfts[i]), e2el, itls[i], outs[i])
        for i in range(n)
        if not errors[i] and (e2el := _num(latencies[i])) is not None and e2el > 0
    ]


def stat_rank(stat: str) -> float:
    return 50.0 if stat in ("median", "p50") else float(stat[1:])


def metric_parts(name: str) -> tuple[str, str] | None:
    """("p99", "ttft") for "p99_ttft_ms"; None for a throughput."""
    stat, _, rest = name.partition("_")
    family = rest.removesuffix("_ms")
    return (stat, family) if family in FAMILIES and name.endswith("_ms") else None


def _values(doc: Json, samples: Mapping[str, Samples]) -> dict[str, float]:
    """Each known metric as the file states it. vLLM writes `median_*` where servetune writes
    `p50_*` too, and e2el stats only on request: those come from the per-request values."""
    values: dict[str, float] = {}
    for name in KNOWN_METRICS:
        value = _num(doc.get(name))
        parts = metric_parts(name)
        if value is None and parts and parts[0] in ("median", "p50"):
            other = "p50" if parts[0] == "median" else "median"
            value = _num(doc.get(f"{other}_{parts[1]}_ms"))
        if value is None and parts and parts[1] in samples:
            value = samples[parts[1]].stat(parts[0]) * 1000
        if value is not None:
            values[name] = value
    return values


def value_text(value: object) -> str:
    if value is None:
        return "unlimited"
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:g}"
    return str(value)


def _workload(doc: Json, block: Json | None) -> Workload:
    config = _object(block, "config") or {}
    settings = {
        "--model": value_text(doc.get("model_id")),
        "--request-rate": value_text(doc.get("request_rate")),
        "--burstiness": value_text(doc.get("burstiness")),
        "--max-concurrency": value_text(doc.get("max_concurrency")),
    }
    # servetune's top-level num_prompts counts what a --duration run managed: compare the ask
    asked = config.get("num_prompts") if config else doc.get("num_prompts")
    if asked is not None:
        settings["--num-prompts"] = value_text(asked)
    for key in (
        "dataset_name",
        "dataset_path",
        "random_input_len",
        "random_output_len",
        "random_range_ratio",
        "random_prefix_len",
        "duration_s",
        "ignore_eos",
    ):
        if config.get(key) is not None:
            settings["--" + key.removesuffix("_s").replace("_", "-")] = value_text(config[key])
    completed = _num(doc.get("completed"))
    totals = {"input": doc.get("total_input_tokens"), "output": doc.get("total_output_tokens")}
    tokens = {
        side: total / completed
        for side, value in totals.items()
        if completed and (total := _num(value)) is not None
    }
    return Workload(settings, tokens)
