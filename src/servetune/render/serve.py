"""serve's status lines and their JSON: each thing serve says is one `Status`, a line of text
in the chosen language and, for the events a script follows, one JSON object (English, one per
line with --format json).

The words are in the `serve` area of `servetune.texts`; a failed start ends with the doctor's
report (`servetune.render.doctor`), a refused command with check's (`servetune.render.check`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from servetune import texts
from servetune.texts import Area, Language

if TYPE_CHECKING:
    from servetune.launch.doctor import DoctorReport
    from servetune.review.check import Report


class Why(texts.Sentence):
    """Why a start failed: a `serve` text key (`why.exited`, `why.timeout`...) and its facts."""

    __slots__ = ()
    area: ClassVar[Area] = "serve"


@dataclass(frozen=True)
class Status:
    """One thing serve says: its line(s) of text, and its JSON event (None: text only)."""

    text: str
    doc: dict[str, Any] | None = None


def starting(pid: int, log: Path, language: Language = "en") -> Status:
    return Status(texts.Voice("serve", language)("starting", pid=pid, log=log))


def phase(label: str) -> Status:
    """A step of vLLM's start, as the log reader names it."""
    return Status(f"  {label}")


@dataclass(frozen=True)
class Capacity:
    """The KV cache in tokens and the concurrency at the full context (None: not known)."""

    kv_cache_tokens: int | None
    max_concurrency: float | None

    def to_json(self) -> dict[str, Any]:
        return {"kv_cache_tokens": self.kv_cache_tokens, "max_concurrency": self.max_concurrency}


def ready(
    url: str,
    pid: int,
    log: Path,
    reported: Capacity,
    estimated: Capacity,
    *,
    language: Language = "en",
) -> Status:
    """vLLM answers: where, and its KV cache as vLLM reported it against check's estimate."""
    say = texts.Voice("serve", language)

    def num(value: float | None, fmt: str) -> str:
        return say("unknown") if value is None else format(value, fmt)

    text = say(
        "ready",
        url=url,
        pid=pid,
        tokens=num(reported.kv_cache_tokens, ","),
        concurrency=num(reported.max_concurrency, ".2f"),
        estimated_tokens=num(estimated.kv_cache_tokens, ","),
        estimated_concurrency=num(estimated.max_concurrency, ".2f"),
    )
    doc = {
        "status": "ready",
        "url": url,
        "pid": pid,
        "log": str(log),
        "reported": reported.to_json(),
        "estimate": estimated.to_json(),
    }
    return Status(text, doc)


def failed(why: Why, log: Path, doctor: DoctorReport, language: Language = "en") -> Status:
    """The start failed: why, where the log is, and the doctor's reading of it."""
    from servetune.render.doctor import doctor_text

    say = texts.Voice("serve", language)
    head = [say("failed", why=why.text(language)), say("failed.log", log=log)]
    text = "\n".join(head) + "\n" + doctor_text(doctor, language)
    doc = {"status": "failed", "why": why.text(), "log": str(log), "doctor": doctor.to_json()}
    return Status(text, doc)


def stopped_early(language: Language = "en") -> Status:
    return Status(texts.Voice("serve", language)("stopped-early"), {"status": "stopped"})


def stopping(language: Language = "en") -> Status:
    return Status(texts.Voice("serve", language)("stopping"), {"status": "stopping"})


def stopped(code: int | None, language: Language = "en") -> Status:
    text = texts.Voice("serve", language)("stopped", code=code)
    return Status(text, {"status": "stopped", "exit_code": code})


def refused_json(report: Report) -> str:
    """The one JSON line for a command check refuses (ASCII-escaped, as it always was)."""
    return json.dumps({"status": "refused", "check": report.to_json()}) + "\n"


def refused_error(language: Language = "en") -> str:
    """The error line that says why nothing was launched."""
    return texts.Voice("serve", language)("refused") + "\n"
