"""Spellings vLLM's parser accepts beyond the flag tables, and how the model is given, by release.

The facts come from each release's source (FlexibleArgumentParser, the serve subcommand, the
image's entrypoint); tests/vllm/test_parser_against_vllm.py checks the prefix cases against the
real 0.32 parser.
"""

from __future__ import annotations

import pytest

from servetune.vllm.serve_command import parse_text


def kinds(text: str, version: str) -> list[str]:
    return [i.kind for i in parse_text(text, version=version).issues]


@pytest.mark.parametrize(
    ("written", "flag", "value"),
    [
        ("--gpu-memory-util 0.5", "--gpu-memory-utilization", "0.5"),
        ("--max-num-seq 8", "--max-num-seqs", "8"),
        ("--max_model 4096", "--max-model-len", "4096"),
        ("--tensor-parallel=2", "--tensor-parallel-size", "2"),
        ("--enable-prefix", "--enable-prefix-caching", True),
        ("--no-enable-prefix", "--enable-prefix-caching", False),
        ("-qawq", "--quantization", "awq"),
        ("-t 2", "--tensor-parallel-size", "2"),
    ],
)
def test_unambiguous_abbreviations_are_the_full_flag(
    written: str, flag: str, value: str | bool
) -> None:
    cmd = parse_text(f"vllm serve m {written}", version="0.33.0")
    assert cmd.issues == ()
    assert cmd.args == {flag: value}


def test_an_ambiguous_abbreviation_is_an_error_with_its_candidates() -> None:
    cmd = parse_text("vllm serve m --max-num 8 --port 8001", version="0.33.0")
    (issue,) = cmd.issues
    assert issue.kind == "ambiguous-flag"
    assert issue.detail is not None
    assert "--max-num-seqs" in issue.detail.split(", ")
    assert "--max-num-batched-tokens" in issue.detail.split(", ")
    assert cmd.args == {"--port": "8001"}  # its value is skipped, the rest still read


def test_candidates_depend_on_the_release() -> None:
    old = parse_text("vllm serve m --max-num 8", version="0.6.6").issues[0].detail
    new = parse_text("vllm serve m --max-num 8", version="0.33.0").issues[0].detail
    assert old == "--max-num-batched-tokens, --max-num-seqs"
    assert new is not None and len(new.split(", ")) > 2


def test_short_prefix_of_one_short_option() -> None:
    cmd = parse_text("vllm serve /models/x --served-model qwen -p 2", version="0.6.5")
    assert cmd.issues == ()
    assert cmd.args["--pipeline-parallel-size"] == "2"


def test_o3_is_compilation_config_before_0_12_and_optimization_level_after() -> None:
    assert parse_text("vllm serve m -O3", version="0.11.0").args == {"-O": "3"}
    assert parse_text("vllm serve m -O3", version="0.12.0").args == {"--optimization-level": "3"}
    assert parse_text("vllm serve m -O 2", version="0.33.0").args == {"--optimization-level": "2"}
    assert kinds("vllm serve m -O3", "0.6.4") == ["flag-too-new"]  # -O arrived in 0.6.5


def test_dotted_keys_build_the_json_option_from_0_9() -> None:
    text = "vllm serve m --compilation-config.mode 3 --compilation_config.cudagraph_capture_sizes=[1,2]"
    cmd = parse_text(text, version="0.33.0")
    assert cmd.issues == ()
    assert cmd.text("--compilation-config") == '{"mode": 3, "cudagraph_capture_sizes": [1, 2]}'
    assert "unknown-flag" in kinds("vllm serve m --compilation-config.level 3", "0.8.5")


def test_python_path_to_api_server_script() -> None:
    cmd = parse_text(
        "$ python3 vllm/entrypoints/openai/api_server.py --model Qwen/Qwen2.5-7B-Instruct",
        version="0.6.6",
    )
    assert (cmd.form, cmd.model, cmd.issues) == ("api-server", "Qwen/Qwen2.5-7B-Instruct", ())


@pytest.mark.parametrize(
    ("version", "default"),
    [("0.8.3", "facebook/opt-125m"), ("0.9.2", "facebook/opt-125m"), ("0.10.0", "Qwen/Qwen3-0.6B")],
)
def test_no_model_reviews_the_release_default(version: str, default: str) -> None:
    cmd = parse_text("vllm serve --max-model-len 4096", version=version)
    assert (cmd.model, cmd.model_default) == (default, True)
    assert [i.kind for i in cmd.issues] == ["default-model"]
    api = parse_text("python -m vllm.entrypoints.openai.api_server --port 8000", version=version)
    assert api.model == default


def test_before_0_8_3_vllm_serve_needs_the_model_first() -> None:
    assert kinds("vllm serve --max-model-len 4096", "0.8.2") == ["model-required"]
    assert kinds("vllm serve --model m", "0.6.6") == ["model-required"]
    assert kinds("vllm serve --port 1 m", "0.6.6") == []  # positional, after an option
    assert kinds("python -m vllm.entrypoints.openai.api_server --model m", "0.6.6") == []


def test_model_flag_refused_after_vllm_serve_from_0_8_3_to_0_11_0() -> None:
    assert kinds("vllm serve --model m", "0.8.5") == ["model-required"]
    assert kinds("vllm serve --model m", "0.11.1") == []
    assert kinds("vllm serve --model=m", "0.10.0") == []  # only the bare word was refused


def test_0_9_0_hides_model_flag_from_vllm_serve() -> None:
    cmd = parse_text("vllm serve --model=m", version="0.9.0")
    (issue,) = [i for i in cmd.issues if i.kind == "ambiguous-flag"]
    assert issue.detail == "--model-impl, --model-loader-extra-config"
    assert kinds("python -m vllm.entrypoints.openai.api_server --model m", "0.9.0") == []
    assert kinds("vllm serve --model=m", "0.9.1") == []


def test_served_model_name_needs_the_model_first_from_0_20() -> None:
    assert kinds("vllm serve --served-model-name q", "0.20.0") == [
        "model-required",
        "default-model",
    ]
    assert kinds("vllm serve --served-model-name q", "0.19.1") == ["default-model"]
    assert kinds("vllm serve m --served-model-name q", "0.33.0") == []
    assert kinds("vllm serve --model m --served-model-name q", "0.33.0") == []


def test_docker_image_entrypoint_by_release() -> None:
    old = "docker run --gpus all vllm/vllm-openai:v0.11.0 Qwen/Qwen3-8B --port 8000"
    assert kinds(old, "0.11.0") == ["unknown-flag", "default-model"]  # api_server: stray model
    new = "docker run --gpus all vllm/vllm-openai:v0.12.0 Qwen/Qwen3-8B --port 8000"
    assert kinds(new, "0.12.0") == []
    twice = "docker run vllm/vllm-openai:latest vllm serve Qwen/Qwen3-8B"
    assert kinds(twice, "0.33.0") == ["unknown-flag"]


def test_repeated_entrypoint_is_explained_as_such() -> None:
    from servetune.review.check import CheckOptions, check_text

    options = CheckOptions(gpus="1xH100", vllm_version="0.17.1", detect_hardware=False)
    report = check_text("docker run vllm/vllm-openai:latest vllm serve Qwen/Qwen3-8B", options)
    (finding,) = [f for f in report.findings if f.rule == "unknown-flag"]
    assert "image name" in finding.title.text()


# vLLM's ROCm install docs (docs/getting_started/installation/gpu.rocm.inc.md, 0.12 and later):
# docker's device and group options before the image, the model after it.
ROCM_DOCS = """docker run --rm \\
    --group-add=video \\
    --cap-add=SYS_PTRACE \\
    --security-opt seccomp=unconfined \\
    --device /dev/kfd \\
    --device /dev/dri \\
    -v ~/.cache/huggingface:/root/.cache/huggingface \\
    --env "HF_TOKEN=$HF_TOKEN" \\
    -p 8000:8000 \\
    --ipc=host \\
    vllm/vllm-openai-rocm:latest \\
    --model Qwen/Qwen3-0.6B"""


def test_docker_options_of_any_image_are_dockers() -> None:
    cmd = parse_text(ROCM_DOCS, version="0.12.0")
    assert cmd.model == "Qwen/Qwen3-0.6B"
    assert cmd.issues == ()
    spaced = ROCM_DOCS.replace("--group-add=video", "--group-add video --privileged")
    assert parse_text(spaced, version="0.12.0").issues == ()


# The tag is AMD's (rocm/vllm on Docker Hub, quoted in a public vllm_container.sh template).
def test_an_image_without_vllms_entrypoint_runs_the_command_after_it() -> None:
    amd = (
        "docker run -it --network=host --group-add=video --ipc=host --cap-add=SYS_PTRACE "
        "--device /dev/kfd --device /dev/dri rocm/vllm:rocm6.3.1_mi300_ubuntu22.04_py3.12_vllm_0.6.6 "
        "vllm serve Qwen/Qwen3-8B -tp 2"
    )
    cmd = parse_text(amd, version=None)
    assert (cmd.model, cmd.args.get("--tensor-parallel-size"), cmd.issues) == (
        "Qwen/Qwen3-8B",
        "2",
        (),
    )
    assert cmd.version == "0.6.6"  # the release inside the tag (a real ROCm image tag)
    python_m = amd.replace(
        "vllm serve Qwen/Qwen3-8B",
        "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B",
    )
    assert parse_text(python_m, version="0.6.6").model == "Qwen/Qwen3-8B"
    wrapped = amd.replace(
        "vllm serve Qwen/Qwen3-8B -tp 2", "bash -c 'vllm serve Qwen/Qwen3-8B -tp 2'"
    )
    assert parse_text(wrapped, version="0.6.6").args.get("--tensor-parallel-size") == "2"


def test_podman_reads_as_docker() -> None:
    cmd = parse_text(
        "podman run --device nvidia.com/gpu=all vllm/vllm-openai:v0.12.0 Qwen/Qwen3-8B",
        version=None,
    )
    assert (cmd.form, cmd.model, cmd.version) == ("docker", "Qwen/Qwen3-8B", "0.12.0")


# vLLM's own startup line, as pasted in noonghunna/club-3090#294 (corpus record
# club3090-294-qwen36-27b-autoround-2x3090-tp2, split fit).
LOGGED = (
    "(APIServer pid=1) INFO 06-01 09:45:34 [utils.py:278] non-default args: {'model_tag': "
    "'~/.cache/huggingface/qwen3.6-27b-autoround-int4', 'chat_template': "
    "'/etc/qwen-froggeric-chat-template.jinja', 'default_chat_template_kwargs': "
    "{'enable_thinking': False}, 'enable_auto_tool_choice': True, 'tool_call_parser': "
    "'qwen3_coder', 'host': '0.0.0.0', 'model': '~/.cache/huggingface/qwen3.6-27b-autoround-int4', "
    "'trust_remote_code': True, 'dtype': 'float16', 'max_model_len': 262144, 'quantization': "
    "'auto_round', 'served_model_name': ['qwen3.6-27b-autoround'], 'tensor_parallel_size': 2, "
    "'kv_cache_dtype': 'fp8_e5m2', 'max_num_seqs': 2, 'speculative_config': {'method': 'mtp', "
    "'num_speculative_tokens': 3}}"
)


def test_vllms_logged_arguments_read_as_the_command() -> None:
    cmd = parse_text(LOGGED, version="0.21.0")
    assert cmd.model == "~/.cache/huggingface/qwen3.6-27b-autoround-int4"
    assert cmd.args["--tensor-parallel-size"] == "2"
    assert cmd.args["--trust-remote-code"] is True
    assert cmd.args["--served-model-name"] == ("qwen3.6-27b-autoround",)
    assert cmd.args["--speculative-config"] == '{"method": "mtp", "num_speculative_tokens": 3}'
    assert "--model" not in cmd.args  # the same model twice (model_tag and model) is one model


def test_a_logged_line_cut_short_keeps_its_whole_entries() -> None:
    cut = LOGGED.split(", 'kv_cache_dtype'", maxsplit=1)[0] + ", 'kv_cac"
    cmd = parse_text(cut, version="0.21.0")
    assert cmd.args["--tensor-parallel-size"] == "2"
    assert "--kv-cache-dtype" not in cmd.args


def _corpus_command(record_id: str) -> str:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "data" / "corpus" / "commands.json"
    records = json.loads(path.read_text(encoding="utf-8"))["records"]
    (record,) = [r for r in records if r["id"] == record_id]
    assert record["split"] == "fit"  # mechanisms are built on the fit part only
    return str(record["command"])


def test_a_compose_service_reads_as_its_docker_run() -> None:
    cmd = parse_text(_corpus_command("kyuz0-r9700-19-compose-rocm"), version=None)
    assert cmd.form == "docker" and cmd.version == "0.28.0"  # vllm/vllm-openai-rocm:v0.28.0
    assert cmd.args["--tensor-parallel-size"] == "2"
    assert cmd.args["--max-num-batched-tokens"] == "2048"
    assert cmd.env["HIP_VISIBLE_DEVICES"] == "0,1"


def test_a_compose_command_string_without_its_image() -> None:
    cmd = parse_text(_corpus_command("rtx6kpro7-compose-qwen35-397b-fp8-tp2pp3"), version="0.17.0")
    assert cmd.model == "/models/Qwen3.5-397B-A17B-FP8"
    assert cmd.args["--pipeline-parallel-size"] == "3"
    assert cmd.args["--default-chat-template-kwargs"] == '{"enable_thinking": false}'


def test_a_kubernetes_container_reads_as_its_docker_run() -> None:
    manifest = """
    containers:
      - name: vllm
        image: vllm/vllm-openai:v0.9.2
        command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        args: ["--model", "google/gemma-3-1b-it", "--tensor-parallel-size", "1"]
        env:
          - name: HF_HOME
            value: /cache
    """
    cmd = parse_text(manifest, version=None)
    assert (cmd.form, cmd.model, cmd.version) == ("docker", "google/gemma-3-1b-it", "0.9.2")
    assert cmd.env["HF_HOME"] == "/cache"


def test_a_dockerfile_cmd_reads_as_the_command() -> None:
    cmd = parse_text(_corpus_command("gh14452-triton-vllm-dockerfile-5090"), version="0.7.0")
    assert cmd.model == "tokyotech-llm/Llama-3.1-Swallow-8B-Instruct-v0.3"
    assert cmd.args["--max-num-seqs"] == "128"
    assert "--quantization" not in cmd.args  # a commented-out line of the CMD array


def test_continuation_prompts_of_a_pasted_terminal_are_not_redirections() -> None:
    cmd = parse_text(_corpus_command("gh27389-docker-imageid-serve"), version="0.9.0")
    assert cmd.args["--tensor-parallel-size"] == "2"
    assert cmd.env["CUDA_VISIBLE_DEVICES"] == "0,1"
