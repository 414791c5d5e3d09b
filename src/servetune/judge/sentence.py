"""A sentence the judge writes, kept as a text key and its facts so that it can be said in any
language: `Sentence("warning.failed-requests", side=..., failed=3, total=440).text("zh-TW")`.

The keys are in the `judge` area of `servetune.texts`. A fact is a plain value (formatted by the
template, so `{kv:.0%}` reads the same number in every language), another `Sentence` (said in
the same language first) or a `Joined` list of sentences. English is what the JSON documents
carry (`text()`); the terminal views say it in the chosen language.
"""

from __future__ import annotations

from dataclasses import dataclass

from servetune import texts
from servetune.texts import Language

__all__ = ["Joined", "Sentence"]


@dataclass(frozen=True)
class Joined:
    """Sentences said one after another, with the text under `separator` between them (none
    when `separator` is None)."""

    items: tuple[Sentence, ...]
    separator: str | None = None

    def text(self, language: Language = "en") -> str:
        between = texts.get("judge", self.separator, language) if self.separator else ""
        return between.join(item.text(language) for item in self.items)


class Sentence:
    """A `judge` text key with the facts that fill it; equal and hashable by both."""

    __slots__ = ("facts", "key")

    def __init__(self, key: str, /, **facts: str | int | float | Sentence | Joined) -> None:
        self.key = key
        self.facts = tuple(facts.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sentence) and (self.key, self.facts) == (other.key, other.facts)

    def __hash__(self) -> int:
        return hash((self.key, self.facts))

    def __repr__(self) -> str:
        return f"Sentence({self.key!r}, {dict(self.facts)!r})"

    def text(self, language: Language = "en") -> str:
        """The sentence in `language` (English by default: the JSON documents' wording)."""
        said = {
            name: value.text(language) if isinstance(value, Sentence | Joined) else value
            for name, value in self.facts
        }
        return texts.format("judge", self.key, language, **said)
