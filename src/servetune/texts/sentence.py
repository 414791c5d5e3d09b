"""A sentence kept as a text key and the facts that fill it, so that it can be said in any
language when it is shown, not when it is decided: a domain module returns
`Reason("default.seqs.gpu", version="0.32.0", gpu="H100")`, a JSON document carries its English
(`text()` or `str()`), a terminal view says it in the user's language (`text("zh-TW")`).

A subclass names its text area (`area = "review"`). A fact is a plain value (formatted by the
template, so `{kv:.0%}` reads the same number in every language) or anything with a
`text(language)` method (another sentence: said in the same language first).

`ErrorText` is what an error says (area `errors`):
`raise UsageError(ErrorText("bench.workers-min"))`. Its message is English for a library
caller (`exc.message`); the CLI's error boundary says the same key in the command's language.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Formatter
from typing import ClassVar, Protocol, runtime_checkable

from servetune import texts
from servetune.texts import LANGUAGES, Area, Language

__all__ = ["ErrorText", "Sayable", "Sentence"]


@runtime_checkable
class Sayable(Protocol):
    def text(self, language: Language = "en") -> str: ...


class Sentence:
    """A text key of `area` with its facts; equal and hashable by class, key and facts."""

    area: ClassVar[Area]
    facts: tuple[tuple[str, object], ...]
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


def _as_is(field: str) -> str:
    return field


def _language(value: str) -> Language:
    for language in LANGUAGES:
        if value == language:
            return language
    raise KeyError(f"no language {value!r}")


class ErrorText(Sentence):
    """What an error says: a key of the `errors` area and its facts.

    A slot of the text that no fact fills names a config field (`{workers}`): the library says
    it as the field (`workers must be at least 1`), the CLI as the flag that sets it
    (`--workers must be at least 1`), through `text(language, name)`. The hint of `key`, when
    the table has one, is the text under `key + ".hint"`, filled from the same facts.
    """

    area: ClassVar[Area] = "errors"
    __slots__ = ()

    def __init__(self, key: str, /, **facts: object) -> None:
        self.key = key
        self.facts = tuple(facts.items())

    def text(self, language: str = "en", name: Callable[[str], str] = _as_is) -> str:
        """The sentence in `language`, each field said as `name(field)`."""
        lang = _language(language)
        fields = {field: name(field) for field in self._own_fields()}
        facts = {key: _fact(value, lang, name) for key, value in self.facts}
        return texts.get(self.area, self.key, lang).format_map({**fields, **facts})

    @property
    def fields(self) -> tuple[str, ...]:
        """The config fields the sentence names, its facts' sentences included."""
        nested = [
            field
            for _, value in self.facts
            if isinstance(value, ErrorText)
            for field in value.fields
        ]
        return tuple(dict.fromkeys([*self._own_fields(), *nested]))

    def hint(self) -> ErrorText | None:
        """The hint that goes with this message (`key + ".hint"`), or None when it has none."""
        key = f"{self.key}.hint"
        return ErrorText(key, **dict(self.facts)) if texts.has(self.area, key) else None

    def other(self, key: str, /, **facts: object) -> ErrorText:
        """Another sentence of the same area."""
        return ErrorText(key, **facts)

    def _own_fields(self) -> tuple[str, ...]:
        given = {key for key, _ in self.facts}
        slots = (
            slot for _, slot, _, _ in Formatter().parse(texts.get(self.area, self.key)) if slot
        )
        return tuple(dict.fromkeys(slot for slot in slots if slot not in given))


def _fact(value: object, language: Language, name: Callable[[str], str]) -> object:
    """A fact as the sentence says it: a sentence in the same language (another error text with
    the same names for its fields), anything else as it is."""
    if isinstance(value, ErrorText):
        return value.text(language, name)
    if isinstance(value, Sayable):
        return value.text(language)
    return value
