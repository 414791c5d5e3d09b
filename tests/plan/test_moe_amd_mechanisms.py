"""Issue 19's mechanisms for MoE and AMD, each on its own and on the `fit` records it answers:
DeepSeek-V3.2's sparse attention (top-k window, padded heads, the replicated FP8 indexer),
V0's prefill-first scheduler without chunked prefill, FP8 GEMMs on CDNA 3/4, and AITER's
fused MoE on ROCm."""

from __future__ import annotations

from dataclasses import replace

import pytest
from plan_runs import fit_by_name, setup

from servetune.plan import accuracy, predict, sparse_attention
from servetune.plan.simulate import Limits, Load, Step, simulate_continuous, windowed_pairs
from servetune.review import hardware
from servetune.review.check import CheckOptions, check_text
from servetune.review.settings import v0_engine

V32 = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8"
R1 = "vllm serve deepseek-ai/DeepSeek-R1-0528 -tp 8"


@pytest.fixture(scope="module")
def fit_cases() -> dict[str, accuracy.Case]:
    return fit_by_name()


def test_a_window_caps_the_pairs_a_prompt_chunk_attends() -> None:
    assert windowed_pairs(0, 1000, 2048) == pytest.approx(1000 * 500)  # inside: n(c + n/2)
    assert windowed_pairs(4096, 1000, 2048) == 1000 * 2048  # past it: the window each
    # 0..4000 with a 2048 window: the first 2048 attend their position, the rest 2048
    assert windowed_pairs(0, 4000, 2048) == pytest.approx(2048 * 1024 + 1952 * 2048)


def test_the_simulator_counts_windowed_pairs_and_contexts() -> None:
    seen: list[Step] = []

    def cost(step: Step) -> float:
        seen.append(step)
        return 0.01

    limits = Limits(8, 8192, None, attention_window=2048)
    simulate_continuous(Load(4000, 3, 1, concurrency=1), limits, cost)
    prefill, decode = seen[0], seen[1]
    assert prefill.prefill_window_pairs == pytest.approx(windowed_pairs(0, 4000, 2048))
    assert decode.decode_context == 4000 and decode.decode_window_context == 2048


def test_sparse_attention_pads_the_heads_per_gpu_by_release_cache_and_gpu() -> None:
    model = check_text(V32, CheckOptions(gpus="8xH200-SXM-141GB", vllm_version="0.13.0")).model
    assert model is not None and sparse_attention.topk(model) == 2048
    hopper, blackwell = 90, 100
    # BF16 cache (auto from 0.11.1): every token through the BF16 kernel, 16 heads run as 64
    assert sparse_attention.padding(model, 8, "auto", "0.13.0", hopper) == (64, 64)
    assert sparse_attention.padding(model, 8, "auto", "0.13.0", blackwell) == (128, 128)
    # 0.11.0 made auto the FP8 cache: decodes through flash_mla_with_kvcache, unpadded
    assert sparse_attention.padding(model, 8, "auto", "0.11.0", hopper) == (64, 1)
    # from 0.14 fewer than 32 heads per GPU run the prompt in the mixed FP8 batch too
    assert sparse_attention.padding(model, 8, "fp8", "0.14.0", hopper) == (1, 1)
    assert sparse_attention.padding(model, 2, "fp8", "0.14.0", hopper) == (64, 1)
    assert sparse_attention.padding(model, 8, "auto", "0.13.0", None) == (1, 1)  # ROCm
    costs = sparse_attention.costs(model, 8, (64, 64))
    assert costs is not None
    # MQA over the latent: 2 x 64 heads x (576 + 512) per pair and layer; the indexer on
    # every rank: 2 x 64 x 128
    assert costs.prefill_flops_per_pair == pytest.approx(61 * 2 * 64 * (576 + 512))
    assert costs.indexer_flops_per_pair == pytest.approx(61 * 2 * 64 * 128)


def test_dense_attention_models_have_no_window() -> None:
    report = check_text(R1, CheckOptions(gpus="8xH200-SXM-141GB", vllm_version="0.13.0"))
    assert report.model is not None and sparse_attention.topk(report.model) == 0
    setup_ = predict.setup(report)
    assert setup_.limits.attention_window is None and setup_.cost.work.sparse_topk == 0


def test_v32_prefills_slower_per_token_than_r1_at_4k_by_the_padded_top_k() -> None:
    v32, r1 = setup(V32, "8xH200-SXM-141GB", "0.13.0"), setup(R1, "8xH200-SXM-141GB", "0.13.0")
    assert v32.limits.attention_window == 2048
    chunk = Step(
        8000, 2 * windowed_pairs(0, 4000, 10**9), 0, 0, 2, 2 * windowed_pairs(0, 4000, 2048)
    )
    extra_us = 1e6 * (v32.cost.parts(chunk)[2] - r1.cost.parts(chunk)[2]) / 8000
    # the fit records say ~39 us more per prompt token at 4k (module docstring)
    assert 25 < extra_us < 45


@pytest.mark.parametrize(
    "name",
    [
        "gpustack-deepseek-v3.2-h200-tp-8-random-4k-input",
        "gpustack-deepseek-v3.2-h200-tp-8-random-32k-input",
    ],
)
def test_v32_long_prompts_land_near_their_fit_records(
    fit_cases: dict[str, accuracy.Case], name: str
) -> None:
    errors = accuracy.errors(fit_cases[name])  # +88% and +97% before the sparse terms
    assert abs(errors["output_throughput"]) < 0.3, errors
    assert abs(errors["mean_ttft_ms"]) < 0.3, errors


def test_v0_without_chunked_prefill_prefills_first_and_stalls_decodes() -> None:
    seen: list[Step] = []

    def cost(step: Step) -> float:
        seen.append(step)
        return 0.01

    v0 = Limits(8, 4096, None, chunked_prefill=False, prefill_first=True)
    simulate_continuous(Load(100, 50, 2, request_rate=20.0, seed=1), v0, cost)
    mixed = [s for s in seen if s.prefill_tokens and s.decode_seqs]
    assert not mixed and any(s.prefill_tokens for s in seen[1:])
    v1 = replace(v0, prefill_first=False)
    seen.clear()
    simulate_continuous(Load(100, 50, 2, request_rate=20.0, seed=1), v1, cost)
    assert any(s.prefill_tokens and s.decode_seqs for s in seen)


def test_v0_engine_by_release_and_vllm_use_v1() -> None:
    command = "vllm serve Qwen/Qwen3-14B --enable-chunked-prefill=False"
    old = setup(command, "1xH100-SXM-80GB", "0.6.3")
    assert old.limits.prefill_first and not old.limits.chunked_prefill
    assert not setup(command, "1xH100-SXM-80GB", "0.9.2").limits.prefill_first
    options = CheckOptions(gpus="1xH100-SXM-80GB", vllm_version="0.9.2", detect_hardware=False)
    assert v0_engine(check_text("VLLM_USE_V1=0 " + command, options).command)
    assert not v0_engine(check_text(command, options).command)


def test_prefill_first_gives_the_v0_mi300x_fit_records_their_ttft(
    fit_cases: dict[str, accuracy.Case],
) -> None:
    case = fit_cases["dstack-cmp-llama31-405b-fp8-8xmi300x-tp8-sharegpt-qps1000"]
    assert case.setup.limits.prefill_first
    errors = accuracy.errors(case)  # +331% with V1's decode-first order
    assert abs(errors["mean_ttft_ms"]) < 0.4, errors


@pytest.mark.parametrize(
    ("gpu", "fp8"),
    [
        ("MI300X", True),
        ("MI325X", True),
        ("MI355X", True),
        ("MI250X", False),
        ("H100-SXM-80GB", True),
        ("L40S", True),
        ("A100-80GB-SXM", False),
    ],
)
def test_fp8_weights_run_fp8_gemms_on_cdna3_and_4_as_on_ada_and_hopper(gpu: str, fp8: bool) -> None:
    assert predict.fp8_gemms(hardware.find_gpu(gpu)) is fp8


def test_an_fp8_checkpoint_on_mi355x_runs_at_the_fp8_peak(
    fit_cases: dict[str, accuracy.Case],
) -> None:
    case = fit_cases["recipes-pr127-llama33-70b-fp8-1xmi355x-tp1-8k1k-c64"]
    spec = hardware.find_gpu("MI355X")
    assert case.setup.cost.device.flops == pytest.approx((spec.fp8_dense_tflops or 0) * 1e12)
    errors = accuracy.errors(case)  # TTFT +162% at the BF16 peak
    assert abs(errors["mean_ttft_ms"]) < 0.3, errors


def test_aiter_moe_only_with_its_variable_on_rocm() -> None:
    command = "vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 -tp 4 --enable-expert-parallel"
    on = setup("VLLM_ROCM_USE_AITER=1 " + command, "4xMI325X", "0.11.1")
    assert on.cost.aiter_moe
    assert not setup(command, "4xMI325X", "0.11.1").cost.aiter_moe
    off = "VLLM_ROCM_USE_AITER=1 VLLM_ROCM_USE_AITER_MOE=0 " + command
    assert not setup(off, "4xMI325X", "0.11.1").cost.aiter_moe
    assert not setup("VLLM_ROCM_USE_AITER=1 " + command, "4xH100-SXM-80GB", "0.11.1").cost.aiter_moe


@pytest.mark.parametrize("users", [16, 32])
def test_aiter_moe_decodes_the_mi325x_fit_records_near_their_tpot(
    fit_cases: dict[str, accuracy.Case], users: int
) -> None:
    case = fit_cases[f"rxsalad-qwen3-235b-fp8-4xmi325x-tp4ep-v0111-n{users}"]
    errors = accuracy.errors(case)  # +31% and +44% with the Triton family's streaming
    assert abs(errors["mean_tpot_ms"]) < 0.15, errors
