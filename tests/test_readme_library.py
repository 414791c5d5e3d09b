"""The README's library examples run as written.

Every ```python block of README.md runs, in order and in one namespace (a later block uses the
`servetune` and `report` of an earlier one), in a folder that holds what the examples name: a
recorded vLLM log as `vllm.log` and synthetic result files in `runs/before` and `runs/after`.
The one server the examples talk to, `http://127.0.0.1:8000`, is the tests' stub server: its
URL takes that one's place, the only word of the examples the test changes.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import servetune

from result_files import Setup, write_runs
from stub_server import StubBehaviour, ThreadedStub

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "data" / "vllm-logs" / "cpu-0.32-ready-then-sigterm.log"
SERVER = "http://127.0.0.1:8000"
MODEL = "Qwen/Qwen2.5-7B-Instruct"


def python_blocks(markdown: str) -> list[str]:
    """The text of each ```python block, in order."""
    return re.findall(r"^```python\n(.*?)^```$", markdown, flags=re.MULTILINE | re.DOTALL)


def _stage(folder: Path) -> None:
    shutil.copy(LOG, folder / "vllm.log")
    before = f"vllm serve {MODEL} --max-num-seqs 128"
    write_runs(folder / "runs" / "before", Setup(command=before), range(3))
    after = f"vllm serve {MODEL} --max-num-seqs 256"
    write_runs(folder / "runs" / "after", Setup(command=after), range(3, 6))


def test_the_block_reader_finds_python_blocks_only() -> None:
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = 2\n"]


def test_the_library_examples_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    assert sum(block.count(SERVER) for block in blocks) == 1
    _stage(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    with ThreadedStub(StubBehaviour(model=MODEL)) as stub:
        for block in blocks:
            code = compile(block.replace(SERVER, stub.base_url), "README.md", "exec")
            exec(code, namespace)  # noqa: S102  # running the documented examples is the test
    printed = capsys.readouterr().out
    report = namespace["report"]
    assert isinstance(report, servetune.Report) and report.errors
    assert printed.startswith(f"{report.errors[0].rule} ")
    run = namespace["run"]
    assert isinstance(run, servetune.BenchRun)
    assert isinstance(namespace["doctor"], servetune.DoctorReport)
    assert isinstance(namespace["result"], servetune.Comparison)
    verdict = namespace["verdict"]
    assert isinstance(verdict, servetune.Acceptance)
    assert printed.rstrip().splitlines()[-1].startswith(f"{verdict.accepted} [('hardware', ")
