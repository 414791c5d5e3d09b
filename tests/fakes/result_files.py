"""Synthetic result files for compare, accept and tune tests: servetune's own format (with its
`servetune` block) and plain `vllm bench serve --save-result` output, with known injected
differences."""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servetune.measure import metrics

# --- synthetic runs -----------------------------------------------------------------------------


@dataclass
class Setup:
    """One server setup under one workload; runs drawn from it differ only by chance."""

    latency: float = 1.0  # multiplies every TTFT and ITL gap
    throughput: float = 1.0  # divides the run's duration
    requests: int = 200
    output_tokens: int = 32
    input_len: int = 512
    request_rate: float | str = 10.0
    max_concurrency: int | None = None
    command: str | None = "vllm serve my/model --max-num-seqs 128"
    saturated: bool = False
    send_lag_p99_s: float = 0.0004
    server: dict[str, float] | None = None
    failed: int = 0
    goodput: bool = False
    prefix_len: int = 0  # --random-prefix-len
    # `isolation` set: a schema-2 file with `prefix_cache` (hit_rate None: no /metrics counters);
    # None: a schema-1 file, which records neither
    isolation: str | None = None
    hit_rate: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _draw(setup: Setup, seed: int) -> list[tuple[float, list[float]]]:
    """(ttft, gaps) per request. Each run also drifts as a whole by ~2%, as real repeats do."""
    rng = random.Random(seed)
    drift = rng.gauss(1.0, 0.02) * setup.latency
    return [
        (
            rng.lognormvariate(math.log(0.050), 0.35) * drift,
            [
                rng.lognormvariate(math.log(0.010), 0.25) * drift
                for _ in range(setup.output_tokens - 1)
            ],
        )
        for _ in range(setup.requests)
    ]


def _stats(name: str, values: list[float], percentiles: tuple[int, ...]) -> dict[str, float]:
    dist = metrics.distribution(values, (50, *percentiles))
    assert dist.mean is not None and dist.std is not None
    out = {
        f"mean_{name}_ms": dist.mean * 1000,
        f"median_{name}_ms": dist.percentiles[50] * 1000,
        f"std_{name}_ms": dist.std * 1000,
    }
    out.update({f"p{p}_{name}_ms": dist.percentiles[p] * 1000 for p in percentiles})
    return out


def _common(setup: Setup, seed: int) -> tuple[dict[str, Any], list[tuple[float, list[float]]]]:
    reqs = _draw(setup, seed)
    rng = random.Random(seed + 10_000)
    duration = 20.0 * rng.gauss(1.0, 0.02) / setup.throughput
    n = len(reqs)
    out_tokens = n * setup.output_tokens
    doc: dict[str, Any] = {
        "date": "20260101-000000",
        "model_id": "my/model",
        "num_prompts": n + setup.failed,
        "request_rate": setup.request_rate,
        "burstiness": 1.0,
        "max_concurrency": setup.max_concurrency,
        "duration": duration,
        "completed": n,
        "failed": setup.failed,
        "total_input_tokens": n * setup.input_len,
        "total_output_tokens": out_tokens,
        "request_throughput": n / duration,
        "request_goodput": 0.8 * n / duration if setup.goodput else None,
        "output_throughput": out_tokens / duration,
        "total_token_throughput": (n * setup.input_len + out_tokens) / duration,
    }
    return doc, reqs


def ours(setup: Setup, seed: int) -> dict[str, Any]:
    """A result as `servetune bench` writes it (the keys compare reads)."""
    doc, reqs = _common(setup, seed)
    ttfts = [t for t, _ in reqs]
    latencies = [t + sum(g) for t, g in reqs]
    tpots = [(e - t) / (setup.output_tokens - 1) for (t, _), e in zip(reqs, latencies, strict=True)]
    for name, values in (
        ("ttft", ttfts),
        ("tpot", tpots),
        ("e2el", latencies),
        ("itl", [x for _, g in reqs for x in g]),
    ):
        doc.update(_stats(name, values, (50, 90, 95, 99)))
    doc.update(
        {
            "latencies": latencies,
            "ttfts": ttfts,
            "itls": [g for _, g in reqs],
            "output_lens": [setup.output_tokens] * len(reqs),
            "errors": ["timeout"] * setup.failed,
        }
    )
    records: list[dict[str, Any]] = [
        {
            "index": i,
            "warmup": False,
            "ttft_s": t,
            "e2el_s": t + sum(g),
            "itls_s": g,
            "output_tokens": setup.output_tokens,
            "error": None,
        }
        for i, (t, g) in enumerate(reqs)
    ]
    records += [
        {
            "index": -1,
            "warmup": False,
            "ttft_s": None,
            "e2el_s": None,
            "itls_s": [],
            "output_tokens": None,
            "error": "timeout",
        }
    ] * setup.failed
    warmup = {
        "index": -2,
        "warmup": True,
        "ttft_s": 9.0,
        "e2el_s": 99.0,
        "itls_s": [9.0],
        "output_tokens": 2,
        "error": None,
    }
    records.append(warmup)  # compare must ignore it
    command = (
        {"text": setup.command, "model": "my/model", "args": {}, "vllm_version_table": "0.32.0"}
        if setup.command
        else None
    )
    doc["servetune"] = {
        "schema_version": 1,
        "config": {
            "model": "my/model",
            "dataset_name": "random",
            "num_prompts": len(reqs),
            "random_input_len": setup.input_len,
            "random_output_len": setup.output_tokens,
            "random_prefix_len": setup.prefix_len,
            "request_rate": setup.request_rate,
            "max_concurrency": setup.max_concurrency,
        },
        "server_command": command,
        "client": {
            "saturated": setup.saturated,
            "lag_limit_s": 0.005,
            "send_lag_s": {"count": 1, "percentiles": {"99": setup.send_lag_p99_s}},
        },
        "server_metrics": {
            "available": setup.server is not None,
            "summary": {"samples": 20, **setup.server} if setup.server else None,
        },
        "requests": records,
    }
    if setup.isolation is not None:
        doc["servetune"].update(schema_version=2, prefix_cache=_prefix_cache(setup))
    doc.update(setup.extra)
    return doc


def _prefix_cache(setup: Setup) -> dict[str, Any]:
    """As bench records it: the expected rate is the shared prefix's share of a prompt."""
    expected = setup.prefix_len / (setup.prefix_len + setup.input_len)
    return {
        "isolation": setup.isolation,
        "reset": setup.isolation == "reset",
        "prompt_seed": 7,
        "hit_rate": setup.hit_rate,
        "expected_hit_rate": expected,
        "unexpected_hits": False,
    }  # compare judges the rates, not this flag


def plain_vllm(setup: Setup, seed: int, *, detailed: bool = False) -> dict[str, Any]:
    """A `vllm bench serve --save-result` file: mean/median/std/p99 of ttft, tpot and itl only,
    `latencies` always, the other per-request arrays only with --save-detailed."""
    doc, reqs = _common(setup, seed)
    doc = {"endpoint_type": "vllm", "backend": "vllm", "label": None, **doc}
    latencies = [t + sum(g) for t, g in reqs]
    tpots = [(e - t) / (setup.output_tokens - 1) for (t, _), e in zip(reqs, latencies, strict=True)]
    for name, values in (
        ("ttft", [t for t, _ in reqs]),
        ("tpot", tpots),
        ("itl", [x for _, g in reqs for x in g]),
    ):
        doc.update(_stats(name, values, (99,)))
    doc["latencies"] = latencies
    if detailed:
        doc.update(
            {
                "ttfts": [t for t, _ in reqs],
                "itls": [g for _, g in reqs],
                "output_lens": [setup.output_tokens] * len(reqs),
                "errors": [""] * len(reqs),
            }
        )
    doc.update(setup.extra)
    return doc


def write_runs(folder: Path, setup: Setup, seeds: range | list[int], fmt: str = "ours") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        doc = (
            ours(setup, seed)
            if fmt == "ours"
            else plain_vllm(setup, seed, detailed=fmt == "detailed")
        )
        (folder / f"run-{seed}.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder
