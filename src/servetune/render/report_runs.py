"""Bench result files as the report draws them: `judge.runs`' typed `Run` (the numbers compare
reads) plus what only a picture needs: each request's send time, first token and token times,
the server's /metrics samples, the client's send lags, and where the numbers came from.

Files are read once: `judge.runs.load_side` checks and types each file (a bad file is its
`UsageError`), then the same JSON objects are read again here for the per-request details,
narrowed value by value as `judge.runs` does (a file may come from vLLM, an older servetune,
or a hand edit).
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from servetune.judge import runs
from servetune.judge.runs import Json

__all__ = ["BenchRecord", "Provenance", "Request", "ServerSample", "load_records", "result_files"]


@dataclass(frozen=True)
class Provenance:
    """Where one set of numbers came from (None: the file does not say)."""

    source: str
    commands: tuple[str, ...]  # the command lines behind the data, as recorded or rebuilt
    rebuilt: bool  # the commands were rebuilt from recorded settings, not recorded as typed
    servetune_version: str | None
    vllm_version: str | None
    gpus: str | None
    measured: str | None  # when, as a readable local time stamp


@dataclass(frozen=True)
class Request:
    """One measured, successful request; times in seconds from the run's first send."""

    sent_s: float | None
    ttft_s: float | None
    e2el_s: float
    itls_s: tuple[float, ...]
    output_tokens: int | None


@dataclass(frozen=True)
class ServerSample:
    t_s: float
    running: float | None
    waiting: float | None
    kv_cache_usage: float | None
    preemptions_total: float | None


@dataclass(frozen=True)
class BenchRecord:
    """One bench run with everything the report shows of it."""

    run: runs.Run
    doc: Json
    requests: tuple[Request, ...]
    samples: tuple[ServerSample, ...]
    send_lags_s: tuple[float, ...]
    lag_limit_s: float | None
    partial: bool
    provenance: Provenance


# --- files --------------------------------------------------------------------------------------


def result_files(paths: Sequence[Path]) -> list[Path]:
    """The result files among `paths`: files as given, folders by their `*.json` (judge.runs'
    rule: vLLM's `.pytorch.json` twins left out)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.glob("*.json") if not p.name.endswith(".pytorch.json"))
        else:
            found.append(path)
    return found


def _objects(path: Path) -> list[Json]:
    """The JSON objects of a file `judge.runs` has already read without error."""
    text = path.read_text(encoding="utf-8")
    decoder, objects = json.JSONDecoder(), list[Json]()
    pos = len(text) - len(text.lstrip())
    while pos < len(text):
        obj, pos = decoder.raw_decode(text, pos)
        objects.append(obj if isinstance(obj, dict) else {})
        pos = len(text) - len(text[pos:].lstrip())
    return objects


def load_records(paths: Sequence[Path]) -> list[BenchRecord]:
    """Every run in `paths` (files or folders), with its details."""
    records = []
    for path in result_files(paths):
        typed = runs.load_side([path]).runs  # raises the UsageError a bad file deserves
        for run, doc in zip(typed, _objects(path), strict=True):
            records.append(_record(run, doc))
    return records


# --- narrowing raw values -----------------------------------------------------------------------


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _obj(value: object) -> Json:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _nums(value: object) -> tuple[float, ...]:
    return tuple(x for v in _list(value) if (x := _num(v)) is not None)


# --- requests -----------------------------------------------------------------------------------


def _from_records(block: Json) -> list[Request]:
    found = []
    for raw in _list(block.get("requests")):
        r = _obj(raw)
        e2el = _num(r.get("e2el_s"))
        if r.get("warmup") or r.get("error") is not None or e2el is None:
            continue
        tokens = _num(r.get("output_tokens"))
        found.append(
            Request(
                sent_s=_num(r.get("sent_s")),
                ttft_s=_num(r.get("ttft_s")),
                e2el_s=e2el,
                itls_s=_nums(r.get("itls_s")),
                output_tokens=None if tokens is None else int(tokens),
            )
        )
    return found


def _from_arrays(doc: Json) -> list[Request]:
    """vLLM's arrays: `latencies` always, the rest with --save-detailed. Its `start_times` are
    the client's clock (perf_counter): made relative to the first send."""
    latencies = _list(doc.get("latencies"))
    n = len(latencies)

    def aligned(key: str) -> list[object]:
        value = _list(doc.get(key))
        return value if len(value) == n else [None] * n

    starts, ttfts, itls, outs, errors = (
        aligned(k) for k in ("start_times", "ttfts", "itls", "output_lens", "errors")
    )
    first = min((s for v in starts if (s := _num(v)) is not None), default=0.0)
    found = []
    for i in range(n):
        e2el = _num(latencies[i])
        if errors[i] or e2el is None or e2el <= 0:
            continue
        sent = _num(starts[i])
        tokens = _num(outs[i])
        found.append(
            Request(
                sent_s=None if sent is None else sent - first,
                ttft_s=_num(ttfts[i]),
                e2el_s=e2el,
                itls_s=_nums(itls[i]),
                output_tokens=None if tokens is None else int(tokens),
            )
        )
    return found


def _samples(block: Json) -> tuple[ServerSample, ...]:
    found = []
    for raw in _list(_obj(block.get("server_metrics")).get("samples")):
        s = _obj(raw)
        t = _num(s.get("t_s"))
        if t is None:
            continue
        found.append(
            ServerSample(
                t_s=t,
                running=_num(s.get("running")),
                waiting=_num(s.get("waiting")),
                kv_cache_usage=_num(s.get("kv_cache_usage")),
                preemptions_total=_num(s.get("preemptions_total")),
            )
        )
    return tuple(found)


def _lags(block: Json) -> tuple[float, ...]:
    return tuple(
        lag
        for raw in _list(block.get("requests"))
        if not _obj(raw).get("warmup") and (lag := _num(_obj(raw).get("lag_s"))) is not None
    )


def _record(run: runs.Run, doc: Json) -> BenchRecord:
    block = _obj(doc.get("servetune"))
    requests = _from_records(block) if block.get("requests") else _from_arrays(doc)
    client = _obj(block.get("client"))
    return BenchRecord(
        run=run,
        doc=doc,
        requests=tuple(requests),
        samples=_samples(block),
        send_lags_s=_lags(block),
        lag_limit_s=_num(client.get("lag_limit_s")),
        partial=block.get("partial") is True,
        provenance=provenance(run, doc),
    )


# --- where the numbers came from ----------------------------------------------------------------


def measured_at(date: str | None) -> str | None:
    """vLLM's and servetune's `date` (`20260101-093000`, local time) as `2026-01-01 09:30:00`."""
    if not date:
        return None
    try:
        return datetime.strptime(date, "%Y%m%d-%H%M%S").strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return date


_FLAGS = (  # config key -> bench flag, in `servetune bench --help`'s order
    ("base_url", "--base-url"),
    ("model", "--model"),
    ("endpoint", "--endpoint"),
    ("dataset_name", "--dataset-name"),
    ("dataset_path", "--dataset-path"),
    ("random_input_len", "--random-input-len"),
    ("random_output_len", "--random-output-len"),
    ("random_range_ratio", "--random-range-ratio"),
    ("random_prefix_len", "--random-prefix-len"),
    ("num_prompts", "--num-prompts"),
    ("duration_s", "--duration"),
    ("request_rate", "--request-rate"),
    ("burstiness", "--burstiness"),
    ("max_concurrency", "--max-concurrency"),
    ("warmup", "--warmup"),
    ("seed", "--seed"),
    ("prompt_seed", "--prompt-seed"),
    ("workers", "--workers"),
    ("label", "--label"),
    ("gpus", "--gpus"),
)
_DEFAULTS: Mapping[str, object] = {
    "endpoint": "/v1/completions",
    "dataset_name": "random",
    "random_range_ratio": 0.0,
    "random_prefix_len": 0,
    "request_rate": "inf",
    "burstiness": 1.0,
    "warmup": 0,
    "workers": 1,
}


def _bench_line(config: Json, server_command: str | None) -> str:
    """`servetune bench ...` with the options the file records (defaults left out)."""
    words = ["servetune", "bench"]
    for key, flag in _FLAGS:
        value = config.get(key)
        if value is None or value == _DEFAULTS.get(key):
            continue
        if key == "num_prompts" and config.get("duration_s") is not None:
            continue  # --duration and --num-prompts exclude each other
        words += [flag, runs.value_text(value)]
    if config.get("ignore_eos") is True:
        words.append("--ignore-eos")
    slo = _obj(config.get("goodput_slo_ms"))
    if slo:
        words += ["--goodput", *(f"{k}:{runs.value_text(v)}" for k, v in slo.items())]
    if server_command:
        words += ["--server-command", server_command]
    return shlex.join(words)


def _vllm_line(doc: Json) -> str:
    """`vllm bench serve ...` with the settings a vLLM result file records."""
    words = ["vllm", "bench", "serve", "--model", runs.value_text(doc.get("model_id"))]
    for key, flag in (
        ("num_prompts", "--num-prompts"),
        ("request_rate", "--request-rate"),
        ("burstiness", "--burstiness"),
        ("max_concurrency", "--max-concurrency"),
    ):
        if doc.get(key) is not None:
            words += [flag, runs.value_text(doc[key])]
    words.append("--save-result")
    if doc.get("ttfts") is not None:
        words.append("--save-detailed")
    return shlex.join(words)


def provenance(run: runs.Run, doc: Json) -> Provenance:
    """The command lines, versions, GPUs and time a result file records."""
    block = _obj(doc.get("servetune"))
    date = measured_at(_text(doc.get("date")))
    if not block:
        return Provenance(run.source, (_vllm_line(doc),), True, None, None, None, date)
    config = _obj(block.get("config"))
    commands = [_bench_line(config, run.command)]
    if run.command:
        commands.append(run.command)
    version = _text(block.get("server_version")) or (
        f"{run.flag_table} (flag table)" if run.flag_table else None
    )
    return Provenance(
        source=run.source,
        commands=tuple(commands),
        rebuilt=True,
        servetune_version=_text(block.get("tool_version")),
        vllm_version=version,
        gpus=run.gpus or _text(config.get("gpus")),
        measured=date,
    )
