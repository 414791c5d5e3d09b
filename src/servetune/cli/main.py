"""The `servetune` command line: options -> one config value -> one core call -> render -> exit.

Exit codes (check, explain): 0 no error finding, 1 at least one error finding, 2 bad usage or
unreadable input. Errors print `error: ...` and `hint: ...` on stderr, never a traceback
(unless --debug).
"""

from __future__ import annotations

import argparse
import json
import locale
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from servetune import __version__
from servetune.errors import ServetuneError, UsageError
from servetune.texts import LANGUAGES, Language

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so the one error boundary handles it."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, f"see `{self.prog} --help`")


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


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file", metavar="PATH", help="read the command from a file ('-' = stdin)")
    parser.add_argument("--vllm-version", metavar="X.Y.Z", help="vLLM release to review for")
    parser.add_argument("--lang", type=_language, default=None, help="en or zh-TW")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--gpus", metavar="SPEC", help="N, NAME or NxNAME, e.g. 2xA100-80GB")
    parser.add_argument(
        "--model-config", metavar="PATH", type=Path, help="config.json or its folder"
    )
    parser.add_argument(
        "--online", action="store_true", help="fetch unknown configs from the HF Hub"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="servetune",
        description="Review, launch and measure vLLM deployments.",
    )
    parser.add_argument("--version", action="version", version=f"servetune {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check = sub.add_parser(
        "check",
        help="review a `vllm serve` command before launch",
        description="Review a `vllm serve` command against the model and the GPUs. "
        "Give the command after `--`, or as text with --file.",
        usage="servetune check [options] -- vllm serve MODEL [flags]",
    )
    _common(check)
    explain = sub.add_parser(
        "explain",
        help="explain every flag of a `vllm serve` command in plain words",
        usage="servetune explain [options] -- vllm serve MODEL [flags]",
    )
    _common(explain)
    from servetune.cli import bench as cli_bench
    from servetune.cli import serve as cli_serve

    cli_bench.add_parser(sub)
    cli_serve.add_parsers(sub, _common, _language)
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    if "--" in argv:
        index = list(argv).index("--")
        return list(argv[:index]), list(argv[index + 1 :])
    return list(argv), None


def _read_text(path: str, stdin: TextIO) -> str:
    if path == "-":
        return stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", "check the path given to --file") from exc


def _language_of(ns: argparse.Namespace) -> Language:
    lang: Language | None = ns.lang  # already checked by the `_language` option type
    return lang or default_language()


def _options(ns: argparse.Namespace) -> object:
    from servetune.review.check import CheckOptions

    config_dir = Path(ns.file).resolve().parent if ns.file and ns.file != "-" else None
    return CheckOptions(
        gpus=ns.gpus,
        vllm_version=ns.vllm_version,
        model_config=ns.model_config,
        online=ns.online,
        language=_language_of(ns),
        config_dir=config_dir,
    )


def _report(ns: argparse.Namespace, command: list[str] | None, stdin: TextIO) -> object:
    from servetune.review.check import CheckOptions, check_argv, check_text

    options = _options(ns)
    assert isinstance(options, CheckOptions)  # noqa: S101 - narrowing our own value
    if ns.file is not None:
        if command:
            raise UsageError("give the command either after `--` or with --file, not both")
        return check_text(_read_text(ns.file, stdin), options)
    if not command:
        raise UsageError(
            "no command to review",
            "put it after `--`: servetune check --gpus 1xL4 -- vllm serve MODEL ...",
        )
    if len(command) == 1 and " " in command[0]:
        return check_text(command[0], options)  # the whole command passed as one quoted word
    return check_argv(command, options)


def _run(argv: Sequence[str], stdout: TextIO, stdin: TextIO) -> int:
    own, command = _split(argv)
    ns = build_parser().parse_args(own)
    if ns.command == "compare":
        from servetune.cli import serve as cli_serve

        return cli_serve.run_compare(ns, stdout)
    if ns.command in ("bench", "doctor") and command:
        raise UsageError(
            f"{ns.command} takes no command after `--`", f"see `servetune {ns.command} --help`"
        )
    if ns.command == "bench":
        from servetune.cli import bench as cli_bench

        return cli_bench.run(ns, stdout)
    if ns.command == "doctor":
        from servetune.cli import serve as cli_serve

        return cli_serve.run_doctor(ns, stdout, _language_of(ns))
    from servetune.render import check as render
    from servetune.review.check import Report

    report = _report(ns, command, stdin)
    assert isinstance(report, Report)  # noqa: S101 - narrowing our own value
    if ns.command in ("serve", "accept"):
        from servetune.cli import serve as cli_serve

        run = cli_serve.run_serve if ns.command == "serve" else cli_serve.run_accept
        return run(ns, report, stdout)
    if ns.command == "explain":
        from servetune.review.explain import explain

        items = explain(report)
        if ns.format == "json":
            doc = [{"flag": f, "value": v, "meaning": m} for f, v, m in items]
            stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        else:
            stdout.write(render.explanations_text(items))
        return EXIT_OK
    if ns.format == "json":
        stdout.write(json.dumps(render.report_json(report), ensure_ascii=False, indent=2) + "\n")
    else:
        colour = stdout.isatty() and "NO_COLOR" not in os.environ
        stdout.write(render.report_text(report, colour=colour))
    return EXIT_FINDINGS if report.errors else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `servetune` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(args, sys.stdout, sys.stdin)
    except ServetuneError as exc:
        if "--debug" in args:
            raise
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
