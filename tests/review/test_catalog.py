"""The catalog covers the families users serve with vLLM, and names outside it are inferred."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.review import model, settings, weights
from servetune.review.check import CheckOptions, check_text
from servetune.review.model_names import match_name, quantization_in_name
from servetune.vllm import serve_command

SOURCES = Path(__file__).resolve().parents[2] / "scripts" / "sources" / "catalog_models.json"
CHECKS = SOURCES.with_name("catalog_checks.json")

# One checkpoint per family the issue lists: (id, layers, attention heads, KV heads, experts).
# The numbers are the published config.json values (sources in scripts/sources).
FAMILIES = [
    ("Qwen/Qwen1.5-7B-Chat", 32, 32, 32, None),
    ("Qwen/Qwen1.5-72B-Chat-AWQ", 80, 64, 64, None),
    ("Qwen/Qwen2-7B-Instruct", 28, 28, 4, None),
    ("Qwen/Qwen2-72B-Instruct-GPTQ-Int4", 80, 64, 8, None),
    ("Qwen/Qwen2.5-14B-Instruct-AWQ", 48, 40, 8, None),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", 64, 40, 8, None),
    ("Qwen/Qwen2.5-Math-7B-Instruct", 28, 28, 4, None),
    ("Qwen/Qwen2.5-VL-7B-Instruct", 28, 28, 4, None),
    ("Qwen/Qwen3-30B-A3B-FP8", 48, 32, 4, 128),
    ("Qwen/Qwen3-235B-A22B-FP8", 94, 64, 4, 128),
    ("Qwen/QwQ-32B", 64, 40, 8, None),
    ("meta-llama/Llama-2-13b-chat-hf", 40, 40, 40, None),
    ("meta-llama/Meta-Llama-3-8B-Instruct", 32, 32, 8, None),
    ("meta-llama/Llama-3.1-405B-Instruct-FP8", 126, 128, 8, None),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", 40, 32, 8, None),
    ("meta-llama/Llama-3.3-70B-Instruct", 80, 64, 8, None),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 48, 40, 8, 16),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 48, 40, 8, 128),
    ("mistralai/Mistral-7B-Instruct-v0.2", 32, 32, 8, None),
    ("mistralai/Mistral-Nemo-Instruct-2407", 40, 32, 8, None),
    ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", 40, 32, 8, None),
    ("mistralai/Mistral-Large-Instruct-2407", 88, 96, 8, None),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", 56, 48, 8, 8),
    ("mistralai/Devstral-Small-2505", 40, 32, 8, None),
    ("google/gemma-2-2b-it", 26, 8, 4, None),
    ("google/gemma-3-1b-it", 26, 4, 1, None),
    ("google/gemma-3-4b-it", 34, 8, 4, None),
    ("microsoft/Phi-3-mini-4k-instruct", 32, 32, 32, None),
    ("microsoft/Phi-3.5-MoE-instruct", 32, 32, 8, 16),
    ("microsoft/phi-4", 40, 40, 10, None),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", 27, 16, 16, 64),
    ("deepseek-ai/DeepSeek-V2-Chat", 60, 128, 128, 160),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", 80, 64, 8, None),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 28, 12, 2, None),
    ("deepseek-ai/deepseek-coder-6.7b-instruct", 32, 32, 32, None),
    ("THUDM/GLM-4-9B-0414", 40, 32, 2, None),
    ("THUDM/GLM-4-32B-0414", 61, 48, 2, None),
    ("internlm/internlm2_5-7b-chat", 32, 32, 8, None),
    ("internlm/internlm3-8b-instruct", 48, 32, 2, None),
    ("OpenGVLab/InternVL2-8B", 32, 32, 8, None),
    ("OpenGVLab/InternVL2_5-78B", 80, 64, 8, None),
    ("01-ai/Yi-1.5-34B-Chat", 60, 56, 8, None),
    ("openai/gpt-oss-20b", 24, 64, 8, 32),
    ("moonshotai/Kimi-K2-Instruct", 61, 64, 64, 384),
]


@pytest.mark.parametrize(("model_id", "layers", "heads", "kv_heads", "experts"), FAMILIES)
def test_every_family_is_in_the_catalog(
    model_id: str, layers: int, heads: int, kv_heads: int, experts: int | None
) -> None:
    facts = model.find_model(model_id)
    assert facts is not None and facts.source == "catalog"
    assert (facts.num_layers, facts.num_attention_heads, facts.num_kv_heads) == (
        layers,
        heads,
        kv_heads,
    )
    assert facts.num_experts == experts
    assert facts.max_model_len and facts.dtype and facts.head_dim and facts.vocab_size


@pytest.mark.parametrize(
    ("model_id", "method", "bits"),
    [
        ("Qwen/Qwen2-7B-Instruct-AWQ", "awq", 4),
        ("Qwen/Qwen1.5-14B-Chat-GPTQ-Int8", "gptq", 8),
        ("Qwen/Qwen3-32B-FP8", "fp8", 8),
        ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "awq", 4),
        ("moonshotai/Kimi-K2-Instruct", "fp8", 8),
        ("openai/gpt-oss-120b", "mxfp4", 4),
    ],
)
def test_quantized_variants_carry_their_block(model_id: str, method: str, bits: int) -> None:
    facts = model.find_model(model_id)
    assert facts is not None and facts.quantization is not None
    assert (facts.quantization.method, facts.quantization.bits) == (method, bits)


def test_every_catalog_entry_has_a_source_and_full_shape() -> None:
    sources = model.catalog_sources()
    for model_id in model.catalog():
        assert sources.get(model_id, "").strip(), model_id
        facts = model.find_model(model_id)
        assert facts is not None and facts.num_layers and facts.num_kv_heads, model_id


def test_sources_file_cites_a_url_for_each_new_entry() -> None:
    listed = json.loads(SOURCES.read_text(encoding="utf-8"))
    for entry in listed["models"]:
        assert entry["source"].startswith("https://"), entry["id"]
    assert len(model.catalog()) >= 250


@pytest.mark.parametrize(
    ("name", "taken", "exact"),
    [
        ("/models/gemma-3-4b-it", "google/gemma-3-4b-it", True),
        ("org/Llama-3-8B-Instruct-Gradient-1048k", "meta-llama/Meta-Llama-3-8B-Instruct", False),
        ("Mistral-Large-Instruct-2407/", "mistralai/Mistral-Large-Instruct-2407", True),
        ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "Qwen/Qwen3-8B", False),
        ("/data/qwen2.5-72b-instruct-awq", "Qwen/Qwen2.5-72B-Instruct-AWQ", True),
        ("NousResearch/Hermes-3-Llama-3.1-8B", "meta-llama/Llama-3.1-8B", False),
        ("casperhansen/llama-3-70b-instruct-awq", "meta-llama/Meta-Llama-3-70B-Instruct", False),
        ("OpenGVLab/InternVL2_5-8B-MPO", "OpenGVLab/InternVL2_5-8B", False),
        ("./Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", True),
        ("C:\\models\\Phi-4-mini-instruct", "microsoft/Phi-4-mini-instruct", True),
    ],
)
def test_names_map_to_the_checkpoint_they_come_from(name: str, taken: str, exact: bool) -> None:
    found = match_name(name, model.catalog())
    assert found is not None
    assert (found.checkpoint, found.exact) == (taken, exact)


@pytest.mark.parametrize("name", ["lmsys/vicuna-7b-v1.5", "/models/my-model", "bert-base"])
def test_unrelated_names_stay_unknown(name: str) -> None:
    assert model.find_model(name) is None


def test_qwen_7b_is_not_taken_for_72b() -> None:
    found = match_name("my/qwen2.5-72b-sft", model.catalog())
    assert found is not None and "72B" in found.checkpoint


def test_an_inferred_fine_tune_keeps_the_architecture_but_not_the_context() -> None:
    facts = model.find_model("org/Llama-3-8B-Instruct-Gradient-1048k")
    assert facts is not None
    assert facts.source == "inferred"
    assert facts.inferred_from == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert (facts.num_layers, facts.num_kv_heads, facts.dtype) == (32, 8, "bfloat16")
    assert facts.max_model_len is None  # fine-tunes stretch it (-1048k)


def test_a_local_copy_keeps_the_context_too() -> None:
    facts = model.find_model("/models/gemma-3-4b-it")
    assert facts is not None and facts.source == "inferred"
    assert facts.max_model_len == 131072


@pytest.mark.parametrize(
    ("name", "method", "bits"),
    [
        ("unsloth/Qwen2.5-7B-Instruct-bnb-4bit", "bitsandbytes", 4),
        ("someone/Mistral-Nemo-Instruct-2407-GPTQ-Int8", "gptq", 8),
        ("kaitchup/Kimi-K2-Instruct-AWQ", "awq", 4),
        ("/models/qwen2.5-7b-instruct-q4_k_m.gguf", "gguf", 4),
        ("/models/Meta-Llama-3-8B-Instruct.Q8_0.gguf", "gguf", 8),
    ],
)
def test_a_quantization_in_the_name_replaces_the_checkpoints(
    name: str, method: str, bits: int
) -> None:
    facts = model.find_model(name)
    assert facts is not None and facts.quantization is not None
    assert (facts.quantization.method, facts.quantization.bits) == (method, bits)
    assert quantization_in_name("plain-Qwen2.5-7B") is None


def check(command: str, gpus: str) -> dict[str, tuple[str, str]]:
    report = check_text(
        command, CheckOptions(gpus=gpus, vllm_version="0.33.0", detect_hardware=False)
    )
    return {f.rule: (f.severity, f.title.text()) for f in report.findings}


def test_check_says_which_checkpoint_a_name_was_taken_to_be() -> None:
    found = check("vllm serve org/Llama-3-8B-Instruct-Gradient-1048k", "1xH100")
    severity, title = found["model-inferred"]
    assert severity == "info"
    assert "meta-llama/Meta-Llama-3-8B-Instruct" in title
    assert "model-unknown" not in found


def test_rules_run_on_inferred_facts() -> None:
    # Mistral Large has 8 KV heads: TP 3 cannot split them, whatever the folder is called.
    found = check("vllm serve Mistral-Large-Instruct-2407/ -tp 3", "4xH100")
    assert "tp-heads-indivisible" in found
    assert "copy of mistralai/Mistral-Large-Instruct-2407" in found["model-inferred"][1]
    # Gemma 3 refuses float16 in vLLM; the family fixes that for a local copy too.
    found = check("vllm serve /models/gemma-3-4b-it --dtype float16", "1xL4")
    assert any("float16" in title for _, title in found.values())


def test_json_source_is_inferred() -> None:
    report = check_text(
        "vllm serve /models/gemma-3-4b-it",
        CheckOptions(gpus="1xL4", vllm_version="0.33.0", detect_hardware=False),
    )
    model = report.to_json()["model"]
    assert isinstance(model, dict) and model["source"] == "inferred"


# Parameter counts the publishers state on their model cards (Hugging Face "Model size"), in
# billions: the architecture the catalog holds must add up to them (text weights; vision
# encoders excluded). A wrong width, layer count or tie shows up here.
PUBLISHED_SIZES = [
    ("Qwen/Qwen1.5-0.5B-Chat", 0.62),
    ("Qwen/Qwen1.5-110B-Chat", 111.0),
    ("Qwen/Qwen1.5-MoE-A2.7B-Chat", 14.3),
    ("Qwen/Qwen2-57B-A14B-Instruct", 57.4),
    ("meta-llama/Llama-3.1-405B-Instruct", 405.0),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 108.6),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 400.7),
    ("mistralai/Mistral-Large-Instruct-2407", 122.6),
    ("mistralai/Mistral-Nemo-Instruct-2407", 12.2),
    ("google/gemma-2-2b-it", 2.61),
    ("google/gemma-2-9b-it", 9.24),
    ("microsoft/phi-4", 14.7),
    ("microsoft/Phi-3.5-MoE-instruct", 41.9),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", 15.7),
    ("deepseek-ai/DeepSeek-V2-Chat", 236.0),
    ("internlm/internlm3-8b-instruct", 8.8),
    ("01-ai/Yi-1.5-34B-Chat", 34.4),
    ("moonshotai/Kimi-K2-Instruct", 1026.0),
    ("openai/gpt-oss-120b", 116.8),
]


@pytest.mark.parametrize(("model_id", "billions"), PUBLISHED_SIZES)
def test_catalog_architectures_add_up_to_the_published_size(model_id: str, billions: float) -> None:
    facts = model.find_model(model_id)
    assert facts is not None
    effective = settings.resolve(serve_command.parse_text(f"vllm serve {model_id}"), facts, None)
    _, params = weights.weight_bytes(facts, effective)
    assert params / 1e9 == pytest.approx(billions, rel=0.03)


def _checks() -> dict[str, dict[str, object]]:
    listed = json.loads(CHECKS.read_text(encoding="utf-8"))
    return {k: v for k, v in listed.items() if not k.startswith("_")}


def test_every_check_names_the_copy_it_read() -> None:
    entries = {e["id"] for e in json.loads(SOURCES.read_text(encoding="utf-8"))["models"]}
    checks = _checks()
    assert len(checks) >= 25
    for model_id, check in checks.items():
        assert model_id in entries, model_id
        source = check["checked_against"]
        assert isinstance(source, str) and (" @" in source or "search-index" in source), model_id
        assert isinstance(check["verified"], bool) and check["keys"], model_id
        fixed = check["fixed"]
        assert isinstance(fixed, dict) and all(len(pair) == 2 for pair in fixed.values()), model_id
        if not check["verified"]:
            assert check.get("note"), model_id  # partial copy or a sibling's file: say which


def _value(config: dict[str, object], dotted: str) -> object:
    value: object = config
    for part in dotted.split("."):
        assert isinstance(value, dict)
        value = value.get(part)
    return value


def test_the_built_catalog_carries_each_fix_and_names_the_check() -> None:
    configs = model.catalog()
    sources = model.catalog_sources()
    fixes = 0
    for model_id, check in _checks().items():
        assert str(check["checked_against"]) in sources[model_id], model_id
        assert ("verified against" in sources[model_id]) is check["verified"], model_id
        fixed = check["fixed"]
        assert isinstance(fixed, dict)
        for dotted, (_, real) in fixed.items():
            assert _value(configs[model_id], dotted) == real, (model_id, dotted)
            fixes += 1
    assert fixes >= 1
    # The real file wins: Qwen3-Coder-480B's rope base is 10,000,000, not Qwen3-235B's million.
    assert configs["Qwen/Qwen3-Coder-480B-A35B-Instruct"]["rope_theta"] == 10000000
