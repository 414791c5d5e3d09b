"""Close-match suggestions for misspelled names (flags, GPUs, models)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def suggest(word: str, candidates: Iterable[str], *, cutoff: float = 0.75) -> str | None:
    """The single closest candidate to `word`, or None when nothing is close enough."""
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return matches[0] if matches else None
