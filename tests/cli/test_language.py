"""One moment for language: check, doctor and explain decide in facts and say them in `render/`.

On recorded inputs (commands reviewed with --gpus and --vllm-version, so neither NVML nor the
network is asked; vLLM logs from tests/data/vllm-logs), run in-process:
- `--format json` is the same bytes under `--lang en` and `--lang zh-TW` (English);
- the zh-TW text view has no English sentence left: none of the JSON's English sentences
  appears in it, and once what is quoted as it is (code spans, flags, rule ids, names with a
  dot, slash, colon or underscore, vLLM's own words in 「」, the corrected command, the log
  lines the doctor quotes) and the names zh-TW readers write in English (`_NAMES`: "KV
  cache", "GiB") are taken out, no run of three English words remains on a line. The
  precedent is tests/texts/test_views.py, which holds compare and accept to single names.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from servetune.cli.main import main

LOGS = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"
ALL_LOGS = sorted([*LOGS.glob("*.log"), *(LOGS / "real").glob("*.log")], key=lambda p: p.name)

_Q7 = "Qwen/Qwen2.5-7B-Instruct"
_A100 = "--gpus 1xA100-80GB --vllm-version 0.33.0 -- vllm serve"
# check's and explain's options and serve command as typed, one scenario per kind of finding.
COMMANDS = {
    "AWQ asked of a plain checkpoint, TP above the GPUs": (
        f"--gpus 2xA100-80GB --vllm-version 0.33.0 -- vllm serve {_Q7} --quantization awq -tp 4"
    ),
    "a context the KV cache cannot hold": (
        "--gpus 1xL4 --vllm-version 0.33.0 -- vllm serve meta-llama/Llama-3.1-8B-Instruct "
        "--max-model-len 65536"
    ),
    "removed, misspelled and typographic flags": (
        f"--gpus 1xA100-80GB --vllm-version 0.20.2 -- vllm serve {_Q7} --rope-scaling x "
        "--max-num-seqz 64 \u2014max-model-len 4096"
    ),
    "quantized memory the sequence cap never uses": (
        f"{_A100} {_Q7}-AWQ --max-num-seqs 32 --enforce-eager"
    ),
    "TP that does not divide the heads, a tiny token budget": (
        f"--gpus 3xA100-80GB --vllm-version 0.33.0 -- vllm serve {_Q7} "
        "--tensor-parallel-size 3 --max-num-batched-tokens 512"
    ),
    "bfloat16 on a T4, an old release's defaults": (
        "--gpus 1xT4 --vllm-version 0.15.0 -- vllm serve google/gemma-2-9b-it --dtype bfloat16"
    ),
    "an MoE estimate with its rough notes": (
        "--gpus 4xH100 --vllm-version 0.9.2 -- vllm serve Qwen/Qwen3-235B-A22B-FP8 -tp 4"
    ),
    "an unknown model, a utilization out of range": (
        "--gpus 1xH100-80GB --vllm-version 0.33.0 -- vllm serve acme/secret-model "
        "--gpu-memory-utilization 1.5"
    ),
    "only the GPU count known, idle GPUs": f"--gpus 2 --vllm-version 0.33.0 -- vllm serve {_Q7}",
    "--model, a value after a switch, a missing value": (
        f"{_A100} --model {_Q7} --enable-chunked-prefill True --max-num-seqs"
    ),
    "a model check does not know, FP8 on an A100": (
        f"{_A100} nobody/unheard-of --quantization fp8 --dtype half"
    ),
}

# Quoted as it is, whatever the language: code spans, vLLM's own words, rule ids, flags, and
# names with a dot, slash, colon, equals sign or underscore (models, paths, versions, keys).
_VERBATIM = re.compile(r"`[^`]*`|「[^」]*」|\[[a-z0-9-]+\]|--?[A-Za-z][\w.-]*|\S*[_/.:=]\S*")
# Names and units zh-TW readers write in English (tests/texts/test_parity.py keeps the first
# four in English too); a run of them is not a sentence.
_NAMES = re.compile(r"\b(?:vLLM|KV cache|GPUs?|GiB|TP|PP|DP|x|Hugging Face Hub|tensor cores?)\b")
_RUN = re.compile(r"[A-Za-z][\w'-]*(?:[ \t]+[A-Za-z][\w'-]*){2,}")
_BREAK = " | "  # what takes the place of a line break or a verbatim part: no run crosses it


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def _flat(text: str) -> str:
    """The text without its line breaks and indentation (wrapping moves words between lines)."""
    return " ".join(text.split())


def _english_runs(view: str, quoted: list[str]) -> list[str]:
    """Runs of three or more English words on one line of the view, once the verbatim parts,
    the names and the `quoted` texts (which the view may wrap over several lines) are out."""
    lines = _BREAK.join(" ".join(line.split()) for line in view.splitlines())
    for text in sorted(quoted, key=len, reverse=True):
        if text.strip():
            wrapped = r"(?: \|)? ".join(re.escape(word) for word in text.split())
            lines = re.sub(wrapped, _BREAK, lines)
    lines = _NAMES.sub(_BREAK, _VERBATIM.sub(_BREAK, lines))
    return _RUN.findall(lines)


def _leaked(view: str, sentences: list[str]) -> list[str]:
    """English sentences of the JSON that the view says as they are."""
    flat = _flat(view)
    return [s for s in sentences if s and _flat(s) in flat]


def _both(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, object] | list[object], str]:
    """The JSON document (asserted the same bytes in both languages) and the zh-TW view."""
    name, options = argv[0], argv[1:]
    code_en, english = _run([name, "--lang", "en", "--format", "json", *options], capsys)
    code_zh, chinese = _run([name, "--lang", "zh-TW", "--format", "json", *options], capsys)
    assert (code_en, english) == (code_zh, chinese)  # byte-identical, and English
    code_text, view = _run([name, "--lang", "zh-TW", *options], capsys)
    assert code_text == code_en
    doc: dict[str, object] | list[object] = json.loads(english)
    return doc, view


@pytest.mark.parametrize("scenario", COMMANDS)
def test_check_speaks_one_language_per_view(
    scenario: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, view = _both(["check", *shlex.split(COMMANDS[scenario])], capsys)
    assert isinstance(doc, dict)
    findings = doc["findings"]
    assert isinstance(findings, list)
    said = [f[field] for f in findings for field in ("title", "why", "fix", "ask_ai")]
    assert [f"[{f['rule']}]" for f in findings if f"[{f['rule']}]" not in view] == []
    assert _leaked(view, said) == []
    corrected = doc["corrected_command"]
    quoted = corrected.splitlines() if isinstance(corrected, str) else []
    assert _english_runs(view, quoted) == [], view


@pytest.mark.parametrize("scenario", COMMANDS)
def test_explain_speaks_one_language_per_view(
    scenario: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, view = _both(["explain", *shlex.split(COMMANDS[scenario])], capsys)
    assert isinstance(doc, list) and doc
    meanings = [item["meaning"] for item in doc if isinstance(item, dict)]
    assert len(meanings) == len(doc)
    assert _leaked(view, meanings) == []
    assert _english_runs(view, []) == [], view


@pytest.mark.parametrize("log", ALL_LOGS, ids=lambda p: p.name)
def test_doctor_speaks_one_language_per_view(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc, view = _both(["doctor", str(log)], capsys)
    assert isinstance(doc, dict)
    diagnoses = doc["diagnoses"]
    assert isinstance(diagnoses, list)
    said = [d[field] for d in diagnoses for field in ("title", "why", "fix")]
    assert _leaked(view, said) == []
    # The root cause and the evidence are vLLM's own lines, quoted as they are.
    root = doc["root_cause"]
    quoted = [d["evidence"] for d in diagnoses] + ([root] if isinstance(root, str) else [])
    assert [line for line in quoted if _flat(line) not in _flat(view)] == []
    assert _english_runs(view, quoted) == [], view


def test_the_criterion_finds_an_english_sentence() -> None:
    """The checks above are not vacuous: an English sentence left in a zh-TW view is found,
    also when wrapping split it; a quoted one, names and numbers are not."""
    view = (
        "原因：the model does not fit\n        here, even at TP 2.\n"
        "  `--max-model-len 4096` 「Engine core failed」 KV cache 4.8 GiB"
    )
    assert _english_runs(view, []) == ["the model does not fit"]
    assert _english_runs(view, ["the model does not fit here, even at TP 2."]) == []
    assert _leaked(view, ["The weights do not fit.", "the model does not fit here, even"]) == [
        "the model does not fit here, even"
    ]
