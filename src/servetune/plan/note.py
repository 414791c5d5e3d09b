"""A sentence `plan` writes, kept as a `plan` text key and its facts so that only the view says
it in a language: a note of the answer (`Note("note.moe")`), or why a what-if was left out
(`Note("what_if.refused.rules", rules="tp-heads-indivisible")`). The JSON document carries its
English (`text()`); the terminal view says it in the chosen language.
"""

from __future__ import annotations

from typing import ClassVar

from servetune.texts import Area, Sentence

__all__ = ["Note"]


class Note(Sentence):
    """A `plan` text key with the facts that fill it."""

    __slots__ = ()
    area: ClassVar[Area] = "plan"
