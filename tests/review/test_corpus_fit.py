"""Fit records of the real corpus (tests/data/corpus/commands.json) that check's mechanisms were
built on: each failed start draws the rule that names its cause, each command that ran draws no
error. Only `fit` records are here (issue 18: held-out ones are never tuned on)."""

from __future__ import annotations

import pytest

from corpus_records import review_fit

FAILED_STARTS = [
    ("moonlight26-trust-remote-code-positional", "flag-without-dashes"),
    ("gh27389-docker-imageid-serve", "extra-positional-after-entrypoint"),
    ("pr8618-gguf-model-flag-no-tag", "model-required"),
    ("gh16231-maverick-tp8-pp2-16xh100", "pp-unsupported-model"),
    ("gfx906-59-4xmi50-gptoss120b-fp16", "quant-dtype-unsupported"),
    ("gh19448-kv-transfer-dynamo-nixl", "invalid-value"),
    ("gh33229-docker-minimax-m25-gguf", "gguf-arch-unsupported"),
    ("vllm-pr14766-gemma3-27b-gguf-v081", "gguf-arch-unsupported"),
    ("unsloth-1380-qwq-bnb-no-load-format", "bnb-load-format-missing"),
    ("vllm-17581-qwen3-30b-a3b-fp8-2x3090", "quant-unsupported-gpu"),
]


@pytest.mark.parametrize(("record_id", "rule"), FAILED_STARTS)
def test_failed_start_draws_its_rule(record_id: str, rule: str) -> None:
    assert rule in {f.rule for f in review_fit(record_id).findings}


RAN = [
    "qwen25omni-288-2x3090-ok",  # markdown emphasis around `--max-num-seqs 1`
    "strixhalo-pr5-qwen3-4b-awq",  # a value wrapped onto the next line
    "gh16749-internvl3-78b-4xa100-40g",  # flags wrapped inside a word by a terminal
]


@pytest.mark.parametrize("record_id", RAN)
def test_pasted_command_reads_whole(record_id: str) -> None:
    parse_errors = {"unknown-flag", "missing-value", "invalid-value", "flag-without-dashes"}
    assert not parse_errors & {f.rule for f in review_fit(record_id).errors}


def test_source_build_draws_no_registry_error() -> None:
    """`0.1.dev1+g6997a25ac`: a source build's version says nothing of its model registry."""
    errors = {f.rule for f in review_fit("strixhalo-pr5-qwen3-4b-fp16").errors}
    assert "arch-unsupported-in-release" not in errors
