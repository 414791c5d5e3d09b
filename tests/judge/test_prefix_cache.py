"""`compare` warns when a side's runs found more of their prompts in the server's prefix cache
than the random workload's shared prefix explains (bench's own rule, `unexpected_prefix_hits`),
and says nothing where the hit rate is unknown. Result files are synthetic (tests/fakes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servetune import CheckOptions, accept, check_argv
from servetune.cli.main import main
from servetune.judge.compare import Comparison, compare, load_side
from servetune.measure.results import PREFIX_HIT_MARGIN, unexpected_prefix_hits

from result_files import Setup, write_runs

WARM = Setup(isolation="none", hit_rate=0.40)  # a repeated --prompt-seed, no cache reset
CLEAN = Setup(isolation="reset", hit_rate=0.001)


def _sides(tmp_path: Path, before: list[Setup], after: list[Setup]) -> tuple[Path, Path]:
    """One run per setup, so that a side can mix warm and clean runs."""
    folders = []
    for name, setups, first in (("before", before, 1), ("after", after, 101)):
        for i, setup in enumerate(setups):
            write_runs(tmp_path / name, setup, [first + i])
        folders.append(tmp_path / name)
    return folders[0], folders[1]


def _compare(tmp_path: Path, before: list[Setup], after: list[Setup]) -> Comparison:
    b, a = _sides(tmp_path, before, after)
    return compare(load_side([b]), load_side([a]), ["mean_ttft_ms"])


def _cache_warnings(c: Comparison) -> list[str]:
    return [w.message for w in c.warnings if w.rule == "prefix-cache-hits"]


def test_a_warm_side_warns_with_its_rate_the_explained_rate_and_the_fix(tmp_path: Path) -> None:
    c = _compare(tmp_path, [CLEAN, CLEAN], [WARM, WARM])
    assert [w.rule for w in c.warnings] == ["prefix-cache-hits"]
    message = c.warnings[0].message
    assert message.startswith("after: the server found up to 40.0% of the prompt tokens")
    assert "in 2 of 2 run(s)" in message and "explains at most 0.0%" in message
    assert "TTFT and throughput look better" in message
    assert "--prompt-seed" in message and "VLLM_SERVER_DEV_MODE=1" in message


def test_only_the_runs_that_hit_count_and_the_worst_is_named(tmp_path: Path) -> None:
    worse = Setup(isolation="none", hit_rate=0.62)
    c = _compare(tmp_path, [CLEAN, WARM, worse], [CLEAN, CLEAN, CLEAN])
    assert _cache_warnings(c) == [c.warnings[0].message]
    assert c.warnings[0].message.startswith("before: the server found up to 62.0%")
    assert "in 2 of 3 run(s)" in c.warnings[0].message


def test_both_sides_warm_warn_once_each(tmp_path: Path) -> None:
    c = _compare(tmp_path, [WARM], [WARM])
    assert [m.split(":")[0] for m in _cache_warnings(c)] == ["before", "after"]


@pytest.mark.parametrize(
    ("prefix_len", "hit_rate", "warns"),
    [
        (512, 0.52, False),  # half of each prompt is the shared prefix: 50% is expected
        (512, 0.60, True),  # 10 points above what the prefix explains
        (0, 0.04, False),  # within the margin
        (0, 0.07, True),
        (128, 0.26, True),  # 128 of 640 tokens explain 20%
        (128, 0.24, False),
    ],
)
def test_the_shared_prefix_explains_its_share(
    tmp_path: Path, prefix_len: int, hit_rate: float, warns: bool
) -> None:
    explained = Setup(input_len=512, prefix_len=prefix_len, isolation="none", hit_rate=hit_rate)
    same = Setup(input_len=512, prefix_len=prefix_len, isolation="reset", hit_rate=0.0)
    c = _compare(tmp_path, [same, same], [explained, explained])
    found = _cache_warnings(c)
    assert len(found) == int(warns)
    assert "workload-differs" not in [w.rule for w in c.warnings]
    if warns:
        expected = prefix_len / (prefix_len + 512)
        assert f"explains at most {expected:.1%}" in found[0]


def test_the_rule_is_benchs_own_margin() -> None:
    assert PREFIX_HIT_MARGIN == 0.05
    assert unexpected_prefix_hits(0.30, 0.20) and not unexpected_prefix_hits(0.24, 0.20)
    assert not unexpected_prefix_hits(None, 0.0) and not unexpected_prefix_hits(0.9, None)


def test_unknown_hit_rates_never_warn(tmp_path: Path) -> None:
    no_metrics = Setup(isolation="none", hit_rate=None)  # a server without /metrics
    old_file = Setup()  # schema 1: no prefix_cache block
    # schema 1 with a server summary: a rate, but nothing says what the workload explains
    summary_only = Setup(server={"prefix_cache_hit_rate": 0.9, "peak_running": 1.0})
    c = _compare(tmp_path, [no_metrics, old_file], [summary_only, summary_only])
    assert _cache_warnings(c) == []
    b = write_runs(tmp_path / "vb", Setup(), range(2), "plain")
    a = write_runs(tmp_path / "va", Setup(), range(2, 4), "plain")
    plain = compare(load_side([b]), load_side([a]), ["mean_ttft_ms"])
    assert _cache_warnings(plain) == []
    assert all(r.prefix_cache.hit_rate is None for r in load_side([a]).runs)


def test_the_rate_is_read_from_the_result_file(tmp_path: Path) -> None:
    setup = Setup(input_len=900, prefix_len=100, isolation="fresh-prompts", hit_rate=0.3)
    folder = write_runs(tmp_path / "r", setup, [5])
    run = load_side([folder]).runs[0]
    assert run.prefix_cache.hit_rate == pytest.approx(0.3)
    assert run.prefix_cache.expected_hit_rate == pytest.approx(0.1)
    assert run.prefix_cache.isolation == "fresh-prompts"


@pytest.mark.parametrize("isolation", ["reset", "fresh-prompts"])
def test_hits_despite_isolation_point_at_the_run_itself(tmp_path: Path, isolation: str) -> None:
    hot = Setup(isolation=isolation, hit_rate=0.3)
    c = _compare(tmp_path, [CLEAN], [hot])
    (message,) = _cache_warnings(c)
    assert "the hits came during the run" in message and "--prompt-seed" not in message


def test_a_different_shared_prefix_is_a_different_workload(tmp_path: Path) -> None:
    c = _compare(tmp_path, [Setup(prefix_len=0)], [Setup(prefix_len=256)])
    between = [w.message for w in c.warnings if w.rule == "workload-differs"]
    assert between and "--random-prefix-len 0 vs 256" in between[0]


def test_the_warning_in_zh_tw(tmp_path: Path) -> None:
    c = _compare(tmp_path, [Setup(isolation="reset", hit_rate=0.3)], [WARM])
    said = [w.text("zh-TW") for w in c.warnings if w.rule == "prefix-cache-hits"]
    assert len(said) == 2
    assert said[0].startswith("之前：1 次測試中有 1 次") and "最多 30.0%" in said[0]
    assert "測試期間" in said[0]
    assert said[1].startswith("之後：") and "VLLM_SERVER_DEV_MODE=1" in said[1]
    assert all("prefix cache" not in s and "{" not in s for s in said)


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_compare_json_carries_the_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b, a = _sides(tmp_path, [CLEAN, CLEAN], [WARM, WARM])
    code, doc = _json(["compare", str(b), str(a), "--format", "json"], capsys)
    assert code == 0
    warnings = doc["warnings"]
    assert isinstance(warnings, list)
    found = [w for w in warnings if w["rule"] == "prefix-cache-hits"]
    assert len(found) == 1 and list(found[0]) == ["rule", "message"]
    assert found[0]["message"].startswith("after: the server found up to 40.0%")
    clean_b, clean_a = _sides(tmp_path / "clean", [CLEAN, CLEAN], [CLEAN, CLEAN])
    _, clean = _json(["compare", str(clean_b), str(clean_a), "--format", "json"], capsys)
    assert clean["warnings"] == []


def test_compare_text_in_both_languages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b, a = _sides(tmp_path, [CLEAN, CLEAN], [WARM, WARM])
    assert main(["compare", str(b), str(a), "--lang", "en"]) == 0
    english = " ".join(capsys.readouterr().out.split())
    assert "[prefix-cache-hits] after: the server found up to 40.0%" in english
    assert main(["compare", str(b), str(a), "--lang", "zh-TW"]) == 0
    chinese = " ".join(capsys.readouterr().out.split())
    assert "[prefix-cache-hits] 之後：2 次測試中有 2 次" in chinese


def test_accept_passes_the_data_check_with_the_warning_as_evidence(tmp_path: Path) -> None:
    b, a = _sides(tmp_path, [CLEAN, CLEAN], [WARM, WARM])
    options = CheckOptions(gpus="1xA100-80GB", detect_hardware=True)
    report = check_argv(["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"], options)
    result = accept(report, before=[b], after=[a], probe=lambda _host, _port: True)
    data = next(c for c in result.checks if c.id == "data")
    assert data.status == "pass"
    assert data.evidence.startswith("results found on both sides (after: the server found up")
