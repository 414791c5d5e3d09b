"""The command table: every command listed, every option explained, exit codes from error types."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from servetune.cli.main import COMMANDS, build_parser, main
from servetune.errors import ExitCode, ServerUnreachable, ServetuneError, UsageError

LOGS = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    names = [c.name for c in COMMANDS]
    flows = ["check", "explain", "serve", "doctor", "bench", "compare", "accept"]
    assert names[: len(flows)] == flows  # later commands (tune, plan...) come after these
    assert len(set(names)) == len(names)
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in names:
        assert f"\n    {name} " in out, name


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_every_option_has_help(name: str) -> None:
    parser = _subparsers(build_parser())[name]
    missing = [
        action.option_strings or [action.dest]
        for action in parser._actions
        if not action.help or action.help == argparse.SUPPRESS
    ]
    assert missing == [], f"servetune {name}: options without help: {missing}"


@pytest.mark.parametrize("name", ["check", "doctor", "bench", "compare", "accept"])
def test_each_command_help_through_main(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([name, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: servetune")
    assert "--format" in out and "--debug" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["doctor", str(LOGS / "cpu-0.32-tp-heads.log"), "--", "vllm", "serve", "m"],
        ["compare", "a.json", "b.json", "--", "vllm", "serve", "m"],
        ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--", "vllm", "serve"],
    ],
)
def test_commands_without_a_serve_command_refuse_one(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert f"error: {argv[0]} takes no command after `--`" in err


def test_exit_codes_are_carried_by_the_error_types() -> None:
    assert ServetuneError.exit_code == ExitCode.USAGE
    assert UsageError.exit_code == ExitCode.USAGE
    assert ServerUnreachable.exit_code == ExitCode.USAGE
    assert not issubclass(ServerUnreachable, UsageError)  # not the user's typo
    assert [int(c) for c in (ExitCode.OK, ExitCode.FINDINGS, ExitCode.USAGE)] == [0, 1, 2]
    assert int(ExitCode.FAILED) == int(ExitCode.FINDINGS) == 1  # one code, two names
    assert int(ExitCode.INTERRUPTED) == 130


def test_an_error_type_chooses_the_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class OddError(ServetuneError):
        exit_code = ExitCode.FAILED

    def boom(_text: str, _language: str = "en") -> object:
        raise OddError("odd failure", "do the next thing")

    monkeypatch.setattr("servetune.launch.doctor.diagnose", boom)
    code = main(["doctor", str(LOGS / "cpu-0.32-tp-heads.log")])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err == "error: odd failure\nhint: do the next thing\n"


def test_debug_shows_the_traceback() -> None:
    with pytest.raises(UsageError, match="cannot read"):
        main(["doctor", "/nonexistent/vllm.log", "--debug"])


def test_interrupt_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(_text: str, _language: str = "en") -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr("servetune.launch.doctor.diagnose", interrupted)
    code = main(["doctor", str(LOGS / "cpu-0.32-tp-heads.log"), "--format", "json"])
    assert code == 130
    assert capsys.readouterr().err == "error: interrupted\n"


def test_json_is_one_document_per_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["doctor", str(LOGS / "cpu-0.32-ready-then-sigterm.log"), "--format", "json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["status"] == "ready"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--goodput", "ttft:500", "tpot:nan"], "bad --goodput item 'tpot:nan'"),
        (["--goodput", "ttft:inf"], "bad --goodput item 'ttft:inf'"),
        (["--goodput", "itl:5"], "KEY one of ttft, tpot, e2el"),
        (["--num-prompts", "0"], "must be a positive integer: '0'"),
        (["--warmup", "-1"], "--warmup"),
        (["--request-rate", "nan"], "must be positive: 'nan'"),
        (["--random-range-ratio", "1"], "must be in [0, 1)"),
    ],
)
def test_shared_value_types_reject_bad_numbers(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", *argv])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert message in err, err
