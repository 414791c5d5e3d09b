"""Every table of every text area: the same keys in every language, the same placeholders, no
empty text; and every table module on disk belongs to a registered area."""

from __future__ import annotations

import importlib
import re
import string
from collections.abc import Mapping
from pathlib import Path

import pytest

from servetune import texts

_TEXTS_DIR = Path(texts.__file__).parent


def _fields(template: str) -> set[str]:
    """The placeholder names of a `str.format` template (`{n:,}` and `{n}` both give `n`)."""
    return {
        field.split(".")[0].split("[")[0]
        for _, field, _, _ in string.Formatter().parse(template)
        if field
    }


def _cases() -> list[tuple[texts.Area, texts.Language]]:
    return [(area, lang) for area in texts.AREAS for lang in texts.LANGUAGES if lang != "en"]


def test_there_is_something_to_compare() -> None:
    assert "review" in texts.AREAS
    assert texts.LANGUAGES == ("en", "zh-TW")
    assert len(texts.table("review", "en")) > 100


@pytest.mark.parametrize(("area", "language"), _cases())
def test_same_keys_as_english(area: texts.Area, language: texts.Language) -> None:
    english, other = texts.table(area, "en"), texts.table(area, language)
    assert sorted(set(english) - set(other)) == [], "missing in the translation"
    assert sorted(set(other) - set(english)) == [], "only in the translation"


@pytest.mark.parametrize(("area", "language"), _cases())
def test_same_placeholders_as_english(area: texts.Area, language: texts.Language) -> None:
    english, other = texts.table(area, "en"), texts.table(area, language)
    differ = {
        key: (_fields(english[key]), _fields(other[key]))
        for key in english.keys() & other.keys()
        if _fields(english[key]) != _fields(other[key])
    }
    assert differ == {}


@pytest.mark.parametrize("area", texts.AREAS)
@pytest.mark.parametrize("language", texts.LANGUAGES)
def test_no_empty_text_and_only_strings(area: texts.Area, language: texts.Language) -> None:
    table: Mapping[str, object] = texts.table(area, language)  # as loaded: not taken on trust
    assert table
    bad = [key for key, value in table.items() if not isinstance(value, str) or not value.strip()]
    assert bad == []
    assert all(key and key == key.strip() for key in table)


def test_every_table_module_is_a_registered_area() -> None:
    suffixes = {f"_{suffix}" for suffix in texts.SUFFIXES.values()}
    registered = {f"{area}_{suffix}" for area in texts.AREAS for suffix in texts.SUFFIXES.values()}
    on_disk = set()
    for path in _TEXTS_DIR.glob("*.py"):
        if any(path.stem.endswith(s) for s in suffixes):
            module = importlib.import_module(f"servetune.texts.{path.stem}")
            if hasattr(module, "TEXTS"):
                on_disk.add(path.stem)
    assert on_disk == registered


_CHINESE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
_KEPT_IN_ENGLISH = {"vLLM", "KV", "cache", "GPU"}  # names zh-TW readers use as they are


@pytest.mark.parametrize("area", texts.AREAS)
def test_zh_tw_texts_are_translated(area: texts.Area) -> None:
    """A zh-TW text with no Chinese in it is an English text left untranslated, unless it is
    only names that Taiwanese engineers write in English anyway."""
    left = {}
    for key, text in texts.table(area, "zh-TW").items():
        words = set(re.findall(r"[A-Za-z]+", re.sub(r"\{[^}]*\}", "", text)))
        if not _CHINESE.search(text) and not words <= _KEPT_IN_ENGLISH:
            left[key] = text
    assert left == {}
