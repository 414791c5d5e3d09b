"""Ask NVIDIA's AIConfigurator to estimate published runs: the peer of benchmarks/plan_accuracy.py.

Runs under .venvs/aiconfigurator/bin/python (made by plan_accuracy.py on first use), never under
servetune's venv: it imports only the standard library and aiconfigurator. It reads a JSON list
of queries on stdin and writes a JSON list of answers on stdout, one per query, in order:

    query:  {"id", "model_path", "system", "isl", "osl", "concurrency", "rate" (null: closed
             loop), "tp", "pp", "dp", "moe_tp", "moe_ep"}
    answer: {"id", "ttft_ms", "tpot_ms", "output_throughput", "batch_size", "database_mode",
             "seconds"} or {"id", "error"}

Each query is one `aiconfigurator cli estimate` in its default `agg` mode (in-flight batching,
vLLM backend, the system's current vLLM performance database), called through the function the
CLI calls (`aiconfigurator.cli.api.cli_estimate`) so the database loads once. How a published
run becomes its input:

- batch size: the run's users (max concurrency) per attention-DP rank, as the tool asks for
  "max concurrent requests"; under a request rate without a cap, Little's law: the users in
  flight are rate x request latency, iterated from the cap to a fixed point (the tool has no
  queue of its own);
- output throughput: its tokens/s (all replicas) for a closed loop; under a rate, the lesser of
  the rate and its sequences/s, times the output length;
- memory: where its memory model says the batch does not fit, the batch halved until it does
  (vLLM too runs only the requests its KV cache holds; the rest wait);
- database mode: SILICON (its default, measured kernels); where SILICON has no data for the
  model, HYBRID, which its own --help recommends "for models released after the last silicon
  data collection". The mode that answered is recorded.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import sys
import time
import warnings
from typing import Any

MODES = ("SILICON", "HYBRID")
LITTLE_ROUNDS = 4


def _estimate(query: dict[str, Any], batch: int, mode: str) -> Any:
    """One estimate; where the batch does not fit its memory model ("OOM: ... does not fit in
    GPU memory"), the batch halved until it does, as vLLM runs only what its KV cache holds."""
    while True:
        try:
            return _estimate_once(query, batch, mode)
        except RuntimeError as exc:
            if not str(exc).startswith("OOM") or batch <= 1:
                raise
            batch = max(1, batch // 2)


def _estimate_once(query: dict[str, Any], batch: int, mode: str) -> Any:
    from aiconfigurator.cli.api import cli_estimate

    moe = {}
    if query.get("moe_ep") or query.get("moe_tp"):
        moe = {"moe_tp_size": query.get("moe_tp"), "moe_ep_size": query.get("moe_ep")}
    return cli_estimate(
        model_path=query["model_path"],
        system_name=query["system"],
        backend_name="vllm",
        database_mode=mode,
        isl=int(query["isl"]),
        osl=int(query["osl"]),
        batch_size=batch,
        tp_size=int(query.get("tp") or 1),
        pp_size=int(query.get("pp") or 1),
        attention_dp_size=int(query.get("dp") or 1),
        **moe,
    )


def _per_rank(users: float, dp: int) -> int:
    return max(1, math.ceil(users / dp))


def answer(query: dict[str, Any]) -> dict[str, Any]:
    """One query's estimate, or why there is none."""
    dp = int(query.get("dp") or 1)
    started = time.perf_counter()
    errors = []
    for mode in MODES:
        try:
            got = _answer_in(query, dp, mode)
        except Exception as exc:  # noqa: BLE001 - the peer's every failure is an answer
            errors.append(f"{mode}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            continue
        got.update(id=query["id"], database_mode=mode, seconds=time.perf_counter() - started)
        return got
    return {"id": query["id"], "error": "; ".join(errors)}


def _answer_in(query: dict[str, Any], dp: int, mode: str) -> dict[str, Any]:
    users = float(query["concurrency"])
    rate = query.get("rate")
    result = _estimate(query, _per_rank(users, dp), mode)
    if rate:
        for _ in range(LITTLE_ROUNDS):  # users in flight = rate x latency, at most the cap
            seq_s = result.seq_per_second
            in_flight = min(float(query["concurrency"]), rate * result.request_latency / 1000)
            if seq_s <= rate or abs(in_flight - users) < 1:
                break
            users = max(1.0, in_flight)
            result = _estimate(query, _per_rank(users, dp), mode)
        throughput = min(rate, result.seq_per_second) * int(query["osl"])
    else:
        throughput = result.tokens_per_second
    return {
        "ttft_ms": float(result.ttft),
        "tpot_ms": float(result.tpot),
        "output_throughput": float(throughput),
        "batch_size": int(result.batch_size),
    }


def main() -> int:
    queries = json.load(sys.stdin)
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    answers = []
    for query in queries:
        with contextlib.redirect_stdout(io.StringIO()):  # the tool prints progress
            answers.append(answer(query))
        print(f"  aiconfigurator: {query['id'][:60]}: {answers[-1]}", file=sys.stderr, flush=True)
    json.dump(answers, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
