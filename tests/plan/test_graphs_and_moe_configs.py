"""V0's CUDA graphs (decode-only steps, capture sizes by release) and vLLM's tuned fused-MoE
tile configs by release, E, N and GPU (plan.moe_configs): each mechanism on its own and on the
`fit` records it answers."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from plan_runs import fit_by_name, setup

from servetune import _data
from servetune.plan import accuracy, moe_configs, step_time
from servetune.plan.simulate import Step
from servetune.review.check import CheckOptions, check_text

DSTACK_H100 = "dstack-cmp-llama31-405b-fp8-8xh100-sxm5-80gb-tp8-sharegpt-qps"
_FILE = re.compile(
    r"^E=\d+,N=\d+,device_name=[^,]+(,dtype=\w+)?(,block_shape=\[\d+,\d+\])?(,\w+=\w+)*$"
)


@pytest.fixture(scope="module")
def fit_cases() -> dict[str, accuracy.Case]:
    return fit_by_name()


MIXED, DECODE = Step(200, 20_000.0, 100, 30_000, 100), Step(0, 0.0, 100, 30_000, 100)


def test_v0_replays_graphs_for_decode_only_steps() -> None:
    v0 = setup("vllm serve Qwen/Qwen2.5-7B-Instruct", "1xH100-SXM-80GB", "0.6.3").cost
    v1 = setup("vllm serve Qwen/Qwen2.5-7B-Instruct", "1xH100-SXM-80GB", "0.11.0").cost
    assert v0.graphs_decode_only and not v1.graphs_decode_only
    assert v0.graphed(DECODE) and not v0.graphed(MIXED)
    assert v1.graphed(DECODE) and v1.graphed(MIXED)  # piecewise graphs: the mix does not matter
    launches = step_time.EAGER_LAUNCH_S_PER_LAYER * v0.work.layers
    assert v0.floors(MIXED) - v0.floors(DECODE) == pytest.approx(launches)


def test_v0_capture_sizes_by_release() -> None:
    command = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-num-seqs 300"
    assert setup(command, "1xH100-SXM-80GB", "0.5.4").cost.graph_max_tokens == 256
    assert setup(command, "1xH100-SXM-80GB", "0.6.3").cost.graph_max_tokens == 304
    before = setup(command, "1xH100-SXM-80GB", "0.5.4").cost
    assert not before.graphed(Step(0, 0.0, 300, 90_000, 300))
    assert before.graphed(Step(0, 0.0, 256, 90_000, 256))


def test_v0_graphs_on_the_dstack_fit_records(fit_cases: dict[str, accuracy.Case]) -> None:
    """Llama-3.1-405B FP8 on 8 H100 (0.6.3, 512-token chunks): throughput within 20%, from
    +27-29% with graphs for every step."""
    cases = [c for name, c in fit_cases.items() if name.startswith(DSTACK_H100)]
    assert len(cases) == 3
    for case in cases:
        errors = accuracy.errors(case)
        assert abs(errors["output_throughput"]) < 0.2
        assert abs(errors["mean_tpot_ms"]) < 0.2


def test_the_config_table_is_well_formed() -> None:
    data = _data.load(moe_configs.DATA)
    releases = data["releases"]
    assert "0.4.1" in releases and "0.11.0" in releases
    for name, runs in data["configs"].items():
        assert _FILE.match(name), name
        for first, last in runs:
            assert releases.index(first) <= releases.index(last)


def test_the_lookup_key_follows_fused_moe() -> None:
    report = check_text(
        "vllm serve MiniMaxAI/MiniMax-M2 -tp 4",
        CheckOptions(gpus="4xH20-3e-141GB", vllm_version="0.11.0", detect_hardware=False),
    )
    assert report.model is not None
    shape = moe_configs.shape(report.model, 4, 1, False, None)
    assert shape == moe_configs.MoeShape(256, 384, "fp8_w8a8", (128, 128))
    assert shape.file_name("NVIDIA_H20-3e") == (
        "E=256,N=384,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8,block_shape=[128,128]"
    )
    ep = moe_configs.shape(report.model, 4, 1, True, None)
    assert ep is not None and (ep.experts, ep.n) == (64, 1536)  # whole experts, E / 4 a GPU
    assert moe_configs.tuned(shape, "H20-3e-141GB", "0.11.0") is False
    assert moe_configs.tuned(shape, "a GPU the table does not name", "0.11.0") is None


def test_tuned_configs_by_release_and_gpu() -> None:
    r1 = moe_configs.MoeShape(256, 256, "fp8_w8a8", (128, 128))  # DeepSeek-R1 at TP 8
    assert moe_configs.tuned(r1, "H200-SXM-141GB", "0.11.0")
    assert not moe_configs.tuned(r1, "H200-SXM-141GB", "0.5.4")  # before it was tuned
    assert not moe_configs.tuned(r1, "L4", "0.11.0")
    # the H200 family reads NVIDIA_H200's files from the release that maps it
    family_from = _data.load(moe_configs.DATA)["h200_family_from"]
    assert moe_configs.device_name("H200-NVL-141GB", family_from) == "NVIDIA_H200"
    assert moe_configs.device_name("H200-NVL-141GB", "0.10.2") == "NVIDIA_H200_NVL"


SPLIT = replace(step_time.Efficiency(), moe_bandwidth=1.0, moe_default_bandwidth=0.5)


def test_the_default_config_streams_the_experts_slower() -> None:
    setup_ = setup("vllm serve zai-org/GLM-4.6 -tp 8", "8xH200-SXM-141GB", "0.11.0")
    cost = setup_.cost.with_efficiency(SPLIT)
    assert cost.moe_tuned is False
    e = cost.efficiency
    step = Step(0, 0.0, 16, 16_000, 16)
    experts = cost._experts_read(16)
    rate = cost.device.bandwidth_bytes_s * e.bandwidth * e.moe_bandwidth
    expected = experts / (rate * e.moe_default_bandwidth) - experts / rate
    slower = cost.parts(step)[1] - replace(cost, moe_tuned=True).parts(step)[1]
    assert slower == pytest.approx(expected)


def test_the_tuned_and_default_split_on_fit_records(fit_cases: dict[str, accuracy.Case]) -> None:
    """The joint fit (step_time: moe_default_bandwidth): tuned configs at the dense rate and the
    default at half of it keep the default-config records (GLM-4.6 on 8 H200, 0.11.0: no
    E=160,N=192 file for the H200) where they are and bring Qwen3-30B-A3B FP8 on 2 H100 PCIe
    (E=64,N=768 tuned) from +21-24% to within 10% on TPOT."""
    glm = [c for n, c in fit_cases.items() if n.startswith("gpustack-glm-4.x-h200-tp-8-")]
    qwen = [c for n, c in fit_cases.items() if n.startswith("vllm-pr25398-qwen3-30b-a3b-fp8")]
    assert len(glm) == 4 and len(qwen) == 2
    for case in glm:
        assert case.setup.cost.moe_tuned is False
        today, split = accuracy.errors(case), accuracy.errors(case, SPLIT)
        assert split["output_throughput"] == pytest.approx(today["output_throughput"], abs=0.01)
    for case in qwen:
        assert case.setup.cost.moe_tuned is True
        assert accuracy.errors(case)["mean_tpot_ms"] > 0.15
        assert abs(accuracy.errors(case, SPLIT)["mean_tpot_ms"]) < 0.1
