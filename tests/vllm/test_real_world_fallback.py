"""benchmarks/real_world.py: a record whose command names no command is reviewed from the
configuration vLLM logged in its quote, the same rule for every record; figures vLLM reported
after starting are never read as inputs."""

from __future__ import annotations

from types import ModuleType

from repo_scripts import load

from servetune.review.check import Report

QUOTE = (
    "INFO 10-07 09:54:22 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: "
    "model='meta-llama/Llama-2-7b-chat-hf', tokenizer='meta-llama/Llama-2-7b-chat-hf', "
    "dtype=torch.float16, max_seq_len=4096, tensor_parallel_size=1, enforce_eager=False, seed=0\n"
    "INFO 10-07 09:55:00 gpu_executor.py:122] # GPU blocks: 20186, # CPU blocks: 512\n"
    "INFO 10-07 09:55:00 gpu_executor.py:126] Maximum concurrency for 4096 tokens per request: 78.85x"
)


def real_world() -> ModuleType:
    return load("benchmarks/real_world.py")


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


def test_a_model_check_cannot_read_here_is_the_checkpoint_the_record_names() -> None:
    """A shell variable or a local path is read on the user's machine (its config.json): the
    memory score reviews the Hub checkpoint the record names in its place."""
    bench = real_world()
    record = {
        "command": 'python -m vllm.entrypoints.openai.api_server --model "$MODEL_ID"',
        "gpus": "1xRTX-3090-24GB",
        "model": "NousResearch/Hermes-3-Llama-3.1-8B",
        "quote": "",
    }
    report = bench._memory_review(record)
    assert isinstance(report, Report)
    assert report.command.model == "NousResearch/Hermes-3-Llama-3.1-8B"
    assert report.model is not None


def test_a_model_check_reads_is_kept_whatever_the_record_says() -> None:
    bench = real_world()
    record = {
        "command": "vllm serve meta-llama/Llama-3.1-8B-Instruct",
        "gpus": "1xH100",
        "model": "someone/Another-Model (a note)",
        "quote": "",
    }
    report = bench._memory_review(record)
    assert isinstance(report, Report)
    assert report.command.model == "meta-llama/Llama-3.1-8B-Instruct"
    # a record whose `model` is itself a path names no checkpoint
    local = {**record, "command": "vllm serve /models/x", "model": "/models/x (local)"}
    unresolved = bench._memory_review(local)
    assert isinstance(unresolved, Report)
    assert unresolved.command.model == "/models/x"
