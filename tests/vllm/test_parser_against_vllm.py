"""servetune reads flag spellings the way the installed real vLLM parser does.

The probe runs inside the vLLM CPU venv (servetune never imports vllm): it builds `vllm serve`'s
own argument parser and parses each argv, reporting the values or argparse's error. Needs the
setup of tests/fakes/vllm_cpu.py; ~15 s (importing vLLM), no server started.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from servetune.vllm import flags as vllm_flags
from servetune.vllm.serve_command import parse_tokens

import vllm_cpu

pytestmark = pytest.mark.vllm

PROBE = r"""
import contextlib, io, json, sys
try:
    from vllm.utils.argparse_utils import FlexibleArgumentParser
except ImportError:
    from vllm.utils import FlexibleArgumentParser
try:
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
except ImportError:
    from vllm.entrypoints.openai.cli_args import make_arg_parser
import vllm
parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
out = {"version": vllm.__version__, "cases": []}
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = parser.parse_args(argv)
        values = {k: str(v) for k, v in vars(ns).items()}
        out["cases"].append({"values": values})
    except SystemExit as exc:
        out["cases"].append({"exit": exc.code, "error": err.getvalue().strip().splitlines()[-1]})
print("PROBE" + json.dumps(out))
"""

CASES = [
    ["m", "--gpu-memory-util", "0.5"],
    ["m", "--max-num-seq", "8"],
    ["m", "--enable-prefix"],
    ["m", "--no-enable-prefix"],
    ["m", "--max-num", "8"],
    ["m", "--enable"],
    ["m", "--max-model", "4096", "--tensor-parallel", "1"],
    ["m", "-O3"],
    ["m", "--compilation-conf.mode", "3"],
    ["m", "-p", "1", "-qfp8", "--served-model", "q"],
    ["m", "-t", "1"],
    [],
]
# argparse dest -> servetune flag, for the values compared
DESTS = {
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_num_seqs": "--max-num-seqs",
    "enable_prefix_caching": "--enable-prefix-caching",
    "max_model_len": "--max-model-len",
    "tensor_parallel_size": "--tensor-parallel-size",
    "optimization_level": "--optimization-level",
    "pipeline_parallel_size": "--pipeline-parallel-size",
    "quantization": "--quantization",
}


@pytest.fixture(scope="module")
def real() -> dict[str, object]:
    reason = vllm_cpu.available()
    if reason:
        pytest.skip(reason)
    python = vllm_cpu.VLLM_VENV / "bin" / "python"
    done = subprocess.run(
        [str(python), "-c", PROBE, json.dumps(CASES)],
        capture_output=True,
        text=True,
        timeout=300,
        env=vllm_cpu.vllm_env(),
        check=False,
    )
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("PROBE")), None)
    assert line is not None, done.stderr[-2000:]
    result: dict[str, object] = json.loads(line.removeprefix("PROBE"))
    return result


@pytest.mark.parametrize("case", range(len(CASES)))
def test_spelling_reads_as_vllm_reads_it(real: dict[str, object], case: int) -> None:
    version = str(real["version"]).split("+")[0]
    outcome = real["cases"][case]  # type: ignore[index]
    ours = parse_tokens(["vllm", "serve", *CASES[case]], version=version)
    errors = [i for i in ours.issues if i.kind not in ("default-model",)]
    if "exit" in outcome:
        (issue,) = errors
        assert issue.kind == "ambiguous-flag"
        listed = re.sub(r".*could match ", "", outcome["error"])
        assert set((issue.detail or "").split(", ")) == set(listed.split(", "))
        return
    assert errors == []
    values = outcome["values"]
    for dest, flag in DESTS.items():
        if flag in ours.args:
            written = ours.args[flag]
            assert values[dest] == str(written), (dest, values[dest], written)
    if not CASES[case]:
        assert ours.model == values["model"] == vllm_flags.default_model(version)
    if "--compilation-config" in ours.args:
        assert "VLLM_COMPILE: 3" in values["compilation_config"]
