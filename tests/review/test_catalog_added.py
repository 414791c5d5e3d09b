"""Checkpoints the real commands of issue 19 name, added from config.json copies found in public
repositories (where each was read: `checked_against` in scripts/sources/catalog_models.json):
check and plan share the catalog, so both find them with the facts the file gives."""

from __future__ import annotations

import json

import pytest

from servetune.cli.main import main
from servetune.review import model
from servetune.review.check import CheckOptions, check_text

# (id, (layers, attention heads, KV heads, experts, context))
ADDED = [
    ("allenai/Olmo-3-1125-32B", (64, 40, 8, None, 65536)),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", (48, 16, 2, 512, 262144)),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", (48, 16, 2, 512, 262144)),
    ("Qwen/Qwen3.5-397B-A17B", (60, 32, 2, 512, 262144)),
    ("Qwen/Qwen3.5-397B-A17B-FP8", (60, 32, 2, 512, 262144)),
    ("Qwen/Qwen3-VL-30B-A3B-Instruct", (48, 32, 4, 128, 262144)),
    ("Qwen/Qwen3-VL-30B-A3B-Instruct-FP8", (48, 32, 4, 128, 262144)),
    ("Qwen/Qwen3-VL-235B-A22B-Instruct", (94, 64, 4, 128, 262144)),
    ("Qwen/Qwen3-VL-235B-A22B-Instruct-FP8", (94, 64, 4, 128, 262144)),
    ("MiniMaxAI/MiniMax-M2", (62, 48, 8, 256, 196608)),
    ("zai-org/GLM-4.5", (92, 96, 8, 160, 131072)),
    ("zai-org/GLM-4.5-FP8", (92, 96, 8, 160, 131072)),
    ("zai-org/GLM-4.5-Air-FP8", (46, 96, 8, 128, 131072)),
    ("codellama/CodeLlama-7b-hf", (32, 32, 32, None, 16384)),
    ("codellama/CodeLlama-7b-Instruct-hf", (32, 32, 32, None, 16384)),
    ("codellama/CodeLlama-7b-Python-hf", (32, 32, 32, None, 16384)),
    ("codellama/CodeLlama-13b-hf", (40, 40, 40, None, 16384)),
    ("codellama/CodeLlama-13b-Instruct-hf", (40, 40, 40, None, 16384)),
    ("codellama/CodeLlama-13b-Python-hf", (40, 40, 40, None, 16384)),
    ("codellama/CodeLlama-34b-hf", (48, 64, 8, None, 16384)),
    ("codellama/CodeLlama-34b-Instruct-hf", (48, 64, 8, None, 16384)),
    ("codellama/CodeLlama-34b-Python-hf", (48, 64, 8, None, 16384)),
    ("OpenGVLab/InternVL3-78B", (80, 64, 8, None, 32768)),
]


@pytest.mark.parametrize(("model_id", "shape"), ADDED)
def test_the_catalog_holds_the_added_checkpoint(
    model_id: str, shape: tuple[int, int, int, int | None, int]
) -> None:
    facts = model.find_model(model_id)
    assert facts is not None and facts.source == "catalog"
    found = (
        facts.num_layers,
        facts.num_attention_heads,
        facts.num_kv_heads,
        facts.num_experts,
        facts.max_model_len,
    )
    assert found == shape
    assert facts.head_dim and facts.vocab_size


@pytest.mark.parametrize("model_id", [row[0] for row in ADDED])
def test_check_reviews_it_from_the_catalog(model_id: str) -> None:
    report = check_text(
        f"vllm serve {model_id}",
        CheckOptions(gpus="8xH100", vllm_version="0.11.0", detect_hardware=False),
    )
    described = report.to_json()["model"]
    assert isinstance(described, dict) and described["source"] == "catalog"
    assert "model-unknown" not in {f.rule for f in report.findings}


def test_layouts_the_files_spell() -> None:
    # OLMo 3: three sliding-window layers of 4,096 to each full one; YaRN's 65,536 not multiplied.
    olmo = model.find_model("allenai/Olmo-3-1125-32B")
    assert olmo is not None and (olmo.sliding_window, olmo.sliding_layers) == (4096, 48)
    # Qwen3-Next: Gated DeltaNet on 3 of every 4 layers, one shared expert of 512.
    nxt = model.find_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert nxt is not None and nxt.is_hybrid and nxt.attention_layers == 12
    assert (nxt.experts_per_token, nxt.num_shared_experts) == (10, 1)
    # Qwen3.5-397B: 15 gated full-attention layers among 60, one MTP layer.
    big = model.find_model("Qwen/Qwen3.5-397B-A17B")
    assert big is not None and big.attention_layers == 15 and big.attn_output_gate
    assert (big.experts_per_token, big.num_shared_experts, big.mtp_layers) == (10, 1, 1)
    # GLM-4.5: three dense layers first, one shared expert, GLM-4.6's shape at 131,072 tokens.
    glm = model.find_model("zai-org/GLM-4.5")
    assert glm is not None and (glm.num_dense_layers, glm.num_shared_experts) == (3, 1)
    fp8 = model.find_model("zai-org/GLM-4.5-FP8")
    assert fp8 is not None and fp8.quantization is not None
    assert (fp8.quantization.method, fp8.quantization.bits) == ("fp8", 8)
    # CodeLlama-Python drops the 16 infilling tokens the others add to Llama 2's vocabulary.
    python = model.find_model("codellama/CodeLlama-7b-Python-hf")
    instruct = model.find_model("codellama/CodeLlama-7b-Instruct-hf")
    assert python is not None and instruct is not None
    assert (python.vocab_size, instruct.vocab_size) == (32000, 32016)


@pytest.mark.parametrize(
    ("gpus", "command"),
    [
        (
            "4xH100",
            "Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 --max-model-len 32768",
        ),
        ("8xH100", "zai-org/GLM-4.5-FP8 --tensor-parallel-size 8 --max-model-len 32768"),
        ("1xH100", "allenai/Olmo-3-1125-32B --max-model-len 32768"),
        ("1xA100-80GB", "codellama/CodeLlama-13b-Instruct-hf"),
    ],
)
def test_plan_answers_for_them(capsys: pytest.CaptureFixture[str], gpus: str, command: str) -> None:
    code = main(
        ["plan", "--vllm-version", "0.11.0", "--gpus", gpus, "--input-len", "1000",
         "--output-len", "200", "--concurrency", "8", "--format", "json", "--", "vllm", "serve",
         *command.split()]
    )  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    prediction = doc["prediction"]
    assert isinstance(prediction, dict) and prediction["output_throughput"] > 0
