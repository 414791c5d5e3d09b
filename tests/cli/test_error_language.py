"""The error boundary speaks the command's language: `--lang` when the command line has it
(even when the error is in parsing it), else the locale's. The `error:` / `hint:` prefixes stay
ASCII for scripts; flags stay flags; English stays byte for byte what it was."""

from __future__ import annotations

import pytest

from servetune.cli.main import main
from servetune.cli.options import language_in

CHECK = ["check", "--gpus", "0", "--vllm-version", "0.33.0"]
SERVE = ["--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]


@pytest.fixture(autouse=True)
def _english_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVETUNE_LANG", "en")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_bad_option_is_said_in_chinese_under_zh_tw(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*CHECK, "--lang", "zh-TW", *SERVE], capsys) == (
        2,
        "",
        "error: --gpus 至少要是 1\nhint: 例如 --gpus 2xA100-80GB\n",
    )


def test_the_same_error_in_english_is_as_it_always_was(
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = (2, "", "error: --gpus must be at least 1\nhint: e.g. --gpus 2xA100-80GB\n")
    assert run([*CHECK, "--lang", "en", *SERVE], capsys) == expected
    assert run([*CHECK, *SERVE], capsys) == expected  # no --lang: the locale's (en here)


def test_the_locale_speaks_when_the_command_has_no_lang(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVETUNE_LANG", "zh-TW")
    argv = ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m"]
    code, _, err = run([*argv, "--workers", "3", "--max-concurrency", "2"], capsys)
    assert code == 2
    assert err == (  # the library's fields said as the flags, in Chinese
        "error: --max-concurrency 2 小於 --workers 3\n"
        "hint: 每個 worker 至少需要一個並行名額：請減少 worker 數量\n"
    )
    assert run([*argv, "--lang=en", "--workers", "3", "--max-concurrency", "2"], capsys)[2] == (
        "error: --max-concurrency 2 is below --workers 3\n"
        "hint: each worker needs at least one concurrency slot: use fewer workers\n"
    )


def test_an_argparse_error_keeps_argparse_s_words_and_says_its_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(["check", "--lang", "zh-TW", "--no-such-option", *SERVE], capsys)
    assert code == 2
    assert err.startswith("error: unrecognized arguments: --no-such-option\n")
    assert err.endswith("hint: 請看 `servetune --help`\n")


def test_a_bad_lang_is_said_in_the_locale_s_language(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["check", "--lang", "klingon", *SERVE], capsys)
    assert code == 2
    assert err.startswith("error: argument --lang: ")
    assert err.endswith("hint: see `servetune check --help`\n")


@pytest.mark.parametrize(
    ("words", "language"),
    [
        (["check", "--lang", "zh-TW"], "zh-TW"),
        (["check", "--lang=zh-tw"], "zh-TW"),
        (["check", "--lang", "zh-TW", "--lang", "en"], "en"),  # the last one, as argparse
        (["check", "--lang"], "en"),  # no value: the locale's
        (["check", "--lang", "fr"], "en"),
        (["check", "--gpus", "1xL4"], "en"),
    ],
)
def test_the_language_of_a_command_line(words: list[str], language: str) -> None:
    assert language_in(words) == language
