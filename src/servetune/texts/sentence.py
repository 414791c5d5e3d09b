"""A sentence kept as a text key and the facts that fill it, so that it can be said in any
language when it is shown, not when it is decided: a domain module returns
`Reason("default.seqs.gpu", version="0.32.0", gpu="H100")`, a JSON document carries its English
(`text()` or `str()`), a terminal view says it in the user's language (`text("zh-TW")`).

A subclass names its text area (`area = "review"`). A fact is a plain value (formatted by the
template, so `{kv:.0%}` reads the same number in every language) or anything with a
`text(language)` method (another sentence: said in the same language first).
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

from servetune import texts
from servetune.texts import Area, Language

__all__ = ["Sayable", "Sentence"]


@runtime_checkable
class Sayable(Protocol):
    def text(self, language: Language = "en") -> str: ...


class Sentence:
    """A text key of `area` with its facts; equal and hashable by class, key and facts."""

    area: ClassVar[Area]
    __slots__ = ("facts", "key")

    def __init__(self, key: str, /, **facts: str | int | float | Sayable) -> None:
        self.key = key
        self.facts = tuple(facts.items())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self.key, self.facts) == (other.key, other.facts)

    def __hash__(self) -> int:
        return hash((type(self), self.key, self.facts))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.key!r}, {dict(self.facts)!r})"

    def __str__(self) -> str:
        return self.text()

    def text(self, language: Language = "en") -> str:
        """The sentence in `language` (English by default: the JSON documents' wording)."""
        said = {
            name: value.text(language) if isinstance(value, Sayable) else value
            for name, value in self.facts
        }
        return texts.format(self.area, self.key, language, **said)
