"""Every rule: a command that fires it and a near miss that must not."""

from __future__ import annotations

import pytest

from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.rules import RULES


def review(command: str, gpus: str | None = None, version: str | None = "0.33.0") -> Report:
    options = CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    return check_text(command, options)


def rule_ids(command: str, gpus: str | None = None, version: str | None = "0.33.0") -> set[str]:
    return {f.rule for f in review(command, gpus, version).findings}


Q7 = "vllm serve Qwen/Qwen2.5-7B-Instruct"
GEMMA3_GGUF = "vllm serve /models/gemma-3-27b-it-Q4_K_M.gguf"
LLAMA_GGUF = "vllm serve /models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"
QWQ_BNB = "vllm serve unsloth/QwQ-32B-Preview-unsloth-bnb-4bit"
BNB_FLAGS = "--quantization bitsandbytes --load-format bitsandbytes"
CASES: list[tuple[str, str, str | None, str | None]] = [
    # (rule, command, gpus, vllm version)
    ("dash-typo", f"{Q7} \u2013max-model-len 4096", "1xA100-80GB", None),
    ("dash-typo", f"{Q7} \u2014tensor-parallel-size 1", "1xA100-80GB", None),
    ("unknown-flag", f"{Q7} --max-num-seqz 64", "1xA100-80GB", None),
    ("unknown-flag", f"{Q7} --kv-cache-memory-bytes 1G", "1xA100-80GB", "0.8.5"),
    ("removed-flag", f"{Q7} --swap-space 4", "1xA100-80GB", "0.20.2"),
    ("unknown-flag", f"{Q7} --max-num 64", "1xA100-80GB", None),  # ambiguous prefix
    ("model-required", "vllm serve --model Qwen/Qwen2.5-7B-Instruct", "1xA100-80GB", "0.8.2"),
    ("model-required", "vllm serve --model Qwen/Qwen2.5-7B-Instruct", "1xA100-80GB", "0.10.0"),
    (
        "model-required",
        "vllm serve --port 8000 Qwen/Qwen2.5-7B-Instruct --served-model-name q",
        "1xA100-80GB",
        None,
    ),
    ("default-model", "vllm serve --max-model-len 4096", "1xA100-80GB", None),
    (
        "pp-unsupported-model",
        "vllm serve meta-llama/Llama-4-Scout-17B-16E-Instruct -tp 4 -pp 2",
        "8xH100",
        "0.8.3",
    ),
    (
        "quant-dtype-unsupported",
        "vllm serve openai/gpt-oss-20b --dtype float16",
        "1xH100",
        None,
    ),
    ("quant-dtype-unsupported", f"{Q7}-AWQ --quantization awq --dtype bfloat16", "1xA10", "0.11.0"),
    ("arch-unsupported-in-release", "vllm serve google/gemma-3-27b-it", "1xA100-80GB", "0.7.0"),
    ("arch-unsupported-in-release", "vllm serve Qwen/Qwen3-8B", "1xA100-80GB", "0.8.0"),
    ("gguf-arch-unsupported", f"{GEMMA3_GGUF} --tokenizer google/gemma-3-27b-it", None, "0.10.0"),
    ("gguf-arch-unsupported", LLAMA_GGUF, "1xA100-80GB", "0.5.4"),
    ("bnb-prequant-tp-unsupported", f"{QWQ_BNB} -tp 2", "2xA100-80GB", "0.8.5"),
    ("bnb-load-format-missing", QWQ_BNB, "1xA100-80GB", "0.6.4"),
    ("bnb-load-format-missing", f"{QWQ_BNB} --dtype half", "1xA100-80GB", "0.8.2"),
    ("flag-without-dashes", f"{Q7} trust_remote_code=True", "1xA100-80GB", None),
    ("flag-without-dashes", f"{Q7} max-model-len=4096", "1xA100-80GB", None),
    (
        "extra-positional-after-entrypoint",
        "docker run --gpus all vllm/vllm-openai:v0.9.2 serve Qwen/Qwen2.5-7B-Instruct",
        "1xA100-80GB",
        None,
    ),
    (
        "extra-positional-after-entrypoint",
        "docker run --gpus all ee2917e260bb serve Qwen/Qwen2.5-7B-Instruct -tp 1",
        "1xA100-80GB",
        None,
    ),
    ("removed-flag", f"{Q7} --use-v2-block-manager", "1xA100-80GB", "0.11.0"),
    ("bool-flag-value", f"{Q7} --enable-chunked-prefill=False", "1xA100-80GB", None),
    ("missing-value", f"{Q7} --max-model-len --enforce-eager", "1xA100-80GB", None),
    ("invalid-value", f"{Q7} --tensor-parallel-size two", "1xA100-80GB", None),
    ("tp-exceeds-gpus", f"{Q7} --tensor-parallel-size 4", "2xA100-80GB", None),
    ("tp-below-gpus", f"{Q7} --tensor-parallel-size 2", "4xA100-80GB", None),
    ("tp-heads-indivisible", f"{Q7} --tensor-parallel-size 8", "8xA100-80GB", None),
    ("tp-heads-indivisible", f"{Q7} --tensor-parallel-size 3", "3xA100-80GB", None),
    ("quant-on-unquantized", f"{Q7} --quantization awq", "1xA100-80GB", None),
    ("quant-on-unquantized", f"{Q7} --quantization gptq", "1xA100-80GB", None),
    ("quant-method-mismatch", f"{Q7}-AWQ --quantization gptq", "1xA100-80GB", None),
    ("quant-unsupported-gpu", f"{Q7}-AWQ", "1xV100", None),
    ("quant-unneeded", f"{Q7}-AWQ --max-model-len 4096 --max-num-seqs 64", "1xH100", None),
    (
        "quant-unneeded",
        f"{Q7} --quantization fp8 --max-model-len 4096 --max-num-seqs 64",
        "1xA100-80GB",
        None,
    ),
    ("quant-unsupported-gpu", "vllm serve Qwen/Qwen3-8B-FP8", "1xT4", "0.11.0"),
    ("quant-unsupported-gpu", "vllm serve Qwen/Qwen3-30B-A3B-FP8", "1xA100-80GB", "0.8.5"),
    ("fp8-weight-only", "vllm serve Qwen/Qwen3-8B-FP8", "1xA100-80GB", None),
    # Qwen2.5-VL-72B's intermediate_size 29568 / 2 = 14784, not whole groups of 128 (vllm#13640)
    ("quant-tp-shape", "vllm serve Qwen/Qwen2.5-VL-72B-Instruct-AWQ -tp 2", "2xA100-80GB", None),
    ("kv-cache-dtype-unsupported-gpu", f"{Q7} --kv-cache-dtype fp8", "1xT4", None),
    ("kv-cache-dtype-unsupported-gpu", f"{Q7} --kv-cache-dtype fp8", "1xV100", "0.16.0"),
    ("fp8-weight-only", f"{Q7} --quantization fp8", "1xA10G", None),
    ("quant-slow-kernel", f"{Q7}-AWQ --quantization awq", "1xA100-80GB", "0.11.0"),
    ("dtype-unsupported-gpu", f"{Q7} --dtype bfloat16", "1xT4", None),
    ("dtype-unsupported-gpu", f"{Q7}", "1xV100", "0.8.5"),
    ("dtype-unsupported-model", "vllm serve google/gemma-2-9b-it --dtype half", "1xA100", None),
    ("batched-tokens-too-small", f"{Q7} --max-num-batched-tokens 512", "1xA100-80GB", None),
    (
        "batched-tokens-below-model-len",
        f"{Q7} --max-model-len 8192 --max-num-batched-tokens 4096 --no-enable-chunked-prefill",
        "1xA100-80GB",
        None,
    ),
    (
        "batched-tokens-below-num-seqs",
        f"{Q7} --max-num-seqs 512 --max-num-batched-tokens 256",
        "1xA100-80GB",
        None,
    ),
    ("quant-memory-unused", f"{Q7}-AWQ --max-model-len 8192", "1xA100-80GB", None),
    ("model-len-exceeds-model", f"{Q7} --max-model-len 65536", "1xA100-80GB", None),
    ("weights-dont-fit", "vllm serve meta-llama/Llama-3.1-70B-Instruct", "1xA100-80GB", None),
    ("kv-cache-too-small", "vllm serve meta-llama/Llama-3.1-8B-Instruct", "1xL4", None),
    # mllama's profile runs one 4-tile image per sequence: V0's 256 sequences leave no KV room
    (
        "profile-activation-oom",
        "vllm serve meta-llama/Llama-3.2-11B-Vision-Instruct --max-model-len 4096",
        "1xH100",
        "0.6.6",
    ),
    ("gpu-memory-utilization-range", f"{Q7} --gpu-memory-utilization 95", "1xA100", None),
    ("gpu-memory-utilization-range", f"{Q7} --gpu-memory-utilization 0", "1xA100", None),
    ("enforce-eager", f"{Q7} --enforce-eager", "1xA100-80GB", None),
    ("model-unknown", "vllm serve acme/secret-model", "1xA100-80GB", None),
    ("model-inferred", "vllm serve org/Llama-3-8B-Instruct-Gradient-1048k", "1xH100", None),
    ("model-inferred", "vllm serve /models/gemma-3-4b-it", "1xL4", None),
    ("quant-memory-unused", f"{Q7}-AWQ --max-num-seqs 32", "1xA100-80GB", None),
    ("hardware-unknown", Q7, None, None),
    ("hardware-unknown", Q7, "2", None),
    (
        "prefix-caching-sliding-window",
        "vllm serve mistralai/Mistral-7B-v0.1 --enable-prefix-caching",
        "1xA100-80GB",
        "0.6.3",
    ),
]

NEAR_MISSES: list[tuple[str, str, str | None, str | None]] = [
    # the original 72B does not fit one H100; FP8 on Hopper is for speed; gpt-oss has no original
    (
        "quant-unneeded",
        "vllm serve Qwen/Qwen2.5-72B-Instruct-AWQ --max-model-len 8192",
        "1xH100",
        None,
    ),
    (
        "quant-unneeded",
        f"{Q7} --quantization fp8 --max-model-len 4096 --max-num-seqs 64",
        "1xH100",
        None,
    ),
    ("quant-unneeded", "vllm serve openai/gpt-oss-20b --max-num-seqs 8", "1xH100", None),
    # on a 24 GB L4 the original holds ~61 conversations of 2k tokens; AWQ doubles that
    ("quant-unneeded", f"{Q7}-AWQ --max-model-len 4096 --max-num-seqs 128", "1xL4", None),
    (
        "quant-unneeded",
        f"{Q7} --quantization awq --max-model-len 4096 --max-num-seqs 64",
        "1xH100",
        None,
    ),
    # Qwen2.5-72B-Instruct-AWQ pads intermediate_size to 29696 (= 232 x 128) for TP
    ("quant-tp-shape", "vllm serve Qwen/Qwen2.5-72B-Instruct-AWQ -tp 2", "2xA100-80GB", None),
    ("quant-tp-shape", "vllm serve Qwen/Qwen2.5-VL-72B-Instruct-AWQ", "1xA100-80GB", None),
    ("kv-cache-dtype-unsupported-gpu", f"{Q7} --kv-cache-dtype fp8", "1xA10", None),
    ("kv-cache-dtype-unsupported-gpu", f"{Q7} --kv-cache-dtype fp8_e5m2", "1xV100", "0.16.0"),
    ("kv-cache-dtype-unsupported-gpu", f"{Q7} --kv-cache-dtype fp8", "1xV100", "0.9.2"),
    ("dash-typo", f"{Q7} --max-model-len 4096", "1xA100-80GB", None),
    ("unknown-flag", f"{Q7} --max-num-seqs 64 -tp 1", "1xA100-80GB", None),
    ("unknown-flag", f"{Q7} --kv-cache-memory-bytes 1G", "1xA100-80GB", "0.11.0"),
    ("unknown-flag", f"{Q7} --gpu-memory-util 0.5 --max-num-seq 8", "1xA100-80GB", None),
    ("model-required", "vllm serve Qwen/Qwen2.5-7B-Instruct", "1xA100-80GB", "0.8.2"),
    ("model-required", "vllm serve --model Qwen/Qwen2.5-7B-Instruct", "1xA100-80GB", "0.11.1"),
    ("model-required", "vllm serve --model=Qwen/Qwen2.5-7B-Instruct", "1xA100-80GB", "0.10.0"),
    ("model-required", "vllm serve --served-model-name q", "1xA100-80GB", "0.16.0"),
    ("default-model", f"{Q7} --max-model-len 4096", "1xA100-80GB", None),
    (
        "pp-unsupported-model",
        "vllm serve meta-llama/Llama-4-Scout-17B-16E-Instruct -tp 4 -pp 2",
        "8xH100",
        "0.8.4",
    ),
    ("pp-unsupported-model", f"{Q7} -pp 2", "2xA100-80GB", None),
    ("quant-dtype-unsupported", "vllm serve openai/gpt-oss-20b --dtype bfloat16", "1xH100", None),
    ("quant-dtype-unsupported", f"{Q7}-AWQ --dtype bfloat16", "1xA10", "0.11.0"),
    ("arch-unsupported-in-release", "vllm serve google/gemma-3-27b-it", "1xA100-80GB", "0.8.0"),
    ("arch-unsupported-in-release", "vllm serve Qwen/Qwen3-8B", "1xA100-80GB", "0.1.dev1+g6997a25"),
    ("gguf-arch-unsupported", f"{GEMMA3_GGUF} --tokenizer google/gemma-3-27b-it", None, "0.11.1"),
    ("gguf-arch-unsupported", LLAMA_GGUF, "1xA100-80GB", "0.5.5"),
    ("bnb-prequant-tp-unsupported", f"{QWQ_BNB} -pp 2", "2xA100-80GB", "0.8.5"),
    ("bnb-prequant-tp-unsupported", f"{QWQ_BNB} -tp 2", "2xA100-80GB", "0.6.1"),
    ("bnb-load-format-missing", f"{QWQ_BNB} {BNB_FLAGS}", "1xA100-80GB", "0.6.4"),
    ("bnb-load-format-missing", f"{QWQ_BNB} --quantization bitsandbytes", "1xA100-80GB", "0.8.3"),
    ("bnb-load-format-missing", QWQ_BNB, "1xA100-80GB", "0.8.4"),
    ("flag-without-dashes", f"{Q7} --trust-remote-code", "1xA100-80GB", None),
    ("flag-without-dashes", f"{Q7} --max-model-len 4096 image=1", "1xA100-80GB", None),
    (
        "extra-positional-after-entrypoint",
        "docker run --gpus all vllm/vllm-openai:v0.9.2 Qwen/Qwen2.5-7B-Instruct",
        "1xA100-80GB",
        None,
    ),
    (
        "extra-positional-after-entrypoint",
        "docker run --entrypoint vllm ee2917e260bb serve Qwen/Qwen2.5-7B-Instruct",
        "1xA100-80GB",
        None,
    ),
    ("removed-flag", f"{Q7} --swap-space 4", "1xA100-80GB", "0.15.1"),
    ("removed-flag", f"{Q7} --use-v2-block-manager", "1xA100-80GB", "0.8.5"),
    ("bool-flag-value", f"{Q7} --no-enable-chunked-prefill", "1xA100-80GB", None),
    ("bool-flag-value", f"{Q7} --enable-chunked-prefill=False", "1xA100-80GB", "0.6.6"),
    ("missing-value", f"{Q7} --max-model-len -1", "1xA100-80GB", None),
    ("invalid-value", f"{Q7} --max-model-len 32k", "1xA100-80GB", None),
    ("tp-exceeds-gpus", f"{Q7} --tensor-parallel-size 2", "2xA100-80GB", None),
    (
        "tp-exceeds-gpus",
        f"CUDA_VISIBLE_DEVICES=0,1 {Q7} --tensor-parallel-size 2",
        "4xA100-80GB",
        None,
    ),
    ("tp-below-gpus", f"{Q7} --tensor-parallel-size 2 --data-parallel-size 2", "4xA100", None),
    ("tp-heads-indivisible", f"{Q7} --tensor-parallel-size 4", "4xA100-80GB", None),
    (
        "tp-heads-indivisible",
        "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 16",
        "16xH100",
        None,
    ),
    ("quant-on-unquantized", f"{Q7} --quantization fp8", "1xH100", None),
    ("quant-on-unquantized", f"{Q7}-AWQ --quantization awq", "1xA100-80GB", None),
    ("quant-method-mismatch", f"{Q7}-AWQ --quantization awq_marlin", "1xA100-80GB", None),
    ("quant-method-mismatch", f"{Q7}-AWQ --quantization moe_wna16", "1xA100-80GB", None),
    ("quant-unsupported-gpu", f"{Q7}-AWQ", "1xT4", None),
    ("quant-unsupported-gpu", "vllm serve Qwen/Qwen3-8B-FP8", "1xT4", "0.20.2"),
    ("quant-unsupported-gpu", "vllm serve Qwen/Qwen3-30B-A3B-FP8", "1xA100-80GB", "0.9.0"),
    ("fp8-weight-only", "vllm serve Qwen/Qwen3-8B-FP8", "1xH100", None),
    ("fp8-weight-only", "vllm serve Qwen/Qwen3-8B-FP8", "1xL4", None),
    ("quant-slow-kernel", f"{Q7}-AWQ --quantization awq", "1xA100-80GB", "0.27.1"),
    ("quant-slow-kernel", f"{Q7}-AWQ", "1xA100-80GB", "0.11.0"),
    ("dtype-unsupported-gpu", f"{Q7} --dtype bfloat16", "1xA10G", None),
    ("dtype-unsupported-gpu", f"{Q7}", "1xT4", None),
    ("dtype-unsupported-model", "vllm serve google/gemma-2-9b-it --dtype bfloat16", "1xA100", None),
    ("dtype-unsupported-model", f"{Q7} --dtype half", "1xA100", None),
    ("batched-tokens-too-small", f"{Q7} --max-num-batched-tokens 4096", "1xH100", None),
    (
        "batched-tokens-below-model-len",
        f"{Q7} --max-model-len 8192 --max-num-batched-tokens 4096",
        "1xA100-80GB",
        None,
    ),
    (
        "batched-tokens-below-model-len",
        f"{Q7} --max-model-len 8192 --max-num-batched-tokens 4096 --no-enable-chunked-prefill",
        "1xA100-80GB",
        "0.11.0",
    ),
    (
        "batched-tokens-below-num-seqs",
        f"{Q7} --max-num-seqs 256 --max-num-batched-tokens 256",
        "1xA100-80GB",
        None,
    ),
    ("quant-memory-unused", f"{Q7} --max-model-len 8192", "1xA100-80GB", None),
    ("quant-memory-unused", f"{Q7}-AWQ --max-model-len 8192 --max-num-seqs 1024", "1xA100", None),
    ("model-len-exceeds-model", f"{Q7} --max-model-len 32768", "1xA100-80GB", None),
    (
        "model-len-exceeds-model",
        f"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 {Q7} --max-model-len 65536",
        "1xA100-80GB",
        None,
    ),
    ("weights-dont-fit", "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2", "2xA100-80GB", None),
    (
        "kv-cache-too-small",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384",
        "1xL4",
        None,
    ),
    ("gpu-memory-utilization-range", f"{Q7} --gpu-memory-utilization 1", "1xA100", None),
    (
        "profile-activation-oom",
        "vllm serve meta-llama/Llama-3.2-11B-Vision-Instruct --max-model-len 4096 "
        "--max-num-seqs 64",
        "1xH100",
        "0.6.6",
    ),
    ("enforce-eager", f"{Q7} --no-enforce-eager", "1xA100-80GB", None),
    ("model-unknown", Q7, "1xA100-80GB", None),
    ("model-inferred", Q7, "1xA100-80GB", None),
    ("model-inferred", "vllm serve acme/secret-model", "1xA100-80GB", None),
    ("hardware-unknown", Q7, "1xA100-80GB", None),
    # V1 (0.8 on) caches prefixes under a sliding window; Qwen2.5 turns its window off
    (
        "prefix-caching-sliding-window",
        "vllm serve mistralai/Mistral-7B-v0.1 --enable-prefix-caching",
        "1xA100-80GB",
        "0.9.0",
    ),
    ("prefix-caching-sliding-window", f"{Q7} --enable-prefix-caching", "1xA100-80GB", "0.6.3"),
]


@pytest.mark.parametrize(("rule", "command", "gpus", "version"), CASES)
def test_rule_fires(rule: str, command: str, gpus: str | None, version: str | None) -> None:
    assert rule in rule_ids(command, gpus, version or "0.33.0")


@pytest.mark.parametrize(("rule", "command", "gpus", "version"), NEAR_MISSES)
def test_rule_near_miss(rule: str, command: str, gpus: str | None, version: str | None) -> None:
    assert rule not in rule_ids(command, gpus, version or "0.33.0")


def test_every_rule_has_a_firing_case_and_a_near_miss() -> None:
    fired = {case[0] for case in CASES}
    missed = {case[0] for case in NEAR_MISSES}
    every = {r.id for r in RULES}
    assert every - fired == {"config-unreadable"}  # covered in test_serve_command
    assert every - missed == {"config-unreadable"}


def test_seed_example_gets_quant_on_unquantized() -> None:
    report = review(
        "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --quantization awq",
        "2xA100-80GB",
    )
    errors = list(report.errors)
    assert [f.rule for f in errors] == ["quant-on-unquantized"]
    finding = errors[0]
    assert finding.flag == "--quantization"
    assert finding.ask_ai is not None
    ask = finding.ask_ai.text()
    assert "2x A100-80GB-SXM" in ask and "non-AWQ" in ask and "drop --quantization" in ask
    assert report.corrected_command is not None
    assert "--quantization" not in report.corrected_command
    assert "--tensor-parallel-size 2" in report.corrected_command


def test_an_invalid_choice_is_fixed_to_the_closest_choice() -> None:
    report = review(f"{Q7} --dtype bfloat", "1xA100-80GB")
    (finding,) = [f for f in report.errors if f.rule == "invalid-value"]
    assert finding.fix.text() == "Use `--dtype bfloat16`, the accepted value closest to it."
    assert report.corrected_command is not None
    assert "--dtype bfloat16" in report.corrected_command


def test_a_choice_a_release_lacks_is_removed_in_the_corrected_command() -> None:
    # qwen3 as a reasoning parser came after 0.8.0: that release's choices are named
    command = f"{Q7} --enable-reasoning --reasoning-parser qwen3"
    report = review(command, "1xA100-80GB", "0.8.0")
    (finding,) = [f for f in report.errors if f.rule == "invalid-value"]
    assert "deepseek_r1" in finding.why.text()
    assert report.corrected_command is not None
    assert "--reasoning-parser" not in report.corrected_command
    again = review(report.corrected_command, "1xA100-80GB", "0.8.0")
    assert not [f for f in again.errors if f.rule == "invalid-value"]


def test_a_value_of_the_wrong_type_is_removed_in_the_corrected_command() -> None:
    report = review(f"{Q7} --max-num-seqs many", "1xA100-80GB")
    assert "invalid-value" in {f.rule for f in report.errors}
    assert report.corrected_command is not None
    assert "--max-num-seqs" not in report.corrected_command


def test_unquoted_json_is_one_error_whose_fix_quotes_it() -> None:
    # the shell split `{"method": "ngram", "num_speculative_tokens": 3}` and took its quotes
    command = f"{Q7} --speculative-config {{method: ngram, num_speculative_tokens: 3}} -tp 1"
    report = review(command, "1xA100-80GB")
    assert [(f.rule, f.flag) for f in report.errors] == [("unknown-flag", "--speculative-config")]
    assert report.corrected_command is not None
    fixed = '--speculative-config \'{"method": "ngram", "num_speculative_tokens": 3}\''
    assert fixed in report.corrected_command
    assert not review(report.corrected_command, "1xA100-80GB").errors


def test_a_json_value_that_does_not_close_is_left_to_the_stray_words() -> None:
    report = review(f"{Q7} --speculative-config {{method: ngram, x: 3", "1xA100-80GB")
    titles = [f.title.text() for f in report.errors]
    assert titles == ["Stray value `ngram,` in the command", "Stray value `x:` in the command",
                      "Stray value `3` in the command",
                      "`--speculative-config {method:`: `{method:` is not a valid value"]  # fmt: skip


def test_a_json_flag_s_value_that_is_not_json_is_invalid() -> None:
    report = review(f"{Q7} --speculative-config {{method:ngram}}", "1xA100-80GB")
    assert [(f.rule, f.flag) for f in report.errors] == [("invalid-value", "--speculative-config")]
    assert not review(f"{Q7} --compilation-config 3", "1xA100-80GB").errors


def test_tp_fix_picks_a_size_that_divides_the_heads() -> None:
    report = review(f"{Q7} --tensor-parallel-size 3", "3xA100-80GB")
    assert report.corrected_command is not None
    # 28 heads and 4 KV heads: 2 is the largest TP that divides both and fits 3 GPUs.
    assert "--tensor-parallel-size 2" in report.corrected_command


def test_kv_cache_too_small_says_which_length_fits() -> None:
    report = review("vllm serve meta-llama/Llama-3.1-8B-Instruct", "1xL4")
    finding = next(f for f in report.findings if f.rule == "kv-cache-too-small")
    est = report.estimate
    assert est is not None
    assert est.max_model_len_that_fits is not None
    assert 0 < est.max_model_len_that_fits < 131072
    assert f"--max-model-len {est.max_model_len_that_fits}" in finding.fix.text()


def test_quant_memory_unused_says_how_many() -> None:
    report = review(f"{Q7}-AWQ --max-model-len 8192", "1xA100-80GB")
    finding = next(f for f in report.findings if f.rule == "quant-memory-unused")
    est = report.estimate
    assert est is not None and est.kv_cache_tokens is not None
    assert f"~{est.kv_cache_tokens // 2048}" in finding.title.text()
    assert "--max-num-seqs is 256" in finding.title.text()


def test_quant_memory_unused_on_a_cap_set_on_purpose() -> None:
    # The issue's example: an AWQ 7B on an 80 GB GPU with --max-num-seqs 32 holds room for
    # ~300 sequences at 4k; a cap of 32 leaves most of the KV cache idle.
    report = review(f"{Q7}-AWQ --max-num-seqs 32", "1xA100-80GB")
    finding = next(f for f in report.findings if f.rule == "quant-memory-unused")
    est = report.estimate
    assert est is not None and est.kv_cache_tokens is not None
    assert 250 <= est.kv_cache_tokens // 4096 <= 350
    assert "--max-num-seqs 32 leaves about" in finding.title.text()
    assert (
        report.corrected_command is not None and "--max-num-seqs 32" not in report.corrected_command
    )
    # a cap that uses at least half the cache stays quiet
    quiet = review(f"{Q7}-AWQ --max-num-seqs 512", "1xA100-80GB")
    assert "quant-memory-unused" not in {f.rule for f in quiet.findings}


def test_removed_flag_names_the_replacement_and_versions() -> None:
    report = review(f"{Q7} --rope-scaling x", "1xA100-80GB", "0.20.2")
    finding = next(f for f in report.findings if f.rule == "removed-flag")
    assert "--hf-overrides" in finding.fix.text()
    assert "last in 0.11.0" in finding.title.text()  # the reference: removed after 0.11


def test_unknown_flag_suggests_the_real_one() -> None:
    report = review(f"{Q7} --max-num-seqz 64", "1xA100-80GB")
    finding = next(f for f in report.findings if f.rule == "unknown-flag")
    assert "--max-num-seqs" in finding.title.text()
    assert report.corrected_command is not None
    assert "--max-num-seqs 64" in report.corrected_command


def test_findings_are_sorted_by_severity() -> None:
    report = review(f"{Q7} --enforce-eager --quantization awq -tp 2", None)
    order = [f.severity for f in report.findings]
    assert order == sorted(order, key=["error", "warning", "info"].index)


def test_a_judgement_by_release_is_a_warning_when_the_release_is_assumed() -> None:
    """`--swap-space` left `vllm serve` in a later release: with no release named (the newest is
    assumed) the user may run one that has it, so the review warns; named, it is an error."""
    from servetune.review.check import CheckOptions, check_text

    command = "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --swap-space 16"
    assumed = check_text(command, CheckOptions(gpus="1xA100", detect_hardware=False))
    named = check_text(
        command, CheckOptions(gpus="1xA100", vllm_version="0.33.0", detect_hardware=False)
    )
    assert not assumed.command.release_known and named.command.release_known
    assert [f.severity for f in assumed.findings if f.rule == "removed-flag"] == ["warning"]
    assert [f.severity for f in named.findings if f.rule == "removed-flag"] == ["error"]


def test_release_unknown_bnb_checkpoint_warns_for_older_releases() -> None:
    """The newest picks the bitsandbytes loader itself; releases still run (0.8.0-0.8.3) do not."""
    found = {f.rule: f.severity for f in review(QWQ_BNB, "1xA100-80GB", None).findings}
    assert found.get("bnb-load-format-missing") == "warning"
    named = {f.rule for f in review(f"{QWQ_BNB} {BNB_FLAGS}", "1xA100-80GB", None).findings}
    assert "bnb-load-format-missing" not in named


def test_release_unknown_registry_error_is_a_warning() -> None:
    gemma = review("vllm serve google/gemma-3-27b-it", "1xA100-80GB", "0.7.0").findings
    assert {f.rule: f.severity for f in gemma}["arch-unsupported-in-release"] == "error"
    qwen3 = review("vllm serve Qwen/Qwen3-8B", "1xA100-80GB", "0.8.0").findings
    assert {f.rule: f.severity for f in qwen3}["arch-unsupported-in-release"] == "warning"


def test_cpu_offload_takes_its_gib_of_weights_off_each_gpu() -> None:
    # kubeai-pr341: Llama-3.3-70B in bf16 (131 GiB) on one GH200 with --cpu-offload-gb 60
    command = "vllm serve meta-llama/Llama-3.3-70B-Instruct --max-model-len 32768"
    plain = review(command, "1xGH200")
    assert "weights-dont-fit" in {f.rule for f in plain.errors}
    offloaded = review(f"{command} --cpu-offload-gb 60", "1xGH200")
    assert not offloaded.errors
    assert plain.estimate is not None and offloaded.estimate is not None
    moved = plain.estimate.weights_gib_per_gpu - offloaded.estimate.weights_gib_per_gpu
    assert moved == pytest.approx(60, abs=0.01)
