"""The one reader of vLLM's log (`servetune.vllm.log`): prefixes, wrapped lines, markers, the
line-by-line watch `serve` uses, and the numbers vLLM reports.

Prefix shapes come from real pastes (tests/data/vllm-logs/real/index.json names their sources)
and from the tools' own formats: docker compose, kubectl `--prefix` and `--timestamps`, k9s,
journald, Ray, torch, NVIDIA NIM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from servetune.launch.doctor import diagnose
from servetune.vllm import log

BODY = "ValueError: No available memory for the cache blocks."
DATA = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"


@pytest.mark.parametrize(
    ("raw", "level"),
    [
        (BODY, None),
        (f"vllm-1  | {BODY}", None),  # docker compose
        (f" vllm-1  | {BODY}", None),  # the same, pasted with a leading space
        (f"vllm_server_1  | {BODY}", None),  # docker-compose v1 names
        (f"  | {BODY}", None),  # k9s / CI log panes
        (f"[pod/vllm-7d9f8-abcde/vllm] {BODY}", None),  # kubectl logs --prefix
        (f"2025-03-10T15:07:20.123456789Z {BODY}", None),  # docker logs -t, kubectl --timestamps
        (f"  | [2025-03-10T15:07:20Z] {BODY}", None),  # CI runner
        (f"[rank0]: {BODY}", None),  # torch
        (f"(EngineCore_DP0 pid=6804) {BODY}", None),
        (f"(VllmWorker rank=1 pid=2872031) {BODY}", None),
        (f"(APIServer pid=1) {BODY}", None),
        (f"(RayWorkerWrapper pid=291, ip=10.0.0.168) {BODY}", None),
        (f"(EngineCore_0 pid=3933741) (VllmWorker TP1 pid=3933749) {BODY}", None),
        (f"(EngineCore_DP0 pid=6804) ERROR 11-30 07:40:31 [core.py:1510] {BODY}", "ERROR"),
        (f"ERROR 11-18 18:07:28 engine.py:366] {BODY}", "ERROR"),  # vLLM 0.6
        (f"vllm-1  | ERROR 11-18 18:07:28 engine.py:366] {BODY}", "ERROR"),
        (f"ERROR 07-20 23:02:05.815 ngc_injector.py:146] {BODY}", "ERROR"),  # NIM 1.0
        (f"ERROR 2025-07-21 17:31:02.415 api_server.py:12] {BODY}", "ERROR"),  # NIM, with a year
        (f"2024-10-15 12:41:27,250 [ERROR] {BODY}", "ERROR"),  # NIM's Python logging
        (f"ERROR:    {BODY}", "ERROR"),  # uvicorn
        (f"2025-02-26 11:14:54,614 ERROR worker.py:1636 -- {BODY}", "ERROR"),  # Ray
        (f"E1130 07:36:16.401000 7670 torch/x.py:53] {BODY}", "ERROR"),  # glog
        (f"[rank2]:[E1001 16:06:04.537131842 ProcessGroupNCCL.cpp:607] {BODY}", "ERROR"),  # c10
        (f"[W CUDAGraph.cpp:145] {BODY}", "WARNING"),  # c10's logger before torch 2.4
        # colour codes whose ESC a web page dropped (GitHub), and a Markdown fence's backtick
        (f" [36m(RayWorkerVllm pid=5085) [0m [E ProcessGroupNCCL.cpp:475] {BODY}", "ERROR"),
        (f"`[36m(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] {BODY}", "ERROR"),
        (f"авг 18 14:15:04 llm python3[28059]: {BODY}", None),  # journald
        (f"Aug 18 14:15:04.123456 llm vllm[28059]: {BODY}", None),  # journalctl -o short-precise
        (f"2025-08-18T14:15:04+0000 llm vllm[28059]: {BODY}", None),  # journalctl -o short-iso
        (f"2025-08-18T14:15:04.123456789Z stderr F {BODY}", None),  # a node's CRI log file
        (f"│ {BODY}{' ' * 40}│", None),  # a k9s pane, padded to its width
        (f"│ ERROR 03-21 20:19:24 [core.py:1] {BODY}   │", "ERROR"),
        (f"2024-10-14 01:39:49 | ERROR | stderr | [rank0]: {BODY}", None),  # fastchat workers
        (f"2026-06-09 14:01:52.982 [Error] (Process) {BODY}", None),  # lemonade
        (f"\x1b[32mINFO\x1b[0m 11-30 07:40:31 [x.py:1] {BODY}", "INFO"),  # colours
        (f'<font color="#2AA1B3"><b>(APIServer pid=1)</b></font> {BODY}', None),  # copied HTML
        (f"> (EngineCore_DP0 pid=1) {BODY}", None),  # quoted in an issue
        (
            f"(EngineCore_DP0 pid=12809) [Stage-0] ERROR 01-29 01:46:12 [core.py:936] {BODY}",
            "ERROR",
        ),
        (
            f"(RayWorkerWrapper pid=1) ERROR 08-27 05:12:18 w.py:382] {BODY} [repeated 6x across "
            "cluster]",
            "ERROR",
        ),
    ],
)
def test_every_prefix_is_removed(raw: str, level: str | None) -> None:
    (line,) = log.read_lines(raw)
    assert (line.text, line.level) == (BODY, level)
    if "│" not in raw:  # a pane's frame is the viewer's, read with the whole text
        assert log.parse_line(raw) == line


def test_a_timestamp_alone_on_a_line_is_an_empty_line() -> None:
    # runpod-43 (corpus): `docker logs -t` stamps the blank lines of a traceback too.
    assert log.parse_line("2024-02-08T08:40:56.161730573Z").text == ""


def test_traceback_frames_keep_their_indentation_behind_a_prefix() -> None:
    line = log.parse_line('(EngineCore_DP0 pid=1)   File "/x/core.py", line 9, in run')
    assert line.text == '  File "/x/core.py", line 9, in run'
    assert not line.loud


def test_a_number_split_over_two_lines_is_joined() -> None:
    text = (
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens "
        "that can be stored in KV cache (1\n9312). Try increasing `gpu_memory_utilization`."
    )
    (line,) = log.read_lines(text)
    assert "KV cache (19312). Try" in line.text
    report = diagnose(text)
    assert report.diagnoses[0].title.text().startswith("The KV cache holds about 19312 tokens")


def test_lines_a_terminal_cut_at_its_width_are_joined() -> None:
    width = 72
    message = (
        "(EngineCore pid=316) ValueError: To serve at least one request with the model's max seq "
        "len (100000), (4.26 GiB KV cache is needed, which is larger than the available KV cache "
        "memory (4.25 GiB). Based on the available memory, the estimated maximum model length is "
        "99840."
    )
    frame = "(EngineCore pid=316)     raise ValueError("
    wrapped = [message[i : i + width] for i in range(0, len(message), width)]
    lines = log.read_lines("\n".join([frame, *wrapped]))
    assert [line.text for line in lines][1] == message.removeprefix("(EngineCore pid=316) ")
    assert (
        diagnose("\n".join(wrapped))
        .diagnoses[0]
        .title.text()
        .startswith("The KV cache holds about 99840 tokens")
    )


def test_short_lines_are_never_joined() -> None:
    text = "Process EngineCore_0:\nTraceback (most recent call last):\nValueError: x"
    assert [line.text for line in log.read_lines(text)] == text.splitlines()


# --- markers and the watch serve uses -------------------------------------------------------

RECOVERED = [
    "(APIServer pid=7) INFO 11-30 07:40:01 [api_server.py:1885] vLLM API server version 0.33.0",
    "(EngineCore_DP0 pid=8) WARNING 11-30 07:40:04 [core.py:710] Failed to load a plugin.",
    "Traceback (most recent call last):",
    '  File "/opt/vllm/plugins/__init__.py", line 41, in load_plugins_by_group',
    "ModuleNotFoundError: No module named 'standin_kernels'",
    "(EngineCore_DP0 pid=8) INFO 11-30 07:40:06 [gpu_model_runner.py:1] Model loading took "
    "0.01 GiB and 0.2 s",
    "(APIServer pid=7) INFO 11-30 07:40:08 [api_server.py:1] Starting vLLM API server 0 on "
    "http://127.0.0.1:8000",
    "(APIServer pid=7) INFO:     Application startup complete.",
]


def watch(lines: list[str]) -> log.StartWatch:
    watcher = log.StartWatch()
    for raw in lines:
        watcher.feed(raw)
    return watcher


def test_a_recovered_traceback_is_not_fatal_while_following_nor_at_the_end() -> None:
    for end in range(1, len(RECOVERED) + 1):
        assert watch(RECOVERED[:end]).fatal is None, RECOVERED[end - 1]
    assert watch(RECOVERED).ready
    assert diagnose("\n".join(RECOVERED)).status == "ready"
    # Cut before the API server's lines, the doctor sees progress after the traceback.
    assert diagnose("\n".join(RECOVERED[:6])).status == "starting"


@pytest.mark.parametrize("end", [3, 4, 5])
def test_an_error_nothing_follows_fails_a_finished_excerpt_only(end: int) -> None:
    cut = RECOVERED[:end]  # cut at the traceback's header, in its frames, at its exception
    assert watch(cut).fatal is None  # still following: the process decides
    assert diagnose("\n".join(cut)).status == "failed"


@pytest.mark.parametrize(
    "fatal",
    [
        "(EngineCore_DP0 pid=8) ERROR 11-30 07:40:31 [core.py:710] EngineCore failed to start.",
        "RuntimeError: Engine core initialization failed. See root cause above.",
        "vllm serve: error: argument --dtype: invalid choice: 'fp16'",
        "(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [multiproc_executor.py:1] Worker proc "
        "VllmWorker-0 died unexpectedly, shutting down executor.",
        "INFO 05-01 12:00:00 multiproc_worker_utils.py:1] Killing local vLLM worker processes",
        "(RayWorkerWrapper pid=1) ERROR 08-27 05:12:18 worker_base.py:382] Error executing method "
        "init_device. This might cause deadlock in distributed execution.",
        "(VllmWorkerProcess pid=2) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226] Exception "
        "in worker VllmWorkerProcess while processing method init_device: NCCL error",
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600027 milliseconds before timing out.",
    ],
)
def test_fatal_lines_stop_the_watch_and_fail_the_doctor(fatal: str) -> None:
    lines = [*RECOVERED[:2], fatal]
    assert watch(lines).fatal is not None
    assert diagnose("\n".join(lines)).status == "failed"


def test_after_ready_nothing_is_fatal_for_the_watch() -> None:
    lines = [*RECOVERED, "(APIServer pid=7) ERROR 11-30 07:41:00 [x.py:1] EngineCore failed "
             "to start."]  # fmt: skip
    watcher = watch(lines)
    assert watcher.ready and watcher.fatal is None


def test_runs_split_at_each_banner_and_say_how_far_they_got() -> None:
    text = "\n".join(
        [
            "OSError: [Errno 98] Address already in use",  # the end of the run before
            "INFO 10-10 10:23:00 api_server.py:526] vLLM API server version 0.6.1",
            "INFO 10-10 10:23:05 model_runner.py:1] Loading weights took 3.10 GB",
            "usage: vllm serve [model_tag] [options]",
        ]
    )
    runs = log.runs(log.read_lines(text))
    assert [len(run) for run in runs] == [1, 2, 1]
    assert [log.furthest_phase(run) for run in runs] == [-1, 0, -1]
    assert log.last_run(log.read_lines(text)) == runs[-1]
    assert log.runs([]) == [[]]


def test_port_lost_is_the_bind_error_not_a_warning_about_it() -> None:
    bind = "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000)"
    assert log.port_lost(log.parse_line(bind))
    assert not log.port_lost(log.parse_line("WARNING 01-01 00:00:00 x.py:1] [Errno 98] retry"))


def test_the_source_a_traceback_quotes_is_never_fatal() -> None:
    quoted = '(APIServer pid=1)     raise RuntimeError("Engine core initialization failed. "'
    assert not log.is_fatal(log.parse_line(quoted))
    assert not watch([quoted]).fatal


def test_identical_lines_of_a_crash_loop_are_not_taken_for_a_terminal_width() -> None:
    refusal = (
        "vllm serve: error: argument --dtype: invalid choice: 'torch.bfloat16' (choose from 'auto')"
    )
    usage = "usage: vllm serve [model_tag] [options]"
    lines = log.read_lines("\n".join([refusal, usage, refusal, usage]))
    assert [line.text for line in lines] == [refusal, usage, refusal, usage]


def test_a_port_that_fails_to_bind_after_the_address_line_is_failed() -> None:
    text = "\n".join(
        [
            "INFO 12-10 10:00:00 api_server.py:1] Starting vLLM API server on http://0.0.0.0:8000",
            "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): "
            "address already in use",
        ]
    )
    assert diagnose(text).status == "failed"


@pytest.mark.parametrize("path", sorted(DATA.glob("*.log")), ids=lambda p: p.name)
def test_serve_and_doctor_agree_on_the_real_cpu_logs(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    watcher = watch(text.splitlines())
    status = diagnose(text).status
    assert watcher.fatal is None or status == "failed"
    assert not watcher.ready or status == "ready"


# --- numbers --------------------------------------------------------------------------------


def test_reported_numbers_of_every_release() -> None:
    text = "\n".join(
        [
            "(Worker_TP1 pid=2) INFO 12-10 03:24:48 [gpu_worker.py:298] Available KV cache "
            "memory: -3.86 GiB",
            "(Worker_TP0 pid=1) INFO 12-10 03:24:48 [gpu_worker.py:298] Available KV cache "
            "memory: 9.90 GiB",
            "(Worker_TP0 pid=1) INFO 08-17 22:48:22 [gpu_model_runner.py:2005] Model loading took "
            "11.0802 GiB and 3.106979 seconds",
        ]
    )
    numbers = log.reported(log.read_lines(text))
    assert numbers.available_kv_cache_gib == -3.86  # the short worker stops them all
    assert numbers.model_loading_gib == 11.0802
    v0 = log.reported(
        log.read_lines(
            "INFO 12-20 20:25:46 worker.py:241] model weights take 7.51GiB; non_torch_memory "
            "takes 0.39GiB; PyTorch activation peak memory takes 2.53GiB; the rest of the memory "
            "reserved for KV Cache is 3.76GiB.\n"
            "INFO 12-20 20:25:46 distributed_gpu_executor.py:57] # GPU blocks: 3852, # CPU "
            "blocks: 4096"
        )
    )
    assert (v0.model_loading_gib, v0.available_kv_cache_gib) == (7.51, 3.76)
    assert (v0.gpu_blocks, v0.kv_cache_tokens) == (3852, 3852 * 16)


def test_phase_labels_read_through_prefixes() -> None:
    assert log.phase("Model loading took 3.10 GiB and 2 s") == "weights loaded (3.10 GiB)"
    line = log.parse_line("vllm-1  | (EngineCore_DP0 pid=1) INFO 01-01 00:00:00 [x.py:1] GPU KV "
                          "cache size: 65,536 tokens")  # fmt: skip
    assert log.phase(line.text) == "KV cache: 65,536 tokens"


def test_json_lines_records_are_read_as_the_lines_they_stand_for() -> None:
    docker = (
        '{"log":"(EngineCore_DP0 pid=1) ERROR 11-30 07:40:31 [core.py:710] EngineCore failed to '
        'start.\\n","stream":"stdout","time":"2026-11-30T07:40:31.1Z"}\n'
        '{"log":"(EngineCore_DP0 pid=1) ERROR 11-30 07:40:31 [core.py:710] ValueError: Bfloat16 '
        "is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU "
        'has compute capability 7.5.\\n","stream":"stdout","time":"2026-11-30T07:40:31.2Z"}'
    )
    report = diagnose(docker)
    assert (report.status, report.diagnoses[0].id) == ("failed", "dtype-unsupported-gpu")
    assert report.root_cause is not None and report.root_cause.startswith("ValueError: Bfloat16")
    jsonl = (
        '{"level": "ERROR", "time": "2026-11-30 07:40:31", "message": "Model load failed", '
        '"exc_info": "Traceback (most recent call last):\\n  File \\"x.py\\", line 1, in <module>'
        "\\nValueError: Bfloat16 is only supported on GPUs with compute capability of at least "
        '8.0. Your Tesla V100-SXM2-16GB GPU has compute capability 7.0."}'
    )
    lines = log.read_lines(jsonl)
    assert (lines[0].level, lines[0].text) == ("ERROR", "Model load failed")
    assert diagnose(jsonl).diagnoses[0].title.text().endswith("Tesla V100-SXM2-16GB has 7.0")
    assert log.read_lines('{"not": "a log record"}')[0].text == '{"not": "a log record"}'


@pytest.mark.parametrize(
    "text",
    [
        "Capturing CUDA graph shapes: [1m, 2m]",  # a bracket's own word
        "shape=[4m] x [32m]",
        "tokens[12mask]",
    ],
)
def test_brackets_that_are_not_a_colour_code_stay(text: str) -> None:
    assert log.parse_line(text).text == text


def test_what_torchs_watchdog_says_after_the_timeout_is_its_consequence() -> None:
    timeout = (
        "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=158046, "
        "OpType=GATHER, NumelIn=2867200, NumelOut=0, Timeout(ms)=600000) ran for 600027 "
        "milliseconds before timing out."
    )
    assert not log.is_wrapper(timeout)
    assert log.engine_died(log.LogLine("ERROR", timeout))
    for consequence in (
        "[PG 1 Rank 1] Timeout at NCCL work: 158046, last enqueued NCCL work: 158046, last "
        "completed NCCL work: 158045.",
        "[Rank 1] To avoid data inconsistency, we are taking the entire process down.",
        f"[PG 1 Rank 1] Process group watchdog thread terminated with exception: {timeout}",
    ):
        assert log.is_wrapper(consequence), consequence
    # The watchdog thread's end with another error is that error, not a consequence.
    assert not log.is_wrapper(
        "[PG 0 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an "
        "illegal memory access was encountered"
    )


def test_v1s_output_handler_fails_only_for_an_engine_that_had_started() -> None:
    # async_llm.py (0.8-0.33) starts its output handler after the engine core's handshake.
    line = log.parse_line(
        "(APIServer pid=1) ERROR 05-01 14:39:06 [async_llm.py:699] AsyncLLM output_handler failed."
    )
    assert log.served(line) and log.engine_died(line) and log.is_wrapper(line.text)
