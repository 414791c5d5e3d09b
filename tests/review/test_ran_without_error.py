"""Fit commands that ran draw no error: each by how vLLM's release reads the line."""

from __future__ import annotations

from servetune.review.check import CheckOptions, check_text


def errors(text: str, gpus: str, version: str) -> list[str]:
    options = CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    return [f.rule for f in check_text(text, options).errors]


def test_moe_wna16_over_an_awq_checkpoint_is_vllms_override() -> None:
    # vllm-13219: `MoeWNA16Config.override_quantization_method` takes a 4-bit AWQ checkpoint.
    text = (
        "python3 -m vllm.entrypoints.openai.api_server --tensor-parallel-size 8 "
        "--quantization moe_wna16 --max-model-len 60000 --model cognitivecomputations/DeepSeek-R1-AWQ"
    )
    assert "quant-method-mismatch" not in errors(text, "8xH100", "0.7.2")
    gptq = "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --quantization gptq"
    assert "quant-method-mismatch" in errors(gptq, "1xA100-80GB", "0.7.2")  # still a mismatch


def test_an_exported_variable_reaches_the_server() -> None:
    # vllm-16883: VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 exported on the line before `vllm serve`.
    text = "vllm serve Qwen/Qwen2.5-Coder-32B-Instruct -tp 4 --max-model-len 131072"
    assert "model-len-exceeds-model" in errors(text, "4xA100-80GB", "0.8.4")
    exported = "export VLLM_ALLOW_LONG_MAX_MODEL_LEN=1\n" + text
    assert "model-len-exceeds-model" not in errors(exported, "4xA100-80GB", "0.8.4")
