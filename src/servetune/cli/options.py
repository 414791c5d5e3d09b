"""Options shared by several commands, declared once: output, language, the command to review;
and the one map from the library's config fields to the flags that set them."""

from __future__ import annotations

import argparse
import itertools
import json
import locale
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Self, TextIO

from servetune.errors import ServetuneError, UsageError
from servetune.texts import LANGUAGES, ErrorText, Language

if TYPE_CHECKING:  # only for annotations: the CLI imports the core lazily (fast startup)
    from servetune.review.check import CheckOptions, Report

Format = Literal["text", "json"]


@dataclass(frozen=True)
class OutputArgs:
    """`--format` and `--debug`, which every command takes."""

    format: Format = "text"
    debug: bool = False

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--format",
            choices=("text", "json"),
            default="text",
            help="text for people (default) or json for scripts",
        )
        parser.add_argument(
            "--debug", action="store_true", help="show a traceback instead of a short error"
        )

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(format=ns.format, debug=ns.debug)


# --- option value types: argparse reports their message as `argument --X: ...` (exit 2) -------


def positive_int(text: str) -> int:
    """1, 2, 3...: a count of requests, GPUs, trials."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer: {text!r}")
    return int(text)


def count(text: str) -> int:
    """0, 1, 2...: a count that may be zero (warm-up requests, shared prefix tokens)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be 0 or a positive integer: {text!r}")
    return int(text)


def positive_float(text: str) -> float:
    """A positive number; `inf` is allowed (an unlimited request rate), `nan` is not."""
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from exc
    if not value > 0:  # also false for nan
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def ratio(text: str) -> float:
    """A share in [0, 1)."""
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from exc
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError("must be in [0, 1)")
    return value


def parse_slo(items: list[str] | None, option: str, keys: tuple[str, ...]) -> dict[str, float]:
    """Latency targets given as `KEY:MS` words (`--goodput ttft:500 tpot:50`) into {key: ms};
    a key outside `keys`, or a value that is not a finite positive number, is a `UsageError`."""
    slo: dict[str, float] = {}
    for item in items or []:
        key, sep, value = item.partition(":")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or key not in keys or not 0 < number < math.inf:
            said = ErrorText("cli.bad-slo", option=option, item=item, keys=", ".join(keys))
            raise UsageError(said)
        slo[key] = number
    return slo


# Config fields whose flag is not the field's name with dashes (`max_concurrency` is set by
# `--max-concurrency`): `RayExecutor.address` is tune's `--ray-address`.
_FLAG_OF_FIELD = {"address": "--ray-address"}


def flag_of(field: str) -> str:
    """The flag that sets a library config's field."""
    return _FLAG_OF_FIELD.get(field, "--" + field.replace("_", "-"))


def in_flags(error: ServetuneError, language: Language = "en") -> tuple[str, str | None]:
    """An error's message and hint as the CLI says them, in `language`: the library names a
    config's fields (`workers must be at least 1`), the user reads the flags
    (`--workers must be at least 1`)."""
    return error.worded(flag_of, language)


def write_json(stream: TextIO, doc: object) -> None:
    """One indented JSON document, non-ASCII text kept readable (zh-TW)."""
    stream.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


def default_language(environ: dict[str, str] | None = None) -> Language:
    """zh-TW when the locale says Traditional Chinese (zh_TW, zh_HK, zh_Hant), else en."""
    env = os.environ if environ is None else environ
    for key in ("SERVETUNE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(key, "")
        if value:
            lowered = value.lower().replace("-", "_")
            if lowered.startswith(("zh_tw", "zh_hk", "zh_hant", "zh_mo")):
                return "zh-TW"
            return "en"
    code = locale.getlocale()[0] or ""
    return "zh-TW" if code.lower().startswith(("zh_tw", "zh_hk")) else "en"


def _language(value: str) -> Language:
    for lang in LANGUAGES:
        if value.lower() == lang.lower():
            return lang
    raise argparse.ArgumentTypeError(f"choose from {', '.join(LANGUAGES)}")


def add_language_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--lang`; read it back with `language_of(ns)`."""
    parser.add_argument(
        "--lang",
        type=_language,
        default=None,
        help="en or zh-TW (default: from $SERVETUNE_LANG or the locale)",
    )


def language_in(words: Sequence[str]) -> Language:
    """The language of a command line as written, parsed or not (an error can come from the
    parsing itself): the last `--lang` in it when that names a language, else the locale's."""
    value = None
    for word, following in itertools.pairwise([*words, ""]):
        if word == "--lang":
            value = following
        elif word.startswith("--lang="):
            value = word.removeprefix("--lang=")
    for lang in LANGUAGES:
        if value is not None and value.lower() == lang.lower():
            return lang
    return default_language()


def language_of(ns: argparse.Namespace) -> Language:
    lang: Language | None = ns.lang  # already checked by the `_language` option type
    return lang or default_language()


@dataclass(frozen=True)
class ReviewArgs:
    """What every command that reviews a `vllm serve` command takes: check, explain, serve,
    accept. `command` holds the words after `--`; `file` the path given to --file."""

    command: tuple[str, ...] | None
    file: str | None
    vllm_version: str | None
    language: Language
    gpus: str | None
    model_config: Path | None
    online: bool
    output: OutputArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--file", metavar="PATH", help="read the command from a file ('-' = stdin)"
        )
        parser.add_argument(
            "--vllm-version",
            metavar="X.Y.Z",
            help="vLLM release to review for (default: a docker tag, the installed vllm, "
            "else the newest known)",
        )
        add_language_argument(parser)
        OutputArgs.add_arguments(parser)
        parser.add_argument(
            "--gpus",
            metavar="SPEC",
            help="N, NAME or NxNAME, e.g. 2xA100-80GB (default: ask NVML)",
        )
        parser.add_argument(
            "--model-config", metavar="PATH", type=Path, help="config.json or its folder"
        )
        parser.add_argument(
            "--online", action="store_true", help="fetch unknown configs from the HF Hub"
        )

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        command = ns.serve_command
        return cls(
            command=None if command is None else tuple(command),
            file=ns.file,
            vllm_version=ns.vllm_version,
            language=language_of(ns),
            gpus=ns.gpus,
            model_config=ns.model_config,
            online=ns.online,
            output=OutputArgs.from_namespace(ns),
        )

    def check_options(self) -> CheckOptions:
        from servetune.review.check import CheckOptions

        config_dir = Path(self.file).resolve().parent if self.file and self.file != "-" else None
        return CheckOptions(
            gpus=self.gpus,
            vllm_version=self.vllm_version,
            model_config=self.model_config,
            online=self.online,
            config_dir=config_dir,
        )


def read_file(path: Path, hint: ErrorText, *, lenient: bool = False) -> str:
    """A file the user named, as text; `lenient` replaces undecodable bytes (logs)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace" if lenient else "strict")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(ErrorText("cannot-read", path=path, reason=reason), hint) from exc


def review(args: ReviewArgs, stdin: TextIO) -> Report:
    """check's review of the command given after `--`, as one quoted word, or with --file."""
    from servetune.review.check import check_argv, check_text

    options = args.check_options()
    if args.file is not None:
        if args.command:
            raise UsageError(ErrorText("cli.command-twice"))
        text = (
            stdin.read()
            if args.file == "-"
            else read_file(Path(args.file), ErrorText("hint.file-path"))
        )
        return check_text(text, options)
    if not args.command:
        raise UsageError(ErrorText("check.no-command"))
    if len(args.command) == 1 and " " in args.command[0]:
        return check_text(args.command[0], options)  # the whole command passed as one word
    return check_argv(list(args.command), options)
