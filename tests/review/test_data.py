"""The packaged data tables and message tables: complete, consistent, loadable."""

from __future__ import annotations

from pathlib import Path

import pytest

import servetune
from servetune import texts
from servetune.review import hardware, model
from servetune.review.rules import RULES
from servetune.vllm import flags as vllm_flags

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"

# Every checkpoint in ../shared/reference/model_configs (the catalog must cover them all).
REFERENCE_MODELS = [
    "Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-3B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-32B-Instruct",
    "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct-AWQ",
    "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-4B", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B-FP8", "Qwen/Qwen3-14B", "Qwen/Qwen3-32B",
    "Qwen/Qwen3-32B-AWQ", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B", "THUDM/glm-4-9b-chat",
    "TheBloke/Llama-2-7B-Chat-GPTQ", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3",
    "google/gemma-2-9b-it", "google/gemma-2-27b-it", "google/gemma-3-12b-it", "google/gemma-3-27b-it",
    "meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.3-70B-Instruct",
    "microsoft/Phi-3.5-mini-instruct", "mistralai/Mistral-7B-Instruct-v0.3",
    "mistralai/Mistral-Small-24B-Instruct-2501", "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "openai/gpt-oss-20b", "openai/gpt-oss-120b",
]  # fmt: skip


@pytest.mark.parametrize("model_id", REFERENCE_MODELS)
def test_catalog_covers_every_reference_checkpoint(model_id: str) -> None:
    facts = model.find_model(model_id)
    assert facts is not None
    assert facts.source == "catalog"
    assert facts.num_attention_heads and facts.num_kv_heads and facts.head_dim
    assert facts.num_layers and facts.hidden_size and facts.vocab_size
    assert facts.max_model_len and facts.dtype


def test_catalog_matches_the_reference_directory_when_present() -> None:
    configs = REFERENCE / "model_configs"
    if not configs.is_dir():
        pytest.skip("../shared/reference is not beside this checkout")
    names = {p.stem.replace("__", "/", 1) for p in configs.glob("*.json")}
    assert names == set(REFERENCE_MODELS)


@pytest.mark.parametrize(
    ("model_id", "facts"),
    [
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", ("awq", 4, 128)),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", ("gptq", 8, 128)),
        ("Qwen/Qwen3-8B-FP8", ("fp8", 8, None)),
        ("openai/gpt-oss-20b", ("mxfp4", 4, None)),
        ("TheBloke/Llama-2-7B-Chat-GPTQ", ("gptq", 4, 128)),
    ],
)
def test_catalog_quantization(model_id: str, facts: tuple[str, int, int | None]) -> None:
    found = model.find_model(model_id)
    assert found is not None and found.quantization is not None
    q = found.quantization
    assert (q.method, q.bits, q.group_size) == facts


def test_catalog_architecture_details() -> None:
    v3 = model.find_model("deepseek-ai/DeepSeek-V3")
    assert v3 is not None and v3.is_mla and v3.kv_lora_rank == 512 and v3.num_experts == 256
    gemma3 = model.find_model("google/gemma-3-27b-it")  # text_config with transformers defaults
    assert gemma3 is not None
    assert (gemma3.num_layers, gemma3.sliding_window, gemma3.sliding_layers) == (62, 1024, 52)
    assert gemma3.vocab_size == 262208
    oss = model.find_model("openai/gpt-oss-120b")
    assert oss is not None and oss.is_moe and oss.sliding_window == 128
    qwen = model.find_model("Qwen/Qwen2.5-7B-Instruct")  # use_sliding_window false
    assert qwen is not None and qwen.sliding_window is None
    llama = model.find_model("meta-llama/llama-3.1-8b-instruct")  # case-insensitive
    assert llama is not None and llama.max_model_len == 131072  # llama3 rope: not multiplied


def test_local_dir_and_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "mymodel"
    local.mkdir()
    (local / "config.json").write_text('{"num_attention_heads": 8, "hidden_size": 512}', "utf-8")
    found = model.find_model(str(local))
    assert found is not None and found.source == "local" and found.head_dim == 64
    snapshot = tmp_path / "hub" / "models--acme--m" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"num_attention_heads": 4}', "utf-8")
    (tmp_path / "hub" / "models--acme--m" / "refs").mkdir()
    (tmp_path / "hub" / "models--acme--m" / "refs" / "main").write_text("abc", "utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    cached = model.find_model("acme/m")
    assert cached is not None and cached.source == "hf-cache" and cached.num_attention_heads == 4
    assert model.find_model("acme/unknown") is None


@pytest.mark.parametrize("content", ["{broken", "[1, 2]", "\xff\xfe"])
def test_broken_config_json_is_a_typed_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(servetune.ModelConfigError):
        model.find_model("x", model_config=path)


@pytest.mark.parametrize(
    ("spec", "name", "count"),
    [
        ("2xA100-80GB", "A100-80GB-SXM", 2), ("8xH100", "H100-SXM-80GB", 8), ("1xL4", "L4", 1),
        ("4xRTX4090", "RTX-4090", 4), ("a100", "A100-80GB-SXM", 1), ("A100-40GB", "A100-40GB-SXM", 1),
        ("H100-80GB", "H100-SXM-80GB", 1), ("H200", "H200-SXM-141GB", 1), ("L40S", "L40S", 1),
        ("A10G", "A10G", 1), ("A10", "A10", 1), ("T4", "T4", 1), ("V100-32GB", "V100-SXM2-32GB", 1),
        ("V100-16GB", "V100-SXM2-16GB", 1), ("V100", "V100-SXM2-16GB", 1),
        ("RTX3090", "RTX-3090", 1), ("A6000", "RTX-A6000", 1), ("B200", "B200", 1),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB-SXM", 1), ("Tesla T4", "T4", 1),
        ("NVIDIA GeForce RTX 4090", "RTX-4090", 1), ("4 x rtx 4090", "RTX-4090", 4),
        ("4090", "RTX-4090", 1),
    ],
)  # fmt: skip
def test_gpu_names(spec: str, name: str, count: int) -> None:
    machine = hardware.parse_gpus(spec)
    assert (machine.name, machine.count) == (name, count)


def test_gpu_count_only_and_unknown_names() -> None:
    assert hardware.parse_gpus("4") == hardware.Hardware(4, None, "--gpus")
    with pytest.raises(servetune.HardwareError) as info:
        hardware.parse_gpus("2xA100-80GX")  # "-80G" alone is a memory suffix (test_gpus.py)
    assert info.value.hint == "did you mean A100-80GB?"


def test_gpu_capabilities() -> None:
    caps = {g.name: g.capability for g in hardware.gpu_table()}
    assert caps["A100-80GB-SXM"] == 80 and caps["T4"] == 75 and caps["L4"] == 89
    assert caps["H100-SXM-80GB"] == 90 and caps["V100-SXM2-16GB"] == 70 and caps["B200"] == 100


def test_flag_tables() -> None:
    assert vllm_flags.known_versions()[0] == "0.4.1"
    assert vllm_flags.known_versions()[-1] == "0.33.0"
    for version in vllm_flags.known_versions():
        flags = vllm_flags.flags_of(version)
        assert "--tensor-parallel-size" in flags and "--max-model-len" in flags


def test_every_rule_has_a_message_in_every_language() -> None:
    for language in texts.LANGUAGES:
        for r in RULES:
            for field in ("title", "why", "fix"):
                assert texts.get("review", f"{r.id}.{field}", language), (language, r.id)
