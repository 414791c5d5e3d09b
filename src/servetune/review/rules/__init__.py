"""The review rules. Each is a small function from the review context to zero or more hits.

A rule knows facts, not words, and is registered once with its identity: `@rule(id, severity,
flag)` gives its id, how bad it is and the flag it concerns; its body yields `Hit`s carrying
only the numbers and names its texts need (and a text variant and the edits its fix implies).
`run_rules` stamps every hit with its rule's id, severity and flag (`Found`); `check` turns
those into findings whose texts are `review` text keys with the facts, said in a language only
by `render/`.

To add a rule:
1. Write the body in the module of its section (`command_line`, `parallelism`, `quantization`,
   `support`, `scheduler`, `memory`, `unreviewed`; a new module also goes into `_SECTIONS` below):

       @rule("swap-space-large", "warning", "--swap-space")
       def swap_space_large(ctx: Context) -> Iterator[Hit]:
           gib = ctx.command.number("--swap-space")
           if gib is not None and gib > 64:
               yield Hit({"gib": gib}, edits=(Edit("--swap-space", "4"),))

   The facts are plain values (or a review `Sentence` where the fact is a word, such as
   `Sentence("fact.older-release")`); `machine`, `model` and `version` are always there.
   `Hit(facts, "variant")` picks the texts `<id>:<variant>.*` instead of `<id>.*`. Pass
   `flag=` to `Hit` only where the flag differs from hit to hit (the command-line rules name
   the flag the user typed); otherwise the flag given to `@rule` is the finding's flag.
2. Write its texts in `texts/review_en.py` and `texts/review_zh_tw.py`: `<id>.title`, `.why`,
   `.fix` and, where an AI can help, `.ask_ai` (per variant `<id>:<variant>.title` ...), with
   the same placeholders in both (`tests/texts/test_parity.py` checks it).
3. Add a command that fires it and a near miss that does not to `CASES` and `NEAR_MISSES` in
   `tests/review/test_rules.py` (`test_every_rule_has_a_firing_case_and_a_near_miss` fails
   until both exist). Where `doctor` reads the same failure in vLLM's log, reuse the id
   (`launch/diagnoses.py`).
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
    support,
    unreviewed,
)
from servetune.review.rules.base import (
    RULES,
    Context,
    Edit,
    Fact,
    Found,
    Hit,
    Rule,
    RuleFn,
    Severity,
    rule,
    rule_by_id,
    run_rules,
)

_SECTIONS = (
    "command_line",
    "parallelism",
    "quantization",
    "support",
    "scheduler",
    "memory",
    "unreviewed",
)
RULES.sort(key=lambda r: _SECTIONS.index(r.check.__module__.rsplit(".", 1)[-1]))  # stable

__all__ = [
    "RULES",
    "Context",
    "Edit",
    "Fact",
    "Found",
    "Hit",
    "Rule",
    "RuleFn",
    "Severity",
    "rule",
    "rule_by_id",
    "run_rules",
]
