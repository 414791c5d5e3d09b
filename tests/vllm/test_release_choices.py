"""Each release's own flags and choices: a value is refused where that release refuses it.

The tables come from every release's source (scripts/build_flag_tables.py, flag_choices.py); the
examples below are releases where vLLM's source added or removed the name (its registry, its
QUANTIZATION_METHODS), from 0.4.x's `python -m vllm.entrypoints.openai.api_server` on.
"""

from __future__ import annotations

import pytest

from servetune.review.check import CheckOptions, check_text
from servetune.vllm import flags as vllm_flags
from servetune.vllm.serve_command import ServeCommand, parse_text

API_SERVER = "python -m vllm.entrypoints.openai.api_server --model facebook/opt-125m"


def _kinds(command: ServeCommand) -> list[str]:
    return [issue.kind for issue in command.issues if issue.kind != "default-model"]


def _invalid(command: ServeCommand) -> list[tuple[str | None, str | None]]:
    return [(i.flag, i.detail) for i in command.issues if i.kind == "invalid-value"]


def test_the_old_api_server_has_tables_from_0_4() -> None:
    assert vllm_flags.known_versions()[0] == "0.4.1"
    # 0.4.0 has no sdist on the index: the same minor's nearest table stands in, explicitly.
    assert vllm_flags.fallback_for("0.4.0") == "0.4.1"
    assert vllm_flags.table_for("0.4.0") == "0.4.1"
    for version in ("0.4.1", "0.4.2", "0.4.3", "0.5.0", "0.5.5"):
        assert vllm_flags.table_for(version) == version
        assert {"--model", "--tensor-parallel-size", "--max-model-len"} <= vllm_flags.flags_of(
            version
        )


def test_a_flag_added_after_0_5_is_caught_in_0_4() -> None:
    # --enable-auto-tool-choice came with the tool parsers in 0.6.0.
    command = parse_text(f"{API_SERVER} --enable-auto-tool-choice", version="0.4.2")
    (issue,) = [i for i in command.issues if i.flag == "--enable-auto-tool-choice"]
    assert issue.kind == "flag-too-new"
    assert issue.removal is not None and issue.removal.first_seen == "0.6.0"
    assert _kinds(parse_text(f"{API_SERVER} --enable-auto-tool-choice", version="0.6.0")) == []


def test_old_releases_read_their_own_flags() -> None:
    command = parse_text(
        f"{API_SERVER} --tensor-parallel-size 2 --max-model-len 2048 --engine-use-ray "
        "--gpu-memory-utilization 0.85 --dtype half",
        version="0.4.2",
    )
    assert _kinds(command) == []
    assert command.switch("--engine-use-ray") is True
    assert command.text("--max-model-len") == "2048"
    # 0.4.2 spelt it --max-seq_len-to-capture; servetune reads every long flag with dashes
    spelt = parse_text(f"{API_SERVER} --max-seq_len-to-capture 8192", version="0.4.2")
    assert _kinds(spelt) == []


def test_a_flag_unknown_in_every_release_is_unknown_in_0_4_too() -> None:
    command = parse_text(f"{API_SERVER} --max-num-seqz 64", version="0.4.2")
    (issue,) = [i for i in command.issues if i.kind == "unknown-flag"]
    assert issue.detail == "--max-num-seqs"


def test_old_releases_get_unknown_flag_findings() -> None:
    options = CheckOptions(gpus="1xA100-80GB", vllm_version="0.4.2", detect_hardware=False)
    report = check_text(f"{API_SERVER} --enable-auto-tool-choice", options)
    assert "unknown-flag" in {f.rule for f in report.findings}


@pytest.mark.parametrize(
    ("parser", "before", "since"),
    [
        ("qwen3", "0.8.5.post1", "0.9.0"),  # vllm/reasoning/qwen3_reasoning_parser.py
        ("granite", "0.8.2", "0.8.3"),
        ("seed_oss", "0.10.2", "0.11.0"),
    ],
)
def test_a_reasoning_parser_is_refused_before_the_release_that_added_it(
    parser: str, before: str, since: str
) -> None:
    command = f"vllm serve Qwen/Qwen3-8B --reasoning-parser {parser}"
    assert "--reasoning-parser" in vllm_flags.flags_of(before)
    assert parser not in (vllm_flags.choices_in("--reasoning-parser", before) or ())
    assert _invalid(parse_text(command, version=before)) == [("--reasoning-parser", parser)]
    assert _invalid(parse_text(command, version=since)) == []
    assert _invalid(parse_text(command, version="0.33.0")) == []


def test_the_refusal_names_the_release_s_own_choices() -> None:
    command = parse_text("vllm serve m --reasoning-parser qwen3", version="0.8.5")
    (issue,) = [i for i in command.issues if i.kind == "invalid-value"]
    assert issue.choices == ("deepseek_r1", "granite")


def test_a_quantization_method_removed_later_is_accepted_where_it_existed() -> None:
    # squeezellm left QUANTIZATION_METHODS in 0.6.1; aqlm in 0.10.1.
    old = f"{API_SERVER} --quantization squeezellm"
    assert _invalid(parse_text(old, version="0.5.5")) == []
    assert _invalid(parse_text(old, version="0.6.1")) == [("--quantization", "squeezellm")]
    short = "vllm serve m -q aqlm"
    assert _invalid(parse_text(short, version="0.10.0")) == []
    assert _invalid(parse_text(short, version="0.10.1")) == [("--quantization", "aqlm")]
    assert _invalid(parse_text(short, version="0.33.0")) == [("--quantization", "aqlm")]


def test_a_value_0_33_lacks_is_accepted_in_the_release_that_had_it() -> None:
    # 0.33 accepts 0.6's --tokenizer-mode values and more; 0.4's --block-size had 8/16/32 only.
    assert _invalid(parse_text(f"{API_SERVER} --block-size 16", version="0.4.2")) == []
    bad = parse_text(f"{API_SERVER} --block-size 128", version="0.4.2")
    assert _invalid(bad) == [("--block-size", "128")]
    assert _invalid(parse_text(f"{API_SERVER} --block-size 128", version="0.5.5")) == []


def test_a_release_whose_choices_are_unknown_refuses_nothing() -> None:
    # 0.15.1 has no sdist (its table is a wheel's flag inventory): no choices were read there.
    assert vllm_flags.choices_in("--reasoning-parser", "0.15.1") is None
    assert vllm_flags.choices_in("--reasoning-parser", "0.15.0") is None
    command = parse_text("vllm serve m --reasoning-parser no_such_parser", version="0.15.1")
    assert _invalid(command) == []
    assert _invalid(parse_text("vllm serve m -q no_such_method", version="0.15.1")) == []
    # a flag with free text (--served-model-name) has no choices in any release
    assert vllm_flags.choices_in("--served-model-name", "0.33.0") is None


def test_a_plugin_file_may_register_more_parsers() -> None:
    plain = "vllm serve m --reasoning-parser my_parser"
    assert _invalid(parse_text(plain, version="0.33.0")) == [("--reasoning-parser", "my_parser")]
    plugin = f"{plain} --reasoning-parser-plugin /srv/my_parser.py"
    assert _invalid(parse_text(plugin, version="0.33.0")) == []
    tools = "vllm serve m --enable-auto-tool-choice --tool-call-parser mine"
    assert _invalid(parse_text(tools, version="0.33.0")) == [("--tool-call-parser", "mine")]
    plugin_first = "vllm serve m --tool-parser-plugin=/p.py --enable-auto-tool-choice "
    assert _invalid(parse_text(f"{plugin_first}--tool-call-parser mine", version="0.33.0")) == []


def test_choices_follow_aliases_and_0_33_spellings() -> None:
    assert vllm_flags.choices_in("-q", "0.33.0") == vllm_flags.choices_in(
        "--quantization", "0.33.0"
    )
    assert "fp8" in (vllm_flags.choices_in("--kv_cache_dtype", "0.33.0") or ())
    dtypes = ("auto", "half", "float16", "bfloat16", "float", "float32")
    assert vllm_flags.choices_in("--dtype", "0.4.1") == dtypes


def test_a_flag_whose_kind_changed_is_read_as_its_release_defines_it() -> None:
    # --api-key took one value up to 0.10.0 (type=str), several (nargs="+") later.
    old = parse_text(f"{API_SERVER} --api-key secret", version="0.4.2")
    assert old.args["--api-key"] == "secret"
    new = parse_text("vllm serve m --api-key secret other", version="0.33.0")
    assert new.args["--api-key"] == ("secret", "other")


def test_a_development_build_refuses_no_choice() -> None:
    # 0.8.5.dev84 (main, PR 17452) already had the qwen3 parser that the 0.8.5 release lacks.
    command = "vllm serve Qwen/Qwen3-8B --enable-reasoning --reasoning-parser qwen3"
    assert _invalid(parse_text(command, version="0.8.5")) == [("--reasoning-parser", "qwen3")]
    assert _invalid(parse_text(command, version="0.8.5.dev84")) == []
    assert vllm_flags.choices_in("--reasoning-parser", "0.8.5.dev84") is None
