"""Rules whose condition is a release's own check, read from its source, and the fit records
of tests/data/corpus/commands.json they were fixed on (issue 18)."""

from __future__ import annotations

import pytest

from servetune.review.check import CheckOptions, Report, check_text

from corpus_records import fit_record


def review(command: str, gpus: str | None, version: str | None) -> Report:
    options = CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    return check_text(command, options)


def found(report: Report) -> dict[str, str]:
    return {f.rule: f.severity for f in report.findings}


GPTQ = "vllm serve TheBloke/Llama-2-7B-Chat-GPTQ"
AWQ = "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ"


# --- quant-method-mismatch: a Marlin spelling, by release -----------------------------------
# 0.5.0.post1 gptq_marlin.py: `is_valid_user_quant = (user_quant is None or user_quant ==
# "marlin")`; 0.5.4 adds `or user_quant == "gptq_marlin"`. config.py `_verify_quantization`:
# "Quantization method specified in the model config ({quant_method}) does not match the
# quantization method specified in the `quantization` argument ({self.quantization})."


@pytest.mark.parametrize(
    ("command", "version", "refused"),
    [
        (f"{GPTQ} --quantization gptq_marlin", "0.4.2", False),  # compared as gptq_marlin
        (f"{GPTQ} --quantization gptq_marlin", "0.4.3", True),
        (f"{GPTQ} --quantization gptq_marlin", "0.5.3.post1", True),
        (f"{GPTQ} --quantization gptq_marlin", "0.5.4", False),
        (f"{AWQ} --quantization awq_marlin", "0.5.3", True),
        (f"{AWQ} --quantization awq_marlin", "0.5.4", False),
        (f"{AWQ} --quantization marlin", "0.5.2", True),  # no AWQ-Marlin before 0.5.3
        (f"{AWQ} --quantization marlin", "0.5.3", False),
        (f"{GPTQ} --quantization marlin", "0.4.1", True),  # no conversion before 0.4.2
        (f"{GPTQ} --quantization marlin", "0.4.2", False),
        (f"{GPTQ} --quantization gptq", "0.5.0", False),
    ],
)
def test_marlin_spelling_by_release(command: str, version: str, refused: bool) -> None:
    assert ("quant-method-mismatch" in found(review(command, "1xA100-80GB", version))) is refused


def test_fit_record_gptq_marlin_on_050post1() -> None:
    record = fit_record("vllm-5566-llama2-7b-gptq-marlin-flag")
    assert "--quantization gptq_marlin" in record["command"]
    report = review(record["command"], record["gpus"], record["vllm_version"])
    assert found(report)["quant-method-mismatch"] == "error"
    finding = next(f for f in report.findings if f.rule == "quant-method-mismatch")
    assert "(gptq_marlin)" in finding.why.text()
    assert report.corrected_command is not None
    assert "--quantization" not in report.corrected_command


# --- quant-dtype-unsupported: the checkpoint's dtype under --dtype auto ---------------------
# awq.py (0.4.1-0.23): `get_supported_act_dtypes` -> [torch.half]; `get_quant_config` checks
# `model_config.dtype`, which `--dtype auto` resolves to the config's `torch_dtype`
# (`_get_and_verify_dtype`): "torch.bfloat16 is not supported for quantization method awq".

CODELLAMA_AWQ = "vllm serve TheBloke/CodeLlama-7B-AWQ --quantization awq"


def test_auto_dtype_is_the_checkpoints() -> None:
    report = review(CODELLAMA_AWQ, "1xA100-80GB", "0.6.3")
    finding = next(f for f in report.findings if f.rule == "quant-dtype-unsupported")
    assert "the checkpoint's dtype" in finding.title.text()
    # the checkpoint's dtype is taken from a similar one (an inferred model): a warning
    assert finding.severity == "warning"
    assert "--dtype float16" in (report.corrected_command or "")


def test_auto_dtype_of_a_catalog_awq_checkpoint_is_an_error() -> None:
    # Qwen2.5-7B-Instruct-AWQ's config says float16: AWQ runs under auto
    assert "quant-dtype-unsupported" not in found(
        review(f"{AWQ} --quantization awq", "1xA10", "0.6.3")
    )
    report = review(f"{AWQ} --quantization awq --dtype bfloat16", "1xA10", "0.6.3")
    assert found(report)["quant-dtype-unsupported"] == "error"


def test_newest_takes_bf16_awq_and_older_releases_are_a_warning() -> None:
    assert "quant-dtype-unsupported" not in found(review(CODELLAMA_AWQ, "1xA100-80GB", "0.24.0"))
    report = review(CODELLAMA_AWQ, "1xA100-80GB", None)  # release unknown: the newest
    finding = next(f for f in report.findings if f.rule == "quant-dtype-unsupported")
    assert finding.severity == "warning"
    assert "before 0.24.0" in finding.title.text()


def test_fit_record_codellama_awq_bf16() -> None:
    record = fit_record("vllm-1479-codellama-7b-awq-bf16")
    assert "not supported for quantization method awq" in record["vllm_said"]
    report = review(record["command"], record["gpus"], record["vllm_version"])
    assert "quant-dtype-unsupported" in found(report)


# --- prefix-caching-sliding-window ----------------------------------------------------------
# 0.4.1 block_manager_v1.py: `if enable_caching and sliding_window is not None: raise
# NotImplementedError("Sliding window is not allowed with prefix caching enabled!")`;
# 0.8.5 config.py `_verify_prefix_caching`: `if self.sliding_window is not None and not
# envs.VLLM_USE_V1: raise NotImplementedError("Prefix caching is not supported with sliding
# window. ...")`.

MISTRAL = "vllm serve mistralai/Mistral-7B-v0.1 --enable-prefix-caching"


@pytest.mark.parametrize(
    ("command", "version", "severity"),
    [
        (MISTRAL, "0.4.1", "error"),
        (MISTRAL, "0.7.3", "error"),
        (f"VLLM_USE_V1=0 {MISTRAL}", "0.8.5", "error"),
        (MISTRAL, "0.8.5", None),  # V1 caches sliding-window layers
        (f"{MISTRAL} --disable-sliding-window", "0.6.3", None),
        (MISTRAL.replace(" --enable-prefix-caching", ""), "0.6.3", None),
        (MISTRAL, None, "info"),  # release unknown: older releases refuse it
    ],
)
def test_prefix_caching_sliding_window(command: str, version: str | None, severity: str) -> None:
    assert found(review(command, "1xA100-80GB", version)).get("prefix-caching-sliding-window") == (
        severity
    )


def test_prefix_caching_fix_before_the_disable_flag() -> None:
    report = review(MISTRAL, "1xA100-80GB", "0.4.1")  # no --disable-sliding-window before 0.4.3
    assert "--enable-prefix-caching" not in (report.corrected_command or "")
    report = review(MISTRAL, "1xA100-80GB", "0.6.3")
    assert "--disable-sliding-window" in (report.corrected_command or "")


def test_fit_record_mistral7b_prefix_caching() -> None:
    record = fit_record("gh3781-mistral7b-prefix-caching-sliding")
    assert "Sliding window is not allowed with prefix caching" in record["vllm_said"]
    report = review(record["command"], record["gpus"], record["vllm_version"])
    assert "prefix-caching-sliding-window" in found(report)
    assert "prefix-caching-sliding-window" in found(review(record["command"], None, "0.4.1"))


# --- arch-unsupported-in-release: --config-format mistral names the architecture ------------
# 0.8.1 transformers_utils/config.py `load_params_config`: `config_dict["architectures"] =
# ["MistralForCausalLM"]` (`["MixtralForCausalLM"]` with `moe`), and
# `["PixtralForConditionalGeneration"]` where `vision_encoder` is set.


def test_mistral_config_format_reads_pixtral() -> None:
    record = fit_record("gh16128-mistral31-awq-a10-oom")
    assert "--config-format mistral" in record["command"]
    report = review(record["command"], record["gpus"], record["vllm_version"])
    assert "arch-unsupported-in-release" not in found(report)
    # without it the checkpoint's own Mistral3ForConditionalGeneration is looked up (0.8.3 on)
    plain = "vllm serve mistralai/Mistral-Small-3.1-24B-Instruct-2503"
    assert "arch-unsupported-in-release" in found(review(plain, "1xH100", "0.8.1"))


# --- bool-flag-value: StoreBoolean switches took a value until 0.8.5 ------------------------
# 0.8.4 arg_utils.py: `'--enable-chunked-prefill', action=StoreBoolean, ... nargs="?",
# const="True"`; 0.8.5: `**scheduler_kwargs["enable_chunked_prefill"]`, whose `get_kwargs` gives
# a bool `action = argparse.BooleanOptionalAction` (no value taken).


@pytest.mark.parametrize(
    ("version", "refused"), [("0.6.3", False), ("0.8.0", False), ("0.8.4", False), ("0.8.5", True)]
)
def test_enable_chunked_prefill_false_by_release(version: str, refused: bool) -> None:
    command = "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-chunked-prefill False"
    rules = found(review(command, "1xA100-80GB", version))
    assert ("bool-flag-value" in rules) is refused


def test_a_store_true_switch_given_a_value_from_08() -> None:
    command = "vllm serve Qwen/Qwen2.5-7B-Instruct --enforce-eager False"
    assert "bool-flag-value" in found(review(command, "1xA100-80GB", "0.8.0"))
