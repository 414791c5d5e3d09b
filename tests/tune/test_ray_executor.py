"""Tune trials placed by Ray, on a private local Ray instance that declares 4 GPUs (Ray hands
out GPU ids it was told about, on a machine with none), with the scheduler stand-in
(tests/fakes/vllm_sim.py) as the server. Skipped without Ray (`pip install 'servetune[ray]'`).

Kept small for a busy 2-core machine: 4 trials with short loads, one Ray start per test (the
module takes ~70 s). Ray's own start dominates: 6-22 s on 2 busy cores; memory ~90 MB in this
process and ~800 MB in Ray's processes with four workers (raylet, GCS, agents, workers).
"""

from __future__ import annotations

import _thread
import itertools
import json
import os
import stat
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from servetune.cli.main import main
from servetune.judge.runs import load_side
from servetune.tune.capacity import Capacity
from servetune.tune.search import TuneConfig, _State
from servetune.tune.trial import TRIAL_FILE, Targets, TrialResult, TrialSpec

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'servetune[ray]'")

from servetune.tune.ray_executor import RayExecutor  # noqa: E402

import vllm_sim  # noqa: E402 - after the skip

START = [
    "vllm",
    "serve",
    "Qwen/Qwen2.5-7B-Instruct-AWQ",
    "--max-num-batched-tokens",
    "512",
    "--max-num-seqs",
    "16",
]
WORLD = {
    "SIM_KV_BYTES_PER_TOKEN": "860000",
    "SIM_PREFILL_TOKEN_MS": "0.005",
    "SIM_DECODE_SEQ_MS": "0.5",
    "SIM_SAFE_UTIL": "0.93",
}


def ray_processes_below(pid: int) -> list[int]:
    """Live (not zombie) Ray processes below `pid` (raylet, GCS, workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo += children.get(child, [])
    return [p for p in found if _is_ray(p)]


def _is_ray(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"/ray/" in cmdline or cmdline.startswith(b"ray::")


def with_marker(marker: str) -> list[int]:
    """Processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def nothing_left(marker: str, timeout_s: float = 20.0) -> tuple[list[int], list[int]]:
    end = time.monotonic() + timeout_s
    while True:
        left = (with_marker(marker), ray_processes_below(os.getpid()))
        if not any(left) or time.monotonic() > end:
            return left
        time.sleep(0.5)


def stand_in(folder: Path, marker: str) -> Path:
    """A `vllm` that runs the stand-in with a marker on its command line (to find it later)."""
    folder.mkdir(parents=True)
    path = folder / "vllm"
    sim = Path(vllm_sim.__file__).resolve()
    path.write_text(f'#!/bin/sh\nexec {sys.executable} {sim} "$@" --marker {marker}\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def argv(exe: Path, out: Path, *options: str) -> list[str]:
    return [
        "tune",
        "--vllm",
        str(exe),
        "--gpus",
        "4xA100-80GB",
        "--slo",
        "ttft:400",
        "--slo",
        "tpot:25",
        "--slo-percentile",
        "90",
        "--random-input-len",
        "128",
        "--random-output-len",
        "16",
        "--repeats",
        "1",
        "--max-starts",
        "4",
        "--knob",
        "max-num-batched-tokens=256,512,1024",
        "--knob",
        "max-num-seqs=16,32",
        "--output",
        str(out),
        "--format",
        "json",
        *options,
        "--",
        *START,
    ]


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a["started_at"] < b["ended_at"] and b["started_at"] < a["ended_at"])


def reported_devices(trial_folder: Path) -> str:
    """The CUDA_VISIBLE_DEVICES the stand-in printed at its start."""
    log = (trial_folder / "vllm.log").read_text()
    line = next(x for x in log.splitlines() if x.startswith("CUDA_VISIBLE_DEVICES="))
    return line.partition("=")[2]


def test_trials_run_side_by_side_on_disjoint_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for key, value in WORLD.items():
        monkeypatch.setenv(key, value)  # Ray's workers inherit the stand-in's world
    marker = f"st-ray-{uuid.uuid4().hex[:10]}"
    exe, out = stand_in(tmp_path / "bin", marker), tmp_path / "run"
    code = main(argv(exe, out, "--executor", "ray", "--ray-address", "local"))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "asks Ray for 1 GPUs" in captured.err
    assert "trial 4 (at most 4 starts): probe: " in captured.err  # the workers' progress
    doc = json.loads(captured.out)
    assert doc == json.loads((out / "tune.json").read_text())
    trials = doc["trials"]
    assert len(trials) == 4 and doc["server_starts"] == 4
    folders = sorted((out / "trials").iterdir())
    assert len(folders) == 4
    by_flags = {
        json.dumps(json.loads((f / TRIAL_FILE).read_text())["flags"], sort_keys=True): f
        for f in folders
    }

    # every trial says where and when it ran; the GPUs are those the stand-in was given
    for trial in trials:
        folder = by_flags[json.dumps(trial["flags"], sort_keys=True)]
        assert trial["placement"]["cuda_visible_devices"] == reported_devices(folder)
        assert trial["placement"]["cuda_visible_devices"] in {"0", "1", "2", "3"}
        assert trial["placement"]["node"]
        assert 0 < trial["ended_at"] - trial["started_at"] < 600
    # the user's command ran alone, then the three proposals side by side on disjoint GPUs
    first, rest = trials[0], trials[1:]
    assert all(first["ended_at"] <= t["started_at"] for t in rest)
    pairs = [(a, b) for a, b in itertools.combinations(rest, 2) if overlap(a, b)]
    assert pairs, [(t["started_at"], t["ended_at"]) for t in rest]
    for a, b in pairs:
        assert a["placement"]["cuda_visible_devices"] != b["placement"]["cuda_visible_devices"]

    # the probes landed in the output directory, where compare reads them
    probes = [
        p["result_file"]
        for f in folders
        for p in json.loads((f / TRIAL_FILE).read_text())["probes"]
    ]
    assert probes and all(Path(p).is_relative_to(out) and Path(p).is_file() for p in probes)
    assert load_side([Path(probes[0])]).runs

    assert nothing_left(marker) == ([], [])  # no stand-in, no Ray process, on any "node"
    assert not ray.is_initialized()

    # resumable: the same command again reuses every trial, asking Ray for nothing
    ray_options = ("--executor", "ray", "--ray-address", "local")
    assert main(argv(exe, out, *ray_options)) == 0
    again = capsys.readouterr()
    assert "asks Ray" not in again.err and "reused" in again.err
    assert json.loads(again.out)["trials"] == trials
    # the local executor reads the directory as its own: the user's command is reused
    assert main(argv(exe, out, "--max-starts", "1")) == 0
    local = capsys.readouterr()
    assert "starting vLLM" not in local.err
    local_doc = json.loads(local.out)
    assert set(local_doc) == set(doc) and local_doc["trials"] == trials[:1]


# --- failures, without a server: a stand-in task ------------------------------------------------


def _spec(tmp_path: Path, name: str, seed: int, n: int = 0) -> TrialSpec:
    config = TuneConfig(
        argv=tuple(START),
        targets=Targets({"ttft": 400.0}),
        output=tmp_path,
        vllm="/bin/true",
        gpus="4xA100-80GB",
    )
    spec = _State(config, _unused, lambda _: None).prepare({}).spec
    return replace(spec, folder=tmp_path / name, seed=seed, flags={**spec.flags, "n": str(n)})


def _unused(spec: TrialSpec, _sink: Any) -> TrialResult:
    raise AssertionError(spec)


def _task_maker(scratch: str) -> Any:
    """A stand-in for `run_on_worker`, defined here so that Ray ships it by value: seed 1 kills
    its worker on the first attempt; seed 3 runs the real `run_on_worker` with a vllm program
    that does not exist on the first attempt; seed 2 keeps a "server" child until cancelled."""

    def task(spec: TrialSpec, _events: Any = None) -> dict[str, Any]:
        import os as _os
        import socket as _socket
        import subprocess as _subprocess
        import sys as _sys
        import time as _time
        from dataclasses import replace
        from pathlib import Path as _Path

        import ray as _ray

        here = _Path(scratch)
        if spec.seed == 1 and not (here / "died").exists():
            (here / "died").write_text("once")
            _os._exit(1)
        if spec.seed == 3 and not (here / "refused").exists():
            (here / "refused").write_text("once")
            from servetune.tune.ray_executor import run_on_worker

            return run_on_worker(replace(spec, argv=("/nonexistent/vllm", *spec.argv[1:])))
        if spec.seed == 2:
            child = _subprocess.Popen(
                [
                    _sys.executable,
                    "-c",
                    "import time; time.sleep(300)",
                    "st-ray-cancel-marker",
                    scratch,
                ]
            )
            (here / f"server-{child.pid}").write_text("")
            try:
                while True:
                    _time.sleep(0.2)
            finally:
                child.terminate()
                child.wait()
        found = Capacity(8, 9, 400.0, 2.0, 0.95)
        result = TrialResult(spec.index, spec.flags, "ok", found, "compute", None, started=True)
        return {
            "node": _socket.gethostname(),
            "node_id": _ray.get_runtime_context().get_node_id(),
            "devices": _os.environ.get("CUDA_VISIBLE_DEVICES", ""),
            "started_at": _time.time(),
            "ended_at": _time.time(),
            "result": result.to_json(),
            "files": {"probes/c0008-r0.json": b"{}"},
            "folder": "/elsewhere",
        }

    return task


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayExecutor]:
    scratch = tmp_path_factory.mktemp("ray-scratch")
    found = RayExecutor("local", gpus=4, task=_task_maker(str(scratch)))
    found.scratch = scratch  # type: ignore[attr-defined]
    yield found
    found.close()


def test_a_lost_worker_is_recorded_and_retried_once(executor: RayExecutor, tmp_path: Path) -> None:
    events: list[str] = []
    spec = _spec(tmp_path, "t1", seed=1)
    [result] = executor.run([spec], events.append)
    [lost] = executor.lost()
    assert lost.status == "lost" and lost.root_cause and "worker" in lost.root_cause.lower()
    assert result.status == "ok" and result.placement is not None
    assert result.placement.cuda_visible_devices in {"0", "1", "2", "3"}
    assert (tmp_path / "t1" / "probes" / "c0008-r0.json").read_text() == "{}"
    assert json.loads((tmp_path / "t1" / TRIAL_FILE).read_text())["placement"] is not None
    assert any("running it again elsewhere" in e for e in events)
    assert executor.room(1) == 4 and executor.room(2) == 2 and executor.room(8) == 1


def test_a_trial_that_cannot_run_on_its_node_is_retried(
    executor: RayExecutor, tmp_path: Path
) -> None:
    events: list[str] = []
    [result] = executor.run([_spec(tmp_path, "t3", seed=3)], events.append)
    [failed] = executor.lost()
    assert failed.status == "failed-start" and failed.placement is not None
    assert failed.root_cause and "/nonexistent/vllm" in failed.root_cause
    assert failed.root_cause.startswith(f"could not run the trial on {failed.placement.node}")
    assert result.status == "ok"


def test_a_trial_no_node_can_hold_fails_at_once(executor: RayExecutor, tmp_path: Path) -> None:
    spec = _spec(tmp_path, "big", seed=0)
    spec = replace(spec, argv=(*spec.argv, "--tensor-parallel-size", "8"))
    [result] = executor.run([spec], lambda _: None)
    assert result.status == "failed-start" and result.limit == "failed-start"
    assert result.root_cause == (
        "needs 8 GPUs on one node; the largest node of the Ray cluster has 4"
    )
    assert executor.lost() == []


def test_ctrl_c_stops_every_trial_server(executor: RayExecutor, tmp_path: Path) -> None:
    scratch: Path = executor.scratch  # type: ignore[attr-defined]
    specs = [_spec(tmp_path, f"c{i}", seed=2, n=i) for i in range(2)]

    def interrupt_when_both_run() -> None:
        end = time.monotonic() + 60
        while len(list(scratch.glob("server-*"))) < 2 and time.monotonic() < end:
            time.sleep(0.2)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_when_both_run, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        executor.run(specs, lambda _: None)
    pids = [int(p.name.partition("-")[2]) for p in scratch.glob("server-*")]
    assert len(pids) == 2
    end = time.monotonic() + 10
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < end:
        time.sleep(0.2)
    assert not [p for p in pids if Path(f"/proc/{p}").exists()]
    assert not with_marker("st-ray-cancel-marker")
    assert not any((tmp_path / s.folder.name / TRIAL_FILE).exists() for s in specs)
