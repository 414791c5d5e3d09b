"""The views that gained a zh-TW voice keep their layout in both languages."""

from __future__ import annotations

from typing import Any

import pytest

from servetune.render.bench import bench_text, live_line
from servetune.render.check import display_width
from servetune.texts import Language

from result_files import Setup, ours


def _doc() -> dict[str, Any]:
    setup = Setup(saturated=True, failed=3, server={"peak_running": 12.0, "peak_waiting": 3.0,
                                                    "peak_kv_cache_usage": 0.42, "preemptions": 0.0})  # fmt: skip
    doc = ours(setup, 1)
    doc.update({"completed": 200, "failed": 3, "duration": 19.5, "total_input_tokens": 102400,
                "total_output_tokens": 6400, "request_throughput": 10.24, "output_throughput": 327.6,
                "max_output_tokens_per_s": 400.0, "max_concurrent_requests": 7,
                "total_token_throughput": 5568.7, "request_goodput": None})  # fmt: skip
    doc["servetune"]["errors_by_kind"] = {"timeout": 3}
    doc["servetune"]["partial"] = True
    return doc


@pytest.mark.parametrize("language", ["en", "zh-TW"])
def test_bench_table_keeps_vllms_layout(language: Language) -> None:
    out = bench_text(_doc(), "/tmp/run.json", language)
    lines = out.splitlines()
    table = [lines[0], *lines[2 : lines.index("=" * 50) + 1]]  # lines[1]: the partial notice
    assert [line for line in table if display_width(line) != 50] == []
    assert table[0].startswith("=") and table[0].endswith("=")
    assert sum(line.startswith("-") for line in table) == 4  # TTFT, TPOT, ITL, E2EL sections
    assert "{" not in out and "}" not in out
    assert lines[-1].endswith("/tmp/run.json")
    assert all(display_width(line) <= 80 for line in lines)


def test_bench_table_speaks_the_language() -> None:
    english = bench_text(_doc(), None, "en")
    chinese = bench_text(_doc(), None, "zh-TW")
    assert "Serving Benchmark Result" in english and "Successful requests:" in english
    assert "壓力測試結果" in chinese and "成功的請求" in chinese and "Successful" not in chinese
    assert "WARNING" in english and "警告" in chinese  # the saturated client
    # the numbers are the same in both
    assert [w for w in english.split() if w[:1].isdigit()][:5] == [
        w for w in chinese.split() if w[:1].isdigit()
    ][:5]


def test_live_line() -> None:
    line = live_line(elapsed_s=3.25, done=10, total=50, failed=1, in_flight=4, tokens_per_s=1234.5)
    assert line == "   3.2 s  done 10/50  failed 1  in flight 4  1,234 tok/s"
    zh = live_line(elapsed_s=3.25, done=10, total=None, failed=1, in_flight=4, tokens_per_s=0.0,
                   language="zh-TW")  # fmt: skip
    assert "完成 10 " in zh and "/" not in zh.split("tok/s")[0]
