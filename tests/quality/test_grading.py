"""Grading rules of `servetune quality`: the last number, tolerated spellings, text containment."""

from __future__ import annotations

from decimal import Decimal

import pytest

from servetune.quality.grading import is_correct, last_number, parse_number


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("The total is 1,234.", "1234"),
        ("It costs $42", "42"),
        ("So the answer is 12.0", "12"),
        ("12.50 dollars", "12.5"),
        ("First 3 apples, then 5 more: 8", "8"),
        ("-7 degrees", "-7"),
        ("The answer: $1,000,000.00.", "1000000"),
        ("answer is 0.5", ".5"),
    ],
)
def test_the_last_number_counts_with_tolerated_spellings(reply: str, answer: str) -> None:
    assert is_correct(reply, answer, "number")


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("8 is the answer, not 9", "8"),  # the LAST number decides
        ("no idea", "8"),
        ("1,23 is odd", "123"),  # a comma not followed by three digits splits numbers
        ("12.51", "12.5"),
        ("", "0"),
    ],
)
def test_wrong_or_missing_numbers_are_wrong(reply: str, answer: str) -> None:
    assert not is_correct(reply, answer, "number")


def test_last_number_reads_signs_and_separators() -> None:
    assert last_number("from 3 to 1,024.5") == Decimal("1024.5")
    assert last_number("x2 and v3") is None  # digits inside words are not numbers
    assert parse_number("$3,000") == Decimal(3000)
    assert parse_number("three") is None
    assert parse_number("inf") is None


@pytest.mark.parametrize(
    ("reply", "answer", "right"),
    [
        ("It will be Monday.", "monday", True),
        ("  SOUTH ", "south", True),
        ("I think it is north", "south", False),
        ("forty-seven", "forty-seven", True),
        ("forty seven", "forty-seven", False),
    ],
)
def test_text_answers_are_contained_case_insensitive(reply: str, answer: str, right: bool) -> None:
    assert is_correct(reply, answer, "text") is right
