"""A sentence of the review, kept as a `review` text key and its facts so that only the view
says it, in the language asked for: `Sentence("tp-exceeds-gpus.title", tp=4, gpus=2)`.

A finding's title, why, fix and ask-AI line are such sentences (`check.Finding`); so is a fact
that is itself a word (`Sentence("fact.machine-unknown")` where the GPUs are not known). English
is what the JSON documents carry (`text()`); the terminal views say it in `--lang`.
"""

from __future__ import annotations

from typing import ClassVar

from servetune import texts
from servetune.texts import Area

__all__ = ["Sentence"]


class Sentence(texts.Sentence):
    """A `review` text key with the facts that fill it."""

    __slots__ = ()
    area: ClassVar[Area] = "review"
