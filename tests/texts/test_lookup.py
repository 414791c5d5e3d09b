"""The one lookup: `texts.get`, `texts.format`, `texts.has`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from servetune import texts


def test_get_returns_the_template_in_each_language() -> None:
    english = texts.get("review", "report.stop", "en")
    chinese = texts.get("review", "report.stop", "zh-TW")
    assert "{n}" in english and "{n}" in chinese
    assert english.startswith("DO NOT LAUNCH") and chinese != english


def test_format_fills_the_placeholders() -> None:
    assert texts.format("review", "report.warn", "en", n=3) == (
        "Will start, but 3 warning(s) cost speed, memory or money."
    )
    assert "3" in texts.format("review", "report.warn", "zh-TW", n=3)


def test_an_unknown_key_names_the_area_and_the_key() -> None:
    with pytest.raises(KeyError, match=r"no text 'report\.nope' in area 'review' \(zh-TW\)"):
        texts.get("review", "report.nope", "zh-TW")


def test_a_missing_fact_names_the_text_and_the_fact() -> None:
    with pytest.raises(KeyError, match=r"text 'report\.warn' in area 'review' needs the fact 'n'"):
        texts.format("review", "report.warn", "en", count=3)


def test_has() -> None:
    assert texts.has("review", "dash-typo.title")
    assert not texts.has("review", "model-unknown.ask_ai")  # nothing to ask an AI: no text


def test_english_lookups_do_not_load_the_chinese_tables() -> None:
    code = (
        "import sys; from servetune import texts; texts.get('review', 'report.ok'); "
        "print(sorted(m for m in sys.modules if m.startswith('servetune.texts.') "
        "and m.endswith(('_en', '_zh_tw'))))"  # the tables, not texts.sentence
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['servetune.texts.review_en']"
