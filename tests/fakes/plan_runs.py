"""The published runs (tests/data/corpus/runs.json) as `plan` answers them, for the plan tests:
computed once for the whole session, and a command set up for the simulator."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from servetune.plan import accuracy, corpus, predict
from servetune.review.check import CheckOptions, check_text

RUNS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "runs.json"


@cache
def answered() -> tuple[tuple[accuracy.Case, ...], tuple[corpus.Unanswered, ...]]:
    """Every record as plan answers it, and those it does not answer with why."""
    cases, unanswered = corpus.corpus_cases(RUNS)
    return tuple(cases), tuple(unanswered)


def fit_by_name() -> dict[str, accuracy.Case]:
    """The answered fit records, by record id."""
    return {c.name: c for c in answered()[0] if c.group == "fit"}


def setup(command: str, gpus: str, version: str = "0.11.0") -> predict.Setup:
    """A command as plan sets it up on these GPUs and this release."""
    options = CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    return predict.setup(check_text(command, options))
