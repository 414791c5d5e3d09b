"""Minimum compute capability per compressed-tensors scheme (read from the checkpoint's
config_groups), not per method name, release by release as vLLM's schemes'
`get_min_capability()` say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.model import compressed_scheme, model_facts

LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
}


def _group(weights: dict[str, object], inputs: dict[str, object] | None) -> dict[str, object]:
    group: dict[str, object] = {"targets": ["Linear"], "weights": weights}
    if inputs is not None:
        group["input_activations"] = inputs
    return {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "config_groups": {"group_0": group},
    }


W4A16 = _group(
    {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True},
    None,
)
W4A16_ASYM = _group(
    {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": False},
    None,
)
W8A8_INT8 = _group(
    {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True},
    {"num_bits": 8, "type": "int", "strategy": "token", "dynamic": True},
)
W8A8_FP8 = _group(
    {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True},
    {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True},
)
NVFP4 = _group(
    {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16},
    {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16},
)


def _review(tmp_path: Path, quant: dict[str, object], gpus: str, version: str) -> Report:
    folder = tmp_path / "Llama-3.1-8B-Instruct-quantized"
    folder.mkdir(exist_ok=True)
    config = {**LLAMA_8B, "quantization_config": quant}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return check_text(f"vllm serve {folder}", CheckOptions(gpus=gpus, vllm_version=version))


@pytest.mark.parametrize(
    ("quant", "scheme"),
    [
        (W4A16, "W4A16"),
        (W4A16_ASYM, "W4A16-asym"),
        (W8A8_INT8, "W8A8-INT8"),
        (W8A8_FP8, "W8A8-FP8"),
        (NVFP4, "NVFP4"),
    ],
)
def test_the_scheme_is_read_from_config_groups(quant: dict[str, object], scheme: str) -> None:
    facts = model_facts({**LLAMA_8B, "quantization_config": quant}, "m", "local")
    assert facts.quantization is not None
    assert facts.quantization.scheme == scheme


def test_a_group_without_weights_numbers_has_no_scheme() -> None:
    assert compressed_scheme({"type": "int"}, {}) is None


@pytest.mark.parametrize(
    ("quant", "gpus", "version", "refused"),
    [
        (W4A16, "1xT4", "0.11.0", True),  # wNa16 needed 8.0 until 0.11
        (W4A16, "1xT4", "0.12.0", False),  # 7.5 from 0.12 (Exllama for symmetric weights)
        (W4A16_ASYM, "1xT4", "0.12.0", True),  # zero points need Marlin: 7.5 from 0.15
        (W4A16_ASYM, "1xT4", "0.16.0", False),
        (W8A8_INT8, "1xT4", "0.8.5", False),  # 7.5 in every release
        (W8A8_INT8, "1xV100", "0.33.0", True),
        (W8A8_FP8, "1xA100-80GB", "0.9.2", False),  # falls back to weight-only FP8 Marlin
        (W8A8_FP8, "1xT4", "0.14.1", True),
        (W8A8_FP8, "1xT4", "0.16.0", False),
        (NVFP4, "1xT4", "0.14.1", True),
        (NVFP4, "1xT4", "0.16.0", False),
    ],
)
def test_each_scheme_has_its_own_minimum_capability(
    tmp_path: Path, quant: dict[str, object], gpus: str, version: str, refused: bool
) -> None:
    report = _review(tmp_path, quant, gpus, version)
    found = [f for f in report.findings if f.rule == "quant-unsupported-gpu"]
    assert bool(found) == refused
    if found:
        assert "compressed-tensors W" in found[0].title.text() or "NVFP4" in found[0].title.text()
        assert "Quantization scheme is not supported" in found[0].why.text()


def test_compressed_tensors_groups_count_their_scales(tmp_path: Path) -> None:
    """W4A16 symmetric in groups of 128: 4 + 16/128 bits per linear weight, no zero points."""
    report = _review(tmp_path, W4A16, "1xA100-80GB", "0.33.0")
    est = report.estimate
    assert est is not None
    assert 4.1 < est.weight_bits < 6.0  # embeddings and lm_head stay 16-bit
    assert report.model is not None and report.model.quantization is not None
    assert report.model.quantization.group_size == 128


def _check(command: str, gpus: str, version: str | None = "0.33.0") -> Report:
    return check_text(command, CheckOptions(gpus=gpus, vllm_version=version))


def test_an_awq_share_that_splits_a_group_stops_the_start() -> None:
    """vllm#13640 (0.7.2, 2x A800): 'Weight input_size_per_partition = 14784 is not divisible
    by min_thread_k = 128' for Qwen2.5-VL-72B-Instruct-AWQ at TP 2."""
    report = _check(
        "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-VL-72B-Instruct-AWQ "
        "--tensor-parallel-size 2",
        "2xA800",
        "0.7.2",
    )
    (finding,) = [f for f in report.findings if f.rule == "quant-tp-shape"]
    assert finding.severity == "error"
    assert "14784" in finding.title.text() and "128" in finding.title.text()
    assert "14784" in finding.title.text("zh-TW")


def test_a_checkpoint_known_by_name_only_may_be_padded() -> None:
    """QwenLM/Qwen3-VL#1353: a local copy named Qwen2.5-VL-72B-Instruct-AWQ ran at TP 8; the
    republished checkpoint pads its layers, which a name cannot tell."""
    report = _check(
        'vllm serve "Qwen2.5-VL-72B-Instruct-AWQ" --tensor-parallel-size 8', "8xA100-80GB"
    )
    (finding,) = [f for f in report.findings if f.rule == "quant-tp-shape"]
    assert finding.severity == "warning"


def test_experts_that_split_a_group_start_and_warn() -> None:
    """vllm#17604 (0.9.1, 8x A800-40GB): Qwen3-235B-A22B-GPTQ-Int4 at TP 8 started, and the
    first request failed in the MoE WNA16 kernel ('size_k must divisible by BLOCK_SIZE_K')."""
    command = "vllm serve Qwen/Qwen3-235B-A22B-GPTQ-Int4 -tp 8 --enforce-eager"
    report = _check(command, "8xA800-40GB", "0.9.1")
    assert report.model is not None and report.model.source == "catalog"
    (finding,) = [f for f in report.findings if f.rule == "quant-tp-shape"]
    assert finding.severity == "warning"
    assert "moe_intermediate_size" in finding.why.text()
    assert "enable-expert-parallel" in finding.fix.text()
    parallel = _check(f"{command} --enable-expert-parallel", "8xA800-40GB", "0.9.1")
    assert "quant-tp-shape" not in {f.rule for f in parallel.findings}


def _rules(command: str, gpus: str, version: str) -> dict[str, str]:
    report = check_text(
        command, CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    )
    return {f.rule: f.severity for f in report.findings}


def test_a_name_saying_awq_and_asym_is_llm_compressors_asymmetric_w4a16() -> None:
    # llm-compressor's AWQ preset W4A16_ASYM writes compressed-tensors; in 0.9.2 its WNA16
    # scheme needs 8.0 (`CompressedTensorsWNA16.get_min_capability`), AutoAWQ's format 7.5.
    command = "vllm serve /models/Qwen3-32B-abliterated-awq-asym-mse --max-model-len 4096 -tp 2"
    found = _rules(command, "2xRTX 2080 Ti", "0.9.2")
    assert found.get("quant-unsupported-gpu") == "error"
    plain = _rules(
        "vllm serve /models/Qwen3-32B-AWQ --max-model-len 4096 -tp 2", "2xRTX 2080 Ti", "0.9.2"
    )
    assert "quant-unsupported-gpu" not in plain


def test_auto_dtype_falls_back_to_float16_before_ampere_from_0_9() -> None:
    # `_get_and_verify_dtype` (0.9.0 on): "Your device ... doesn't support torch.bfloat16.
    # Falling back to torch.float16", so neither the GPU nor AWQ's float16 kernels refuse it.
    command = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096"
    assert "dtype-unsupported-gpu" in _rules(command, "1xT4", "0.8.5")
    assert "dtype-unsupported-gpu" not in _rules(command, "1xT4", "0.9.0")
    awq = "vllm serve /models/Qwen2.5-7B-Instruct-AWQ --quantization awq --max-model-len 4096"
    assert "quant-dtype-unsupported" not in _rules(awq, "1xT4", "0.9.2")
