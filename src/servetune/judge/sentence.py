"""A sentence the judge writes, kept as a text key and its facts so that it can be said in any
language: `Sentence("warning.failed-requests", side=..., failed=3, total=440).text("zh-TW")`.

The keys are in the `judge` area of `servetune.texts` (see `servetune.texts.sentence`). English
is what the JSON documents carry (`text()`); the terminal views say it in the chosen language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from servetune import texts
from servetune.texts import Area, Language
from servetune.texts import Sentence as Said

__all__ = ["Joined", "Sentence"]


class Sentence(Said):
    """A `judge` text key with the facts that fill it."""

    __slots__ = ()
    area: ClassVar[Area] = "judge"


@dataclass(frozen=True)
class Joined:
    """Sentences said one after another, with the `judge` text under `separator` between them
    (none when `separator` is None)."""

    items: tuple[Sentence, ...]
    separator: str | None = None

    def text(self, language: Language = "en") -> str:
        between = texts.get("judge", self.separator, language) if self.separator else ""
        return between.join(item.text(language) for item in self.items)
