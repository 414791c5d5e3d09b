"""NVIDIA's AIConfigurator as benchmarks/plan_accuracy.py's peer: the same published runs asked of
`aiconfigurator cli estimate` (its Python entry point, benchmarks/aiconfigurator_peer.py, run in
its own venv), scored against the same measured figures.

The venv (.venvs/aiconfigurator, `aiconfigurator==PINNED`) is made on first use, by this module,
never by `make test`. What the peer is asked for each record, from the same check report plan
answers from (so both see the corrected command where check corrected one):

- system: the GPU's row in the peer's systems that have a vLLM performance database (h100_sxm,
  h200_sxm, a100_sxm, l40s, b200_sxm); any other GPU (AMD, H20, H800, A800, consumer cards,
  PCIe parts) is a record it cannot answer;
- model: its own cached config when it ships the exact Hugging Face id, else the same
  config.json servetune's catalog holds (what the peer downloads from the Hub when online);
- parallelism: TP, PP and DP as the command sets them; an MoE model's experts split over TP x DP
  GPUs (moe_tp) without --enable-expert-parallel, whole experts per GPU (moe_ep) with it
  (vLLM's FusedMoEParallelConfig);
- load: the lengths that really ran (the same `Load` plan simulates), users = max concurrency
  capped by max_num_seqs per engine (the tool takes "max concurrent requests"), the request
  rate where the run had one.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servetune.plan import accuracy
from servetune.review.model import catalog

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venvs" / "aiconfigurator"
PYTHON = VENV / "bin" / "python"
RUNNER = ROOT / "benchmarks" / "aiconfigurator_peer.py"
CACHE = ROOT / ".cache" / "plan-peer-aiconfigurator.json"
PINNED = "aiconfigurator==0.12.0"
SYSTEMS = (  # servetune GPU name -> the peer's system (those with a vLLM database)
    (r"^H100-SXM", "h100_sxm"),
    (r"^H200-SXM", "h200_sxm"),
    (r"^A100-80GB-SXM", "a100_sxm"),
    (r"^L40S$", "l40s"),
    (r"^B200$", "b200_sxm"),
)
TIMEOUT_S = 1800


@dataclass(frozen=True)
class PeerAnswer:
    """The peer's figures for one record, or why it has none (`reason`)."""

    figures: dict[str, float]
    reason: str = ""
    mode: str = ""


def ensure_venv() -> str | None:
    """Create .venvs/aiconfigurator when missing; None when ready, else why not."""
    if PYTHON.is_file():
        return None
    print(f"  aiconfigurator: creating {VENV} with {PINNED} (a minute or two)", flush=True)
    steps = [
        [sys.executable, "-m", "venv", str(VENV)],
        [str(VENV / "bin" / "pip"), "install", "--quiet", PINNED],
    ]
    for step in steps:
        done = subprocess.run(step, check=False, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return f"{' '.join(step)} failed: {' | '.join(tail)}"
    return None


def system_of(case: accuracy.Case) -> str | None:
    machine = case.setup.report.hardware
    name = machine.spec.name if machine and machine.spec else ""
    return next((system for pattern, system in SYSTEMS if re.search(pattern, name)), None)


def _shipped_models() -> set[str]:
    got = subprocess.run(
        [str(PYTHON), "-c", "import aiconfigurator_core, pathlib; "
         "print(pathlib.Path(aiconfigurator_core.__file__).parent / 'model_configs')"],
        check=False, capture_output=True, text=True,
    )  # fmt: skip
    folder = Path(got.stdout.strip())
    names = (p.name.removesuffix("_config.json") for p in folder.glob("*_config.json"))
    return {n.replace("--", "/", 1) for n in names}


def _model_path(model_id: str, shipped: set[str], configs: Path) -> str | None:
    if model_id in shipped:
        return model_id
    config = catalog().get(model_id)
    if config is None:
        return None
    folder = configs / model_id.replace("/", "--")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(folder)


def query_of(case: accuracy.Case, model_path: str, system: str) -> dict[str, object]:
    report, load = case.setup.report, case.load
    s = report.settings
    tp, dp = s.tensor_parallel_size, max(s.data_parallel_size, 1)
    users = min(load.concurrency or load.num_prompts, load.num_prompts, s.max_num_seqs * dp)
    query: dict[str, object] = {
        "id": case.name, "model_path": model_path, "system": system,
        "isl": load.input_len, "osl": load.output_len, "concurrency": users,
        "rate": load.request_rate, "tp": tp, "pp": s.pipeline_parallel_size, "dp": dp,
    }  # fmt: skip
    if report.model is not None and report.model.is_moe:
        ep = bool(report.command.args.get("--enable-expert-parallel"))
        query.update(moe_tp=1 if ep else tp * dp, moe_ep=tp * dp if ep else 1)
    return query


def _key(query: dict[str, object]) -> str:
    body = {k: v for k, v in query.items() if k != "model_path"}
    body["model"] = Path(str(query["model_path"])).name
    text = json.dumps([PINNED, body], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _ask(queries: list[dict[str, object]]) -> dict[str, dict[str, Any]]:
    """The peer's answers by query key: from the cache (answers are deterministic for the
    pinned release and SILICON/HYBRID data), the rest asked in one child process."""
    cache: dict[str, dict[str, Any]] = {}
    if CACHE.is_file():
        cache = json.loads(CACHE.read_text(encoding="utf-8"))
    todo = [q for q in queries if _key(q) not in cache]
    if todo:
        print(f"  aiconfigurator: estimating {len(todo)} records (about 1-3 s each)", flush=True)
        done = subprocess.run(
            [str(PYTHON), str(RUNNER)], input=json.dumps(todo), capture_output=True,
            text=True, check=False, timeout=TIMEOUT_S,
        )  # fmt: skip
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-3:]
            raise RuntimeError(f"the peer's runner failed: {' | '.join(tail)}")
        for query, got in zip(todo, json.loads(done.stdout), strict=True):
            cache[_key(query)] = got
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_text(json.dumps(cache, indent=1), encoding="utf-8")
    return {_key(q): cache[_key(q)] for q in queries}


def answers(cases: Sequence[accuracy.Case]) -> dict[str, PeerAnswer] | str:
    """The peer's answer for each case (by name), or why the peer cannot run here at all."""
    problem = ensure_venv()
    if problem:
        return problem
    shipped = _shipped_models()
    out: dict[str, PeerAnswer] = {}
    queries: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="servetune-aic-") as tmp:
        for case in cases:
            system = system_of(case)
            model = case.setup.report.model
            path = _model_path(model.model_id, shipped, Path(tmp)) if model else None
            if system is None:
                out[case.name] = PeerAnswer({}, "GPU not in its vLLM systems")
            elif path is None:
                out[case.name] = PeerAnswer({}, "model not in its list nor the catalog")
            else:
                queries[case.name] = query_of(case, path, system)
        try:
            got = _ask(list(queries.values()))
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
            return str(exc)
    for name, query in queries.items():
        raw = got[_key(query)]
        if "error" in raw:
            first = str(raw["error"]).split(";")[0].split(":")[1].strip()
            out[name] = PeerAnswer({}, f"its estimate failed ({first})")
            continue
        figures = {
            "output_throughput": float(raw["output_throughput"]),
            "mean_tpot_ms": float(raw["tpot_ms"]),
            "mean_ttft_ms": float(raw["ttft_ms"]),
        }
        out[name] = PeerAnswer(figures, mode=str(raw.get("database_mode", "")))
    return out


def peer_errors(case: accuracy.Case, answer: PeerAnswer) -> dict[str, float]:
    return {
        m: answer.figures[m] / v - 1
        for m in accuracy.METRICS
        if (v := case.measured.get(m)) and v > 0 and m in answer.figures
    }


def _median(values: list[float]) -> str:
    finite = [abs(v) for v in values if math.isfinite(v)]
    return f"{100 * statistics.median(finite):4.0f}%" if finite else f"{'-':>5}"


def print_table(
    title: str,
    cases: Sequence[accuracy.Case],
    ours: dict[str, dict[str, float]],
    theirs: dict[str, PeerAnswer],
) -> None:
    """Per group: servetune's and the peer's median |error| on the records both answer."""
    print(f"\n{title}")
    head = "  ".join(f"{accuracy_short(m):>21}" for m in accuracy.METRICS)
    print(f"  {'group':12} {'both':>4}/{'ours':<4}  {head}")
    print(f"  {'':22}" + "  ".join(f"{'servetune':>10} {'AIC':>10}" for _ in accuracy.METRICS))
    groups = accuracy.every_kind(cases)
    for kind, members in groups.items():
        both = [c for c in members if theirs.get(c.name, PeerAnswer({})).figures]
        cells = []
        for metric in accuracy.METRICS:
            pairs = [
                (ours[c.name][metric], peer_errors(c, theirs[c.name])[metric])
                for c in both
                if metric in ours[c.name] and metric in peer_errors(c, theirs[c.name])
            ]
            mine = _median([p[0] for p in pairs])
            peer = _median([p[1] for p in pairs])
            cells.append(f"{mine:>7}({len(pairs):2d}) {peer:>10}")
        print(f"  {kind:12} {len(both):4d}/{len(members):<4}  " + "  ".join(cells))
    reasons: dict[str, int] = {}
    for case in cases:
        answer = theirs.get(case.name)
        if answer is not None and not answer.figures:
            reasons[answer.reason] = reasons.get(answer.reason, 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"    AIConfigurator cannot answer {count}: {reason}")
    hybrid = sum(1 for c in cases if theirs.get(c.name, PeerAnswer({})).mode == "HYBRID")
    if hybrid:
        print(f"    {hybrid} of its answers from HYBRID (no SILICON data for the model)")


def accuracy_short(metric: str) -> str:
    return {"output_throughput": "out tok/s", "mean_tpot_ms": "mean TPOT"}.get(metric, "mean TTFT")
