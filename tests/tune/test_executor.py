"""Executors without Ray: the local executor's stamps and reuse, the side-by-side search on a
fake executor (several proposals at once, the budget, lost attempts, the interference check),
and the CLI's usage errors for the executor options."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from servetune.cli.main import main
from servetune.errors import MissingExtra, UsageError
from servetune.render import tune_report
from servetune.render.tune import summary_text
from servetune.tune import output, parallel
from servetune.tune.capacity import Capacity, Probe
from servetune.tune.executor import LocalExecutor, gpus_needed
from servetune.tune.ray_executor import check_address, import_ray
from servetune.tune.search import TuneConfig, run_tune
from servetune.tune.trial import EventSink, Placement, Targets, TrialResult, TrialSpec

START = ("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-num-batched-tokens", "256")
KNOBS = {"--max-num-batched-tokens": ("128", "256", "512", "1024"), "--max-num-seqs": ("64", "256")}


def capacity_of(flags: dict[str, str] | object) -> int:
    """The fake world: a bigger token budget carries more users, fewer seqs fewer."""
    assert isinstance(flags, dict)
    users = int(flags["--max-num-batched-tokens"]) // 16
    return users // 2 if flags["--max-num-seqs"] == "64" else users


def fake_result(spec: TrialSpec, throughput_scale: float = 1.0) -> TrialResult:
    users = capacity_of(dict(spec.flags))
    probe = Probe(
        users,
        0,
        40,
        0,
        {"ttft": 100.0},
        {"ttft": (0, 40)},
        50.0 * users,
        users / 4,
        2.0,
        None,
        True,
        0.99,
    )
    found = Capacity(users, users + 1, 50.0 * users * throughput_scale, users / 4, 0.97)
    return TrialResult(
        spec.index,
        spec.flags,
        "ok",
        found,
        "max-num-batched-tokens",
        None,
        (probe,),
        started=True,
        start_s=1.0,
        measure_s=2.0,
    )


def config(tmp_path: Path, max_starts: int = 6) -> TuneConfig:
    return TuneConfig(
        argv=START,
        targets=Targets({"ttft": 2000}, 99),
        output=tmp_path,
        vllm="/bin/true",
        gpus="4xA100-80GB",
        knobs=KNOBS,
        max_starts=max_starts,
    )


# --- the local executor -------------------------------------------------------------------------


def test_local_executor_stamps_where_and_when_and_saves_it(tmp_path: Path) -> None:
    ticks = iter([100.0, 160.5])
    calls: list[TrialSpec] = []

    def runner(spec: TrialSpec, _sink: EventSink) -> TrialResult:
        calls.append(spec)
        return fake_result(spec)

    executor = LocalExecutor(runner=runner, clock=lambda: next(ticks), node="gpu-box-1")
    result = run_tune(config(tmp_path, max_starts=1), runner=executor.run_one)
    trial = result.trials[0]
    assert trial.placement == Placement("gpu-box-1", "")
    assert (trial.started_at, trial.ended_at) == (100.0, 160.5)
    doc = result.to_json()
    assert doc["trials"][0]["placement"] == {"node": "gpu-box-1", "cuda_visible_devices": ""}
    assert doc["trials"][0]["started_at"] == 100.0 and doc["trials"][0]["ended_at"] == 160.5
    # trial.json carries the stamps, so a rerun reuses the trial without running it again
    again = LocalExecutor(runner=runner, clock=lambda: 0.0).run_one(calls[0], lambda _: None)
    assert len(calls) == 1
    assert again.placement == trial.placement and again.ended_at == 160.5


def test_local_executor_reports_the_gpus_its_server_gets(tmp_path: Path) -> None:
    spec = replace(_spec(tmp_path), env={"CUDA_VISIBLE_DEVICES": "2,3"})
    executor = LocalExecutor(runner=lambda s, _e: fake_result(s), node="n")
    assert executor.run_one(spec, lambda _: None).placement == Placement("n", "2,3")


def _spec(tmp_path: Path, *extra: str) -> TrialSpec:
    from servetune.tune.search import _State

    state = _State(
        replace(config(tmp_path), argv=(*START, *extra)),
        lambda s, e: fake_result(s),
        lambda _: None,
    )
    return state.prepare({}).spec


def test_gpus_needed_is_tp_times_pp_times_dp(tmp_path: Path) -> None:
    assert gpus_needed(_spec(tmp_path)) == 1
    spec = _spec(tmp_path, "-tp", "2", "--pipeline-parallel-size", "2", "--data-parallel-size=2")
    assert gpus_needed(spec) == 8


# --- the side-by-side search on a fake executor ------------------------------------------------


@dataclass
class FakeExecutor:
    """Room for `slots` trials at once; `lose` names a --max-num-batched-tokens value whose
    first attempt is lost; `beside_scale` scales the throughput of trials run beside others."""

    slots: int
    lose: str | None = None
    beside_scale: float = 1.0
    name: str = "fake"
    batches: list[list[TrialSpec]] = field(default_factory=list)
    per_node: bool = False
    _lost: list[TrialResult] = field(default_factory=list)

    def room(self, gpus: int) -> int:
        assert gpus == 1
        return 1 if self.per_node else self.slots

    def run(self, specs: Sequence[TrialSpec], on_event: EventSink) -> list[TrialResult]:
        self.batches.append(list(specs))
        scale = self.beside_scale if len(specs) > 1 else 1.0
        results = []
        for i, spec in enumerate(specs):
            if spec.flags["--max-num-batched-tokens"] == self.lose:
                self.lose = None
                self._lost.append(
                    TrialResult(
                        spec.index,
                        spec.flags,
                        "lost",
                        None,
                        None,
                        "the Ray worker was lost: NodeDiedError",
                    )
                )
            result = fake_result(spec, scale)
            results.append(
                replace(
                    result, placement=Placement("node-a", str(i)), started_at=10.0, ended_at=20.0
                )
            )
        return results

    def lost(self) -> list[TrialResult]:
        found, self._lost = self._lost, []
        return found

    def one_per_node(self) -> None:
        self.per_node = True

    def close(self) -> None:
        return None


def test_search_proposes_several_at_once_within_the_budget(tmp_path: Path) -> None:
    executor = FakeExecutor(slots=3)
    result = parallel.search(config(tmp_path, max_starts=5), executor)
    sizes = [len(b) for b in executor.batches]
    assert sizes[0] == 1  # the user's command runs alone first
    assert sizes[1] == 3  # then as many moves as fit: both directions of the budget, then seqs
    base = result.baseline.flags
    moved = [{f: v for f, v in s.flags.items() if v != base.get(f)} for s in executor.batches[1]]
    budgets = [m.get("--max-num-batched-tokens") for m in moved]
    assert "512" in budgets and "128" in budgets  # both directions of the limit's knob
    assert result.server_starts <= 5 and sum(sizes) <= 5
    assert result.best is not None and result.best.flags["--max-num-batched-tokens"] == "1024"
    assert [t.index for t in result.trials] == list(range(len(result.trials)))


def test_a_lost_attempt_is_a_trial_of_its_own_before_its_retry(tmp_path: Path) -> None:
    executor = FakeExecutor(slots=3, lose="512")
    result = parallel.search(config(tmp_path, max_starts=4), executor)
    statuses = [(t.status, t.flags["--max-num-batched-tokens"]) for t in result.trials]
    lost = statuses.index(("lost", "512"))
    assert ("ok", "512") in statuses[lost + 1 :]
    cause = result.trials[lost].root_cause
    assert cause and "NodeDiedError" in cause
    assert result.server_starts <= 4  # a lost attempt spends no start of the budget
    doc = result.to_json()
    assert doc["trials"][lost]["status"] == "lost"
    assert "lost" in tune_report.page(result)  # a row of the trials table
    assert "lost" in summary_text(result)


@pytest.mark.parametrize(("scale", "comparable"), [(0.99, True), (0.9, False)])
def test_interference_check_falls_back_to_one_trial_per_node(
    tmp_path: Path, scale: float, comparable: bool
) -> None:
    executor = FakeExecutor(slots=3, beside_scale=scale)
    result = parallel.search(config(tmp_path, max_starts=6), executor, interference_check=True)
    checked = result.interference
    assert checked is not None
    assert checked.difference_pct == pytest.approx((scale - 1) * 100)
    assert checked.comparable is comparable
    assert executor.per_node is not comparable
    beside = [s for s in executor.batches[1] if s.folder == tmp_path / parallel.BESIDE_FOLDER]
    assert len(beside) == 1 and dict(beside[0].flags) == dict(result.baseline.flags)
    assert len(executor.batches[1]) == 3  # two proposals beside the baseline's second run
    assert sum(len(b) for b in executor.batches) <= 6  # the check's start is one of --max-starts
    if not comparable:
        assert all(len(b) == 1 for b in executor.batches[2:])
    doc = result.to_json()
    assert doc["interference"]["comparable"] is comparable
    assert doc["interference"]["threshold_pct"] == 3.0
    page = tune_report.page(result, "zh-TW")
    assert ("not comparable" in page) is not comparable
    assert ("無法與單獨執行的數字比較" in page) is not comparable


def test_interference_check_without_room_says_so(tmp_path: Path) -> None:
    events: list[str] = []
    result = parallel.search(
        config(tmp_path, max_starts=3),
        FakeExecutor(slots=1),
        events.append,
        interference_check=True,
    )
    assert result.interference is None
    assert "interference check: not run (never room for two trials at once)" in events


def test_without_the_check_tune_json_has_no_interference(tmp_path: Path) -> None:
    result = parallel.search(config(tmp_path, max_starts=3), FakeExecutor(slots=2))
    assert "interference" not in result.to_json()


# --- options ------------------------------------------------------------------------------------


def test_ray_addresses() -> None:
    assert check_address("auto") == "auto"
    assert check_address("local") == "local"
    assert check_address("ray://head.example:10001") == "ray://head.example:10001"
    for bad in ("ray://head", "head:10001", "ray://:10001", ""):
        with pytest.raises(UsageError):
            check_address(bad)


def test_executor_ray_without_ray_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as when absent
    with pytest.raises(MissingExtra) as caught:
        import_ray()
    assert caught.value.message == "tune --executor ray needs the optional extra 'ray'"
    assert caught.value.hint == "pip install 'servetune[ray]'"


def _tune_argv(tmp_path: Path, *options: str) -> list[str]:
    return [
        "tune",
        "--vllm",
        "/bin/true",
        "--gpus",
        "1xA100-80GB",
        "--slo",
        "ttft:2000",
        "--output",
        str(tmp_path / "run"),
        *options,
        "--",
        *START,
    ]


def test_cli_executor_ray_without_ray_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(_tune_argv(tmp_path, "--executor", "ray", "--ray-address", "local")) == 2
    err = capsys.readouterr().err
    assert "pip install 'servetune[ray]'" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "options",
    [
        ("--parallel", "2"),
        ("--ray-address", "auto"),
        ("--interference-check",),
        ("--executor", "ray", "--ray-address", "ray://nohost"),
        ("--parallel", "0"),
    ],
)
def test_cli_executor_options_misused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: tuple[str, ...]
) -> None:
    with pytest.raises(SystemExit) as exited:
        sys.exit(main(_tune_argv(tmp_path, *options)))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()
    assert not (tmp_path / "run" / "tune.json").exists()


def test_tune_json_from_the_fake_runs_is_one_object(tmp_path: Path) -> None:
    result = parallel.search(config(tmp_path, max_starts=3), FakeExecutor(slots=2))
    doc = output.write_document(result)
    assert json.loads((tmp_path / "tune.json").read_text()) == doc
    assert all(t["placement"]["node"] == "node-a" for t in doc["trials"])
