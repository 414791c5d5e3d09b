"""The command line itself: typographic dashes, unknown, removed and misspelled flags, values."""

from __future__ import annotations

from collections.abc import Iterator

from servetune.review.rules.base import Context, Edit, Fact, Hit, rule


@rule("dash-typo", "error", None)
def dash_typo(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "dash-typo":
            yield Hit("dash-typo", issue.flag, {"token": issue.token, "fixed": issue.detail or ""})


@rule("unknown-flag", "error", None)
def unknown_flag(ctx: Context) -> Iterator[Hit]:
    version = ctx.command.version
    for issue in ctx.command.issues:
        facts: dict[str, Fact] = {"token": issue.token, "version": version}
        if issue.kind == "flag-too-new" and issue.removal and issue.removal.first_seen:
            facts["first_seen"] = issue.removal.first_seen
            yield Hit("unknown-flag", issue.flag, facts, "too-new", (Edit(issue.flag or "", None),))
        elif issue.kind == "unknown-flag" and issue.flag is None:
            entrypoint = issue.detail == "image entrypoint"
            yield Hit("unknown-flag", None, facts, "entrypoint" if entrypoint else "stray")
        elif issue.kind == "unknown-flag" and issue.detail:
            facts["suggestion"] = issue.detail
            value = ctx.command.args.get(issue.flag or "", True)
            edits = (Edit(issue.flag or "", None), Edit(issue.detail, value))
            yield Hit("unknown-flag", issue.flag, facts, "did-you-mean", edits)
        elif issue.kind == "unknown-flag":
            yield Hit("unknown-flag", issue.flag, facts, None, (Edit(issue.flag or "", None),))
        elif issue.kind == "ambiguous-flag":
            facts["candidates"] = issue.detail or ""
            yield Hit("unknown-flag", issue.flag, facts, "ambiguous")


@rule("model-required", "error", "--model")
def model_required(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "model-required":
            facts: dict[str, Fact] = {"given": issue.detail or ""}
            variant = {"--model": "flag", "--served-model-name": "served-name"}.get(issue.token)
            yield Hit(
                "model-required", "--model", facts, variant or (None if issue.detail else "none")
            )


@rule("removed-flag", "error", None)
def removed_flag(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind != "removed-flag" or issue.removal is None:
            continue
        removal = issue.removal
        facts: dict[str, Fact] = {
            "token": issue.token,
            "version": ctx.command.version,
            "last_seen": removal.last_seen or "an older release",
            "gone_in": removal.first_missing or "a later release",
        }
        if removal.replacement:
            facts["replacement"] = removal.replacement
        variant = "replaced" if removal.replacement else None
        yield Hit("removed-flag", issue.flag, facts, variant, (Edit(issue.flag or "", None),))


@rule("bool-flag-value", "error", None)
def bool_flag_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "bool-flag-value" and issue.flag:
            on = ctx.command.switch(issue.flag) is not False
            fixed = issue.flag if on else "--no-" + issue.flag.removeprefix("--")
            yield Hit("bool-flag-value", issue.flag, {"token": issue.token, "fixed": fixed})


@rule("missing-value", "error", None)
def missing_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "missing-value":
            yield Hit("missing-value", issue.token, {"token": issue.token})


@rule("invalid-value", "error", None)
def invalid_value(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "invalid-value":
            yield Hit(
                "invalid-value", issue.flag, {"token": issue.token, "value": issue.detail or ""}
            )


@rule("config-unreadable", "warning", "--config")
def config_unreadable(ctx: Context) -> Iterator[Hit]:
    for issue in ctx.command.issues:
        if issue.kind == "config-unreadable":
            yield Hit(
                "config-unreadable", "--config", {"path": issue.token, "reason": issue.detail or ""}
            )
