"""fused_moe's share of the profile forward (vLLM's fused_experts_impl), on the fit case of
Qwen3-235B-A22B-FP8 at TP 4 on 4xH100 with vLLM 0.9.2 (vllm#21348)."""

from __future__ import annotations

from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.settings import GIB
from servetune.review.startup_profile import forward_peak_gib, sampler_peak_gib


def _report(version: str) -> Report:
    options = CheckOptions(gpus="4xH100", vllm_version=version, detect_hardware=False)
    return check_text("vllm serve Qwen/Qwen3-235B-A22B-FP8 --tensor-parallel-size 4", options)


def test_the_moe_peak_is_the_shared_cache13_from_0_8() -> None:
    report = _report("0.9.2")
    model, settings = report.model, report.settings
    assert model is not None and settings.max_num_batched_tokens == 8192
    # by hand: 3 x 4096 stream values + 8 x (max(2 x 1536 / 4, 4096) + 1536 / 4) per token
    expected = 8192 * (3 * 4096 + 8 * (4096 + 384)) * 2 / GIB
    peak = forward_peak_gib(model, settings, 8192, "0.9.2")
    assert abs(peak - expected) < 1e-9
    # before 0.8.0 cache1 and cache3 were separate buffers: 8 x (768 + 384 + 4096)
    separate = 8192 * (3 * 4096 + 8 * (768 + 384 + 4096)) * 2 / GIB
    assert abs(forward_peak_gib(model, settings, 8192, "0.7.3") - separate) < 1e-9
    # the sampler warm-up at 1024 sequences, not the MoE forward, is the activation term here
    assert peak < 1.0 < sampler_peak_gib(model, settings, "0.9.2")


def test_the_fit_case_stays_an_optimistic_known_miss() -> None:
    est = _report("0.9.2").estimate
    assert est is not None and est.kv_available_gib_per_gpu is not None
    assert "moe-activation" in est.notes
    assert 8.11 < est.kv_available_gib_per_gpu <= 1.34 * 8.11
