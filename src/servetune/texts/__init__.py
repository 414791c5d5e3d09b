"""Every user-facing sentence, one table per language per area, and the one way to look them up.

An *area* is the part of servetune that speaks (`review` for the findings and the check
report, `explain`, `doctor`, `bench`, `judge` for compare and accept, ...). Each area has one
module per language, named `<area>_<suffix>.py` with the suffixes of `SUFFIXES` (`review_en.py`,
`review_zh_tw.py`), and each such module defines one flat table:

    TEXTS: dict[str, str] = {
        "dash-typo.title": "`{token}` starts with a typographic dash, not `--`",
        "report.ok": "Looks good: no red flags found.",
    }

Keys are dotted names (`<entry>.<field>` where an entry has several parts, such as a finding's
`title` / `why` / `fix` / `ask_ai`); values are `str.format` templates. Every language of an
area has exactly the same keys and, key by key, the same placeholders, and no text is empty:
`tests/texts/test_parity.py` walks every table of every area and fails otherwise. Code reads a
text only through `get` / `format` (or `table` where it must walk a whole area); nothing else
imports the table modules, so a zh-TW table is loaded only when a zh-TW text is asked for
(`servetune check` must start fast).

A view says the texts of its area through a `Voice`, the area and the language bound once:
`say = texts.Voice("plan", language)`, then `say("bound", bound=..., kv=...)`.

A sentence decided in one place and said in another (a finding's reason, a comparison's
warning) is a `Sentence` (`texts/sentence.py`): a key of one area and its facts, said in English
for JSON documents and in the user's language by the terminal views. What an error says is an
`ErrorText` (area `errors`): English in the error's `message`, said in the command's language
by the CLI's error boundary.

To add an area: write `<area>_en.py` and `<area>_zh_tw.py` (English first; the zh-TW one uses
Taiwan's vocabulary and full-width punctuation; flags, commands, ids and numbers stay ASCII),
then add the area's name to `Area` below. The parity test picks it up from there. This package
imports nothing from the rest of servetune, so any layer may use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal, get_args

Language = Literal["en", "zh-TW"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
SUFFIXES: dict[Language, str] = {"en": "en", "zh-TW": "zh_tw"}

Area = Literal[
    "review",
    "explain",
    "bench",
    "quality",
    "doctor",
    "tune",
    "judge",
    "plan",
    "serve",
    "monitor",
    "report",
    "errors",
]
AREAS: tuple[Area, ...] = get_args(Area)


@cache
def table(area: Area, language: Language) -> Mapping[str, str]:
    """The whole table of one area in one language (loaded on first use)."""
    module = importlib.import_module(f"{__name__}.{area}_{SUFFIXES[language]}")
    texts: Mapping[str, str] = module.TEXTS
    return texts


def has(area: Area, key: str) -> bool:
    """Whether the area has a text under `key` (in every language: the parity test holds it)."""
    return key in table(area, "en")


def get(area: Area, key: str, language: Language = "en") -> str:
    """The text of `key` in `language`, as written (a template, not filled in)."""
    try:
        return table(area, language)[key]
    except KeyError:
        raise KeyError(f"no text {key!r} in area {area!r} ({language})") from None


def format(area: Area, key: str, language: Language = "en", /, **facts: object) -> str:
    """The text of `key` in `language`, with its placeholders filled from `facts`."""
    try:
        return get(area, key, language).format(**facts)
    except KeyError as missing:
        raise KeyError(f"text {key!r} in area {area!r} needs the fact {missing}") from None


@dataclass(frozen=True)
class Voice:
    """The texts of one area said in one language: what every view speaks through.

    `Voice("tune", "zh-TW")("summary.limit", limit=...)` is
    `format("tune", "summary.limit", "zh-TW", limit=...)`.
    """

    area: Area
    language: Language = "en"

    def __call__(self, key: str, /, **facts: object) -> str:
        """The text of `key`, its placeholders filled from `facts`."""
        return format(self.area, key, self.language, **facts)

    def has(self, key: str) -> bool:
        return has(self.area, key)

    def get(self, key: str) -> str:
        """The text of `key` as written (a template, not filled in)."""
        return get(self.area, key, self.language)

    def in_language(self, language: Language) -> Voice:
        """The same area in another language."""
        return replace(self, language=language)


from servetune.texts.sentence import ErrorText as ErrorText  # noqa: E402 - it uses this module
from servetune.texts.sentence import Sayable as Sayable  # noqa: E402
from servetune.texts.sentence import Sentence as Sentence  # noqa: E402 - it uses this module
