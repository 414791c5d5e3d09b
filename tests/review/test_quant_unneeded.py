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
