"""servetune's exception tree: every error a user can act on carries a hint and an exit code.

Every error servetune raises on purpose is a `ServetuneError`; the CLI's one boundary
(`servetune.cli.main`) prints its `message` and `hint` and exits with its type's `exit_code`.
The tree, with the exit status each error ends a command with:

    ServetuneError ........... 2  root; library users can catch this one class
    ├── UsageError ........... 2  malformed input: a bad option or config value, an unknown
    │   │                         name, a file that cannot be read
    │   ├── CommandParseError  2  the `vllm serve` command text cannot be understood at all
    │   ├── NotAVllmLog ...... 2  a text given as a vLLM log holds no line vLLM prints
    │   └── HardwareError .... 2  a GPU specification cannot be resolved
    ├── ModelConfigError ..... 2  a model's config.json is missing, unreadable or not one
    ├── ServerUnreachable .... 2  nothing answered before a load test started (nothing measured)
    ├── NoMetrics ............ 2  a server answers but has no /metrics page to watch
    └── MissingExtra ......... 2  a feature needs an optional extra that is not installed

    KeyboardInterrupt ...... 130  Ctrl-C, at the same boundary (`ExitCode.INTERRUPTED`)

What an error says is a text of `servetune.texts` (area `errors`), given as a
`texts.ErrorText`, its key and its facts: `raise UsageError(ErrorText("bench.workers-min"))`.
Its `message` and `hint` are English, for library callers and logs; the error keeps the text
(`wording`, `key`), so the CLI says it in the language of the command (`worded`). The table's
`<key>.hint` is the hint unless the raise gives one.

The library names a config's fields, not the CLI's flags: a slot no fact fills names a field
(`"{workers} must be at least 1"`), so the message reads "workers must be at least 1" to a
library caller, and the CLI says it as "--workers must be at least 1" (`worded`, with the flag
of each field). `with_fields` does the same for an English template written in place (a message
not yet moved into `texts/`).

Exit status 1 is never an error: it is a command's verdict, returned by its handler
(`ExitCode.FINDINGS` for check/explain, `ExitCode.FAILED` for the others).

Internal signals, not in the tree because they never reach a user: `measure`'s
`RequestFailed`, `MalformedStream`, `StreamFailed` and `MalformedChunk` are caught where a
request is measured and recorded as its error kind (`malformed`, `stream_cut`, `http_503`...),
and the doctor's `_NotThis` only says "try the next pattern".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from string import Formatter
from typing import ClassVar, Protocol, Self


class ExitCode(int):
    """The exit status of every `servetune` command; each command documents which it uses.

    An `int` with a name rather than an `IntEnum`: FINDINGS and FAILED are both status 1, and
    an enum would make the second an alias of the first (so `ExitCode.FAILED` would print as
    `ExitCode.FINDINGS`). Here each keeps its own name and `is` tells them apart, while both
    compare equal to 1 and `sys.exit` exits with 1.
    """

    name: str
    OK: ClassVar[ExitCode]
    FINDINGS: ClassVar[ExitCode]
    FAILED: ClassVar[ExitCode]
    USAGE: ClassVar[ExitCode]
    INTERRUPTED: ClassVar[ExitCode]

    def __new__(cls, status: int, name: str) -> Self:
        code = super().__new__(cls, status)
        code.name = name
        return code

    def __repr__(self) -> str:
        return f"<ExitCode.{self.name}: {int(self)}>"

    def __str__(self) -> str:
        return str(int(self))


ExitCode.OK = ExitCode(0, "OK")
ExitCode.FINDINGS = ExitCode(1, "FINDINGS")  # check/explain: at least one error finding
ExitCode.FAILED = ExitCode(1, "FAILED")  # the others: refused, failed, not accepted, none met
ExitCode.USAGE = ExitCode(2, "USAGE")  # bad usage or input to fix before the command can run
ExitCode.INTERRUPTED = ExitCode(130, "INTERRUPTED")  # Ctrl-C (128 + SIGINT, as shells report)


class Wording(Protocol):
    """A sentence an error says, in any language: what `servetune.texts.ErrorText` is, seen
    from here (this module imports nothing of `texts`, so every layer can raise its errors)."""

    @property
    def key(self) -> str: ...

    @property
    def fields(self) -> tuple[str, ...]: ...

    def text(self, language: str = "en", name: Callable[[str], str] = ..., /) -> str: ...

    def hint(self) -> Wording | None: ...

    def other(self, key: str, /, **facts: object) -> Wording: ...


class ServetuneError(Exception):
    """Root of every error servetune raises on purpose.

    `message` says what went wrong; `hint` says what to do next, both in English. The CLI
    prints both (`worded`, in the command's language) and exits with the error type's
    `exit_code`; library users can catch this one class.
    """

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE

    def __init__(self, message: str | Wording, hint: str | Wording | None = None) -> None:
        if hint is None and not isinstance(message, str):
            hint = message.hint()
        self._parts = (message, hint)
        self.message, self.hint = self.worded(_as_is)
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} ({self.hint})"

    def text(self, language: str = "en") -> str:
        """The message in `language`, fields named as fields: how a result that quotes this
        error says it (`Sentence("config.unreadable", error=exc)`: English in JSON, the user's
        language in a terminal view)."""
        return self.worded(_as_is, language)[0]

    @classmethod
    def with_fields(cls, template: str, hint: str | None = None, **facts: object) -> Self:
        """An error about a config's fields, named as `{field}` slots in `template` and `hint`;
        the other slots are filled from `facts`: `with_fields("{workers} must be at least 1")`,
        `with_fields("{max_concurrency} {cap} is below {workers} {n}", cap=2, n=3)`. English
        only: a message in `texts/` is raised as an `ErrorText`, which takes fields the same way."""
        return cls(_Template(template, facts), None if hint is None else _Template(hint, facts))

    @property
    def wording(self) -> Wording | None:
        """The message as a sentence of `texts/` (None for a message given as plain text)."""
        message = self._parts[0]
        return None if isinstance(message, str) else message

    @property
    def key(self) -> str | None:
        """The text key of the message (`bench.workers-min`), or None for plain text."""
        return None if self.wording is None else self.wording.key or None

    @property
    def fields(self) -> tuple[str, ...]:
        """The config fields the message and hint name."""
        texts = [part for part in self._parts if part is not None and not isinstance(part, str)]
        return tuple(dict.fromkeys(field for text in texts for field in text.fields))

    def worded(self, name: Callable[[str], str], language: str = "en") -> tuple[str, str | None]:
        """The message and hint in `language`, each field said as `name(field)`: the CLI passes
        the flag of each field, so the user reads `--workers`, where a library caller reads
        `workers`."""
        message, hint = self._parts
        hint_worded = None if hint is None else _worded(hint, name, language)
        return _worded(message, name, language), hint_worded


class UsageError(ServetuneError):
    """The user asked for something malformed: a bad option value, an unknown GPU name."""


class CommandParseError(UsageError):
    """The `vllm serve` command text could not be understood at all."""


class HardwareError(UsageError):
    """A GPU specification could not be resolved."""


class ModelConfigError(ServetuneError):
    """A model's config.json is missing, unreadable or not a model configuration."""


class ServerUnreachable(ServetuneError):
    """The server could not be reached before a load test started (nothing was measured)."""

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE  # bench documents 2 for it, as for bad input


class NoMetrics(ServetuneError):
    """The server answers, but has no /metrics page (not vLLM, or metrics turned off)."""


class MissingExtra(ServetuneError):
    """A feature needs an optional extra (`pip install 'servetune[EXTRA]'`) that is missing.

    `MissingExtra("ray", ErrorText("feature.tune-ray"))`: "tune --executor ray needs the
    optional extra 'ray'", hint "pip install 'servetune[ray]'" (the texts `missing-extra` and
    its hint, the feature said in the same language).
    """

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE

    def __init__(self, extra: str, feature: Wording) -> None:
        super().__init__(feature.other("missing-extra", extra=extra, feature=feature))
        self.extra = extra
        self.feature = feature.text()


def _as_is(field: str) -> str:
    return field


def _worded(part: str | Wording, name: Callable[[str], str], language: str) -> str:
    return part if isinstance(part, str) else part.text(language, name)


class _Template:
    """An English template written in place (`with_fields`): the `Wording` of a message that
    has no text in `texts/` yet."""

    key = ""

    def __init__(self, template: str, facts: Mapping[str, object]) -> None:
        self.template = template
        self.facts = facts

    @property
    def fields(self) -> tuple[str, ...]:
        slots = (slot for _, slot, _, _ in Formatter().parse(self.template) if slot)
        return tuple(dict.fromkeys(slot for slot in slots if slot not in self.facts))

    def text(self, _language: str = "en", name: Callable[[str], str] = _as_is, /) -> str:
        return self.template.format_map({**{f: name(f) for f in self.fields}, **self.facts})

    def hint(self) -> None:
        return None

    def other(self, key: str, /, **_facts: object) -> Wording:
        raise KeyError(f"an English template has no other texts ({key!r})")


class NotAVllmLog(UsageError):
    """A text given as a vLLM log holds no line any vLLM release prints (another server's log, a
    bare library traceback, random bytes): there is nothing for `doctor` to judge."""
