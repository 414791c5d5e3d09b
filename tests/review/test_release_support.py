"""What each release's registry and loaders accept, as read from its source
(vllm/model_support.py over data/vllm_pp_support.json and vllm_loader_support.json)."""

from __future__ import annotations

from servetune.vllm.model_support import (
    bnb_fact,
    bnb_since,
    gguf_support,
    registration,
    transformers_fallback_since,
)


def test_registration_names_the_first_release() -> None:
    found = registration("MiniCPMV", "0.5.3")
    assert found is not None
    assert (found.registered, found.first) == (False, "0.5.4")
    assert registration("MiniCPMV", "0.5.4") == found.__class__(True, "0.5.4", found.last)


def test_registration_of_an_unread_release_between_read_ones() -> None:
    # 0.15.x has no sdist: what 0.14.1 and 0.16.0 agree on holds, else nothing is said
    llama = registration("LlamaForCausalLM", "0.15.1")
    assert llama is not None
    assert llama.registered is True
    assert registration("no-such-architecture", "0.15.1") is None


def test_transformers_backend_release() -> None:
    assert transformers_fallback_since() == "0.7.2"


def test_gguf_renames_by_release() -> None:
    assert gguf_support("minimax_m2", "0.15.1").since == "0.20.0"
    assert not gguf_support("minimax_m2", "0.15.1").readable
    assert gguf_support("minimax_m2", "0.20.0").readable
    assert gguf_support("gemma3", "0.11.0").since == "0.11.1"  # read as gemma3_text
    assert gguf_support("llama", "0.5.4").loader is False
    assert gguf_support("llama", "0.26.0").loader is None  # vllm-gguf-plugin


def test_bitsandbytes_loader_by_release() -> None:
    assert bnb_fact("prequant_tp_refused", "0.6.1") is False
    assert bnb_fact("prequant_tp_refused", "0.6.2") is True
    assert bnb_fact("load_format_from_flag", "0.8.2") is True
    assert bnb_since("load_format_from_checkpoint") == "0.8.4"
    assert bnb_fact("prequant_tp_refused", "0.28.0") is None  # vllm-bnb-plugin
