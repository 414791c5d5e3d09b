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

The library names a config's fields, not the CLI's flags: an error about fields is built with
`with_fields` (`UsageError.with_fields("{workers} must be at least 1")`), so its message reads
"workers must be at least 1" to a library caller, and the CLI says it as
"--workers must be at least 1" (`worded`, with the flag of each field).

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
from typing import ClassVar, Self


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


class ServetuneError(Exception):
    """Root of every error servetune raises on purpose.

    `message` says what went wrong; `hint` says what to do next. The CLI prints both and exits
    with the error type's `exit_code`; library users can catch this one class.
    """

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE
    # Set by `with_fields`: the message and hint with `{field}` slots, and the other slots' facts.
    _template: tuple[str, str | None, Mapping[str, object]] | None = None

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} ({self.hint})"

    @classmethod
    def with_fields(cls, template: str, hint: str | None = None, **facts: object) -> Self:
        """An error about a config's fields, named as `{field}` slots in `template` and `hint`;
        the other slots are filled from `facts`: `with_fields("{workers} must be at least 1")`,
        `with_fields("{max_concurrency} {cap} is below {workers} {n}", cap=2, n=3)`. Its
        message names the fields as a library caller spells them; see `worded`."""
        error = cls(*_say(template, hint, facts, lambda field: field))
        error._template = (template, hint, facts)
        return error

    @property
    def fields(self) -> tuple[str, ...]:
        """The config fields the message and hint name (none unless built `with_fields`)."""
        if self._template is None:
            return ()
        template, hint, facts = self._template
        return _fields((template, hint or ""), facts)

    def worded(self, name: Callable[[str], str]) -> tuple[str, str | None]:
        """The message and hint with each field said as `name(field)`: the CLI passes the flag
        of each field, so the user reads `--workers`, where a library caller reads `workers`."""
        if self._template is None:
            return self.message, self.hint
        return _say(*self._template, name)


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

    `MissingExtra("ray", "tune --executor ray")`: "tune --executor ray needs the optional
    extra 'ray'", hint "pip install 'servetune[ray]'".
    """

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE

    def __init__(self, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs the optional extra '{extra}'", f"pip install 'servetune[{extra}]'"
        )
        self.extra = extra
        self.feature = feature


def _fields(texts: tuple[str, ...], facts: Mapping[str, object]) -> tuple[str, ...]:
    slots = (slot for text in texts for _, slot, _, _ in Formatter().parse(text) if slot)
    return tuple(dict.fromkeys(slot for slot in slots if slot not in facts))


def _say(
    template: str, hint: str | None, facts: Mapping[str, object], name: Callable[[str], str]
) -> tuple[str, str | None]:
    names = {field: name(field) for field in _fields((template, hint or ""), facts)}
    values = {**names, **facts}
    return template.format_map(values), None if hint is None else hint.format_map(values)


class NotAVllmLog(UsageError):
    """A text given as a vLLM log holds no line any vLLM release prints (another server's log, a
    bare library traceback, random bytes): there is nothing for `doctor` to judge."""
