"""Untranslated English in a zh-TW view: runs of three or more English words.

What a zh-TW reader sees in English on purpose is taken out first: what the view quotes verbatim
(a model's reply, a dataset's prompt, a path: given by the test), code in backquotes, URLs,
flags, ids, file names and numbers (any ASCII token with one of `-_/.:=@`), and rule ids in
brackets. Names zh-TW readers write in English (`NAMES`: KV cache, TTFT, token, GPU, ms) do
not count as words. What is left may hold a single English word, never a sentence:
`english_runs` returns every run of three or more words, so a test asserts it is empty.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_VERBATIM = re.compile(r"`[^`]*`|https?://\S+|\[[a-z0-9-]+\]|[!-~]*[-_/.:=@][!-~]*")
NAMES = frozenset(
    [
        "KV",
        "cache",
        "token",
        "tokens",
        "prefill",
        "decode",
        "TTFT",
        "TPOT",
        "ITL",
        "E2EL",
        "QPS",
        "TP",
        "DP",
        "PP",
        "CI",
        "GPU",
        "GPUs",
        "vLLM",
        "FLOPs",
        "MoE",
        "MLA",
        "ms",
        "us",
        "s",
        "tok",
        "req",
        "GiB",
        "p50",
        "p90",
        "p95",
        "p99",
        "x",
        "x2",
    ]
)
_NAME = re.compile(
    r"(?<![A-Za-z0-9'])(?:" + "|".join(sorted(NAMES, key=len, reverse=True)) + r")(?![A-Za-z0-9'])"
)
_WORD = r"[A-Za-z][A-Za-z0-9']*"
_RUN = re.compile(rf"{_WORD}(?:[ ,;()]+{_WORD}){{2,}}")


def flat(text: str) -> str:
    """The text with every run of whitespace as one space (a wrapped line joined again)."""
    return " ".join(text.split())


def english_runs(text: str, verbatim: Iterable[str] = ()) -> list[str]:
    """The runs of three or more English words left in `text` once what is quoted is removed."""
    said = flat(text)
    for quoted in sorted({flat(v) for v in verbatim if v and v.strip()}, key=len, reverse=True):
        said = said.replace(quoted, " ")
    return _RUN.findall(_NAME.sub(" ", _VERBATIM.sub(" ", said)))
