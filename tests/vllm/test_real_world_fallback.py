"""benchmarks/real_world.py: a record whose command names no command is reviewed from the
configuration vLLM logged in its quote, the same rule for every record; figures vLLM reported
after starting are never read as inputs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from servetune.review.check import Report

ROOT = Path(__file__).resolve().parents[2]
QUOTE = (
    "INFO 10-07 09:54:22 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: "
    "model='meta-llama/Llama-2-7b-chat-hf', tokenizer='meta-llama/Llama-2-7b-chat-hf', "
    "dtype=torch.float16, max_seq_len=4096, tensor_parallel_size=1, enforce_eager=False, seed=0\n"
    "INFO 10-07 09:55:00 gpu_executor.py:122] # GPU blocks: 20186, # CPU blocks: 512\n"
    "INFO 10-07 09:55:00 gpu_executor.py:126] Maximum concurrency for 4096 tokens per request: 78.85x"
)


def real_world() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "real_world", ROOT / "benchmarks" / "real_world.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("real_world", module)
    spec.loader.exec_module(module)
    return module


def test_the_logged_configuration_stands_in_for_a_launcher_script() -> None:
    bench = real_world()
    record = {"command": "bash start.sh", "gpus": "1xMI300X", "vllm_version": "0.6.3"}
    report = bench._review_record({**record, "quote": QUOTE}, "quote")
    assert isinstance(report, Report)
    assert report.command.model == "meta-llama/Llama-2-7b-chat-hf"
    assert report.command.text("--max-model-len") == "4096"
    assert not any("block" in flag or "concurrency" in flag for flag in report.command.args)


def test_a_quote_without_a_logged_configuration_leaves_the_refusal() -> None:
    bench = real_world()
    record = {
        "command": "bash start.sh",
        "gpus": "1xMI300X",
        "quote": "GPU KV cache size: 9 tokens",
    }
    report = bench._review_record(record, "quote")
    assert isinstance(report, str)
    assert report.startswith("CommandParseError")
