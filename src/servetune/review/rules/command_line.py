"""The command line itself: typographic dashes, unknown, removed and misspelled flags, values."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from servetune._did_you_mean import suggest
from servetune.review.rules.base import Context, Edit, Fact, Hit, rule
from servetune.review.sentence import Sentence
from servetune.vllm import flags as vllm_flags
from servetune.vllm.serve_command import is_vllm_image


@rule("dash-typo", "error", None)
def dash_typo(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "dash-typo":
            facts: dict[str, Fact] = {"token": issue.token, "fixed": issue.detail or ""}
            yield Hit(facts, flag=issue.flag)


@rule("unknown-flag", "error", None)
def unknown_flag(ctx: Context) -> Iterator[Hit]:
    version = ctx.command.version
    for issue in ctx.command.issues:
        facts: dict[str, Fact] = {"token": issue.token, "version": version}
        if issue.kind == "flag-too-new" and issue.removal and issue.removal.first_seen:
            facts["first_seen"] = issue.removal.first_seen
            removal = (Edit(issue.flag or "", None),)
            yield Hit(facts, "too-new", removal, flag=issue.flag, by_release=True)
        elif issue.kind == "unknown-flag" and issue.flag is None:
            entrypoint = issue.detail == "image entrypoint"
            yield Hit(facts, "entrypoint" if entrypoint else "stray", by_release=entrypoint)
        elif issue.kind == "unknown-flag" and issue.detail == "demo server":
            ever = vllm_flags.demo_server_ever_has(issue.flag or issue.token)
            yield Hit(facts, "demo-server", flag=issue.flag, by_release=ever)
        elif issue.kind == "unknown-flag" and issue.detail:
            facts["suggestion"] = issue.detail
            value = ctx.command.args.get(issue.flag or "", True)
            edits = (Edit(issue.flag or "", None), Edit(issue.detail, value))
            yield Hit(facts, "did-you-mean", edits, flag=issue.flag)
        elif issue.kind == "unknown-flag":
            yield Hit(facts, None, (Edit(issue.flag or "", None),), flag=issue.flag)
        elif issue.kind == "unquoted-json" and issue.flag:
            fix = (Edit(issue.flag, issue.detail),) if issue.detail else ()
            facts["flag"] = issue.flag
            yield Hit(facts, "unquoted-json", fix, flag=issue.flag)
        elif issue.kind == "ambiguous-flag":
            facts["candidates"] = issue.detail or ""
            yield Hit(facts, "ambiguous", flag=issue.flag)


@rule("model-required", "error", "--model")
def model_required(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "model-required" and issue.before:
            facts: dict[str, Fact] = {"given": issue.detail or "", "since": issue.before}
            yield Hit(facts, "older", severity="warning")
        elif issue.kind == "model-required":
            facts = {"given": issue.detail or ""}
            variant = {"--model": "flag", "--served-model-name": "served-name"}.get(issue.token)
            yield Hit(facts, variant or (None if issue.detail else "none"), by_release=True)


@rule("flag-without-dashes", "error", None)
def flag_without_dashes(ctx: Context) -> Iterator[Hit]:
    """A flag written as a bare word (`trust_remote_code=True`): an extra positional to vLLM."""
    for issue in ctx.command.issues:
        if issue.kind == "flag-without-dashes" and issue.flag:
            value = ctx.command.args.get(issue.flag, True)
            facts: dict[str, Fact] = {"token": issue.token, "fixed": issue.detail or issue.flag}
            yield Hit(facts, None, (Edit(issue.flag, value),), flag=issue.flag)


@rule("extra-positional-after-entrypoint", "error", None)
def extra_positional_after_entrypoint(ctx: Context) -> Iterator[Hit]:
    """`serve` written after an image whose entrypoint already is vLLM's server."""
    for issue in ctx.command.issues:
        if issue.kind == "extra-positional-after-entrypoint":
            image = issue.detail or ""
            facts: dict[str, Fact] = {"token": issue.token, "image": image}
            own = is_vllm_image(image)
            yield Hit(facts, None if own else "other-image", severity=None if own else "warning")


@rule("removed-flag", "error", None)
def removed_flag(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind != "removed-flag" or issue.removal is None:
            continue
        removal = issue.removal
        facts: dict[str, Fact] = {
            "token": issue.token,
            "version": ctx.command.version,
            "last_seen": removal.last_seen or Sentence("fact.older-release"),
            "gone_in": removal.first_missing or Sentence("fact.later-release"),
        }
        if removal.replacement:
            facts["replacement"] = removal.replacement
        variant = "replaced" if removal.replacement else None
        edits = (Edit(issue.flag or "", None),)
        yield Hit(facts, variant, edits, flag=issue.flag, by_release=True)


@rule("bool-flag-value", "error", None)
def bool_flag_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "bool-flag-value" and issue.flag:
            on = ctx.command.switch(issue.flag) is not False
            fixed = issue.flag if on else "--no-" + issue.flag.removeprefix("--")
            yield Hit({"token": issue.token, "fixed": fixed}, flag=issue.flag)


@rule("missing-value", "error", None)
def missing_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "missing-value":
            yield Hit({"token": issue.token}, flag=issue.token)


_CHOICES_SHOWN = 12  # a long list of choices (tool-call parsers) is said in part


def _closest_choice(value: str, choices: Sequence[str]) -> str | None:
    """The one choice the value begins (`bfloat` of `bfloat16`), else the closest in spelling."""
    begun = [c for c in choices if value and c.lower().startswith(value.lower())]
    if len(begun) == 1:
        return begun[0]
    return suggest(value, choices, cutoff=0.6)  # difflib's own cutoff


@rule("invalid-value", "error", None)
def invalid_value(ctx: Context) -> Iterator[Hit]:
    """A value vLLM cannot read, or one outside the release's choices. The fix: the choice
    closest in spelling where one is close (`bfloat` for `bfloat16`), else the flag removed,
    which gives vLLM's own default; either way the corrected command runs on that release."""
    for issue in ctx.command.issues:
        if issue.kind != "invalid-value" or not issue.flag:
            continue
        facts: dict[str, Fact] = {"token": issue.token, "value": issue.detail or ""}
        close = _closest_choice(issue.detail or "", issue.choices or ())
        if close:
            facts["suggestion"] = f"{issue.flag} {close}"
            edits = (Edit(issue.flag, close),)
            yield Hit(facts, "did-you-mean", edits, flag=issue.flag, by_release=True)
            continue
        variant = "choices" if issue.choices else None
        if issue.choices:
            shown = ", ".join(issue.choices[:_CHOICES_SHOWN])
            more = len(issue.choices) - _CHOICES_SHOWN
            facts["choices"] = f"{shown} (+{more})" if more > 0 else shown
        edits = (Edit(issue.flag, None),)
        yield Hit(facts, variant, edits, flag=issue.flag, by_release=True)


@rule("config-unreadable", "warning", "--config")
def config_unreadable(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "config-unreadable":
            yield Hit({"path": issue.token, "reason": issue.detail or ""})
