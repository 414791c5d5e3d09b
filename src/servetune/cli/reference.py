"""The CLI reference (docs/cli.md), generated from the parsers' own --help text.

`python -m servetune.cli.reference > docs/cli.md` regenerates it; a test fails when the file is
out of date, so the reference never drifts from the real options.
"""

from __future__ import annotations

import argparse
import os

WIDTH = "100"  # argparse wraps to $COLUMNS: pin it so the output is stable


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public accessor for subcommands
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def reference() -> str:
    """The Markdown text of docs/cli.md."""
    from servetune.cli.main import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        parts = [
            "# servetune CLI reference",
            "",
            "Generated from `--help` by `python -m servetune.cli.reference`; do not edit.",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
        ]
        for name, sub in _subparsers(parser).items():
            parts += ["", f"## servetune {name}", "", "```text", sub.format_help().rstrip(), "```"]
        return "\n".join(parts) + "\n"
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


if __name__ == "__main__":
    print(reference(), end="")
