"""Which top-k/top-p sampler vLLM V1 warms up depends on the release and on how vLLM was
installed: 0.8.0 to 0.11.0 run FlashInfer's where it is installed (vLLM's Docker image always;
a pip install only with FlashInfer added), 0.11.1 to 0.20 only with
VLLM_USE_FLASHINFER_SAMPLER=1, and from 0.21 unless it is 0 (topk_topp_sampler.py, envs.py)."""

from __future__ import annotations

import pytest

from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.settings import resolve
from servetune.review.startup_profile import sampler_copies
from servetune.vllm.serve_command import parse_text


def review(command: str, gpus: str, version: str | None = None) -> Report:
    return check_text(command, CheckOptions(gpus=gpus, vllm_version=version))


@pytest.mark.parametrize(
    ("command", "version", "expected"),
    [
        ("docker run --gpus all vllm/vllm-openai:v0.10.1 --model m", None, True),
        ("docker run --gpus all docker.io/vllm/vllm-openai:v0.9.2 --model m", None, True),
        (
            "docker run -e VLLM_USE_FLASHINFER_SAMPLER=0 vllm/vllm-openai:v0.10.1 --model m",
            None,
            False,
        ),
        ("docker run vllm/vllm-openai-rocm:v0.10.1 --model m", None, None),  # no FlashInfer on ROCm
        ("docker run nvcr.io/nvidia/vllm:25.09 vllm serve m", "0.10.1", None),
        ("vllm serve m", "0.10.1", None),  # pip: FlashInfer only if added
        ("VLLM_USE_FLASHINFER_SAMPLER=1 vllm serve m", "0.10.1", True),
        ("VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve m", "0.9.2", False),
        # 0.11.1-0.20: FlashInfer is a pip dependency, its sampler opt-in
        ("docker run vllm/vllm-openai:v0.14.1 --model m", None, False),
        ("VLLM_USE_FLASHINFER_SAMPLER=1 vllm serve m", "0.14.1", True),
        # 0.21+: the default
        ("vllm serve m", "0.21.0", True),
        ("VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve m", "0.21.0", False),
    ],
)
def test_the_sampler_follows_release_install_and_environment(
    command: str, version: str | None, expected: bool | None
) -> None:
    settings = resolve(parse_text(command, version=version), None, None)
    assert settings.flashinfer_sampler is expected


@pytest.mark.parametrize(
    ("version", "flashinfer", "central", "low"),
    [
        ("0.10.1", True, 3.5, 3.0),  # vLLM's image: FlashInfer's sampler
        ("0.10.1", False, 9.6, 9.0),  # VLLM_USE_FLASHINFER_SAMPLER=0: the sort
        ("0.10.1", None, 9.6, 3.0),  # a pip install: the sort, FlashInfer the low end
        ("0.14.1", True, 3.5, 3.0),  # opted in
        ("0.14.1", False, 9.6, 9.0),
        ("0.7.3", True, 9.6, 9.0),  # V0's sort-based sampler
        ("0.21.0", False, 3.5, 3.0),  # the Triton-masked native path
    ],
)
def test_the_copies_follow_the_sampler(
    version: str, flashinfer: bool | None, central: float, low: float
) -> None:
    copies = sampler_copies(version, flashinfer)
    assert (copies.central, copies.low) == (central, low)


def test_vllm_s_image_reserves_less_than_a_pip_install_of_the_same_release() -> None:
    """1024 sequences x Qwen3-8B's 151,936 logits: 0.58 GiB a copy, 9.6 copies the sort's and
    3.5 FlashInfer's, so the image's KV cache is about 3.5 GiB larger."""
    flags = "--model Qwen/Qwen3-8B --max-num-seqs 1024 --max-num-batched-tokens 2048"
    pip = review(f"vllm serve {flags}", "1xH100-80GB", "0.10.1")
    image = review(f"docker run --gpus all vllm/vllm-openai:v0.10.1 {flags}", "1xH100-80GB")
    assert pip.estimate is not None and image.estimate is not None
    pip_kv, image_kv = (
        pip.estimate.kv_available_gib_per_gpu,
        image.estimate.kv_available_gib_per_gpu,
    )
    assert pip_kv is not None and image_kv is not None
    assert image.settings.flashinfer_sampler is True
    assert pip.settings.flashinfer_sampler is None
    assert image_kv - pip_kv == pytest.approx(6.1 * 1024 * 151936 * 4 / 2**30, rel=0.05)
    assert "sampler-flashinfer" in pip.estimate.notes
    assert "sampler-flashinfer" not in image.estimate.notes
