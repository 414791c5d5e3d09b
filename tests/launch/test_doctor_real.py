"""`doctor` on what users really paste: log excerpts from public issue threads
(tests/data/vllm-logs/real, index.json gives each one's source URL and what actually happened).

Each excerpt is judged like a user's paste: status, the root-cause line, the first diagnosis and
the numbers its title names; and `serve`'s line-by-line reader never disagrees with the doctor.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from servetune.errors import NotAVllmLog
from servetune.launch.doctor import diagnose
from servetune.render.doctor import doctor_text
from servetune.texts import LANGUAGES
from servetune.vllm import log as vllm_log

REAL = Path(__file__).resolve().parents[1] / "data" / "vllm-logs" / "real"
INDEX: list[dict[str, Any]] = json.loads((REAL / "index.json").read_text(encoding="utf-8"))
CASES = {case["file"]: case for case in INDEX}


def test_the_index_lists_every_excerpt_once_with_its_source() -> None:
    on_disk = {path.name for path in REAL.glob("*.log")}
    assert set(CASES) == on_disk
    assert len(CASES) == len(INDEX) >= 15
    for case in INDEX:
        assert case["source"].startswith("https://github.com/"), case["file"]
        assert case["status"] in ("ready", "failed", "starting")


def test_the_excerpts_cover_the_families() -> None:
    ids = {case["diagnosis"] for case in INDEX}
    assert {"out-of-memory", "weights-dont-fit", "kv-cache-too-small", "tp-exceeds-gpus",
            "nccl-error", "quant-tp-shape", "dtype-unsupported-gpu", None} <= ids  # fmt: skip
    assert {case["status"] for case in INDEX} == {"ready", "failed", "starting"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_status_root_cause_and_diagnosis(name: str) -> None:
    case = CASES[name]
    report = diagnose((REAL / name).read_text(encoding="utf-8"))
    assert report.status == case["status"]
    if case["root_cause"] is None:
        assert report.root_cause is None
    else:
        assert report.root_cause is not None
        assert report.root_cause.startswith(case["root_cause"]), report.root_cause
        assert not report.root_cause.startswith(("Traceback", "raise "))
        assert "Engine core initialization failed" not in report.root_cause
    ids = [d.id for d in report.diagnoses]
    if case["diagnosis"] is None:
        assert ids == []
    else:
        assert ids[0] == case["diagnosis"], ids
        for part in case["title_has"]:
            assert part in report.diagnoses[0].title.text(), report.diagnoses[0].title.text()
        assert "`?`" not in report.diagnoses[0].title.text() + report.diagnoses[0].fix.text()


@pytest.mark.parametrize(
    "name", sorted(n for n, case in CASES.items() if "kv_cache_tokens" in case)
)
def test_reported_numbers(name: str) -> None:
    case = CASES[name]
    reported = diagnose((REAL / name).read_text(encoding="utf-8")).reported
    assert reported.kv_cache_tokens == case["kv_cache_tokens"]
    assert reported.max_concurrency == case["max_concurrency"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_diagnosis_is_said_in_zh_tw(name: str) -> None:
    report = diagnose((REAL / name).read_text(encoding="utf-8"))
    for d in report.diagnoses:
        for said in (d.title, d.why, d.fix):
            assert re.search(r"[\u4e00-\u9fff]", said.text("zh-TW")), (d.id, said)
            assert said.text("zh-TW") != said.text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_serve_and_doctor_do_not_disagree(name: str) -> None:
    # What `serve` decides while following the same lines is what the doctor says at the end.
    text = (REAL / name).read_text(encoding="utf-8")
    watch = vllm_log.StartWatch()
    for raw in text.splitlines():
        watch.feed(raw)
    status = diagnose(text).status
    if watch.fatal is not None:
        assert status == "failed"
    if watch.ready:
        assert status == "ready"


@pytest.mark.parametrize("language", ["en", "zh-TW"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_doctor_command_on_each_excerpt(
    name: str, language: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from servetune.cli.main import main

    code = main(["doctor", str(REAL / name), "--format", "json", "--lang", language])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert json.loads(out)["status"] == CASES[name]["status"]
    assert code == (1 if CASES[name]["status"] == "failed" else 0)
    main(["doctor", str(REAL / name), "--lang", language])  # the text report too
    out, err = capsys.readouterr()
    label = "狀態：" if language == "zh-TW" else "status: "
    assert out.startswith(label + CASES[name]["status"]) and "Traceback" not in err


def test_cut_shuffled_and_glued_excerpts_never_raise() -> None:
    # Users paste from anywhere: cut mid-line, lines out of order, newlines lost. The only error
    # is the typed one for a cut that kept no vLLM line at all (NCCL's or torch's lines alone).
    rng = random.Random(8)
    lines = [line for name in sorted(CASES) for line in (REAL / name).read_text().splitlines()]
    refused = 0
    for _ in range(300):
        sample = rng.sample(lines, rng.randint(1, 12))
        text = "\n".join(sample)
        if rng.random() < 0.3:
            text = " ".join(sample)  # newlines collapsed, as a forum editor does
        cut = text[: rng.randint(0, len(text))]
        try:
            report = diagnose(cut)
        except NotAVllmLog:
            assert not vllm_log.shows_vllm(cut), cut
            refused += 1
            continue
        assert report.status in ("ready", "failed", "starting")
        assert json.dumps(report.to_json(), ensure_ascii=False)
        for language in LANGUAGES:
            assert doctor_text(report, language)
    assert refused < 300 // 5  # most cuts keep a line of vLLM's own


def test_the_text_report_names_what_vllm_reported_about_memory() -> None:
    report = diagnose((REAL / "negative-kv-omni-tp2.log").read_text(encoding="utf-8"))
    assert "reported: KV cache memory -3.86 GiB" in doctor_text(report)
    report = diagnose((REAL / "starting-v0-profiling.log").read_text(encoding="utf-8"))
    text = doctor_text(report, "zh-TW")
    assert "KV cache 61,632 個 token" in text and "權重 7.51 GiB" in text
