"""The review rules. Each is a small function from the review context to zero or more hits.

A rule knows facts, not words: it returns `Hit`s carrying the numbers and names its message
needs; `servetune.texts` (area `review`) holds the texts per language. Severity and the flag a rule
concerns are part of its registration, so they are stable across languages and releases.
"""

from __future__ import annotations

# The rule modules register their rules on import; `_SECTIONS` then fixes the order findings of
# one severity are listed in (imports are sorted by name, sections by what a reader meets first).
from servetune.review.rules import (  # noqa: F401
    command_line,
    memory,
    parallelism,
    quantization,
    scheduler,
    unreviewed,
)
from servetune.review.rules.base import (
    RULES,
    Context,
    Edit,
    Fact,
    Hit,
    Rule,
    RuleFn,
    Severity,
    rule,
    rule_by_id,
    run_rules,
)

_SECTIONS = ("command_line", "parallelism", "quantization", "scheduler", "memory", "unreviewed")
RULES.sort(key=lambda r: _SECTIONS.index(r.check.__module__.rsplit(".", 1)[-1]))  # stable

__all__ = [
    "RULES",
    "Context",
    "Edit",
    "Fact",
    "Hit",
    "Rule",
    "RuleFn",
    "Severity",
    "rule",
    "rule_by_id",
    "run_rules",
]
