"""The CLI, run in-process: exact exit codes, JSON shape, every way to pass a command."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from servetune.cli.main import default_language, main
from servetune.render.check import display_width

SEED = [
    "vllm",
    "serve",
    "Qwen/Qwen2.5-7B-Instruct",
    "--tensor-parallel-size",
    "2",
    "--quantization",
    "awq",
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_seed_example_exits_1_with_the_finding(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", "--gpus", "2xA100-80GB", "--lang", "en", "--", *SEED], capsys)
    assert code == 1
    assert err == ""
    assert "DO NOT LAUNCH" in out.splitlines()[0]
    assert "[quant-on-unquantized]" in out
    assert "Ask your AI" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "\x1b[" not in out  # no colour when not a TTY


def test_clean_command_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["check", "--gpus", "1xH100", "--lang", "en", "--", "vllm", "serve", "Qwen/Qwen3-8B"],
        capsys,
    )
    assert code == 0
    assert out.startswith("Looks good")


def test_json_output_is_one_object_with_the_contract_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["check", "--gpus", "2xA100-80GB", "--format", "json", "--", *SEED], capsys)
    assert code == 1
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    assert doc["vllm_version"]
    assert doc["command"] == {
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "args": {"--tensor-parallel-size": "2", "--quantization": "awq"},
    }
    assert doc["model"]["num_attention_heads"] == 28
    assert doc["hardware"]["count"] == 2
    assert doc["hardware"]["name"] == "A100-80GB-SXM"
    finding = doc["findings"][0]
    assert set(finding) == {"rule", "severity", "flag", "title", "why", "fix", "ask_ai"}
    assert finding["rule"] == "quant-on-unquantized"
    assert finding["severity"] == "error"
    assert set(doc["estimate"]) >= {
        "weights_gib_per_gpu",
        "kv_bytes_per_token_per_gpu",
        "kv_cache_gib_per_gpu",
        "kv_cache_tokens",
        "max_concurrent_seqs_at_max_model_len",
    }
    assert isinstance(doc["estimate"]["kv_bytes_per_token_per_gpu"], int)


def test_unknown_model_gives_null_model_and_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["check", "--gpus", "1xL4", "--format", "json", "--", "vllm", "serve", "acme/x"], capsys
    )
    doc = json.loads(out)
    assert code == 0
    assert doc["model"] is None
    assert doc["estimate"] is None
    assert [f["rule"] for f in doc["findings"]] == ["model-unknown"]


def test_command_from_file_and_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "$ vllm serve Qwen/Qwen2.5-7B-Instruct \\\n  --tensor-parallel-size 2 \\\n  --quantization awq\n"
    path = tmp_path / "cmd.txt"
    path.write_text("Code language: Bash (bash)\n" + text, encoding="utf-8")
    code, out, _ = run(
        ["check", "--gpus", "2xA100", "--format", "json", "--file", str(path)], capsys
    )
    assert code == 1
    assert json.loads(out)["findings"][0]["rule"] == "quant-on-unquantized"
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code, out, _ = run(["check", "--gpus", "2xA100", "--format", "json", "--file", "-"], capsys)
    assert code == 1
    assert json.loads(out)["command"]["model"] == "Qwen/Qwen2.5-7B-Instruct"


def test_command_as_one_quoted_word(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["check", "--format", "json", "--gpus", "1xA100", "--", " ".join(SEED)], capsys
    )
    assert code == 1
    assert json.loads(out)["command"]["args"]["--quantization"] == "awq"


def test_model_config_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "num_attention_heads": 12,
                "num_key_value_heads": 4,
                "hidden_size": 768,
                "num_hidden_layers": 4,
                "max_position_embeddings": 2048,
                "torch_dtype": "bfloat16",
                "vocab_size": 1000,
            }
        ),
        encoding="utf-8",
    )
    code, out, _ = run(
        [
            "check",
            "--gpus",
            "8xA100",
            "--format",
            "json",
            "--model-config",
            str(tmp_path),
            "--",
            "vllm",
            "serve",
            "my/model",
            "-tp",
            "8",
        ],
        capsys,
    )
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert code == 1
    assert "tp-heads-indivisible" in rules


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check"], "no command to review"),
        (["check", "--gpus", "2xA10O-80GB", "--", *SEED], "did you mean A100-80GB"),
        (["check", "--gpus", "0", "--", *SEED], "at least 1"),
        (["check", "--lang", "fr", "--", *SEED], "--lang"),
        (["check", "--vllm-version", "newest", "--", *SEED], "not a vLLM version"),
        (["check", "--file", "/nonexistent/cmd.txt"], "cannot read"),
        (["check", "--", "vllm", "serve", "m", "--chat-template", "'unclosed"], None),
        (["check", "--", "ls", "-la"], "not a vLLM server command"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_usage_exits_2_with_a_message_and_no_traceback(
    argv: list[str], message: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(argv, capsys)
    if message is None:  # a lone quote inside argv is just a character: not an error here
        assert code in (0, 1)
        return
    assert code == 2
    assert out == ""
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err


def test_broken_model_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = run(["check", "--model-config", str(bad), "--", *SEED], capsys)
    assert code == 2
    assert "not valid JSON" in err
    assert "hint:" in err


def test_zh_tw_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", "--gpus", "2xA100-80GB", "--lang", "zh-TW", "--", *SEED], capsys)
    assert code == 1
    assert "先別啟動" in out
    assert "[quant-on-unquantized]" in out
    # Chinese characters take two terminal columns: the report still fits 80 of them.
    assert max(display_width(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize(
    ("env", "lang"),
    [
        ({"LANG": "zh_TW.UTF-8"}, "zh-TW"),
        ({"LC_ALL": "zh_Hant_TW"}, "zh-TW"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "en"),
        ({"SERVETUNE_LANG": "zh-TW", "LANG": "C"}, "zh-TW"),
    ],
)
def test_default_language_from_the_locale(env: dict[str, str], lang: str) -> None:
    assert default_language(env) == lang


def test_explain_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "explain",
            "--gpus",
            "1xA100-80GB",
            "--format",
            "json",
            "--lang",
            "en",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen2.5-7B-Instruct-AWQ",
            "--max-num-seqs",
            "256",
            "--port",
            "8000",
            "--some-future-flag",
            "1",
        ],
        capsys,
    )
    assert code == 0
    items = json.loads(out)
    by_flag = {item["flag"]: item for item in items}
    assert set(items[0]) == {"flag", "value", "meaning"}
    assert by_flag["--max-num-seqs"]["value"] == "256"
    assert "256" in by_flag["--max-num-seqs"]["meaning"]
    for knob in ("--tensor-parallel-size", "--max-num-batched-tokens", "--dtype"):
        assert knob in by_flag  # the five knobs are always explained (quantization when set)
    assert "2048" in by_flag["--max-num-batched-tokens"]["meaning"]  # A100 default, resolved
    assert by_flag["--port"]["meaning"]
    assert by_flag["--some-future-flag"]["meaning"]


def test_explain_zh_tw(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "explain",
            "--lang",
            "zh-TW",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen2.5-7B-Instruct-AWQ",
            "--quantization",
            "awq",
        ],
        capsys,
    )
    assert code == 0
    assert "量化" in out
    assert "張量並行" in out
