"""Failed starts of the corpus's fit part that a mechanism read from vLLM's (or transformers')
source explains: a GGUF file whose architecture no transformers vLLM runs with reads, an
architecture the release lacks said by a local path's name, and a flag the demo server
`python -m vllm.entrypoints.api_server` never had (issue 18)."""

from __future__ import annotations

import pytest

from servetune.review.check import CheckOptions, Report, check_text
from servetune.review.model import infer_architecture
from servetune.review.model_names import family_key, sibling_label, tokens
from servetune.vllm import flags
from servetune.vllm.model_support import gguf_config_reading, gguf_file_architecture
from servetune.vllm.serve_command import parse_text

from corpus_records import review_fit


def _review(command: str, version: str | None = None) -> Report:
    return check_text(command, CheckOptions(vllm_version=version, detect_hardware=False))


def _rules(report: Report) -> dict[str, str]:
    return {f.rule: f.severity for f in report.findings}


# --- the fit records ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record_id", "rule"),
    [
        ("gh30691-olmo3-32b-gguf", "gguf-arch-unsupported"),
        ("minicpmv-82-vllm040-arch-unsupported", "arch-unsupported-in-release"),
        ("vllm-2909-api-server-lora-modules", "unknown-flag"),
    ],
)
def test_fit_failed_start_draws_its_rule(record_id: str, rule: str) -> None:
    assert rule in _rules(review_fit(record_id))


def test_the_demo_server_refuses_lora_modules_in_every_release() -> None:
    # vllm-2909: "api_server.py: error: unrecognized arguments: --lora-modules ..."
    finding = next(f for f in review_fit("vllm-2909-api-server-lora-modules").findings)
    assert (finding.rule, finding.severity) == ("unknown-flag", "error")
    assert "vllm.entrypoints.api_server" in finding.title.text()


# --- GGUF: transformers reads the file's config -------------------------------------------------


def test_llama_cpp_names_olmo3_files_olmo2() -> None:
    assert gguf_file_architecture("olmo3") == "olmo2"
    assert gguf_file_architecture("qwen3_moe") == "qwen3moe"
    assert gguf_file_architecture("llama") == "llama"


def test_no_transformers_reads_an_olmo2_gguf() -> None:
    reading = gguf_config_reading("olmo2", "0.13.0")
    assert reading.never
    assert reading.requirement == ">= 4.56.0, < 5"
    assert reading.accepted == ("4.56.0", "4.57.0")


def test_a_range_that_straddles_the_first_reader_depends_on_the_install() -> None:
    # Qwen3 GGUF files: transformers reads them from 4.54; vLLM 0.8.5 takes >= 4.51.1
    reading = gguf_config_reading("qwen3", "0.8.5")
    assert not reading.never and not reading.always
    assert reading.first == "4.54.0"
    assert gguf_config_reading("qwen3", "0.13.0").always


def test_an_olmo3_gguf_file_is_refused_for_every_release_that_loads_gguf() -> None:
    report = _review("vllm serve /models/Olmo-3-32B-Think-Q8_0.gguf", "0.13.0")
    finding = next(f for f in report.findings if f.rule == "gguf-arch-unsupported")
    assert "olmo2" in finding.title.text()
    # the architecture was only taken from the name: a warning
    assert finding.severity == "warning"


def test_hf_config_path_gives_the_config_instead() -> None:
    command = "vllm serve /models/Olmo-3-32B-Think-Q8_0.gguf --hf-config-path allenai/Olmo-3-32B"
    assert "gguf-arch-unsupported" not in _rules(_review(command, "0.13.0"))


def test_a_readable_gguf_file_draws_nothing() -> None:
    command = "vllm serve /models/Qwen3-8B-Q4_K_M.gguf --tokenizer Qwen/Qwen3-8B"
    assert "gguf-arch-unsupported" not in _rules(_review(command, "0.13.0"))


def test_a_remote_gguf_repo_reads_its_config_json() -> None:
    # `repo:quant_type` (0.12+): the repository's config.json, not the file's metadata
    command = "vllm serve unsloth/Olmo-3-32B-Think-GGUF:Q4_K_M"
    assert "gguf-arch-unsupported" not in _rules(_review(command, "0.13.0"))


# --- architectures from names -------------------------------------------------------------------


def test_family_key_stops_at_size_date_or_chat_word() -> None:
    assert family_key(tokens("Olmo-3-1125-32B")) == ("olmo", "3")
    assert family_key(tokens("Olmo-3-32B-Think")) == ("olmo", "3")
    assert family_key(tokens("MiniCPM-V-2")) == ("minicpm", "v", "2")
    assert family_key(tokens("Llama-3-8B-Instruct")) == ("llama", "3")


def test_siblings_must_agree() -> None:
    labelled = [("org/Fam-2-7B", "A"), ("org/Fam-2-70B", "A"), ("org/Fam-3-8B", "B")]
    assert sibling_label("/m/Fam-2-13B-chat", labelled) == ("A", "org/Fam-2-70B")
    assert sibling_label("Fam-2-13B", [*labelled, ("org/Fam-2-1B-RM", "C")]) is None
    assert sibling_label("Fam-7B", labelled) is None  # no version in the family key


def test_a_local_path_names_its_family() -> None:
    # vLLM's tests run openbmb/MiniCPM-V-2_6 as MiniCPMV (tests/models/registry.py)
    named = infer_architecture("/home/me/MOD/MiniCPM-V-2")
    assert named is not None and named.architecture == "MiniCPMV"
    olmo = infer_architecture("Olmo-3-32B-Think-Q8_0.gguf")
    assert olmo is not None and (olmo.architecture, olmo.model_type) == (
        "Olmo3ForCausalLM",
        "olmo3",
    )
    assert infer_architecture("/models/my-finetune") is None


def test_a_release_older_than_every_table_still_lacks_a_later_architecture() -> None:
    report = _review("vllm serve /data/MiniCPM-V-2 --trust-remote-code", "0.4.0.post1")
    assert _rules(report).get("arch-unsupported-in-release") == "warning"
    dev = _review("vllm serve /data/MiniCPM-V-2 --trust-remote-code", "0.1.dev1+g6997a25ac")
    assert "arch-unsupported-in-release" not in _rules(dev)


# --- the demo server's parser -------------------------------------------------------------------

_DEMO = "python -m vllm.entrypoints.api_server --model meta-llama/Llama-2-7b-hf"


def test_demo_server_flags_are_its_own_and_the_engines() -> None:
    for version in ("0.4.1", "0.13.0", "0.24.0"):
        table = flags.demo_server_flags(version)
        assert {"--host", "--port", "--tensor-parallel-size", "--enable-lora"} <= table
        assert not {"--lora-modules", "--chat-template", "--api-key"} & table
    assert "--served-model-name" not in flags.demo_server_flags("0.4.1")
    assert "--served-model-name" in flags.demo_server_flags("0.4.2")


def test_demo_server_options_of_its_own_are_read_without_serve_choices() -> None:
    # its `--log-level` is a free string (default "debug"); `vllm serve`'s has choices
    command = parse_text(_DEMO + " --log-level info --port 8001", version="0.13.0")
    assert not command.issues
    assert command.args["--log-level"] == "info"


def test_an_openai_server_flag_on_the_demo_server() -> None:
    report = _review(_DEMO + " --enable-lora --lora-modules a=/x --chat-template t.jinja", "0.6.6")
    refused = [f for f in report.findings if f.rule == "unknown-flag"]
    assert len(refused) == 2
    assert all(f.severity == "error" for f in refused)


def test_the_openai_server_takes_them() -> None:
    command = "python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-2-7b-hf"
    report = _review(command + " --enable-lora --lora-modules a=/x", "0.6.6")
    assert "unknown-flag" not in _rules(report)
