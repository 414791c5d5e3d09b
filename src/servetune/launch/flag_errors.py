"""Diagnoses of argparse's refusals (`vllm serve: error: unrecognized arguments: ...`): each
token it could not place is a typographic dash, a removed or renamed flag, a flag of another
release, a misspelling, or a value left after an on/off switch."""

from __future__ import annotations

import re
from collections.abc import Sequence

from servetune._did_you_mean import suggest
from servetune.launch.diagnoses import Hit
from servetune.launch.log_facts import Facts
from servetune.vllm import flags as vllm_flags
from servetune.vllm import log as vllm_log
from servetune.vllm.serve_command import UNICODE_DASHES

# `vllm: error: unrecognized arguments: ...` names every token argparse could not place.
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (?P<args>.+)$")


def _flag_hit(token: str, version: str | None, evidence: str) -> Hit:
    if token[0] in UNICODE_DASHES:
        fixed = "--" + token.lstrip(UNICODE_DASHES + "-")
        return Hit("dash-typo", None, {"token": token, "fixed": fixed}, evidence)
    flag = vllm_flags.normalize(token.split("=", 1)[0])
    facts: Facts = {"token": token}
    gone = vllm_flags.removal(flag, version) if version else None
    if gone is not None and gone.first_seen is not None and version is not None:
        facts |= {"first_seen": gone.first_seen, "version": version}
        return Hit("unknown-flag", "too-new", facts, evidence)
    if gone is not None or flag in vllm_flags.REPLACEMENTS:
        replacement = vllm_flags.REPLACEMENTS.get(flag)
        if replacement:
            return Hit("removed-flag", "replaced", facts | {"replacement": replacement}, evidence)
        return Hit("removed-flag", None, facts, evidence)
    return _unknown_flag_hit(flag, facts, version, evidence)


def _unknown_flag_hit(flag: str, facts: Facts, version: str | None, evidence: str) -> Hit:
    if version is None and any(flag in vllm_flags.flags_of(v) for v in vllm_flags.known_versions()):
        # A real flag of some release: the server is older or newer than the command assumed.
        return Hit("unknown-flag", "other-release", facts, evidence)
    suggestion = suggest(flag, vllm_flags.suggestions(version or vllm_flags.newest_version()))
    if suggestion:
        return Hit("unknown-flag", "did-you-mean", facts | {"suggestion": suggestion}, evidence)
    return Hit("unknown-flag", None, facts, evidence)


_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})


def argparse_hits(texts: Sequence[str], version: str | None) -> list[Hit]:
    for text in texts:
        match = _UNRECOGNIZED.search(text)
        if match is None or not vllm_log.is_argparse_error(vllm_log.LogLine(None, text)):
            continue
        tokens = match["args"].split()
        if not tokens:
            continue
        hits = [_flag_hit(t, version, text) for t in tokens if t[0] in UNICODE_DASHES + "-"]
        if tokens[0].lower() in _BOOL_WORDS:
            # `--enforce-eager True`: argparse took the switch and left its value over.
            hits.insert(0, Hit("bool-flag-value", "value-only", {"token": tokens[0]}, text))
        elif not tokens[0].startswith(tuple(UNICODE_DASHES + "-")):
            # A value before any flag: a value given to a switch, or a flag lost to a line break.
            hits.insert(0, Hit("unknown-flag", "stray", {"token": tokens[0]}, text))
        return hits
    return []
