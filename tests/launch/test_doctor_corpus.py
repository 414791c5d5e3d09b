"""`doctor` on the real corpus's `fit` part (tests/data/corpus, see its README): each pasted
excerpt judged as `benchmarks/real_world.py` scores it, status, root-cause line and diagnosis.

Only `fit` records are read here; the `held-out` part is scored by the benchmark and never
tuned on. Then one test per mechanism, on short excerpts cut from fit records: whole lines
kept verbatim, named by the record they come from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from servetune import texts
from servetune.errors import NotAVllmLog
from servetune.launch.doctor import diagnose
from servetune.vllm import log as vllm_log

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
RECORDS: list[dict[str, Any]] = json.loads((CORPUS / "logs.json").read_text(encoding="utf-8"))[
    "records"
]
FIT = {record["id"]: record for record in RECORDS if record["split"] == "fit"}
# Doctor's diagnosis ids: a record's `other:X` label names X once X is one (as the benchmark
# scores it).
DIAGNOSIS_IDS = {key.split(".")[0].split(":")[0] for key in texts.table("doctor", "en")}

# Fit records the excerpt alone cannot settle, with the reason.
CANNOT = {
    # The record's own `cause`: "the real cause is earlier in the log and not in this chunk".
    # Only vLLM's wrapper is shown; the record quotes it as the root cause, while doctor's
    # contract (tests/data/vllm-logs/real, wrapper-only-gpt-oss.log) gives no root cause for a
    # wrapper alone and says so with `engine-init-failed` (which it does here).
    "vllm-23176-engine-init-shell": "the cause is only in the thread, not in the excerpt",
    # The same: the record's root cause is V1's wrapper `Exception: WorkerProc initialization
    # failed due to an exception in a background process. See stack trace for root cause.`, and
    # its `cause` says the worker's own exception is not in the chunk. doctor finds the status
    # and `engine-init-failed`, with no root cause (test below).
    "runpod-276-docker-ts-workerproc": "the excerpt holds only the wrapper, not the cause",
    # The same family behind KServe's logger: its line quotes vLLM's wrapper ("Engine core
    # initialization failed. See root cause above."), the cause (a native double free, the
    # thread's title) is not in the excerpt. doctor: `failed`, `engine-init-failed`, no root
    # cause (uvicorn's CancelledError before it is a consequence, never the cause).
    "kserve-5056-engine-init-wrapper": "the excerpt holds only the wrapper, not the cause",
    # KServe's own pod log, not a line vLLM printed (its note says so): doctor refuses it as
    # not a vLLM log and asks for the server's output, which is what it can say.
    "kserve-3769-div-zero": "no line of vLLM's in the excerpt, only KServe's",
    # NCCL's own INFO line and torch's watchdog lines (`[rank2]:[E1001 ... ProcessGroupNCCL.cpp:607]
    # ... Watchdog caught collective operation timeout`), which any program on torch.distributed
    # prints (SGLang's, sglang-3460, is another program's log): nothing of vLLM's, so refused.
    # Behind a line of vLLM's, the same lines are `failed` with `nccl-timeout` (test below).
    "vllm-8978-mllama-tp4-watchdog-hang": "no line of vLLM's in the excerpt, only torch's and NCCL's",
    # ms-swift's deploy calling vLLM's AsyncLLMEngine, the traceback cut at `engine = cls(` in
    # `from_engine_args`: the KV cache refusal is in the thread's title, not in the excerpt, and
    # `from_engine_args` fails for any cause. doctor: `failed`, no root cause, as the record.
    "deepseekv2-83-swift-rank0-kv-small": "the cause is only in the thread's title",
}
# A server that was up and whose engine then died while serving (the family the records call
# `other:engine-dead-at-serving`): the server no longer serves, so `failed`. Each excerpt shows it
# was up: `Added request ...` (vllm-10024, vllm-13252), uvicorn's access lines (vllm-pr9818),
# errors logged by the request handler serving_chat.py (gaudi-2134), V1's EngineDeadError, which
# only an engine that was running raises, in Ray Serve's request handler (ray-53267, a replica
# that was up, its record says). None of them holds the engine's own error, as their records
# say: no root cause, and `engine-dead-at-serving` (test below).
DEAD_WHILE_SERVING = sorted(
    r
    for r, record in FIT.items()
    if record["diagnosis"] == "other:engine-dead-at-serving" and record["root_cause"] is None
)
_SPACES = re.compile(r"\s+")


def excerpt(record_id: str) -> str:
    path = CORPUS / "logs" / str(FIT[record_id]["file"])
    return path.read_text(encoding="utf-8", errors="replace")


def lines_of(record_id: str, *numbers: int) -> list[str]:
    """Whole lines of a fit excerpt, by their 0-based numbers."""
    text = excerpt(record_id).splitlines()
    return [text[n] for n in numbers]


def same_line(ours: str | None, theirs: str | None) -> bool:
    """The record quotes the whole log line; ours is the error without its prefix."""
    if theirs is None or ours is None:
        return ours is theirs
    a, b = _SPACES.sub(" ", ours).strip(), _SPACES.sub(" ", theirs).strip()
    # A short line (`Killed`) counts only whole: a part of 10 characters or more is enough.
    return a == b or (len(a) >= 10 and (a in b or b in a))


def test_the_fit_part_is_there() -> None:
    assert len(FIT) >= 30
    assert {record["status"] for record in FIT.values()} == {
        "ready",
        "failed",
        "starting",
        "not-vllm",
    }
    assert set(CANNOT) <= set(FIT)


@pytest.mark.parametrize("record_id", sorted(set(FIT) - set(CANNOT)))
def test_fit_record(record_id: str) -> None:
    record = FIT[record_id]
    text = excerpt(record_id)
    if record["status"] == "not-vllm":
        with pytest.raises(NotAVllmLog):
            diagnose(text)
        return
    report = diagnose(text)
    assert report.status == record["status"], report.to_json()
    if record["status"] != "failed":
        return
    assert same_line(report.root_cause, record["root_cause"]), report.root_cause
    wanted = record["diagnosis"]
    if wanted and wanted.startswith("other:"):
        wanted = wanted.removeprefix("other:")
        wanted = wanted if wanted in DIAGNOSIS_IDS else None
    if wanted:
        assert wanted in [d.id for d in report.diagnoses], report.to_json()


def test_the_records_that_cannot_pass_still_say_what_the_excerpt_shows() -> None:
    report = diagnose(excerpt("vllm-23176-engine-init-shell"))
    assert report.status == "failed"
    assert [(d.id, d.evidence[:40]) for d in report.diagnoses] == [
        ("engine-init-failed", "RuntimeError: Engine core initialization")
    ]
    report = diagnose(excerpt("runpod-276-docker-ts-workerproc"))
    assert (report.status, report.root_cause) == ("failed", None)
    assert [(d.id, d.evidence[:40]) for d in report.diagnoses] == [
        ("engine-init-failed", "Exception: WorkerProc initialization fai")
    ]
    text = excerpt("kserve-5056-engine-init-wrapper")
    assert "asyncio.exceptions.CancelledError" in text  # uvicorn's lifespan, cancelled
    report = diagnose(text)
    assert (report.status, report.root_cause) == ("failed", None)
    assert [d.id for d in report.diagnoses] == ["engine-init-failed"]
    with pytest.raises(NotAVllmLog):
        diagnose(excerpt("kserve-3769-div-zero"))


@pytest.mark.parametrize("record_id", DEAD_WHILE_SERVING)
def test_an_engine_that_died_while_serving_is_failed_with_the_death_noted(record_id: str) -> None:
    report = diagnose(excerpt(record_id))
    assert (report.status, report.root_cause) == ("failed", None)
    (found,) = report.diagnoses
    assert found.id == "engine-dead-at-serving"
    assert vllm_log.engine_died(vllm_log.parse_line(found.evidence))
    assert FIT[record_id]["diagnosis"] == "other:engine-dead-at-serving"


# --- ready, from the log's own sequence -------------------------------------------------------


def test_the_route_list_alone_is_ready_through_a_k9s_pane() -> None:
    # gaie-550: copied from k9s, every line boxed in `│ ... │` and padded to the pane's width.
    routes = lines_of("gaie-550-k9s-routes", 0, 1)
    assert routes[0].startswith("│ INFO 03-21") and routes[0].endswith("│")
    line = vllm_log.read_lines(routes[0])[0]
    assert (line.level, line.text) == ("INFO", "Route: /v1/models, Methods: GET")
    assert diagnose("\n".join(routes)).status == "ready"


@pytest.mark.parametrize(
    "record_id", ["vllm-43295-mtp-throughput", "vllm-12314-v0-metrics"], ids=["v1", "v0"]
)
def test_the_periodic_stats_are_ready(record_id: str) -> None:
    (stats,) = lines_of(record_id, 0)
    assert "Avg prompt throughput" in stats
    assert diagnose(stats).status == "ready"


def test_uvicorn_started_after_a_route_is_ready() -> None:
    # vllm-8791: the route list, then uvicorn's own line, before anything else.
    text = "\n".join(lines_of("vllm-8791-pp-bind-after-startup", 10, 11))
    assert text.endswith("INFO:     Started server process [593]")
    assert diagnose(text).status == "ready"


def test_a_port_that_fails_to_bind_after_startup_complete_is_failed() -> None:
    # vllm-8791 (0.6.x, pipeline parallel): uvicorn binds after its startup; the server never
    # served.
    report = diagnose(excerpt("vllm-8791-pp-bind-after-startup"))
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("[Errno 98] error while attempting to bind on address")
    assert report.diagnoses[0].id == "port-in-use"
    assert "`ss -ltnp | grep :8000`" in report.diagnoses[0].fix.text()
    # Cut before the bind error, the same lines are ready.
    assert diagnose("\n".join(lines_of("vllm-8791-pp-bind-after-startup", 10, 13))).status == (
        "ready"
    )


def test_a_request_traceback_after_ready_keeps_it_ready_whatever_the_prefix() -> None:
    # The ragflow-11166 route list, then uvicorn's error for one request (its own words).
    ready = lines_of("ragflow-11166-font-tags-routes", 0, 1, 2)
    request = [
        "ERROR:    Exception in ASGI application",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/site-packages/uvicorn/protocols/http/h11_impl.py", '
        "line 403, in run_asgi",
        "    result = await app(  # type: ignore[func-returns-value]",
        "ValueError: This model's maximum context length is 4096 tokens.",
    ]
    for prefix in ("", "2025-11-11T12:22:05.123456789Z ", "Nov 11 12:22:05 gpu1 vllm[128291]: "):
        report = diagnose("\n".join(prefix + line for line in [*ready, *request]))
        assert (report.status, report.root_cause, report.diagnoses) == ("ready", None, ())


# --- what platforms put around vLLM's lines -------------------------------------------------


def test_terminal_escapes_spelled_out_in_caret_notation() -> None:
    # vllmgaudi-pr192: `^[[1;36m(Worker_TP6 pid=142964)^[[0;0m ERROR ...^M`, as `cat -v` shows.
    cut = lines_of("vllmgaudi-pr192-caret-escapes-warmup", 0, 1, 2)
    assert cut[0].startswith("^[[1;36m(Worker_TP6") and cut[0].endswith("^M")
    line = vllm_log.parse_line(cut[0])
    assert (line.level, line.text) == ("ERROR", "    self.compile_or_warm_up_model()")
    report = diagnose("\n".join(cut))  # a worker's traceback, cut before its exception
    assert (report.status, report.root_cause) == ("failed", None)
    assert [d.id for d in report.diagnoses] == ["engine-init-failed"]


def test_a_cloudwatch_csv_export_with_octal_escapes() -> None:
    # sagemaker-111: `<epoch ms>,<message>`, CSV-quoted when the message holds a comma or a
    # quote (inner quotes doubled), ESC and CR written `#033` and `#015` by syslog.
    cut = lines_of("sagemaker-111-cloudwatch-csv-escapes", 1, 2)
    assert cut[1].startswith('1756144012376,"#033[1;36m(EngineCore_0 pid=75)')
    lines = vllm_log.read_lines("\n".join(cut))
    assert [(line.level, line.text.strip()) for line in lines] == [
        ("ERROR", "^" * 31),
        (
            "ERROR",
            'File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 492, '
            "in __init__",
        ),
    ]
    assert diagnose(excerpt("sagemaker-111-cloudwatch-csv-escapes")).status == "failed"


@pytest.mark.parametrize(
    ("record_id", "numbers"),
    [
        ("verlpipeline-5-ray-repeated-suffix", (0, 1, 2)),  # V1 engine core, Ray's suffix
        ("vllm-17327-compose-qwen3-capture-fail", (2, 3, 4, 5)),  # V1 worker, compose prefix
        ("openrlhf-336-ray-docker-ts-kv-small", (1, 2, 3, 4)),  # V0 worker, docker -t + Ray
    ],
)
def test_a_line_that_heads_a_traceback_is_not_its_root_cause(
    record_id: str, numbers: tuple[int, ...]
) -> None:
    # `logger.exception("WorkerProc hit an exception.")` and the like: the exception that
    # explains them is the traceback's last line, which these excerpts do not reach.
    cut = lines_of(record_id, *numbers)
    assert vllm_log.is_wrapper(vllm_log.parse_line(cut[0]).text)
    report = diagnose("\n".join(cut))
    assert (report.status, report.root_cause) == ("failed", None)


def test_the_end_of_v0s_request_loop_is_failed_with_its_error() -> None:
    # dify-plugins-599: V0's AsyncLLMEngine starts its loop at the first request, so only a
    # serving engine reports the loop's end (`_log_task_completion`); the loop is dead, the server
    # serves no more, and the OOM before it is the engine's own error.
    oom, callback, *_ = lines_of("dify-plugins-599-xinference-v0-oom-serving", 0, 1, 2, 3)
    assert vllm_log.served(vllm_log.parse_line(callback))
    report = diagnose(excerpt("dify-plugins-599-xinference-v0-oom-serving"))
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert [d.id for d in report.diagnoses] == ["out-of-memory", "engine-dead-at-serving"]
    assert report.diagnoses[1].evidence.startswith("Exception in callback _log_task_completion")
    alone = diagnose(oom)  # the error alone does not say it served
    assert alone.status == "failed"
    assert [d.id for d in alone.diagnoses] == ["out-of-memory"]


# --- crash loops ------------------------------------------------------------------------------


def test_a_restart_after_a_failed_run_is_a_crash_loop() -> None:
    # vllm-7514: the port is taken, a wrapper script restarts vLLM, and the excerpt ends at the
    # new run's banner.
    report = diagnose(excerpt("vllm-7514-port-crash-loop"))
    assert (report.status, report.root_cause) == (
        "failed",
        "OSError: [Errno 98] Address already in use",
    )
    assert report.diagnoses[0].id == "port-in-use"
    assert report.reported.vllm_version == "0.6.1.dev238+ge2c6e0a82"


def test_an_argparse_crash_loop_cut_in_the_next_usage_is_failed() -> None:
    # unsloth-pr2811's refusal, repeated by a restarting container; the paste ends inside the
    # next run's usage text.
    (refusal,) = lines_of("unsloth-pr2811-dtype-invalid-choice", 0)
    usage = "usage: vllm serve [model_tag] [options]"
    report = diagnose("\n".join([usage, refusal, usage, refusal, usage]))
    assert report.status == "failed"
    assert report.root_cause == refusal
    assert report.diagnoses[0].id == "invalid-value"


def test_a_restart_that_got_further_than_the_failed_run_is_starting() -> None:
    failed = excerpt("vllm-7514-port-crash-loop")
    loading = lines_of("vllm-15598-ray-repeated-starting", 0)  # capturing CUDA graphs
    assert vllm_log.furthest_phase(vllm_log.read_lines(loading[0])) >= 0
    assert diagnose(failed + "\n".join(loading)).status == "starting"


# --- the root cause -----------------------------------------------------------------------------


def test_a_root_cause_is_never_a_source_line_of_an_unindented_traceback() -> None:
    # club3090-60 pasted outside a code block: Markdown drops every line's indentation.
    flat = [
        re.sub(r"(\[core\.py:1136\]|\(EngineCore pid=77\)) +", r"\1 ", line)
        for line in excerpt("club3090-60-marlin-repack-oom").splitlines()
    ]
    assert "[core.py:1136] return torch.ops._C.gptq_marlin_repack(" in flat[1]
    report = diagnose("\n".join(flat))
    assert report.root_cause == "RuntimeError: CUDA driver error: out of memory"
    cut = diagnose("\n".join(flat[:6]))  # the paste stops before the error
    assert cut.status == "failed"
    assert cut.root_cause is None


def test_cuda_driver_out_of_memory_while_repacking() -> None:
    report = diagnose(excerpt("club3090-60-marlin-repack-oom"))
    assert report.diagnoses[0].id == "out-of-memory"
    assert report.diagnoses[0].title.key == "out-of-memory:repacking.title"


def test_the_question_an_unanswerable_prompt_asked_is_the_root_cause() -> None:
    # runpod-43: transformers asks on stdin whether to run the repo's code; the container has no
    # stdin, so `input()` raises EOFError. The docker timestamp alone on a line is dropped too.
    report = diagnose(excerpt("runpod-43-trust-remote-eof"))
    assert report.root_cause is not None
    assert report.root_cause.startswith("The repository for TheBloke/Nous-Capybara-34B-AWQ")
    assert report.diagnoses[0].id == "trust-remote-code-required"
    assert vllm_log.parse_line("2024-02-08T08:40:56.161730573Z").text == ""


@pytest.mark.parametrize(
    ("record_id", "diagnosis"),
    [
        ("longvt-9-max-model-len-value-error", "model-len-exceeds-model"),
        ("vllm-pr52535-heads-tp3", "tp-heads-indivisible"),
    ],
)
def test_pydantics_value_error_line_quoted_alone_is_a_failed_start(
    record_id: str, diagnosis: str
) -> None:
    report = diagnose(excerpt(record_id))
    assert report.status == "failed"
    assert report.root_cause is not None and report.root_cause.startswith("Value error, ")
    assert "[type=value_error" not in report.root_cause
    assert report.diagnoses[0].id == diagnosis


def test_a_process_the_kernel_killed() -> None:
    # jetson-795: the KV cache sized, then the shell's `Killed` (SIGKILL, no traceback).
    report = diagnose("\n".join(lines_of("jetson-795-orin-nx-killed", 4, 5, 6)))
    assert (report.status, report.root_cause) == ("failed", "Killed")
    assert [d.id for d in report.diagnoses] == ["process-killed"]
    assert "dmesg" in report.diagnoses[0].fix.text()
    # Without the kill, the same lines are a start still under way.
    assert diagnose("\n".join(lines_of("jetson-795-orin-nx-killed", 4, 5))).status == "starting"
    # Killed while serving (vllm-12314's stats line first): the server is gone, so failed.
    served = diagnose("\n".join([*lines_of("vllm-12314-v0-metrics", 0), "Killed"]))
    assert (served.status, served.root_cause) == ("failed", "Killed")
    assert [d.id for d in served.diagnoses] == ["process-killed", "engine-dead-at-serving"]


def test_a_cut_traceback_is_diagnosed_by_the_check_it_stopped_in() -> None:
    # qanything-128 (FastChat's worker, in compose): the traceback ends in vLLM's bfloat16 check.
    report = diagnose(excerpt("qanything-128-compose-fastchat-bf16"))
    assert (report.status, report.root_cause) == ("failed", None)
    assert [d.id for d in report.diagnoses] == ["dtype-unsupported-gpu"]
    assert report.diagnoses[0].title.text() == (
        "bfloat16 needs compute capability 8.0; this GPU has less"
    )
    assert report.diagnoses[0].evidence.endswith("in _check_if_gpu_supports_dtype")
    # Cut one frame higher (`init_model`), the traceback does not say which check failed.
    higher = diagnose("\n".join(lines_of("qanything-128-compose-fastchat-bf16", *range(2, 6))))
    assert [d.id for d in higher.diagnoses] == ["engine-init-failed"]


def test_a_v0_worker_that_stopped_setting_up_378_blocks() -> None:
    # openrlhf-336: `Error executing method initialize_cache`, whose first step checks that one
    # request of max-model-len fits in the blocks profiling found (378 x 16 tokens).
    report = diagnose(excerpt("openrlhf-336-ray-docker-ts-kv-small"))
    assert (report.status, report.root_cause) == ("failed", None)
    (found,) = report.diagnoses
    assert (found.id, found.title.key) == ("kv-cache-too-small", "kv-cache-too-small:blocks.title")
    assert found.title.text().startswith("The KV cache holds 6048 tokens (378 blocks)")
    assert "--max-model-len 6048 or less" in found.fix.text()
    # Without the block count there is nothing to say about its size.
    cut = diagnose("\n".join(lines_of("openrlhf-336-ray-docker-ts-kv-small", 1, 2, 3, 4)))
    assert [d.id for d in cut.diagnoses] == ["engine-init-failed"]


# --- not a vLLM log -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "record_id",
    [
        "sglang-pr14644-gated-not-vllm",  # a bare transformers traceback from an SGLang test
        "sglang-3460-nccl-not-vllm",  # SGLang's own `[date TP2]` lines
        "nextcloud-llm2-62-uvicorn-not-vllm",  # another uvicorn app, with "startup complete"
    ],
)
def test_another_programs_log_is_refused(record_id: str) -> None:
    with pytest.raises(NotAVllmLog) as refused:
        diagnose(excerpt(record_id))
    assert refused.value.message.startswith("this is not a vLLM log")
    assert refused.value.hint is not None and "docker logs" in refused.value.hint


def test_random_bytes_are_not_a_vllm_log_and_empty_is_starting() -> None:
    noise = bytes(range(256)).decode("utf-8", errors="replace") * 4
    with pytest.raises(NotAVllmLog):
        diagnose(noise)
    assert diagnose("").status == "starting"
    assert diagnose("\n  \n").status == "starting"


def test_a_process_servetune_started_is_judged_whatever_it_printed() -> None:
    report = diagnose(excerpt("sglang-pr14644-gated-not-vllm"), vllm_output=True)
    assert report.status == "failed"
    assert report.diagnoses[0].id == "model-access-denied"


@pytest.mark.parametrize(
    "line",
    [
        lines_of("vllm-12314-v0-metrics", 0)[0],  # vLLM's logger prefix, 0.4-0.7
        lines_of("gaie-550-k9s-routes", 0)[0],  # 0.8+, in a k9s pane
        lines_of("club3090-60-marlin-repack-oom", 7)[0],  # a process tag alone
        lines_of("gfx906-12-mi50-hip-oom", 3)[0],  # the `vllm` program in a traceback
        lines_of("runpod-43-trust-remote-eof", 0)[0],  # a wrapper's "vLLM config: {...}"
        lines_of("unsloth-pr2811-dtype-invalid-choice", 0)[0],  # argparse with vLLM's program
    ],
)
def test_lines_that_show_vllm(line: str) -> None:
    assert vllm_log.shows_vllm(line), line


@pytest.mark.parametrize(
    "line",
    [
        *lines_of("sglang-3460-nccl-not-vllm", 0, 2),
        *lines_of("nextcloud-llm2-62-uvicorn-not-vllm", 6, 7),
        *lines_of("sglang-pr14644-gated-not-vllm", 10, 14),
        *lines_of("gfx906-12-mi50-hip-oom", 0, 1),  # torch's lines, in a vLLM log or not
        # TGI's launcher (Rust `tracing`, behind `docker logs -t`): no fit record holds one yet.
        "2024-07-09T14:52:44.123456Z  INFO text_generation_launcher: Starting download process.",
    ],
)
def test_lines_that_do_not(line: str) -> None:
    assert not vllm_log.shows_vllm(line), line


def test_the_cli_exits_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from servetune.cli.main import main

    path = tmp_path / "server.log"
    path.write_bytes(excerpt("sglang-3460-nccl-not-vllm").encode())
    assert main(["doctor", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: this is not a vLLM log")
    assert "hint: give doctor the vLLM server's own output" in err
    path.write_bytes(bytes(range(256)) * 8)
    assert main(["doctor", str(path), "--format", "json"]) == 2


# --- other devices, other frameworks around vLLM -------------------------------------------------


def test_an_npu_out_of_memory_is_out_of_memory() -> None:
    # ascend-19 (vllm-ascend, V0): torch_npu's allocator says `NPU out of memory`, worker and
    # engine alike.
    report = diagnose("\n".join(lines_of("ascend-19-v0-npu-oom", 0, 1, 2)))
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("RuntimeError: NPU out of memory. Tried to allocate")
    assert [d.id for d in report.diagnoses] == ["out-of-memory"]


def test_vllms_sleep_mode_allocator_out_of_memory_among_a_trainers_lines() -> None:
    # lmmr1-43 (OpenRLHF's LLMRayActor): vLLM's cumem allocator prints `CUDA Error: ... at
    # csrc/cumem_allocator.cpp` to stderr, between the trainer's progress bars; the driver's
    # traceback after it is cut.
    (oom,) = lines_of("lmmr1-43-llmrayactor-cumem-oom", 4)
    assert vllm_log.parse_line(oom).text.startswith("CUDA Error: out of memory at /workspace/")
    report = diagnose(excerpt("lmmr1-43-llmrayactor-cumem-oom"))  # a vLLM log by that line
    assert (report.status, report.root_cause) == ("failed", vllm_log.parse_line(oom).text)
    (found,) = report.diagnoses
    assert (found.id, found.title.key) == ("out-of-memory", "out-of-memory:sleep-mode.title")


def test_a_traceback_cut_in_wake_up_is_sleep_mode_out_of_memory() -> None:
    # verl-302 (verl's WorkerDict, behind Ray's `(main_task pid=..)`): the rollout engine's
    # `LLM.wake_up`, cut before its error; wake_up maps back the memory sleep released.
    report = diagnose(excerpt("verl-302-workerdict-wake-up"))
    assert (report.status, report.root_cause) == ("failed", None)
    (found,) = report.diagnoses
    assert (found.id, found.title.key) == ("out-of-memory", "out-of-memory:sleep-mode.title")
    assert found.evidence.endswith('vllm/entrypoints/llm.py", line 1244, in wake_up')
    # One frame higher (verl's own __enter__), nothing says what failed.
    higher = diagnose(
        "\n".join(lines_of("verl-302-workerdict-wake-up", *range(1, 10))), vllm_output=True
    )
    assert [d.id for d in higher.diagnoses] == ["engine-init-failed"]


def test_no_gpu_blocks_is_the_cause_before_a_fastchat_traceback() -> None:
    # qanything-302: V0 logs `# GPU blocks: 0` and then always refuses to start; the traceback
    # comes through FastChat's `| ERROR | stderr |` prefix and is cut.
    blocks, _, traceback = lines_of("qanything-302-fastchat-gpu-blocks-0", 1, 0, 2)
    report = diagnose("\n".join([blocks, traceback]))
    assert (report.status, report.root_cause) == ("failed", "# GPU blocks: 0, # CPU blocks: 256")
    (found,) = report.diagnoses
    assert (found.id, found.title.key) == ("kv-cache-too-small", "kv-cache-too-small:none.title")


def test_oneccl_lines_have_their_own_level() -> None:
    # xpu-pr14612 (Intel GPU): oneCCL's `|CCL_WARN|` and `|CCL_ERROR|` before vLLM's worker error.
    warn, error, worker = lines_of("xpu-pr14612-ccl-warn-fd", 0, 6, 8)
    assert vllm_log.parse_line(warn).level == "WARNING"
    line = vllm_log.parse_line(error)
    assert (line.level, line.text) == (
        "ERROR",
        "ze_fd_manager.cpp:214 fill_device_fds: condition fds[dev_idx] > 0 failed",
    )
    report = diagnose("\n".join([warn, error, worker]))
    assert (report.status, report.root_cause) == ("failed", line.text)


def test_a_request_handlers_error_is_ready() -> None:
    # vllm-20409: serving_chat.py logs the prompt it refused (too long); only a server that is
    # up handles a request.
    cut = lines_of("vllm-20409-preprocess-context-length", 0, 1, 2, 3)
    line = vllm_log.parse_line(cut[0])
    assert (line.source, vllm_log.answered(line)) == ("serving_chat.py", True)
    report = diagnose("\n".join(cut))
    assert (report.status, report.root_cause, report.diagnoses) == ("ready", None, ())


def test_a_prefix_of_the_users_own_before_vllms_lines() -> None:
    # vllm-pr9818: every line behind `[VllmSidecar <id>]: <time> 1 stdout: `.
    dead, access = (
        vllm_log.parse_line(raw) for raw in lines_of("vllm-pr9818-sidecar-prefix-engine-dead", 0, 1)
    )
    assert (dead.level, dead.source, dead.text) == (
        "CRITICAL",
        "launcher.py",
        "MQLLMEngine is already dead, terminating server process",
    )
    assert access.level == "INFO" and vllm_log.answered(access)
    assert vllm_log.served(dead) and vllm_log.is_wrapper(dead.text)


def test_a_v0_worker_lines_that_head_a_traceback_are_not_its_cause() -> None:
    # vllm-13252: the access line and the launcher's CRITICAL run together as pasted, then the
    # worker's `logger.exception` header, whose traceback the excerpt cuts.
    added, glued, worker = lines_of("vllm-13252-v072-request-oom-engine-dead", 0, 1, 2)
    assert vllm_log.answered(vllm_log.parse_line(added))
    assert vllm_log.parse_line(glued).level == "CRITICAL"
    assert vllm_log.is_wrapper(vllm_log.parse_line(worker).text)
    assert diagnose("\n".join([added, glued, worker])).root_cause is None


# --- families the held-out part showed, tested on fit lines and vLLM's own strings ---------------

# vllm/platforms/__init__.py (0.7 on), logged when vLLM is only imported.
PLATFORM_LINE = "INFO 02-09 21:22:50 __init__.py:190] Automatically detected platform cuda."


def test_vllms_import_lines_in_another_frameworks_log_are_not_a_vllm_log() -> None:
    # SGLang 0.4 imports vLLM's layers: its log carries vLLM's platform line, and nothing else of
    # vLLM's (sglang-3460's own `[date TP2]` lines after it).
    text = "\n".join([PLATFORM_LINE, *lines_of("sglang-3460-nccl-not-vllm", 0, 1, 2)])
    assert not vllm_log.shows_vllm(PLATFORM_LINE)
    with pytest.raises(NotAVllmLog):
        diagnose(text)
    # Beside a line of vLLM's server, the same line is part of a vLLM log.
    (stats,) = lines_of("vllm-12314-v0-metrics", 0)
    assert diagnose("\n".join([PLATFORM_LINE, stats])).status == "ready"


@pytest.mark.parametrize(
    "line",
    [
        # A project's Ray actor around vLLM's own messages without its logger (weight_utils.py's
        # progress bar, LLM.generate's), as OpenRLHF's LLMRayActor prints them.
        "(LLMRayActor pid=20770) Loading safetensors checkpoint shards: 100% Completed | 4/4",
        "(LLMRayActor pid=20770) Processed prompts: 100%|██████████| 8/8 [00:02<00:00,  3.1it/s]",
        "llm-1  | INFO 06-28 06:11:45 model_runner.py:160] Loading model weights took 14.99 GB",
    ],
)
def test_vllms_own_messages_behind_a_wrapping_projects_prefix_show_vllm(line: str) -> None:
    assert vllm_log.shows_vllm(line), line


def test_a_prefix_learned_from_vllms_lines_is_removed_from_its_raw_lines() -> None:
    # vllm-pr9818's sidecar prefix (`[VllmSidecar <id>]: <time> 1 stdout: `) on a start that
    # failed: vLLM's logger lines show the prefix, the traceback behind it is read as raw stderr.
    (first,) = lines_of("vllm-pr9818-sidecar-prefix-engine-dead", 0)
    prefix = first[: first.index("CRITICAL")]
    error = (
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine."
    )
    body = [
        "INFO 11-12 19:15:00 llm_engine.py:275] # GPU blocks: 0, # CPU blocks: 2048",
        "ERROR 11-12 19:15:01 engine.py:366] No available memory for the cache blocks.",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/worker/worker.py", line 1, in x',
        error,
    ]
    stderr = prefix.replace("1 stdout", "2 stderr")
    text = "\n".join(
        (prefix if line.startswith(("INFO", "ERROR")) else stderr) + line for line in body
    )
    report = diagnose(text)
    assert (report.status, report.root_cause) == ("failed", error)
    assert report.diagnoses[0].id == "kv-cache-too-small"


def test_uvicorns_shutdown_after_sigint_is_ready() -> None:
    # uvicorn's `Server._serve` logs its shutdown only after a startup that completed; vLLM's
    # serve_http logs "Shutting down FastAPI HTTP server." when a signal cancels it. The terminal
    # echoes Ctrl-C as `^C`, glued to the next line.
    text = "\n".join(
        [
            "^CINFO 04-01 10:00:00 launcher.py:57] Shutting down FastAPI HTTP server.",
            "INFO:     Shutting down",
            "INFO:     Waiting for application shutdown.",
            "INFO:     Application shutdown complete.",
        ]
    )
    report = diagnose(text)
    assert (report.status, report.root_cause, report.diagnoses) == ("ready", None, ())


def test_an_out_of_memory_is_fatal_whatever_other_workers_log_after_it() -> None:
    # ascend-19's NPU OOM, then another worker's progress (Ray and multiproc interleave them).
    oom = lines_of("ascend-19-v0-npu-oom", 0)[0]
    later = (
        "(VllmWorkerProcess pid=20494) INFO 03-05 07:15:40 model_runner.py:1099] Starting to "
        "load model /models/Qwen2.5-72B-Instruct..."
    )
    assert vllm_log.is_progress(vllm_log.parse_line(later))
    report = diagnose("\n".join([oom, later]))
    assert report.status == "failed"
    assert report.root_cause is not None and "NPU out of memory" in report.root_cause
    assert [d.id for d in report.diagnoses] == ["out-of-memory"]


def test_torch_npus_error_code_line_is_not_the_root_cause() -> None:
    # torch_npu follows the exception with its error code (`[ERROR] <time> (PID:n, Device:n,
    # RankID:n) ERR99999 UNKNOWN application exception`): the exception is the cause.
    oom = lines_of("ascend-19-v0-npu-oom", 0)[0]
    code = oom[: oom.index("RuntimeError")] + (
        "[ERROR] 2025-03-05-07:15:39 (PID:20493, Device:6, RankID:-1) ERR99999 UNKNOWN "
        "application exception"
    )
    assert vllm_log.is_wrapper(vllm_log.parse_line(code).text)
    report = diagnose("\n".join([oom, code]))
    assert report.root_cause is not None
    assert report.root_cause.startswith("RuntimeError: NPU out of memory.")
    alone = diagnose(code)  # the code line alone says no more than "see above"
    assert alone.root_cause is None


def test_nccls_unhandled_cuda_error_that_was_out_of_memory() -> None:
    # torch's DistBackendError carries NCCL's last error: `Cuda failure 2 'out of memory'`.
    worker = "(VllmWorkerProcess pid=3) ERROR 10-02 08:00:00 multiproc_worker_utils.py:233] "
    lines = [
        "Exception in worker VllmWorkerProcess while processing method init_device.",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL "
        "version 2.20.5",
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "Last error:",
        "Cuda failure 2 'out of memory'",
    ]
    report = diagnose("\n".join(worker + line for line in lines))
    assert report.status == "failed"
    assert [d.id for d in report.diagnoses] == ["out-of-memory"]


def test_v0s_engine_iteration_timeout_after_a_request_is_the_engine_dead() -> None:
    # async_llm_engine.py run_engine_loop (0.4-0.10): the loop runs only for requests; on the
    # timeout it marks the engine errored, and every request since fails.
    (stats,) = lines_of("vllm-12314-v0-metrics", 0)
    text = "\n".join(
        [
            stats,
            "ERROR 05-10 10:01:00 async_llm_engine.py:656] Engine iteration timed out. This "
            "should never happen!",
            "asyncio.exceptions.TimeoutError",
        ]
    )
    report = diagnose(text)
    assert report.status == "failed"
    (found,) = report.diagnoses
    assert found.id == "engine-dead-at-serving"
    assert "VLLM_ENGINE_ITERATION_TIMEOUT_S" in found.why.text()
    assert "VLLM_ENGINE_ITERATION_TIMEOUT_S" in found.why.text("zh-TW")
    # The timeout alone says the engine served: only a request starts V0's loop.
    assert vllm_log.served(vllm_log.parse_line(text.splitlines()[1]))


def test_free_memory_on_device_when_weights_are_held_outside() -> None:
    # vllm/v1/worker/utils.py (0.32): the budget after external weights, in its own words.
    line = (
        "(EngineCore_DP0 pid=6940) ValueError: Free memory on device cuda:0 (10.5/79.19 GiB) on "
        "startup is less than the engine's budget after excluding external process's weights "
        "(0.9, 51.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
        "processes."
    )
    report = diagnose(line)
    assert report.status == "failed"
    assert report.diagnoses[0].id == "gpu-memory-busy"


def test_a_log_indented_as_a_whole_and_a_ci_tput_reset() -> None:
    # A paste inside a Markdown list indents every line; `tput sgr0` writes `ESC ( B`.
    raws = [line for line in excerpt("pytorch-175666-ci-free-memory").splitlines() if line]
    free = next(line for line in raws if "ValueError: Free memory" in line)
    report = diagnose("\n".join("    " + raw + "^[(B^[[m" for raw in [raws[0], free]))
    assert report.status == "failed"
    assert report.diagnoses[0].id == "gpu-memory-busy"


@pytest.mark.parametrize("escape", ["ESC[", "\u241b[", "\\033[", "\\x1b[", "\\u001b[", "\\e["])
def test_colour_codes_spelled_as_ci_viewers_and_source_text_write_them(escape: str) -> None:
    # pytorch-175666's line with vLLM's colours around its process tag, ESC written out as a CI
    # log viewer shows it (`ESC[0m`) or as a string escape (`\033[0m`).
    free = next(
        line
        for line in excerpt("pytorch-175666-ci-free-memory").splitlines()
        if "ValueError: Free memory" in line
    )
    tag = "(EngineCore_DP0 pid=6940) "
    coloured = free.replace(tag, f"{escape}1;36m{tag.strip()}{escape}0;0m ") + f"{escape}0m"
    report = diagnose(coloured)
    assert report.status == "failed"
    assert report.root_cause is not None and report.root_cause.startswith("ValueError: Free")
    assert report.root_cause.endswith("other processes.")
    assert report.diagnoses[0].id == "gpu-memory-busy"


def test_v0s_kv_cache_message_cut_before_its_number() -> None:
    # qanything-302's fastchat worker: vLLM's refusal behind `| ERROR | stderr | `, the paste cut
    # inside the message; the words that say it are there.
    prefix = lines_of("qanything-302-fastchat-gpu-blocks-0", 2)[0].split("Traceback")[0]
    cut = (
        "ValueError: The model's max seq len (8192) is larger than the maximum number of tokens "
        "that can be stor"
    )
    report = diagnose("\n".join([prefix + "Traceback (most recent call last):", prefix + cut]))
    assert (report.status, report.root_cause) == ("failed", cut)
    assert report.diagnoses[0].id == "kv-cache-too-small"
    assert "8192 tokens" in report.diagnoses[0].title.text()


@pytest.mark.parametrize(
    "prefix",
    [
        "2024-04-27 10:13:05 | ERROR | vllm_worker.w1 | ",  # fastchat, a dotted logger name
        "2024-04-27 10:13:05.123 | ERROR    | app.main:run:12 - ",  # loguru's default format
    ],
)
def test_a_wrapping_projects_logger_before_vllms_error(prefix: str) -> None:
    gpu_blocks = lines_of("qanything-302-fastchat-gpu-blocks-0", 1)[0]
    error = (
        "ValueError: The model's max seq len (8192) is larger than the maximum number of tokens "
        "that can be stored in KV cache (5744). Try increasing `gpu_memory_utilization` or "
        "decreasing `max_model_len` when initializing the engine."
    )
    report = diagnose("\n".join([gpu_blocks, prefix + error]))
    assert (report.status, report.root_cause) == ("failed", error)
    assert report.diagnoses[0].id == "kv-cache-too-small"


# --- torch's NCCL watchdog ------------------------------------------------------------------


def test_a_watchdog_timeout_while_serving_is_failed_with_the_timeout_as_its_cause() -> None:
    # vllm-2734: V0 with Ray workers serving (the stats lines), then a worker's all-reduce hangs
    # for 30 minutes; GitHub dropped the colour codes' ESC (` [36m(RayWorkerVllm pid=5085) [0m`).
    text = excerpt("vllm-2734-ray-v0-watchdog-serving")
    assert diagnose("\n".join(lines_of("vllm-2734-ray-v0-watchdog-serving", 0, 1))).status == (
        "ready"
    )
    report = diagnose(text)
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("[Rank 4] Watchdog caught collective operation timeout")
    assert [d.id for d in report.diagnoses] == ["nccl-timeout", "engine-dead-at-serving"]
    timeout = report.diagnoses[0]
    assert "ALLREDUCE" in timeout.why.text() and "1800 s" in timeout.why.text()
    assert "1800" in timeout.why.text("zh-TW")


def test_a_watchdog_timeout_before_ready_is_the_cause_not_what_torch_says_after_it() -> None:
    # vllm-6042: the timeout, then "Timeout at NCCL work", "we are taking the entire process
    # down", "Process group watchdog thread terminated with exception: <the timeout>".
    report = diagnose(excerpt("vllm-6042-ray-gather-watchdog"))
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("[Rank 1] Watchdog caught collective operation timeout")
    assert [d.id for d in report.diagnoses] == ["nccl-timeout"]
    assert "GATHER" in report.diagnoses[0].why.text()


def test_torchs_lines_alone_are_refused_and_behind_vllms_the_first_collective_hung() -> None:
    # vllm-8978: NCCL's `Init COMPLETE`, then every rank's first all-reduce (SeqNum=1) timing
    # out, in torch 2.4's `[E1001 16:06:04.537131842 ProcessGroupNCCL.cpp:607]` prefix.
    with pytest.raises(NotAVllmLog):
        diagnose(excerpt("vllm-8978-mllama-tp4-watchdog-hang"))
    banner = lines_of("vllm-7514-port-crash-loop", 11)  # vLLM 0.6's banner, of another log
    report = diagnose(
        "\n".join([*banner, *lines_of("vllm-8978-mllama-tp4-watchdog-hang", 0, 1, 2)])
    )
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("[Rank 2] Watchdog caught collective operation timeout")
    (found,) = report.diagnoses
    assert (found.id, found.title.text()) == (
        "nccl-timeout",
        "The GPUs never completed their first collective: torch's NCCL watchdog timed it out",
    )
    assert "NCCL_P2P_DISABLE=1" in found.fix.text()


# --- a traceback cut on its `raise` ---------------------------------------------------------


def test_a_traceback_cut_on_a_raise_that_spells_its_message_is_that_error() -> None:
    # vllm-27508 (V1, Python 3.13): the paste ends on the source of check_enough_kv_cache_memory's
    # `raise ValueError("No available memory for the cache blocks. "`, before the exception line
    # that would print the same words.
    report = diagnose(excerpt("vllm-27508-gptoss120b-no-cache-blocks"))
    assert report.status == "failed"
    assert report.root_cause == 'raise ValueError("No available memory for the cache blocks. "'
    assert [(d.id, d.title.text()) for d in report.diagnoses] == [
        ("kv-cache-too-small", "No memory is left for the KV cache")
    ]
    # With the exception line, it is the cause; cut on a frame that calls on, nothing is.
    lines = excerpt("vllm-27508-gptoss120b-no-cache-blocks").splitlines()
    prefix = lines[0].split("  File")[0]
    error = (
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine."
    )
    whole = diagnose("\n".join([*lines, prefix + error]))
    assert whole.root_cause == error
    assert diagnose("\n".join(lines[:2])).root_cause is None


# --- an out of memory while serving -----------------------------------------------------------


def test_v1s_output_handler_after_an_engine_error_is_a_death_while_serving() -> None:
    # club3090-16: the engine core's OOM in a forward pass, then the API server's output handler
    # failing on the dead engine (it runs only once the engine core had started).
    report = diagnose(excerpt("club3090-16-serving-oom"))
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert [d.id for d in report.diagnoses] == ["out-of-memory", "engine-dead-at-serving"]
    assert report.diagnoses[1].evidence == "AsyncLLM output_handler failed."
    # The engine core's error alone does not say it had served.
    alone = diagnose("\n".join(lines_of("club3090-16-serving-oom", 0)))
    assert [d.id for d in alone.diagnoses] == ["out-of-memory"]


def test_an_out_of_memory_of_an_engine_that_had_served_is_not_a_startup_phase() -> None:
    # jetson-795's KV cache lines (the last startup phase: CUDA graphs next), then dify-599's OOM
    # and the end of V0's request loop; with vllm-12314's stats line between, it served.
    startup = lines_of("jetson-795-orin-nx-killed", 4, 5)
    oom, callback = lines_of("dify-plugins-599-xinference-v0-oom-serving", 0, 1)
    (stats,) = lines_of("vllm-12314-v0-metrics", 0)
    at_start = diagnose("\n".join([*startup, oom])).diagnoses[0]
    assert at_start.title.text() == "The GPU ran out of memory while capturing CUDA graphs"
    for served in ([*startup, stats, oom, callback], [oom, callback]):
        report = diagnose("\n".join(served))
        assert report.diagnoses[0].title.text() == (
            "The GPU ran out of memory while serving requests"
        )
        assert "服務請求" in report.diagnoses[0].title.text("zh-TW")
    report = diagnose(excerpt("club3090-16-serving-oom"))
    assert report.diagnoses[0].title.text() == "The GPU ran out of memory while serving requests"
