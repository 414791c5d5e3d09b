"""The GPU table covers the GPUs users name in vLLM issues, and reads a memory suffix."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from servetune.errors import HardwareError
from servetune.review.hardware import find_gpu, gpu_table, parse_gpus, vllm_runs_quantization

EXTRA = Path(__file__).resolve().parents[2] / "scripts" / "sources" / "gpus_extra.csv"

# (what users type, the row it must find, memory in GB, compute capability or gfx target)
NAMED_IN_ISSUES = [
    ("A800", "A800-80GB-SXM", 80, "8.0"),
    ("NVIDIA A800-SXM4-80GB", "A800-80GB-SXM", 80, "8.0"),
    ("H800", "H800-SXM-80GB", 80, "9.0"),
    ("H20", "H20", 96, "9.0"),
    ("NVIDIA H20-3e", "H20-3e-141GB", 141, "9.0"),
    ("L20", "L20", 48, "8.9"),
    ("L40", "L40", 48, "8.9"),
    ("A40", "A40", 48, "8.6"),
    ("A30", "A30", 24, "8.0"),
    ("A16", "A16", 16, "8.6"),
    ("RTX 2080 Ti", "RTX-2080-Ti", 11, "7.5"),
    ("NVIDIA GeForce RTX 2080 Ti", "RTX-2080-Ti", 11, "7.5"),
    ("RTX3080", "RTX-3080", 10, "8.6"),
    ("RTX 3090 Ti", "RTX-3090-Ti", 24, "8.6"),
    ("RTX4080", "RTX-4080", 16, "8.9"),
    ("RTX 4090 D", "RTX-4090-D", 24, "8.9"),
    ("NVIDIA GeForce RTX 4090 D", "RTX-4090-D", 24, "8.9"),
    ("RTX5090", "RTX-5090", 32, "12.0"),
    ("NVIDIA GeForce RTX 4060 Laptop GPU", "RTX-4060-Laptop", 8, "8.9"),
    ("RTX3060", "RTX-3060", 12, "8.6"),
    ("RTX A4000", "RTX-A4000", 16, "8.6"),
    ("A5000", "RTX-A5000", 24, "8.6"),
    ("RTX A6000", "RTX-A6000", 48, "8.6"),
    ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada", 48, "8.9"),
    ("Quadro RTX 6000", "Quadro-RTX-6000", 24, "7.5"),
    ("Quadro RTX 8000", "Quadro-RTX-8000", 48, "7.5"),
    ("GH200", "GH200-96GB", 96, "9.0"),
    ("B200", "B200", 180, "10.0"),
    ("B300", "B300", 288, "10.3"),
    ("MI210", "MI210", 64, "gfx90a"),
    ("AMD Instinct MI250X", "MI250X", 64, "gfx90a"),
    ("MI300X", "MI300X", 192, "gfx942"),
    ("MI325X", "MI325X", 256, "gfx942"),
    # issue 18's families: workstation Turing, consumer 20/50 series, Radeon, CDNA 4
    ("Quadro RTX 5000", "Quadro-RTX-5000", 16, "7.5"),
    ("RTX 5070 Ti", "RTX-5070-Ti", 16, "12.0"),
    ("NVIDIA GeForce RTX 5090 D", "RTX-5090-D", 32, "12.0"),
    ("NVIDIA GeForce RTX 2070 SUPER", "RTX-2070-SUPER", 8, "7.5"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000-Blackwell", 96, "12.0"),
    ("Tesla P40", "P40", 24, "6.1"),
    ("AMD Radeon RX 7900 XTX", "RX-7900-XTX", 24, "gfx1100"),
    ("MI355X", "MI355X", 288, "gfx950"),
    ("Radeon AI PRO R9700", "Radeon-AI-PRO-R9700", 32, "gfx1201"),
    ("MI50", "MI50-16GB", 16, "gfx906"),
    ("MI50-32GB", "MI50-16GB", 32, "gfx906"),
    ("Jetson Orin", "Jetson-AGX-Orin-64GB", 64, "8.7"),
    ("DGX Spark", "GB10", 128, "12.1"),
    ("MI308X", "MI308X", 192, "gfx942"),
]


@pytest.mark.parametrize(("typed", "name", "memory", "target"), NAMED_IN_ISSUES)
def test_gpus_users_name_are_known(typed: str, name: str, memory: int, target: str) -> None:
    spec = find_gpu(typed)
    assert spec.name == name
    assert spec.memory_gib == memory
    assert target in (spec.compute_capability, spec.gfx_target)


def test_amd_parts_are_rocm_with_what_vllm_runs_there() -> None:
    mi300x, mi250x = find_gpu("MI300X"), find_gpu("MI250X")
    assert mi300x.platform == "rocm" and mi300x.compute_capability is None
    assert mi300x.capability is None  # the CUDA capability rules stay silent on AMD
    assert vllm_runs_quantization(mi300x, "fp8") is True
    assert vllm_runs_quantization(mi300x, "awq") is False
    assert vllm_runs_quantization(mi250x, "fp8") is False  # CDNA 2 has no FP8 matrix cores
    assert vllm_runs_quantization(find_gpu("H100"), "awq") is None
    assert find_gpu("H100").platform == "cuda"


@pytest.mark.parametrize(
    ("typed", "name", "memory"),
    [
        ("RTX2080Ti-22GB", "RTX-2080-Ti", 22.0),
        ("RTX 2080 Ti 22G", "RTX-2080-Ti", 22.0),
        ("RTX3080_12GB", "RTX-3080", 12.0),
        ("RTX4090-48GB", "RTX-4090", 48.0),
        ("A100-40GB", "A100-40GB-SXM", 40.0),  # a real SKU name wins over the suffix reading
    ],
)
def test_a_memory_suffix_overrides_the_memory(typed: str, name: str, memory: float) -> None:
    spec = find_gpu(typed)
    assert (spec.name, spec.memory_gib) == (name, memory)
    assert spec.compute_capability == find_gpu(name).compute_capability


def test_memory_suffix_through_gpus_spec() -> None:
    machine = parse_gpus("4xRTX2080Ti-22GB")
    assert machine.count == 4 and machine.spec is not None and machine.spec.memory_gib == 22.0


@pytest.mark.parametrize("typed", ["RTX9999-22GB", "H100-0GB", "banana"])
def test_unknown_names_still_fail_with_a_hint(typed: str) -> None:
    with pytest.raises(HardwareError) as err:
        find_gpu(typed)
    assert err.value.hint


def test_every_added_row_names_its_source_and_is_in_the_table() -> None:
    names = {spec.name for spec in gpu_table()}
    with EXTRA.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        assert row["name"] in names
        assert row["source"].strip(), row["name"]


def test_a_mixed_set_is_reviewed_as_the_card_that_binds() -> None:
    """Pipeline parallel over an RTX 5070 Ti and an RTX 5090 D: vLLM sizes every rank's KV
    cache by the smallest card, and runs only what the oldest card can."""
    hw = parse_gpus("1xRTX-5070-Ti+1xRTX-5090-D")
    assert hw.count == 2
    assert hw.name == "RTX-5070-Ti + RTX-5090-D"
    assert hw.spec is not None and hw.spec.memory_gib == 16
    assert [card.name for card in hw.cards] == ["RTX-5070-Ti", "RTX-5090-D"]
    older = parse_gpus("2xA100, 2xRTX 3090")
    assert older.count == 4 and older.spec is not None
    assert (older.spec.memory_gib, older.spec.capability) == (24, 80)
    assert older.spec.memory_bandwidth_gbs == 936


def test_a_mixed_set_of_two_platforms_is_refused() -> None:
    with pytest.raises(HardwareError) as err:
        parse_gpus("1xH100+1xMI300X")
    assert "one platform" in err.value.message


def test_check_reviews_a_mixed_machine() -> None:
    from servetune.review.check import CheckOptions, check_text

    options = CheckOptions(
        gpus="RTX 5070 Ti + RTX 5090 D", vllm_version="0.11.0", detect_hardware=False
    )
    report = check_text("vllm serve Qwen/Qwen2.5-7B-Instruct -pp 2 --max-model-len 8192", options)
    assert report.hardware is not None and report.hardware.count == 2
    assert report.estimate is not None


# issue 18: the other devices vLLM serves on, each a row with its source (gpus_extra.csv).
@pytest.mark.parametrize(
    ("typed", "name", "memory", "platform"),
    [
        ("Intel Arc A770", "Arc-A770-16GB", 16, "xpu"),
        ("Arc B580", "Arc-B580", 12, "xpu"),
        ("ARC Pro B60", "Arc-Pro-B60", 24, "xpu"),
        ("Intel Data Center GPU Max 1550", "Max-1550", 128, "xpu"),
        ("Gaudi2", "Gaudi2", 96, "hpu"),
        ("Intel Gaudi 3", "Gaudi3", 128, "hpu"),
        ("TPU v5e", "TPU-v5e", 16, "tpu"),
        ("v6e", "TPU-v6e", 32, "tpu"),
        ("Ascend 910B", "Ascend-910B", 64, "npu"),
        ("Ascend-910B2", "Ascend-910B", 64, "npu"),  # ascend16600 (fit)
    ],
)
def test_devices_beyond_cuda_and_rocm(typed: str, name: str, memory: int, platform: str) -> None:
    spec = find_gpu(typed)
    assert (spec.name, spec.memory_gib, spec.platform) == (name, memory, platform)
    assert spec.capability is None and spec.gfx_target is None  # no CUDA rule applies


def test_cpu_is_vllms_cpu_backend() -> None:
    machine = parse_gpus("CPU")
    assert machine.cpu and machine.spec is None and machine.name == "CPU"
    assert machine.to_json()["name"] == "CPU"


def test_check_says_which_checks_a_device_skips() -> None:
    from servetune.review.check import CheckOptions, check_text

    # gh21706 (fit): a reranker served on the CPU backend ran; nothing is an error there.
    text = "VLLM_CPU_KVCACHE_SPACE=32 vllm serve ~/Qwen3-Reranker-8B/ --trust-remote-code"
    cpu = check_text(text, CheckOptions(gpus="CPU", detect_hardware=False))
    (note,) = [f for f in cpu.findings if f.rule == "hardware-unknown"]
    assert note.title.text() == "vLLM's CPU backend: GPU checks skipped"
    assert not cpu.errors
    options = CheckOptions(gpus="4xArc Pro B60", vllm_version="0.11.2", detect_hardware=False)
    xpu = check_text("vllm serve google/gemma-3-27b-it -tp 4", options)
    (note,) = [f for f in xpu.findings if f.rule == "hardware-unknown"]
    assert note.title.text() == "Arc-Pro-B60 (XPU): CUDA checks skipped"
    assert xpu.estimate is not None  # memory is still reviewed


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("8xH100-80GB-SXM", "H100-SXM-80GB"),  # Lambda's benchmark tables
        ("H100-SXM5-80GB", "H100-SXM-80GB"),  # dstack's: the SXM5 board is the H100 SXM
        ("H100 SXM5 80GB", "H100-SXM-80GB"),
        ("80GB H100 PCIe", "H100-PCIe-80GB"),
        ("A100 SXM4 40GB", "A100-40GB-SXM"),
    ],
)
def test_the_words_of_a_known_name_in_another_order(typed: str, name: str) -> None:
    assert parse_gpus(typed).name == name


def test_some_of_a_name_s_words_are_not_that_name() -> None:
    with pytest.raises(HardwareError):
        find_gpu("SXM 80GB")  # the part's model is missing: H100 or A100?


@pytest.mark.parametrize(
    ("typed", "name", "memory"),
    [
        # a share of unified memory as a corpus record's log states it
        ("GB10-DGX-Spark-121GB-unified", "GB10", 121.0),
        ("RTX-PRO-6000-Blackwell-Server-96GB", "RTX-PRO-6000-Blackwell", 96.0),
    ],
)
def test_words_that_name_no_part_are_left_out_and_a_memory_word_is_the_memory(
    typed: str, name: str, memory: float
) -> None:
    hardware = parse_gpus(typed)
    assert hardware.spec is not None
    assert (hardware.spec.name, hardware.spec.memory_gib) == (name, memory)


# A name sold with several memory sizes (gpus.json `memory_variants`): the bare name may be any
# of them; a name that says its memory is one card.
@pytest.mark.parametrize(
    ("typed", "variants"),
    [
        ("8xH20", ("H20-3e-141GB",)),
        ("NVIDIA H20", ("H20-3e-141GB",)),
        ("H20-96GB", ()),
        ("H20 96GB", ()),
        ("H20-141GB", ()),
        ("H20-3e", ()),
        ("H100", ()),
    ],
)
def test_a_name_without_its_memory_may_be_each_variant(
    typed: str, variants: tuple[str, ...]
) -> None:
    machine = parse_gpus(typed)
    assert tuple(v.name for v in machine.variants) == variants


def test_every_memory_variant_is_a_row_of_the_same_chip() -> None:
    rows = {row.name: row for row in gpu_table()}
    for row in gpu_table():
        for variant in row.memory_variants:
            other = rows[variant]
            assert (other.compute_capability, other.architecture) == (
                row.compute_capability,
                row.architecture,
            )
            assert other.memory_gib != row.memory_gib
