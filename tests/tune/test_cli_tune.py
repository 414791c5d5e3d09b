"""`servetune tune` on the command line: usage errors exit 2, the summary, exit 1 when nothing
met the targets (the search itself runs on a fake trial runner here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.cli.main import main
from servetune.tune import search
from servetune.tune.capacity import Capacity
from servetune.tune.limit import Limit
from servetune.tune.trial import EventSink, TrialResult, TrialSpec

COMMAND = ["--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-num-batched-tokens", "256"]


def capacity_by_budget(spec: TrialSpec, _: EventSink) -> TrialResult:
    """10 users with a 256-token step budget, 30 from 512 on (no server)."""
    users = 10 if spec.flags["--max-num-batched-tokens"] == "256" else 30
    found = Capacity(users, users + 1, 50.0 * users, users / 4, 0.97)
    limit: Limit = "max-num-batched-tokens" if users == 10 else "compute"
    return TrialResult(spec.index, spec.flags, "ok", found, limit, None, started=True)


def base(tmp_path: Path) -> list[str]:
    return [
        "tune",
        "--vllm",
        "/bin/true",
        "--gpus",
        "1xA100-80GB",
        "--slo",
        "ttft:2000",
        "--slo",
        "tpot:50",
        "--output",
        str(tmp_path / "out"),
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--slo", "ttfb:100"], "bad --slo item"),
        (["--slo-percentile", "100"], "--slo-percentile"),
        (["--knob", "max-num-seqs"], "FLAG=V1,V2"),
        (["--gpus", "3xNoSuchGPU"], "error:"),
        (["--max-starts", "0"], "--max-starts"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main([*base(tmp_path), *extra, *COMMAND]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_no_command_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(base(tmp_path)) == 2
    assert "no command to tune" in capsys.readouterr().err
    given = tmp_path / "cmd.txt"
    given.write_text("vllm serve m\n")
    assert main([*base(tmp_path), "--file", str(given), *COMMAND]) == 2
    assert "not both" in capsys.readouterr().err


def _with(runner: object, monkeypatch: pytest.MonkeyPatch) -> None:
    real = search.run_tune

    def fake_tune(
        config: search.TuneConfig, runner_: object = None, on_event: EventSink = print, **_: object
    ) -> search.TuneResult:
        return real(config, runner, on_event)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "run_tune", fake_tune)


def test_text_summary_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _with(capacity_by_budget, monkeypatch)
    pasted = tmp_path / "cmd.txt"  # a command copied from a chat, continuation and all
    pasted.write_text(
        "$ vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ \\\n  --max-num-batched-tokens 256\n"
    )
    assert main([*base(tmp_path), "--lang", "zh-TW", "--file", str(pasted)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("你的指令：目標內 10 位使用者")
    assert "--max-num-batched-tokens: 256 -> 512" in out.out
    assert "trial 2 (at most 12 starts): --max-num-batched-tokens 512" in out.err
    doc = json.loads((tmp_path / "out" / "tune.json").read_text())
    assert doc["best"]["capacity"]["max_concurrency"] == 30
    assert (tmp_path / "out" / "report.html").is_file()


def test_nothing_met_the_targets_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unreachable(spec: TrialSpec, _: EventSink) -> TrialResult:
        return TrialResult(
            spec.index,
            spec.flags,
            "slo-unreachable",
            Capacity(0, 1, None, None, 0.9),
            "slo-unreachable",
            None,
            started=True,
        )

    _with(unreachable, monkeypatch)
    assert main([*base(tmp_path), "--format", "json", *COMMAND]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["best"] is None and doc["baseline"]["capacity"] is None
    assert doc["trials"][0]["status"] == "slo-unreachable"
    assert doc["next_step"].startswith("No configuration met the targets")
