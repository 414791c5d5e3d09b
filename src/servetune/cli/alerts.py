"""`servetune alerts`: the limits `watch` names, as Prometheus alerting rules and a Grafana
dashboard for a server in production; `--lint FILE` checks existing rules or dashboards for
vLLM metric names the release does not export.

`--output DIR` writes DIR/vllm-alerts.yaml (rules), DIR/vllm-prometheusrule.yaml (the same as a
Prometheus Operator PrometheusRule), DIR/vllm-alerts.test.yaml (promtool unit tests) and
DIR/grafana-dashboard.json, with the metric names of `--vllm-version` (default: the newest
known) and the caps of `--serve-command`/`--file` (or the startup `--log`) as thresholds.

Exit codes: 0 written, or no dead name found; 1 `--lint` found a dead name; 2 bad usage, an
unreadable file or an output folder that cannot be written.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Self

from servetune.cli.command import Command, ExitCode, Streams
from servetune.cli.options import (
    OutputArgs,
    add_language_argument,
    language_of,
    read_file,
    write_json,
)
from servetune.cli.watch import CapsArgs, add_caps_arguments
from servetune.errors import ServetuneError, UsageError
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from servetune.monitor.alerts import Ruleset
    from servetune.texts import Language


@dataclass(frozen=True)
class AlertsArgs:
    mode: Literal["write", "lint"]
    path: Path  # the output folder, or the file to lint
    caps: CapsArgs
    language: Language
    format: OutputArgs

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--output", type=Path, metavar="DIR", help="write the rules and the dashboard here"
        )
        parser.add_argument(
            "--lint",
            type=Path,
            metavar="FILE",
            help="check a rule file or a Grafana dashboard for dead vLLM metric names instead",
        )
        add_caps_arguments(parser)
        OutputArgs.add_arguments(parser)
        add_language_argument(parser)

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        if (ns.output is None) == (ns.lint is None):
            raise UsageError(ErrorText("alerts.mode"))
        caps = CapsArgs.from_namespace(ns)
        if ns.lint is not None and (caps.serve_command or caps.file or caps.gpus or caps.log):
            raise UsageError(ErrorText("alerts.lint-caps"))
        mode: Literal["write", "lint"] = "write" if ns.lint is None else "lint"
        path = ns.output if ns.lint is None else ns.lint
        return cls(mode, path, caps, language_of(ns), OutputArgs.from_namespace(ns))


def _write(path: Path, text: str) -> None:
    """Through a temporary file in the same folder and `os.replace`: never a half file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        Path(temporary).replace(path)
    except OSError as exc:
        reason = exc.strerror or exc
        raise ServetuneError(
            ErrorText("cannot-write", path=path, reason=reason), ErrorText("hint.output-path")
        ) from exc


def write(
    rules: Ruleset, folder: Path, language: Language
) -> dict[str, tuple[Path, dict[str, object]]]:
    """The four files; kind -> (path, the facts its line in the text view says)."""
    from servetune.monitor import dashboard, rule_files

    comment = rule_files.header(rules)
    board = dashboard.document(rules, language)
    panels = board["panels"]
    files: dict[str, tuple[Path, str, dict[str, object]]] = {
        "rules": (
            folder / rule_files.RULES_FILE,
            rule_files.dump(rule_files.rules_document(rules, language), comment),
            {"alerts": len(rules.alerts), "records": len(rules.signals) + len(rules.alerts)},
        ),
        "operator": (
            folder / rule_files.OPERATOR_FILE,
            rule_files.dump(rule_files.operator_document(rules, language), comment),
            {},
        ),
        "tests": (
            folder / rule_files.TESTS_FILE,
            rule_files.dump(rule_files.promtool_tests(rules, language), comment),
            {},
        ),
        "dashboard": (
            folder / dashboard.DASHBOARD_FILE,
            json.dumps(board, ensure_ascii=False, indent=2) + "\n",
            {"panels": len(panels) if isinstance(panels, list) else 0},
        ),
    }
    for path, text, _ in files.values():
        _write(path, text)
    return {kind: (path, facts) for kind, (path, _, facts) in files.items()}


def _lint(args: AlertsArgs, streams: Streams) -> ExitCode:
    from servetune.monitor.lint import lint
    from servetune.render.monitor import lint_text

    path = args.path
    text = read_file(path, ErrorText("hint.alert-rules"))
    report = lint(text, str(path), args.caps.vllm_version)
    if args.format.format == "json":
        write_json(streams.stdout, report.to_json())
    else:
        streams.stdout.write(lint_text(report, args.language))
    return ExitCode.FAILED if report.dead else ExitCode.OK


def run(args: AlertsArgs, streams: Streams) -> ExitCode:
    from servetune.monitor.alerts import ruleset
    from servetune.render.monitor import alerts_text

    if args.mode == "lint":
        return _lint(args, streams)
    rules = ruleset(args.caps.caps(), args.caps.vllm_version)
    files = write(rules, args.path, args.language)
    if args.format.format == "json":
        paths = {kind: str(path) for kind, (path, _) in files.items()}
        write_json(streams.stdout, {**rules.to_json(), "files": paths})
    else:
        streams.stdout.write(alerts_text(rules, files, args.language))
    return ExitCode.OK


COMMAND = Command(
    name="alerts",
    help="write Prometheus alerts and a Grafana dashboard that name the limit a vLLM server hits",
    options=AlertsArgs,
    run=run,
)
