"""What `serve` runs for each spelling of a command, and what it refuses to run."""

from __future__ import annotations

import pytest

from servetune.errors import UsageError
from servetune.launch.launcher import launch_argv
from servetune.vllm.serve_command import parse_text


def test_vllm_serve_runs_with_the_chosen_executable() -> None:
    cmd = parse_text("vllm serve Qwen/Qwen3-8B --max-model-len 4096 --enforce-eager")
    assert launch_argv(cmd, "/opt/vllm") == [
        "/opt/vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "4096", "--enforce-eager",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("docker run --gpus all vllm/vllm-openai:v0.8.5 --model Qwen/Qwen3-8B", "docker"),
        (  # the offline benchmark builds its own engine: there is no server to watch
            "python benchmarks/benchmark_throughput.py --backend vllm --input-len 512 "
            "--output-len 128 --model meta-llama/Llama-2-7b-chat-hf",
            "offline benchmark",
        ),
        ("vllm bench throughput --model Qwen/Qwen3-8B --input-len 64", "offline benchmark"),
    ],
)
def test_what_is_no_vllm_serve_is_refused_with_a_reason(text: str, says: str) -> None:
    cmd = parse_text(text, version="0.6.3" if "benchmarks/" in text else None)
    with pytest.raises(UsageError) as caught:
        launch_argv(cmd, "/opt/vllm")
    assert says in str(caught.value)
