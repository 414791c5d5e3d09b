"""benchmarks/real_world.py dates a memory record that names no release by where its quoted lines
were logged from (tests/data/corpus/log_line_releases.json, built from every release's sdist)."""

from __future__ import annotations

from types import ModuleType

from repo_scripts import load

from corpus_records import memory_record


def real_world() -> ModuleType:
    return load("benchmarks/real_world.py")


def test_a_line_only_one_release_logs_from_dates_the_record() -> None:
    """vllm#5248 (fit): `distributed_gpu_executor.py:45] # GPU blocks` is 0.4.2's place alone
    (0.4.3 to 0.5.5 log it from line 56, 0.6 from 57)."""
    bench = real_world()
    record = memory_record("vllm-5248-deepseek-coder-6.7b-2xT4")
    assert bench.logged_release(record) == "0.4.2"
    score = bench.score_memory(record)
    assert score is not None and score.right


def test_the_newest_release_every_quoted_place_fits_is_taken() -> None:
    bench = real_world()
    quote = "INFO 06-12 08:12:23 distributed_gpu_executor.py:56] # GPU blocks: 507"
    assert bench.logged_release({"quote": quote}) == "0.5.5"


def test_a_stated_release_or_an_unknown_place_is_left_alone() -> None:
    bench = real_world()
    quote = "INFO distributed_gpu_executor.py:45] # GPU blocks: 507"
    assert bench.logged_release({"quote": quote, "vllm_version": "0.5.0"}) is None
    assert bench.logged_release({"quote": "INFO nowhere.py:1] # GPU blocks: 5"}) is None
    both = quote + "\nINFO distributed_gpu_executor.py:57] # GPU blocks: 5"
    assert bench.logged_release({"quote": both}) is None  # no release logs from both
