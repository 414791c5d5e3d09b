"""A sentence tune writes (its next step, the interference check's verdict), kept as a `tune`
text key and its facts so that only the views say it in a language:
`Sentence("next.same", tried=4, limit=Sentence("limit.compute")).text("zh-TW")`.

tune.json carries its English (`text()`); the summary and the report say it in the chosen
language (see `servetune.texts.sentence`).
"""

from __future__ import annotations

from typing import ClassVar

from servetune import texts
from servetune.texts import Area

__all__ = ["Sentence"]


class Sentence(texts.Sentence):
    """A `tune` text key with the facts that fill it."""

    __slots__ = ()
    area: ClassVar[Area] = "tune"
