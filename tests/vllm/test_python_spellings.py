"""Server starts spelled in Python, in vLLM's log, in shell scripts and in container templates.

Each shape is one the corpus's fit records use (tests/data/corpus/commands.json, memory.json);
the record is named where it is the source.
"""

from __future__ import annotations

import json

import pytest

from servetune.errors import CommandParseError
from servetune.vllm.serve_command import parse_text, tokens_from_text

OFFLINE = """
from vllm import LLM, SamplingParams
MODEL = "Qwen/Qwen2.5-7B-Instruct"
TP = 2
llm = LLM(
    model=MODEL,
    tensor_parallel_size=TP,  # two cards
    gpu_memory_utilization=0.9,
    max_model_len=8192,
    quantization=None,
    enforce_eager=True,
    enable_prefix_caching=False,
    speculative_config={"method": "ngram", "num_speculative_tokens": 4},
    seed=SEED,
)
"""


def test_the_offline_api_keywords_are_engine_args_flags() -> None:
    cmd = parse_text(OFFLINE, version="0.10.0")
    assert cmd.model == "Qwen/Qwen2.5-7B-Instruct"
    assert cmd.args["--tensor-parallel-size"] == "2"
    assert cmd.args["--gpu-memory-utilization"] == "0.9"
    assert cmd.args["--max-model-len"] == "8192"
    assert cmd.args["--enforce-eager"] is True
    assert cmd.args["--enable-prefix-caching"] is False
    assert "--quantization" not in cmd.args  # None: the default
    assert "--seed" not in cmd.args  # a name the text does not bind: left to its default
    spec = cmd.text("--speculative-config")
    assert spec is not None
    assert json.loads(spec) == {"method": "ngram", "num_speculative_tokens": 4}


def test_engine_args_and_a_positional_model() -> None:
    words = tokens_from_text('args = AsyncEngineArgs("facebook/opt-125m", max_num_seqs=4)')
    assert words == ["vllm", "serve", "facebook/opt-125m", "--max-num-seqs", "4"]
    assert tokens_from_text("llm = LLM('m', dtype='half')") == [
        "vllm",
        "serve",
        "m",
        "--dtype",
        "half",
    ]


# vllm-8439: a launcher builds the argv for `vllm serve` from its own names (mixed indentation
# as pasted); `str(VLLM_PORT)` names a value the excerpt does not give.
ARGV = """    MODEL_NAME = "meta-llama/Llama-3.1-8B-Instruct"
    DRAFT_MODEL_NAME = "meta-llama/Llama-3.2-1B-Instruct"

speculative_config = {
        "model": DRAFT_MODEL_NAME,
        "num_speculative_tokens": 8,
        # "method" : "ngram",
}

    cmd = [
        "vllm",
        "serve",
        MODEL_NAME,
        "--port",
        str(VLLM_PORT),
        "--speculative_config",
        json.dumps(speculative_config),
        "--max-model-len",
        "4096",
    ]
"""


def test_a_python_argv_list_with_the_scripts_names() -> None:
    words = tokens_from_text(ARGV)
    assert words[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    assert words[3:5] == ["--port", "str(VLLM_PORT)"]
    assert json.loads(words[6]) == {
        "model": "meta-llama/Llama-3.2-1B-Instruct",
        "num_speculative_tokens": 8,
    }
    assert words[7:] == ["--max-model-len", "4096"]


CONFIG_LINE = (
    "INFO 08-20 10:00:00 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: "
    "model='THUDM/glm-4-9b-chat', speculative_config=None, tokenizer='THUDM/glm-4-9b-chat', "
    "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=True, "
    "dtype=torch.bfloat16, max_seq_len=8192, download_dir=None, load_format=LoadFormat.AUTO, "
    "tensor_parallel_size=1, pipeline_parallel_size=1, disable_custom_all_reduce=False, "
    "quantization=None, enforce_eager=True, kv_cache_dtype=auto, device_config=cuda, "
    "decoding_config=DecodingConfig(guided_decoding_backend='outlines'), seed=0, "
    "served_model_name=glm-4-9b-chat, use_v2_block_manager=False, enable_prefix_caching=False)"
)


def test_the_engine_config_line_vllm_logs() -> None:
    cmd = parse_text(CONFIG_LINE, version="0.5.4")
    assert cmd.model == "THUDM/glm-4-9b-chat"
    assert cmd.args["--dtype"] == "bfloat16"
    assert cmd.args["--max-model-len"] == "8192"
    assert cmd.args["--load-format"] == "auto"
    assert cmd.args["--enforce-eager"] is True
    assert cmd.args["--trust-remote-code"] is True
    assert "--tokenizer" not in cmd.args  # the model's own
    assert "--decoding-config" not in cmd.args  # derived state, no flag


# vllm-4111: variables set before the command; `${other_parameters}` unquoted is several words.
SCRIPT = """export model_path=/home/deepseek-ai/deepseek-coder-33b-instruct
export model_dtype=float
export other_parameters=" --max-num-seqs=256 --block-size=32 --seed=0"
export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
python -m vllm.entrypoints.openai.api_server --model ${model_path} --dtype ${model_dtype} \\
  ${other_parameters} --served-model-name "${model_dtype} model"
"""


def test_shell_variables_split_as_the_shell_splits_them() -> None:
    cmd = parse_text(SCRIPT, version="0.4.0")
    assert cmd.issues == ()
    assert cmd.model == "/home/deepseek-ai/deepseek-coder-33b-instruct"
    assert cmd.args["--dtype"] == "float"
    assert cmd.args["--max-num-seqs"] == "256"
    assert cmd.args["--block-size"] == "32"
    assert cmd.args["--served-model-name"] in ("float model", ("float model",))


def test_exported_variables_are_the_servers_environment() -> None:
    # vllm-16883: `export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` on the line before `vllm serve`.
    cmd = parse_text(SCRIPT, version="0.4.0")
    assert cmd.env["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] == "1"
    plain = parse_text("LEN=1\nvllm serve m", version="0.8.4")
    assert "LEN" not in plain.env  # not exported: the shell's own


def test_a_container_does_not_inherit_the_hosts_exports() -> None:
    cmd = parse_text("export HF_TOKEN=x\ndocker run vllm/vllm-openai:v0.8.4 --model m")
    assert "HF_TOKEN" not in cmd.env


def test_the_arguments_a_template_gives_vllms_image() -> None:
    # trelis-17: a RunPod template's container arguments.
    cmd = parse_text("--model Qwen/Qwen3-32B-FP8 --enable-reasoning --max-model-len 8192")
    assert cmd.model == "Qwen/Qwen3-32B-FP8"
    assert cmd.args["--enable-reasoning"] is True
    # vllm-pr46329: the model first, the writer's prose after it.
    cmd = parse_text("org/Model-NVFP4 --max-num-seqs 8 --kv-cache-dtype fp8 (MTP k=3, graphs on)")
    assert cmd.model == "org/Model-NVFP4"
    assert cmd.issues == ()
    assert cmd.args == {"--max-num-seqs": "8", "--kv-cache-dtype": "fp8"}
    image = parse_text("vllm/vllm-openai:v0.12.0 org/Model --max-num-seqs 8")
    assert image.form == "docker"
    assert image.image_tag == "v0.12.0"
    assert image.model == "org/Model"
    # gpustack2259: the vllm program's argv as its launcher logged it, `serve` first.
    argv = parse_text("serve /cache/gemma-3-27b-it --max-model-len 8192 --tensor-parallel-size 3")
    assert argv.model == "/cache/gemma-3-27b-it"
    assert argv.args == {"--max-model-len": "8192", "--tensor-parallel-size": "3"}
    assert argv.issues == ()


@pytest.mark.parametrize(
    "text", ["I ran it with the defaults", "hello --world", "python x.py --y 1"]
)
def test_prose_is_still_no_command(text: str) -> None:
    with pytest.raises(CommandParseError):
        tokens_from_text(text)


# vllm-4202 (fit): the api server's parsed arguments, pasted in part.
NAMESPACE = (
    "INFO 04-19 10:00:00 api_server.py:149] args: Namespace(host=None, port=8001, ... "
    "served_model_name='Qwen1.5-32B-Chat-AWQ', ... model='/data/qwen1.5/Qwen1.5-32B-Chat-AWQ', "
    "... dtype='auto', kv_cache_dtype='auto', max_model_len=512, ... tensor_parallel_size=1, "
    "enforce_eager=False, allowed_origins=['*'], gpu_memory_utilization=0.9, quantization=None, ...)"
)


def test_the_namespace_line_older_releases_log() -> None:
    cmd = parse_text(NAMESPACE, version="0.4.0.post1")
    assert cmd.issues == ()
    assert cmd.model == "/data/qwen1.5/Qwen1.5-32B-Chat-AWQ"
    assert cmd.args["--max-model-len"] == "512"
    assert cmd.args["--gpu-memory-utilization"] == "0.9"
    assert cmd.args["--port"] == "8001"
    for default in ("--enforce-eager", "--quantization", "--host", "--allowed-origins"):
        assert default not in cmd.args  # a dump's defaults are not settings


# llmtracker MI300X (fit, tests/data/corpus/memory.json): the config line, then what vLLM reported.
LOGGED_EXCERPT = (
    "INFO 10-07 09:54:22 llm_engine.py:237] Initializing an LLM engine (v0.6.3.dev114+g4f95ffee) "
    "with config: model='meta-llama/Llama-2-7b-chat-hf', speculative_config=None, "
    "tokenizer='meta-llama/Llama-2-7b-chat-hf', skip_tokenizer_init=False, tokenizer_mode=auto, "
    "trust_remote_code=False, dtype=torch.float16, max_seq_len=4096, download_dir=None, "
    "tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, enforce_eager=False, "
    "kv_cache_dtype=auto, seed=0, enable_prefix_caching=False)\n"
    "INFO 10-07 09:54:29 model_runner.py:1060] Loading model weights took 12.5523 GB\n"
    "INFO 10-07 09:55:00 gpu_executor.py:122] # GPU blocks: 20186, # CPU blocks: 512\n"
)


def test_the_config_line_inside_a_longer_excerpt() -> None:
    cmd = parse_text(LOGGED_EXCERPT, version="0.6.3")
    assert cmd.model == "meta-llama/Llama-2-7b-chat-hf"
    assert cmd.args["--dtype"] == "float16"
    assert cmd.args["--max-model-len"] == "4096"
    assert cmd.args["--tensor-parallel-size"] == "1"
    # What vLLM reported after the config line is no setting.
    assert not any("block" in flag for flag in cmd.args)
