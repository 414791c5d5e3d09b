"""Fixtures of the monitor tests: /metrics pages, the real vLLM 0.32.0 page (tests/data/monitor), with the
values of its scheduler gauges and counters set to what a test needs."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "monitor"
REAL_PAGE = (DATA / "metrics-0.32.0.txt").read_text(encoding="utf-8")


def page(
    *,
    running: float = 0,
    waiting: float = 0,
    kv: float = 0.0,
    preemptions: float = 0,
    prompt_tokens: float = 0,
    generation_tokens: float = 0,
    deferred: float = 0,
    base: str = REAL_PAGE,
) -> str:
    """The real page with these values in place of its own."""
    values = {
        r"vllm:num_requests_running\{[^}]*\}": running,
        r"vllm:num_requests_waiting\{[^}]*\}": waiting,
        r"vllm:kv_cache_usage_perc\{[^}]*\}": kv,
        r"vllm:num_preemptions_total\{[^}]*\}": preemptions,
        r"vllm:prompt_tokens_total\{[^}]*\}": prompt_tokens,
        r"vllm:generation_tokens_total\{[^}]*\}": generation_tokens,
        r'vllm:num_requests_waiting_by_reason\{[^}]*reason="deferred"[^}]*\}': deferred,
    }
    text = base
    for pattern, value in values.items():
        text = re.sub(f"^({pattern}) .*$", rf"\g<1> {float(value)!r}", text, flags=re.MULTILINE)
    return text


Page = Callable[..., str]


@pytest.fixture
def make_page() -> Page:
    return page


@pytest.fixture
def data() -> Path:
    return DATA
