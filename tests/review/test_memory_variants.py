"""A memory verdict on a GPU name sold with more than one memory size (`H20`: 96 GB, or 141 GB
as the H20-3e) holds for each card only where it holds for all of them; else it is a warning
that names both cards. A name that says its memory keeps its exact verdict."""

from __future__ import annotations

from servetune import CheckOptions, check_text

# Qwen3-32B in bfloat16 at 0.75: ~61 GiB of weights leave ~7.6 GiB of KV cache on 96 GB (less
# than one 40,960-token sequence needs) and ~40 GiB on 141 GB.
COMMAND = "vllm serve Qwen/Qwen3-32B --gpu-memory-utilization 0.75"


def _kv_findings(gpus: str) -> list[tuple[str, str]]:
    report = check_text(COMMAND, CheckOptions(gpus=gpus, detect_hardware=False))
    return [(f.severity, f.why.text()) for f in report.findings if f.rule == "kv-cache-too-small"]


def test_a_verdict_for_one_variant_only_is_a_warning_naming_both() -> None:
    [(severity, why)] = _kv_findings("1xH20")
    assert severity == "warning"
    assert "H20 (96 GB) only" in why
    assert "H20-3e-141GB (141 GB)" in why


def test_a_name_that_says_its_memory_stays_exact() -> None:
    [(severity, why)] = _kv_findings("1xH20-96GB")
    assert severity == "error"
    assert "141 GB" not in why
    assert _kv_findings("1xH20-3e") == []
    assert _kv_findings("1xH20-141GB") == []


def test_a_verdict_every_variant_shares_stays_an_error() -> None:
    report = check_text(
        "vllm serve meta-llama/Llama-3.3-70B-Instruct",
        CheckOptions(gpus="1xH20", detect_hardware=False),
    )
    weights = [f for f in report.findings if f.rule == "weights-dont-fit"]
    assert [f.severity for f in weights] == ["error"]
