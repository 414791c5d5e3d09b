"""The views that gained a zh-TW voice keep their layout in both languages."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import cast

import pytest

from servetune.cli.main import COMMANDS, build_parser, main
from servetune.measure.result_schema import ResultSummary
from servetune.render.bench import bench_text, live_line
from servetune.render.check import display_width, wrap
from servetune.texts import Language

from result_files import Setup, ours, write_runs


def _doc() -> ResultSummary:
    setup = Setup(
        saturated=True,
        failed=3,
        server={
            "peak_running": 12.0,
            "peak_waiting": 3.0,
            "peak_kv_cache_usage": 0.42,
            "preemptions": 0.0,
        },
    )
    doc = ours(setup, 1)
    doc.update(
        {
            "completed": 200,
            "failed": 3,
            "duration": 19.5,
            "total_input_tokens": 102400,
            "total_output_tokens": 6400,
            "request_throughput": 10.24,
            "output_throughput": 327.6,
            "max_output_tokens_per_s": 400.0,
            "max_concurrent_requests": 7,
            "total_token_throughput": 5568.7,
            "request_goodput": None,
        }
    )
    doc["servetune"]["errors_by_kind"] = {"timeout": 3}
    doc["servetune"]["partial"] = True
    return cast("ResultSummary", doc)  # the synthetic file has the summary's keys


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
    zh = live_line(
        elapsed_s=3.25,
        done=10,
        total=None,
        failed=1,
        in_flight=4,
        tokens_per_s=0.0,
        language="zh-TW",
    )
    assert "完成 10 " in zh and "/" not in zh.split("tok/s")[0]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def test_compare_in_zh_tw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = write_runs(tmp_path / "b", Setup(), range(1, 4))
    after = write_runs(
        tmp_path / "a",
        Setup(latency=1.3, command="vllm serve my/model --max-num-seqs 256"),
        range(101, 104),
    )
    code, english = _run(["compare", str(before), str(after), "--lang", "en"], capsys)
    assert code == 0 and "verdict" in english and "worse" in english
    code, chinese = _run(["compare", str(before), str(after), "--lang", "zh-TW"], capsys)
    assert code == 0
    assert "判定" in chinese and "變差" in chinese and "改過的參數" in chinese
    assert all(display_width(line) <= 80 for line in chinese.splitlines())
    # the table's columns line up by display width: "after" values end where the header does
    header = next(line for line in chinese.splitlines() if line.startswith("指標"))
    row = next(line for line in chinese.splitlines() if line.startswith("mean_ttft_ms"))
    assert display_width(header[: header.index("之後") + 2]) == len(row.split("+")[0].rstrip())
    doc_en = json.loads(_run(["compare", str(before), str(after), "--format", "json"], capsys)[1])
    doc_zh = json.loads(
        _run(["compare", str(before), str(after), "--format", "json", "--lang", "zh-TW"], capsys)[1]
    )
    assert doc_en == doc_zh  # the JSON contract does not depend on the language


_FULL_KV = {
    "peak_running": 40.0,
    "peak_waiting": 9.0,
    "peak_kv_cache_usage": 1.0,
    "preemptions": 7.0,
}
_SLOTS_BUSY = {
    "peak_running": 128.0,
    "peak_waiting": 9.0,
    "peak_kv_cache_usage": 0.6,
    "preemptions": 0.0,
}
_BUDGET = {
    "peak_running": 10.0,
    "peak_waiting": 9.0,
    "peak_kv_cache_usage": 0.2,
    "preemptions": 0.0,
}
_TWO_KNOBS = "vllm serve my/model --max-num-seqs 256 --max-num-batched-tokens 4096"
# One scenario per warning, conclusion and next step the judge can write.
_SCENARIOS = {
    "single-run, saturated, failures, two knobs, full KV": (
        [Setup(saturated=True, send_lag_p99_s=0.012, failed=5)],
        [Setup(latency=1.3, input_len=1024, command=_TWO_KNOBS, server=_FULL_KV)],
    ),
    "mixed and unknown configs, busy slots": (
        [Setup(), Setup(command="vllm serve my/model --max-num-seqs 64"), Setup()],
        [Setup(latency=0.7, command=None, server=_SLOTS_BUSY)] * 3,
    ),
    "mixed workloads, token budget": (
        [Setup(), Setup(input_len=2048), Setup()],
        [Setup(command="vllm serve my/model --max-num-seqs 256", server=_BUDGET)] * 3,
    ),
    "prefix-cache hits on both sides, for both causes": (
        [Setup(isolation="reset", hit_rate=0.3)] * 3,
        [Setup(isolation="none", hit_rate=0.4, latency=0.8)] * 3,
    ),
    "a trade-off": (
        [Setup()] * 3,
        [Setup(latency=1.3, throughput=1.5, command="vllm serve my/model --max-num-seqs 256")] * 3,
    ),
}
# Words zh-TW readers write in English (names, units), and what quotes code or data verbatim.
_NAMES = {"KV", "cache", "token", "TTFT", "TPOT", "ITL", "E2EL", "TP", "ms", "p50", "p99", "CI"}
_VERBATIM = re.compile(r"`[^`]*`|--[a-z-]+|\[[a-z-]+\]|\S*[_/.]\S*|\([^)]*\.json\)")


def _write(folder: Path, setups: list[Setup], first_seed: int) -> Path:
    for i, setup in enumerate(setups):
        write_runs(folder, setup, [first_seed + i])
    return folder


@pytest.mark.parametrize("scenario", _SCENARIOS)
def test_compare_in_zh_tw_leaves_no_english_sentence(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before_setups, after_setups = _SCENARIOS[scenario]
    before = _write(tmp_path / "b", before_setups, 1)
    after = _write(tmp_path / "a", after_setups, 101)
    code, english = _run(["compare", str(before), str(after), "--lang", "en"], capsys)
    doc = json.loads(_run(["compare", str(before), str(after), "--format", "json"], capsys)[1])
    code_zh, chinese = _run(["compare", str(before), str(after), "--lang", "zh-TW"], capsys)
    assert code == code_zh == 0
    assert doc["conclusion"] in " ".join(english.split())  # the English the JSON carries
    said = [doc["conclusion"], *(w["message"] for w in doc["warnings"]), doc["next_step"] or ""]
    flat = " ".join(chinese.split())
    assert [s for s in said if s and s[:30] in flat] == []
    assert [f"[{w['rule']}]" for w in doc["warnings"] if f"[{w['rule']}]" not in chinese] == []
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9]*", _VERBATIM.sub(" ", chinese)))
    assert words - _NAMES == set(), chinese
    assert all(display_width(line) <= 80 for line in chinese.splitlines())


def test_accept_in_zh_tw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = write_runs(tmp_path / "b", Setup(command="vllm serve m --max-num-seqs 128"), range(3))
    after = write_runs(
        tmp_path / "a", Setup(command="vllm serve m --max-num-seqs 256"), range(3, 6)
    )
    argv = [
        "accept",
        "--gpus",
        "1xA100-80GB",
        "--before",
        str(before),
        "--after",
        str(after),
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen2.5-7B-Instruct",
        "--max-num-seqs",
        "256",
    ]
    code_en, english = _run([*argv[:1], "--lang", "en", *argv[1:]], capsys)
    code_zh, chinese = _run([*argv[:1], "--lang", "zh-TW", *argv[1:]], capsys)
    assert code_en == code_zh
    assert "only one knob changed" in english and "只改了一個參數" in chinese
    assert ("[pass]" in english) == ("[通過]" in chinese)
    assert len(english.splitlines()) == len(chinese.splitlines()) == 6


_LOGS = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"
_SEQS = "vllm serve my/model --max-num-seqs"
# One scenario per kind of evidence accept writes: accept's options, the sides' setups (none: no
# --before/--after), the quality verdict (none: no --quality) and the served model and flags.
_Q7 = "Qwen/Qwen2.5-7B-Instruct"
_ACCEPT_SCENARIOS = {
    "everything passes": (
        ["--gpus", "1xA100-80GB", "--log", str(_LOGS / "cpu-0.32-ready-then-sigterm.log")],
        ([Setup(command=f"{_SEQS} 128")] * 3, [Setup(command=f"{_SEQS} 256")] * 3),
        "no-detectable-loss",
        [_Q7, "--max-num-seqs", "256"],
    ),
    "wrong GPUs and quantization, a failed start, no knob changed": (
        ["--gpus", "4xA100-80GB", "--log", str(_LOGS / "cpu-0.32-quant-awq.log")],
        ([Setup()] * 3, [Setup(latency=1.2)] * 3),
        "worse",
        [_Q7, "--quantization", "awq", "-tp", "2"],
    ),
    "one run a side, two knobs, one flag set after only": (
        ["--gpus", "1xA100-80GB"],
        ([Setup()], [Setup(command=f"{_SEQS} 256 --enable-prefix-caching")]),
        "insufficient-data",
        [_Q7, "--port", "1"],
    ),
    "no command recorded, prefix-cache hits, a quantized checkpoint, no --gpus": (
        [],
        ([Setup(command=None, isolation="reset", hit_rate=0.3)] * 3, [Setup(command=None)] * 3),
        "better",
        [f"{_Q7}-AWQ", "--port", "1"],
    ),
    "nothing measured": (["--gpus", "2xH100"], None, None, [_Q7, "--port", "1"]),
}
# Besides compare's: quotes of a log line, GPU and dataset names.
_ACCEPT_VERBATIM = re.compile(r"「[^」]*」|[a-z]+:[a-z]+|（[A-Z0-9-]+）")
_ACCEPT_NAMES = {"GPU", "NVML", "PP", "DP", "x", "GET", "checkpoint", "AWQ", "awq", "true"}


def _accept_argv(scenario: str, tmp_path: Path) -> tuple[list[str], list[str]]:
    """accept's options, and the serve command after `--`."""
    options, sides, verdict, served = _ACCEPT_SCENARIOS[scenario]
    argv = ["accept", *options]
    if sides is not None:
        before = _write(tmp_path / "b", sides[0], 1)
        after = _write(tmp_path / "a", sides[1], 101)
        argv += ["--before", str(before), "--after", str(after)]
    if verdict is not None:
        quality = tmp_path / "quality.json"
        doc = {
            "schema_version": 1,
            "dataset": "builtin:math",
            "n": 200,
            "verdict": verdict,
            "difference_pct_points": -0.5,
            "ci_low": -1.4,
            "ci_high": 0.4,
        }
        quality.write_text(json.dumps(doc), encoding="utf-8")
        argv += ["--quality", str(quality)]
    return argv, ["--", "vllm", "serve", *served]


@pytest.mark.parametrize("scenario", _ACCEPT_SCENARIOS)
def test_accept_in_zh_tw_leaves_no_english_sentence(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options, command = _accept_argv(scenario, tmp_path)
    code, english = _run([*options, "--lang", "en", *command], capsys)
    doc = json.loads(_run([*options, "--format", "json", *command], capsys)[1])
    code_zh, chinese = _run([*options, "--lang", "zh-TW", *command], capsys)
    assert code == code_zh == 1 - doc["accepted"]
    zh_json = _run([*options, "--format", "json", "--lang", "zh-TW", *command], capsys)[1]
    assert json.loads(zh_json) == doc  # the JSON contract does not depend on the language
    assert [c["evidence"] for c in doc["checks"] if c["evidence"] not in english] == []
    assert [c["name"] for c in doc["checks"] if c["name"] in chinese] == []
    assert len(chinese.splitlines()) == len(english.splitlines()) == 1 + len(doc["checks"])
    # A failed start quotes vLLM's own log line as it is.
    quoted = [
        c["evidence"] for c in doc["checks"] if c["id"] == "started" and c["status"] == "fail"
    ]
    for line in quoted:
        assert line in chinese
        chinese = chinese.replace(line, " ")
    words = set(
        re.findall(r"[A-Za-z][A-Za-z0-9]*", _VERBATIM.sub(" ", _ACCEPT_VERBATIM.sub(" ", chinese)))
    )
    assert words - _NAMES - _ACCEPT_NAMES == set(), chinese


@pytest.mark.parametrize("shift", range(12))
def test_chinese_wrapping_keeps_punctuation_with_its_words(shift: int) -> None:
    """Closing punctuation never starts a line, an opening bracket never ends one, nothing is
    lost, and every line fits 80 columns, wherever the breaks happen to fall."""
    text = (
        "字" * shift
        + (
            "每一步最多處理 8192 個 token（取代 vLLM 在這裡的預設值 2048），所有正在跑的請求"
            "共用這個預算：每個在解碼的請求佔 1 個，剩下的給新請求讀 prompt（prefill）。"
            "設太小，GPU 吃不飽、首字延遲（TTFT）變長卻不會報錯；「unrecognized arguments」。"
        )
        * 2
    )
    lines = wrap(text, "    ", "原因：")
    assert all(display_width(line) <= 80 for line in lines)
    assert [line for line in lines[1:] if line.strip()[0] in "，。、；：？！）」"] == []
    assert [line for line in lines if line.rstrip()[-1] in "（「"] == []
    rebuilt = "".join(line.strip() for line in lines).removeprefix("原因：")
    assert rebuilt.replace(" ", "") == text.replace(" ", "")


def test_every_command_takes_lang() -> None:
    """Every command prints words, so every command speaks both languages (`--lang`)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    without = [
        name
        for name, sub in commands.choices.items()
        if not any("--lang" in action.option_strings for action in sub._actions)
    ]
    assert len(commands.choices) == len(COMMANDS) >= 7
    assert without == []


@pytest.mark.parametrize(
    ("version", "gpus"), [("0.15.0", "1xT4"), ("0.6.3", "1xA100-80GB"), ("0.33.0", "2xH200")]
)
def test_check_in_zh_tw_says_where_defaults_came_from_in_chinese(
    version: str, gpus: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "check",
        "--gpus",
        gpus,
        "--vllm-version",
        version,
        "--lang",
        "zh-TW",
        "--",
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B-Instruct",
    ]
    _, chinese = _run(argv, capsys)
    lines = chinese.splitlines()
    start = lines.index("實際生效的設定")
    said = [next(line for line in lines if line.startswith("vLLM")), *lines[start + 1 :]]
    notes = [line.split("（", 1)[1] for line in said if "（" in line]
    assert len(notes) >= 5  # the version's source and the defaults vLLM picks here
    english = [n for n in notes if re.search(r"\b(default|published|engine|own|model's)\b", n)]
    assert english == []
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9]*", _VERBATIM.sub(" ", " ".join(notes))))
    assert words - _NAMES - {"vLLM", "auto", "GPU", "GiB", "T4", "A100", "H200", "SXM"} <= {
        "float16",
        "bfloat16",
        "max",
        "position",
        "embeddings",
        "chunked",
        "prefill",
        "context",
        "checkpoint",
        "dtype",
        "K",
        "GB",
    }  # names and config keys zh-TW keeps in English
