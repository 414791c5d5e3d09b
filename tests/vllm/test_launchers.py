"""The ways a server or an engine is started that are not `vllm serve` itself: interpreter options
before `-m`, launcher words before the interpreter, `python -m vllm.entrypoints.cli.main`, and
vLLM's offline benchmarks, whose engine flags a review can judge (bench_args, read from each
release's benchmarks/*.py and vllm/benchmarks/*.py by scripts/build_bench_flags.py).

The commands are the corpus's fit records (tests/data/corpus/memory.json) or spelled as vLLM's
docs spell them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.errors import CommandParseError
from servetune.vllm import bench_args
from servetune.vllm.serve_command import parse_text, render

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


def fit_memory_command(record_id: str) -> str:
    records = json.loads((CORPUS / "memory.json").read_text(encoding="utf-8"))["records"]
    (record,) = [r for r in records if r["id"] == record_id]
    assert record["split"] == "fit"
    return str(record["command"])


# --- interpreter options and launchers ----------------------------------------------------------


def test_interpreter_options_before_the_module_are_pythons() -> None:
    # vllm-2136 (fit): `python -O -u -m vllm.entrypoints.openai.api_server --model=... \`
    cmd = parse_text(fit_memory_command("vllm-2136-codellama13b-2x4090-v024"), version="0.4.1")
    assert cmd.form == "api-server"
    assert cmd.prefix == ("python", "-O", "-u", "-m", "vllm.entrypoints.openai.api_server")
    assert cmd.model == "TheBloke/CodeLlama-13B-Instruct-fp16"
    assert cmd.args["--tensor-parallel-size"] == "2"
    assert cmd.args["--max-num-seqs"] == "16"
    assert [i.kind for i in cmd.issues] == []


@pytest.mark.parametrize(
    "start",
    [
        "python3.11 -OO -m",
        "python -W ignore -X importtime -m",
        "python -Wignore -m",
        "python -um",
        "python -B -mvllm.entrypoints.openai.api_server",
        "/opt/venv/bin/python3 -u -m",
        "nohup python -u -m",
        "exec /home/u/.venvs/x/bin/python -m",
        "env CUDA_VISIBLE_DEVICES=0,1 python -u -m",
        "uv run --with bitsandbytes python -u -m",
    ],
)
def test_the_api_server_module_after_any_interpreter_start(start: str) -> None:
    module = "" if start.endswith("api_server") else " vllm.entrypoints.openai.api_server"
    cmd = parse_text(f"{start}{module} --model org/m --tensor-parallel-size 2", version="0.6.6")
    assert cmd.form == "api-server"
    assert cmd.model == "org/m"
    assert dict(cmd.args) == {"--tensor-parallel-size": "2"}
    assert cmd.issues == ()


def test_the_environment_before_the_interpreter_is_the_servers() -> None:
    cmd = parse_text("CUDA_VISIBLE_DEVICES=0,1 python -O -m vllm.entrypoints.openai.api_server")
    assert cmd.env == {"CUDA_VISIBLE_DEVICES": "0,1"}


def test_the_cli_module_serve_is_vllm_serve() -> None:
    # vLLM's own hint: `python -m vllm.entrypoints.cli.main bench throughput --help` (0.10.2+).
    cmd = parse_text("python -m vllm.entrypoints.cli.main serve Qwen/Qwen3-8B --max-model-len 8k")
    assert cmd.form == "vllm-serve"
    assert cmd.model == "Qwen/Qwen3-8B"
    assert cmd.args == {"--max-model-len": "8k"}


@pytest.mark.parametrize(
    "text",
    [
        "python -c 'print(1)' --model org/m",
        "python -m ochat.serving.openai_api_server --model openchat/openchat_3.5",
        "python openai_api_server.py",
        "vllm bench serve --model org/m --num-prompts 10",
    ],
)
def test_other_programs_are_still_no_server(text: str) -> None:
    with pytest.raises(CommandParseError):
        parse_text(text)


# --- vLLM's offline benchmarks ------------------------------------------------------------------


def test_benchmark_throughput_of_0_6_3_reviews_the_engine_settings_it_spells() -> None:
    # llmtracker MI300X (fit): 0.6.3's script spells -tp and --model itself, passes them to LLM().
    text = fit_memory_command("llmtracker-mi300x-llama31-405b-bf16-tp8-v063")
    cmd = parse_text(text, version="0.6.3")
    assert cmd.form == "bench"
    assert cmd.model == "meta-llama/Llama-3.1-405B-Instruct"
    assert cmd.args == {"--tensor-parallel-size": "8"}
    assert cmd.issues == ()  # --backend, --input-len, --output-len are the script's
    assert cmd.prefix[-6:] == ("--backend", "vllm", "--input-len", "512", "--output-len", "128")
    assert cmd.env == {"TORCH_BLAS_PREFER_HIPBLASLT": "0"}


def test_the_0_6_3_script_refuses_an_engine_flag_it_does_not_spell() -> None:
    text = "python benchmarks/benchmark_throughput.py --model org/m --max-num-seqs 8"
    assert [(i.kind, i.token) for i in parse_text(text, version="0.6.3").issues] == [
        ("unknown-flag", "--max-num-seqs")
    ]
    # From 0.6.4 the script takes every engine flag (EngineArgs.add_cli_args).
    assert parse_text(text, version="0.6.4").issues == ()


def test_benchmark_throughput_with_engine_args_keeps_its_own_words() -> None:
    # vllm PR 10927 (fit), run in December 2024 on main.
    text = fit_memory_command("vllm-pr10927-dsv2-lite-fp16-h100-before-mla")
    cmd = parse_text(text, version="0.6.4.post1")
    assert cmd.issues == ()
    assert cmd.model == "deepseek-ai/DeepSeek-V2-Lite-Chat"
    assert cmd.args == {
        "--trust-remote-code": True,
        "--enforce-eager": True,
        "--max-model-len": "8192",
        "--dtype": "float16",
    }
    spelled = render(cmd, cmd.args, cmd.order)
    assert spelled.startswith(
        "python benchmark_throughput.py --input-len 1000 --output-len 100 --num-prompts 200"
    )
    assert "--model deepseek-ai/DeepSeek-V2-Lite-Chat" in spelled


@pytest.mark.parametrize(
    ("text", "own"),
    [
        (
            "vllm bench throughput --model Qwen/Qwen3-8B --input-len 1024 --output-len 2048",
            ("--input-len", "1024", "--output-len", "2048"),
        ),
        (
            "vllm bench latency --model Qwen/Qwen3-8B --batch-size 8 --num-iters 3 -tp 2",
            ("--batch-size", "8", "--num-iters", "3"),
        ),
        (
            "python benchmarks/benchmark_latency.py --model Qwen/Qwen3-8B --batch-size 8 -tp 2",
            ("--batch-size", "8"),
        ),
    ],
)
def test_vllm_bench_reads_the_engine_flags(text: str, own: tuple[str, ...]) -> None:
    cmd = parse_text(text, version="0.10.1")
    assert cmd.form == "bench"
    assert cmd.model == "Qwen/Qwen3-8B"
    assert cmd.issues == ()
    assert cmd.prefix[-len(own) :] == own
    assert "--input-len" not in cmd.args and "--batch-size" not in cmd.args


def test_a_script_that_moved_reads_as_the_subcommand_it_names() -> None:
    # 0.10.2's benchmarks/benchmark_throughput.py only prints "use vllm bench throughput".
    moved = bench_args.options("benchmark_throughput.py", "0.10.2")
    assert moved == bench_args.options("bench throughput", "0.10.2")
    assert moved is not None and moved.engine_args
    cmd = parse_text("python benchmarks/benchmark_throughput.py --model m/x --num-prompts 5")
    assert cmd.issues == ()


def test_the_bench_tables_cover_every_program_release_by_release() -> None:
    for program in bench_args.PROGRAMS:
        found = bench_args.options(program, "0.33.0")
        assert found is not None and found.engine_args, program
    old = bench_args.options("benchmark_throughput.py", "0.6.3")
    assert old is not None and not old.engine_args
    assert {"--input-len", "--backend", "-tp"} <= set(old.flags)


def test_a_benchmark_run_in_a_container_that_runs_what_follows_its_image() -> None:
    text = (
        "docker run --gpus all rocm/vllm:latest python3 -u benchmarks/benchmark_throughput.py "
        "--model org/m --input-len 512 -tp 2"
    )
    cmd = parse_text(text, version="0.8.5")
    assert cmd.form == "docker"
    assert cmd.issues == ()
    assert cmd.args == {"--tensor-parallel-size": "2"}
    assert cmd.prefix[-2:] == ("--input-len", "512")


def test_vllm_bench_after_vllms_own_image_meets_its_serve_entrypoint() -> None:
    text = "docker run --gpus all vllm/vllm-openai:v0.9.2 vllm bench throughput --model org/m"
    assert [i.kind for i in parse_text(text).issues] == ["unknown-flag"]
