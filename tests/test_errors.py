"""The exception tree in `servetune.errors`: the drawing in its docstring is the code's, exit
codes included; `ExitCode`'s two names for status 1; errors that name config fields; errors
that say a text of `texts/` (English for a library caller, any language at the CLI)."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys

import pytest

from servetune import errors
from servetune.cli.options import flag_of, in_flags
from servetune.errors import (
    ExitCode,
    HardwareError,
    MissingExtra,
    ServerUnreachable,
    ServetuneError,
    UsageError,
)
from servetune.review.hardware import parse_gpus
from servetune.texts import ErrorText

# One line of the drawing: the tree's branches, a name, dots, the exit status.
_LINE = re.compile(r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w+) \.*\s*(?P<code>\d+)\b")


def drawn() -> list[tuple[str, int, int]]:
    """(name, column, exit status) of every line of the docstring's drawing."""
    found = []
    for line in (errors.__doc__ or "").splitlines():
        match = _LINE.match(line)
        if match:
            found.append((match["name"], len(match["indent"]), int(match["code"])))
    return found


def test_the_drawing_is_the_tree_with_its_exit_codes() -> None:
    lines = drawn()
    classes = dict(inspect.getmembers(errors, inspect.isclass))
    parents: list[tuple[int, type]] = []
    seen = set()
    for name, column, code in lines:
        if name == "KeyboardInterrupt":
            assert code == ExitCode.INTERRUPTED
            continue
        cls = classes[name]
        while parents and parents[-1][0] >= column:
            parents.pop()
        if parents:
            assert cls.__bases__ == (parents[-1][1],), name
        else:
            assert cls is ServetuneError
        assert issubclass(cls, ServetuneError) and cls.exit_code == code, name
        parents.append((column, cls))
        seen.add(cls)
    defined = {c for c in classes.values() if issubclass(c, ServetuneError)}
    assert defined == seen  # every error class is drawn, and only those


def test_failed_and_findings_are_two_names_for_status_1() -> None:
    assert ExitCode.FAILED == ExitCode.FINDINGS == 1
    assert ExitCode.FAILED is not ExitCode.FINDINGS
    assert (ExitCode.FAILED.name, ExitCode.FINDINGS.name) == ("FAILED", "FINDINGS")
    assert repr(ExitCode.FAILED) == "<ExitCode.FAILED: 1>"
    assert (str(ExitCode.USAGE), f"{ExitCode.INTERRUPTED}") == ("2", "130")
    assert [int(c) for c in (ExitCode.OK, ExitCode.USAGE, ExitCode.INTERRUPTED)] == [0, 2, 130]


@pytest.mark.parametrize("code", [ExitCode.FAILED, ExitCode.USAGE, ExitCode.INTERRUPTED])
def test_an_exit_code_is_the_process_exit_status(code: ExitCode) -> None:
    script = f"import sys; from servetune.errors import ExitCode; sys.exit(ExitCode.{code.name})"
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True)
    assert (done.returncode, done.stderr) == (int(code), b"")


def test_an_error_names_fields_for_a_library_caller_and_flags_for_the_cli() -> None:
    error = UsageError.with_fields(
        "{max_concurrency} {cap} is below {workers} {n}", "use fewer {workers}", cap=2, n=3
    )
    assert (error.message, error.hint) == (
        "max_concurrency 2 is below workers 3",
        "use fewer workers",
    )
    assert error.fields == ("max_concurrency", "workers")
    assert in_flags(error) == ("--max-concurrency 2 is below --workers 3", "use fewer --workers")
    assert str(error) == "max_concurrency 2 is below workers 3 (use fewer workers)"


def test_facts_are_said_as_given_even_with_braces() -> None:
    error = ServerUnreachable.with_fields("bad {address} {text!r}", text="{x}")
    assert error.message == "bad address '{x}'"
    assert in_flags(error) == ("bad --ray-address '{x}'", None)
    assert type(error) is ServerUnreachable and error.exit_code == ExitCode.USAGE


def test_an_error_without_fields_is_said_as_it_is() -> None:
    error = UsageError("--file and `--` both given", "give one")
    assert error.fields == ()
    assert in_flags(error) == ("--file and `--` both given", "give one")


def test_a_field_s_flag() -> None:
    assert [flag_of(f) for f in ("workers", "max_concurrency", "dataset_path", "address")] == [
        "--workers",
        "--max-concurrency",
        "--dataset-path",
        "--ray-address",
    ]


def test_missing_extra_says_which_extra_and_how_to_install_it() -> None:
    error = MissingExtra("ray", ErrorText("feature.tune-ray"))
    assert error.message == "tune --executor ray needs the optional extra 'ray'"
    assert error.hint == "pip install 'servetune[ray]'"
    assert (error.extra, error.feature, error.exit_code) == ("ray", "tune --executor ray", 2)
    assert not isinstance(error, UsageError)  # nothing the user typed is wrong


def test_an_error_from_a_text_is_english_for_a_library_caller() -> None:
    with pytest.raises(HardwareError) as caught:
        parse_gpus("0")
    error = caught.value
    assert (error.message, error.hint) == ("--gpus must be at least 1", "e.g. --gpus 2xA100-80GB")
    assert str(error) == "--gpus must be at least 1 (e.g. --gpus 2xA100-80GB)"
    assert error.key == "gpus.count-min"  # the text it says, for the CLI to say in any language
    assert error.worded(flag_of, "zh-TW") == ("--gpus 至少要是 1", "例如 --gpus 2xA100-80GB")


def test_a_text_s_open_slots_are_fields_said_as_flags_at_the_cli() -> None:
    error = UsageError(ErrorText("bench.workers-over-slots", cap=2, count=3))
    assert (error.message, error.fields) == (
        "max_concurrency 2 is below workers 3",
        ("max_concurrency", "workers"),
    )
    assert error.hint == "each worker needs at least one concurrency slot: use fewer workers"
    assert in_flags(error) == (
        "--max-concurrency 2 is below --workers 3",
        "each worker needs at least one concurrency slot: use fewer workers",
    )
    assert in_flags(error, "zh-TW") == (
        "--max-concurrency 2 小於 --workers 3",
        "每個 worker 至少需要一個並行名額：請減少 worker 數量",
    )


def test_a_text_in_the_facts_is_said_in_the_same_language() -> None:
    where = ErrorText("quality.line", source="q.jsonl", number=3)
    error = UsageError(
        ErrorText("quality.not-object", where=where), ErrorText("hint.question-line")
    )
    assert (error.message, error.hint) == (
        "q.jsonl, line 3 is not a JSON object",
        'expected {"prompt": ..., "answer": ...}',
    )
    assert error.worded(flag_of, "zh-TW") == (
        "q.jsonl 第 3 行 不是 JSON 物件",
        '應為 {"prompt": ..., "answer": ...}',
    )


def test_a_given_hint_replaces_the_text_s_own_and_plain_text_stays_plain() -> None:
    own = UsageError(ErrorText("compare.unknown-metric", name="p99", names="a, b"))
    assert own.hint == "metrics: a, b"
    given = UsageError(
        ErrorText("compare.unknown-metric", name="p99", names="a, b"),
        ErrorText("hint.did-you-mean", guess="p99_ttft_ms"),
    )
    assert given.hint == "did you mean p99_ttft_ms?"
    plain = UsageError("as written", "no text")
    assert (plain.key, plain.wording, plain.worded(flag_of, "zh-TW")) == (
        None,
        None,
        ("as written", "no text"),
    )


def test_missing_extra_in_chinese_says_the_feature_in_chinese_too() -> None:
    error = MissingExtra("report", ErrorText("feature.plan-plot"))
    assert error.message == "plan's --plot needs the optional extra 'report'"
    assert error.worded(flag_of, "zh-TW") == (
        "plan 的 --plot 需要選用套件 'report'",
        "請執行 pip install 'servetune[report]'",
    )
