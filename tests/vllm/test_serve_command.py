"""Every input form of a `vllm serve` command, and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from servetune.errors import CommandParseError, UsageError
from servetune.vllm.serve_command import parse_int, parse_text, parse_tokens


def test_positional_model_and_flags() -> None:
    cmd = parse_tokens(
        ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2"],
        version="0.33.0",
    )
    assert cmd.model == "Qwen/Qwen2.5-7B-Instruct"
    assert cmd.model_positional
    assert cmd.args == {"--tensor-parallel-size": "2"}
    assert cmd.issues == ()
    assert cmd.form == "vllm-serve"


def test_model_flag_equals_and_short_aliases_and_underscores() -> None:
    cmd = parse_text(
        "vllm serve --model=meta-llama/Llama-3.1-8B-Instruct -tp 2 -pp 1 --max_model_len=8192 -q fp8",
        version="0.33.0",
    )
    assert cmd.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert not cmd.model_positional
    assert cmd.integer("--tensor-parallel-size") == 2
    assert cmd.integer("--pipeline-parallel-size") == 1
    assert cmd.integer("--max-model-len") == 8192
    assert cmd.text("--quantization") == "fp8"
    assert cmd.issues == ()


def test_api_server_module_form() -> None:
    cmd = parse_text(
        "python3 -m vllm.entrypoints.openai.api_server --model mistralai/Mistral-7B-Instruct-v0.3 "
        "--port 8001",
        version="0.8.5",
    )
    assert cmd.form == "api-server"
    assert cmd.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert cmd.text("--port") == "8001"


def test_docker_form_takes_version_from_the_tag_and_gpus() -> None:
    cmd = parse_text(
        "docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface "
        "-p 8000:8000 --ipc=host -e HF_HOME=/data vllm/vllm-openai:v0.8.5 "
        "--model Qwen/Qwen2.5-7B-Instruct --max-model-len 4096"
    )
    assert cmd.form == "docker"
    assert cmd.version == "0.8.5"
    assert cmd.image_tag == "v0.8.5"
    assert cmd.docker_gpus == "all"
    assert cmd.env["HF_HOME"] == "/data"
    assert cmd.model == "Qwen/Qwen2.5-7B-Instruct"
    assert cmd.integer("--max-model-len") == 4096
    assert cmd.prefix[-1] == "vllm/vllm-openai:v0.8.5"


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("rocm/vllm:v0.9.1", "0.9.1"),  # an image named for vLLM
        ("ghcr.io/acme/vllm-custom:0.10.2", "0.10.2"),
        ("rocm/vllm-dev:rocm6.3.1_mi300_ubuntu22.04_py3.12_vllm_0.6.6", "0.6.6"),
        ("ghcr.io/llm-d/llm-d-rocm:rocm6.4_vllm_0.8.5", "0.8.5"),  # the tag says vLLM's
        # llm-d's own release (an llm-d issue's MI355X run): not vLLM 0.6.0
        ("ghcr.io/llm-d/llm-d-rocm:v0.6.0", None),
    ],
)
def test_a_bare_version_tag_is_vllm_s_only_on_an_image_of_vllm_s(
    image: str, version: str | None
) -> None:
    cmd = parse_text(f"docker run --gpus all {image} --model Qwen/Qwen3-8B", version=None)
    assert cmd.image_tag == image.rpartition(":")[2]
    if version is None:
        assert not cmd.release_known  # the newest release is assumed, and said so
    else:
        assert cmd.version == version


def test_docker_latest_tag_uses_the_default_table() -> None:
    cmd = parse_text("docker run --gpus all vllm/vllm-openai:latest Qwen/Qwen3-8B", version=None)
    assert cmd.model == "Qwen/Qwen3-8B"
    assert cmd.image_tag == "latest"


def test_pasted_text_with_continuations_prompt_and_blog_junk() -> None:
    text = (
        "Here is the command:\n"
        "$ vllm serve Qwen/Qwen2.5-7B-Instruct \\\n"
        "    --tensor-parallel-size 2 \\\n"
        "    --max-model-len 32k   # a comment\n"
        "Code language: CSS (css)\n"
    )
    cmd = parse_text(text, version="0.33.0")
    assert cmd.model == "Qwen/Qwen2.5-7B-Instruct"
    assert cmd.integer("--tensor-parallel-size") == 2
    assert cmd.integer("--max-model-len") == 32000
    assert cmd.issues == ()


def test_env_assignments_and_shell_redirections() -> None:
    cmd = parse_text(
        "CUDA_VISIBLE_DEVICES=0,1 nohup vllm serve Qwen/Qwen3-8B -tp 2 > vllm.log 2>&1 &",
        version="0.33.0",
    )
    assert cmd.env == {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert cmd.args == {"--tensor-parallel-size": "2"}


def test_switches_and_negatives() -> None:
    cmd = parse_text(
        "vllm serve m --enforce-eager --no-enable-prefix-caching --disable-chunked-prefill",
        version="0.33.0",
    )
    assert cmd.switch("--enforce-eager") is True
    assert cmd.switch("--enable-prefix-caching") is False
    assert cmd.switch("--enable-chunked-prefill") is False
    assert cmd.issues == ()


def test_disable_spelling_is_unknown_before_0_33() -> None:
    cmd = parse_text("vllm serve m --disable-chunked-prefill", version="0.32.0")
    assert [i.kind for i in cmd.issues] == ["unknown-flag"]


@pytest.mark.parametrize(
    ("raw", "value"),
    [("32k", 32000), ("32K", 32768), ("1m", 1_000_000), ("1M", 1_048_576), ("4096", 4096),
     ("1.5k", 1500), ("-1", -1), ("abc", None), ("", None), ("4096.5", None)],
)  # fmt: skip
def test_length_suffixes_as_vllm_0_33(raw: str, value: int | None) -> None:
    assert parse_int(raw) == value


@pytest.mark.parametrize("dash", ["\u2013", "\u2014", "\u2212"])
def test_unicode_dashes_are_a_finding_not_a_crash(dash: str) -> None:
    cmd = parse_text(f"vllm serve m {dash}quantization awq {dash}tp 2", version="0.33.0")
    assert [i.kind for i in cmd.issues] == ["dash-typo", "dash-typo"]
    assert cmd.text("--quantization") == "awq"
    assert cmd.integer("--tensor-parallel-size") == 2


def test_bool_with_value_records_the_intent() -> None:
    cmd = parse_text(
        "vllm serve m --enable-chunked-prefill=False --enforce-eager True", version="0.33.0"
    )
    assert cmd.switch("--enable-chunked-prefill") is False
    assert cmd.switch("--enforce-eager") is True
    assert [i.kind for i in cmd.issues] == ["bool-flag-value", "bool-flag-value"]


def test_unknown_removed_and_too_new_flags() -> None:
    cmd = parse_text(
        "vllm serve m --max-num-seqz 8 --swap-space 4 --kv-cache-memory-bytes 1G", version="0.8.5"
    )
    kinds = {i.kind: i for i in cmd.issues}
    assert kinds["unknown-flag"].detail == "--max-num-seqs"
    assert "removed-flag" not in kinds  # 0.8.5 still has --swap-space
    assert kinds["flag-too-new"].removal is not None
    assert kinds["flag-too-new"].removal.first_seen == "0.10.2"
    cmd = parse_text("vllm serve m --swap-space 4", version="0.33.0")
    (issue,) = cmd.issues
    assert issue.kind == "removed-flag"
    assert issue.removal is not None
    assert issue.removal.last_seen == "0.17.1"
    assert issue.removal.first_missing == "0.18.0"
    assert "--swap-space" not in cmd.args or cmd.args["--swap-space"] == "4"


def test_config_yaml_merged_with_command_line_winning(tmp_path: Path) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text(
        "model: Qwen/Qwen3-8B\nmax-model-len: 8192\ntensor_parallel_size: 4\n"
        "enforce-eager: true\nenable-prefix-caching: false\n",
        encoding="utf-8",
    )
    cmd = parse_text(f"vllm serve --config {config} -tp 2", version="0.33.0")
    assert cmd.model == "Qwen/Qwen3-8B"
    assert cmd.integer("--max-model-len") == 8192
    assert cmd.integer("--tensor-parallel-size") == 2  # the command line wins
    assert cmd.switch("--enforce-eager") is True
    assert cmd.switch("--enable-prefix-caching") is False
    assert "--max-model-len" in cmd.from_config
    assert "--tensor-parallel-size" not in cmd.from_config
    old = parse_text(f"vllm serve --config {config}", version="0.11.0")
    assert "--enable-prefix-caching" not in old.args  # 0.11 dropped `false` values


def test_config_relative_to_the_command_file(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("max-num-seqs: 64\n", encoding="utf-8")
    cmd = parse_text("vllm serve m --config c.yaml", version="0.33.0", config_dir=tmp_path)
    assert cmd.integer("--max-num-seqs") == 64


@pytest.mark.parametrize("content", [None, "a: [unclosed", "- just\n- a list\n"])
def test_unreadable_config_is_a_finding(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "bad.yaml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    cmd = parse_text(f"vllm serve m --config {path} -tp 2", version="0.33.0")
    (issue,) = cmd.issues
    assert issue.kind == "config-unreadable"
    assert cmd.integer("--tensor-parallel-size") == 2


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("", "vllm serve"),
        ("just some words", "vllm serve"),
        ("vllm serve m --chat-template 'unclosed", "quote"),
        ("vllm bench serve --model m", "vllm serve"),
        ("docker run --gpus all", "image"),
    ],
)
def test_bad_input_raises_a_typed_error(text: str, hint: str) -> None:
    with pytest.raises(CommandParseError) as info:
        parse_text(text, version="0.33.0")
    assert hint in f"{info.value.message} {info.value.hint}"


def test_unknown_vllm_version_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        parse_text("vllm serve m", version="latest")


def test_old_version_table_is_the_nearest_below() -> None:
    assert parse_text("vllm serve m", version="0.10.1").version == "0.10.1"
    assert parse_text("vllm serve m", version="0.8.6").version == "0.8.5.post1"
    assert parse_text("vllm serve m", version="0.15.0").version == "0.15.1"  # no sdist
    assert parse_text("vllm serve m", version="v0.32.0").version == "0.32.0"
    assert parse_text("vllm serve m", version="0.99").version == "0.33.0"


def test_other_vllm_subcommands_are_refused_with_a_hint() -> None:
    with pytest.raises(CommandParseError) as info:
        parse_tokens(["vllm", "bench", "serve", "--model", "m"], version="0.33.0")
    assert info.value.hint is not None
    assert "server launches" in info.value.hint


def test_variables_set_by_earlier_lines_are_filled_in() -> None:
    # vllm#3781 (corpus, fit): `export MODEL=...` on the line before `--model $MODEL`
    text = "export MODEL=mistralai/Mistral-7B-v0.1\npython3 -m vllm.entrypoints.openai.api_server --model $MODEL --max-model-len=4096"
    assert parse_text(text).model == "mistralai/Mistral-7B-v0.1"


def test_markdown_emphasis_around_a_flag_is_dropped() -> None:
    command = parse_text("vllm serve Qwen/Qwen2.5-7B-Instruct -tp 2 **_--max-num-seqs 1_**")
    assert command.args["--max-num-seqs"] == "1"
    assert not command.issues


def test_lines_wrapped_by_a_terminal_are_joined() -> None:
    text = "vllm serve Qwen/Qwen2.5-7B-Instruct --trust-remote-c\node --port 8009 --download-dir\n/models --max-model-len 4096\nnot a command"
    command = parse_text(text)
    assert command.args["--trust-remote-code"] is True
    assert command.args["--download-dir"] == "/models"
    assert command.args["--max-model-len"] == "4096"
    assert not command.issues


def test_a_kv_connector_the_release_does_not_register_is_refused() -> None:
    # vllm#19448 (corpus, fit): 0.9.0.1 registers NixlConnector, not DynamoNixlConnector
    base = "vllm serve Qwen/Qwen3-32B-FP8 --kv-transfer-config "
    refused = parse_text(base + """'{"kv_connector":"DynamoNixlConnector"}'""", version="0.9.0.1")
    issue = next(i for i in refused.issues if i.kind == "invalid-value")
    assert issue.detail == "DynamoNixlConnector"
    assert issue.choices is not None
    assert "NixlConnector" in issue.choices
    fine = parse_text(base + """'{"kv_connector":"NixlConnector"}'""", version="0.9.0.1")
    assert not fine.issues
    loaded = """'{"kv_connector":"Mine","kv_connector_module_path":"my.mod"}'"""
    assert not parse_text(base + loaded, version="0.9.0.1").issues


def test_the_model_in_a_mounted_folder_is_named_by_the_host_path() -> None:
    text = "docker run -v /root/gpt-oss-120b:/model vllm/vllm-openai:v0.11.2 --model /model"
    assert parse_text(text).model_on_host == "/root/gpt-oss-120b"


def test_a_value_the_shell_fills_in_is_not_judged() -> None:
    # `"${VLLM_MAX_MODEL_LEN:-20480}"`: the shell expands it from an environment we do not see
    text = (
        "docker run --gpus all vllm/vllm-openai:v0.20.1 org/model --max-model-len "
        '"${VLLM_MAX_MODEL_LEN:-20480}" --gpu-memory-utilization "$UTIL" --max-num-seqs abc'
    )
    command = parse_text(text)
    invalid = [issue.flag for issue in command.issues if issue.kind == "invalid-value"]
    assert invalid == ["--max-num-seqs"]
