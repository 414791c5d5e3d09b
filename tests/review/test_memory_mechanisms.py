"""The memory verdicts of `check` on failed starts, from what vLLM does in the release (fit
records of tests/data/corpus/commands.json only): V1's batch defaults release by release, the
config `--hf-config-path` names, llm-compressor's weight-only names, and pipeline stages that
each run on their own cards with their own layers."""

from __future__ import annotations

import pytest

from servetune.review import hardware, pipeline_stages
from servetune.review.check import CheckOptions, check_text
from servetune.review.model_names import quantization_in_name
from servetune.review.settings import batch_defaults

from corpus_records import review_fit


@pytest.mark.parametrize(
    ("version", "gpu", "tokens", "seqs"),
    [
        ("0.8.1", "RTX-3090", 2048, 1024),  # 0.8.0-0.8.3: 1024 sequences on every GPU
        ("0.8.1", "H100-80GB-SXM", 8192, 1024),
        ("0.8.4", "RTX-3090", 2048, 256),  # 0.8.4: a card named H100/H200 alone gets more
        ("0.8.4", "A100-80GB-SXM", 2048, 256),
        ("0.8.5", "A100-80GB-SXM", 8192, 1024),  # 0.8.5: 70 GiB or more
        ("0.9.0", "A100-80GB-SXM", 2048, 256),  # 0.9.0: an A100 excepted
        ("0.9.0", "H100-80GB-SXM", 8192, 1024),
    ],
)
def test_v1_batch_defaults_follow_the_release(
    version: str, gpu: str, tokens: int, seqs: int
) -> None:
    spec = hardware.find_gpu(gpu)
    assert batch_defaults(version, spec)[:2] == (tokens, seqs)


def test_vllm_use_v1_0_takes_v0_defaults() -> None:
    options = CheckOptions(gpus="1xRTX-3090", vllm_version="0.8.1", detect_hardware=False)
    v1 = check_text("vllm serve Qwen/Qwen2.5-7B-Instruct", options)
    v0 = check_text("VLLM_USE_V1=0 vllm serve Qwen/Qwen2.5-7B-Instruct", options)
    assert (v1.settings.max_num_seqs, v0.settings.max_num_seqs) == (1024, 256)


def test_a_weight_only_scheme_name_is_compressed_tensors() -> None:
    found = quantization_in_name("Qwen2.5-32B-Instruct-INT8-W8A16")
    assert found is not None and found["quant_method"] == "compressed-tensors"
    four = quantization_in_name("org/Llama-3.1-8B-Instruct-quantized.w4a16")
    assert four is not None
    assert four["config_groups"] == {
        "group_0": {"weights": {"num_bits": 4, "type": "int", "symmetric": True, "group_size": 128}}
    }
    # W8A8 names are other toolchains' as often (Ascend's msit): no guess
    assert quantization_in_name("Qwen3-30B-A3B-W8A8") is None


def test_w8a16_on_two_3090s_fits_its_weights_but_not_the_sampler_of_1024_sequences() -> None:
    """vllm#17238 (0.8.1, V1): 16 GiB of 8-bit weights per 24 GB card; the sampler warm-up of
    V1's default 1024 sequences takes the rest ("No available memory for the cache blocks")."""
    report = review_fit("vllm-17238-qwen25-32b-w8a16-2x3090")
    rules = {f.rule for f in report.findings}
    assert "kv-cache-too-small" in rules and "weights-dont-fit" not in rules
    assert report.estimate is not None
    assert 15.5 < report.estimate.weights_gib_per_gpu < 16.5


def test_hf_config_path_decides_the_weights() -> None:
    """vllm#16128: an AWQ repo served with the unquantized repo's config (--hf-config-path)
    loads 16-bit weights, 44 GiB on a 24 GB A10."""
    report = review_fit("gh16128-mistral31-awq-a10-oom")
    assert "weights-dont-fit" in {f.rule for f in report.findings}
    assert report.model is not None and report.model.quantization is None


@pytest.mark.parametrize(
    ("layers", "pp", "version", "split"),
    [
        (48, 2, "0.16.0", (24, 24)),
        (61, 4, "0.16.0", (15, 15, 16, 15)),  # the remainder on the stages before the last (0.8+)
        (61, 4, "0.7.3", (15, 15, 15, 16)),  # the last stage took it before
    ],
)
def test_stage_layers(layers: int, pp: int, version: str, split: tuple[int, ...]) -> None:
    options = CheckOptions(gpus=f"{pp}xH100", vllm_version=version, detect_hardware=False)
    settings = check_text(f"vllm serve x --pipeline-parallel-size {pp}", options).settings
    assert pipeline_stages.stage_layers(layers, settings, version) == split


def test_mixed_cards_pipeline_stages_each_hold_their_own_layers() -> None:
    """vllm#34076 (0.15.2rc1): VLLM_PP_LAYER_PARTITION=16,32 over an RTX 5070 Ti and an RTX 5090
    D. vLLM had 3.18 GiB of KV memory on the 5070 Ti's stage and, as 0.14 to 0.16 check it,
    compared it with one 262144-token sequence of all 48 layers (24 GiB): at most 34736."""
    report = review_fit("gh34076-mixed-5070ti-5090d-pp2")
    est = report.estimate
    assert est is not None and est.kv_cache_gib_per_gpu is not None
    assert abs(est.kv_cache_gib_per_gpu - 3.18) / 3.18 < 0.1
    assert est.max_model_len_that_fits is not None
    assert abs(est.max_model_len_that_fits - 34736) / 34736 < 0.1
    rules = {f.rule for f in report.findings}
    assert "kv-cache-too-small" in rules and "weights-dont-fit" not in rules
