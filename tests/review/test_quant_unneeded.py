"""`quant-unneeded`: a quantized checkpoint where the original fits with room for the batch."""

from __future__ import annotations

from servetune.review.check import CheckOptions, check_text


def test_the_finding_says_what_the_original_needs_and_points_at_quality() -> None:
    report = check_text(
        "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --max-model-len 4096 --max-num-seqs 64",
        CheckOptions(gpus="1xH100-80GB", vllm_version="0.33.0"),
    )
    (finding,) = [f for f in report.findings if f.rule == "quant-unneeded"]
    assert finding.severity == "warning"
    assert "GiB per GPU" in finding.why.text() and "64 sequences" in finding.why.text()
    assert "servetune quality" in finding.fix.text()
    assert "servetune quality" in finding.fix.text("zh-TW")
    assert "量化" in finding.title.text("zh-TW")


def test_a_batch_the_original_could_not_hold_keeps_the_quantization() -> None:
    """On one 24 GB L4 the original 7B leaves room for few 2k-token sequences, not 256."""
    report = check_text(
        "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --max-model-len 4096 --max-num-seqs 256",
        CheckOptions(gpus="1xL4", vllm_version="0.33.0"),
    )
    assert "quant-unneeded" not in {f.rule for f in report.findings}


def test_vllm_s_defaults_on_an_h100_weigh_what_awq_buys() -> None:
    """`vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ` on one H100-80GB: the original 7B leaves about
    a million tokens of KV cache and AWQ adds only ~16% to it. The old rule wanted every one of
    the 1,024 default slots at 2k tokens (2.1M tokens) and stayed silent."""
    report = check_text(
        "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ",
        CheckOptions(gpus="1xH100-80GB", vllm_version="0.33.0"),
    )
    (finding,) = [f for f in report.findings if f.rule == "quant-unneeded"]
    assert finding.severity == "warning"
    why = finding.why.text()
    assert "% more" in why and "conversations of 2048 tokens" in why
    assert "1024" in why  # the load it was weighed against
    assert "多" in finding.title.text("zh-TW")


def test_a_quantization_that_buys_a_real_share_of_the_load_is_kept() -> None:
    """On one L4 the original 7B holds about 45 conversations of 2k tokens; AWQ triples that:
    worth it for a server that runs 256 at once."""
    report = check_text(
        "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ",
        CheckOptions(gpus="1xL4", vllm_version="0.33.0"),
    )
    assert "quant-unneeded" not in {f.rule for f in report.findings}


def test_an_original_that_cannot_hold_one_full_sequence_keeps_the_quantization() -> None:
    report = check_text(
        "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --max-model-len 32768 --max-num-seqs 1",
        CheckOptions(gpus="1xRTX4060-Laptop", vllm_version="0.33.0"),
    )
    assert "quant-unneeded" not in {f.rule for f in report.findings}
