"""Grading one reply against its expected answer.

- number: the LAST number in the reply equals the answer. Thousands separators (`1,234`), a
  trailing zero fraction (`12.0`, `12.50` = `12.5`) and a leading currency sign (`$12`) are
  tolerated; a reply with no number is wrong.
- text: the reply contains the answer, case-insensitive, both trimmed.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# A number as people and models write it: optional sign and `$`, digits with optional thousands
# commas, an optional fraction. `1,234.5` is one number; a comma not followed by exactly three
# digits ends it (`3, 4` is two numbers).
_NUMBER = re.compile(r"(?<![\w.])-?\$?-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|(?<![\w.])-?\.\d+")


def parse_number(text: str) -> Decimal | None:
    """The value of `text` when it is one number (commas, `$` allowed), else None."""
    cleaned = text.strip().replace(",", "").replace("$", "")
    if cleaned.endswith("."):
        cleaned = cleaned[:-1]
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def last_number(reply: str) -> Decimal | None:
    """The last number written in `reply`, or None when it has none."""
    found = _NUMBER.findall(reply)
    return parse_number(found[-1]) if found else None


def is_correct(reply: str, answer: str, kind: str) -> bool:
    """Whether `reply` gives `answer`, by the rules of `kind` (module docstring)."""
    if kind == "number":
        expected = parse_number(answer)
        got = last_number(reply)
        return expected is not None and got is not None and got == expected
    return answer.strip().casefold() in reply.strip().casefold()
