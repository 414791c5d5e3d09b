"""`doctor`: status, root cause, diagnoses and reported numbers from vLLM server logs.

Real logs of the vLLM 0.32 CPU build live in tests/data/vllm-logs (see its README). Messages that
only a GPU build prints are synthetic: vLLM's exact strings (../shared/reference/vllm-rules.md)
behind the prefixes vLLM really writes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from servetune import texts
from servetune.launch.doctor import DoctorReport, diagnose

DATA = Path(__file__).resolve().parents[1] / "data" / "vllm-logs"
EN = texts.table("doctor", "en")

CONTRACT_IDS = {
    "tp-exceeds-gpus",
    "tp-heads-indivisible",
    "quant-on-unquantized",
    "quant-method-mismatch",
    "quant-unsupported-gpu",
    "dtype-unsupported-gpu",
    "dtype-unsupported-model",
    "batched-tokens-below-model-len",
    "model-len-exceeds-model",
    "weights-dont-fit",
    "kv-cache-too-small",
    "unknown-flag",
    "removed-flag",
    "dash-typo",
    "out-of-memory",
    "gpu-memory-busy",
    "port-in-use",
    "model-not-found",
    "model-access-denied",
    "architecture-unsupported",
    "trust-remote-code-required",
    "nccl-error",
    "engine-init-failed",
    "process-killed",
}
# check's rule ids reused where vLLM's message is about the same cause.
EXTRA_IDS = {
    "batched-tokens-below-num-seqs",
    "gpu-memory-utilization-range",
    "bool-flag-value",
    "invalid-value",
    "missing-value",
    "quant-tp-shape",
    "gguf-arch-unsupported",
    "nccl-timeout",
}


# Diagnoses of a server that was up and then stopped serving (status `failed`): tested on fit
# records of the real corpus in test_doctor_corpus.py.
SERVING_IDS = {"engine-dead-at-serving"}


def real(name: str) -> str:
    return (DATA / f"cpu-0.32-{name}.log").read_text(encoding="utf-8")


API = "(APIServer pid=100) INFO 11-30 07:40:01 [api_server.py:1885] "
CORE = "(EngineCore_DP0 pid=123) ERROR 11-30 07:40:31 [core.py:1510] "
WORKER = "(Worker_TP1 pid=456) ERROR 11-30 07:40:30 [multiproc_executor.py:671] "


def engine_failure(*error: str, prefix: str = CORE, version: str = "0.33.0") -> str:
    """A V1 engine failure as vLLM prints it: the real error, then the API server's wrapper."""
    return "\n".join(
        [
            f"{API}vLLM API server version {version}",
            API + "non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', "
            "'port': 8000, 'model': 'meta-llama/Llama-3.1-8B-Instruct'}",
            CORE + "EngineCore failed to start.",
            prefix + "Traceback (most recent call last):",
            prefix + '  File "/usr/lib/python3.12/site-packages/vllm/v1/engine/core.py", '
            "line 699, in run_engine_core",
            prefix + "    engine_core = EngineCoreProc(*args, **kwargs)",
            *(prefix + line for line in error),
            "(EngineCore_DP0 pid=123) ERROR 11-30 07:40:33 [multiproc_executor.py:154] "
            "Worker proc VllmWorker-0 died unexpectedly, shutting down executor.",
            "Traceback (most recent call last):",
            '  File "/usr/bin/vllm", line 10, in <module>',
            "    sys.exit(main())",
            "RuntimeError: Engine core initialization failed. See root cause above. "
            "Failed core proc(s): {'EngineCore_DP0': 1}",
        ]
    )


def api_traceback(*error: str, version: str = "0.8.5.post1") -> str:
    """A config error raised in the API server process (0.6-0.11 style, no pydantic)."""
    return "\n".join(
        [
            f"INFO 05-01 12:00:00 [api_server.py:1043] vLLM API server version {version}",
            "INFO 05-01 12:00:00 [api_server.py:1044] args: Namespace(model='org/model', port=8000)",
            "Traceback (most recent call last):",
            '  File "/usr/bin/vllm", line 8, in <module>',
            "    sys.exit(main())",
            *error,
        ]
    )


def pydantic(message: str, config: str = "ModelConfig") -> str:
    return "\n".join(
        [
            f"{API}vLLM API server version 0.20.2",
            "Traceback (most recent call last):",
            '  File "/usr/bin/vllm", line 10, in <module>',
            f"pydantic_core._pydantic_core.ValidationError: 1 validation error for {config}",
            f"  Value error, {message} [type=value_error, input_value=ArgsKwargs((), "
            "{'model': ...}), input_type=ArgsKwargs]",
            "    For further information visit https://errors.pydantic.dev/2.11/v/value_error",
        ]
    )


def argparse_error(message: str) -> str:
    return "\n".join(
        [
            "usage: vllm serve [model_tag] [options]",
            f"vllm serve: error: {message}",
        ]
    )


TORCH_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 23.55 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process "
    "has 22.42 GiB memory in use. Of the allocated memory 21.80 GiB is allocated by PyTorch. If "
    "reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)

# One log per diagnosis id: (log text, id expected first, a fragment its title must contain).
CASES: dict[str, tuple[str, str]] = {
    "dash-typo": (real("endash"), "`–quantization`"),
    "removed-flag": (real("disable-log-requests"), "--disable-log-requests"),
    "unknown-flag": (
        "vllm: error: unrecognized arguments: --max-modle-len 4096",
        "did you mean `--max-model-len`?",
    ),
    "quant-on-unquantized": (real("quant-awq"), "awq"),
    "model-len-exceeds-model": (real("max-model-len"), "4096"),
    "batched-tokens-below-model-len": (real("batched-tokens"), "512"),
    "batched-tokens-below-num-seqs": (real("batched-below-seqs"), "--max-num-seqs 512"),
    "gpu-memory-utilization-range": (real("gpu-memory-utilization"), "1.5"),
    "tp-heads-indivisible": (real("tp-heads"), "4 attention heads"),
    "port-in-use": (real("port-in-use"), "Port 39437"),
    "model-not-found": (real("model-not-found"), "/work/main/.cache/no-such-model"),
    "kv-cache-too-small": (real("kv-cache-too-small"), "about 256 tokens"),
    # vLLM's GGUF loader (gguf_loader.py, 0.10+), raised in the worker that loads the model
    "gguf-arch-unsupported": (
        engine_failure(
            '  File "/usr/lib/python3.12/site-packages/vllm/model_executor/model_loader/'
            'gguf_loader.py", line 97, in _get_gguf_weights_map',
            '    raise RuntimeError(f"Unknown gguf model_type: {model_type}")',
            "RuntimeError: Unknown gguf model_type: olmo3",
            version="0.11.0",
        ),
        "architecture olmo3",
    ),
    "bool-flag-value": (
        argparse_error(
            "argument --enable-chunked-prefill/--disable-chunked-prefill: "
            "ignored explicit argument 'False'"
        ),
        "`--enable-chunked-prefill`",
    ),
    "invalid-value": (
        argparse_error(
            "argument --dtype: invalid choice: 'fp16' (choose from 'auto', 'bfloat16', 'float', "
            "'float16', 'float32', 'half')"
        ),
        "'fp16'",
    ),
    "missing-value": (argparse_error("argument --max-model-len: expected one argument"), "--max"),
    "tp-exceeds-gpus": (
        pydantic(
            "World size (8) is larger than the number of available GPUs (4) in this node. If "
            "this is intentional and you are using:\n- ray, set '--distributed-executor-backend "
            "ray'.\n- multiprocessing, set '--nnodes' appropriately.",
            "ParallelConfig",
        ),
        "needs 8 GPUs; vLLM sees 4",
    ),
    "quant-method-mismatch": (
        api_traceback(
            "ValueError: Quantization method specified in the model config (awq) does not match "
            "the quantization method specified in the `quantization` argument (gptq)."
        ),
        "quantized with awq",
    ),
    "quant-unsupported-gpu": (
        engine_failure(
            "ValueError: The quantization method fp8 is not supported for the current GPU. "
            "Minimum capability: 80. Current capability: 70."
        ),
        "needs compute capability 8.0; this GPU has 7.0",
    ),
    "dtype-unsupported-gpu": (
        engine_failure(
            "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least "
            "8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by "
            "explicitly setting the `dtype` flag in CLI, for example: --dtype=half."
        ),
        "Tesla T4 has 7.5",
    ),
    "dtype-unsupported-model": (
        pydantic(
            "The model type 'gemma2' does not support float16. Reason: Numerical instability. "
            "Please use bfloat16 or float32 instead."
        ),
        "gemma2",
    ),
    "weights-dont-fit": (
        engine_failure(
            TORCH_OOM,
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "RuntimeError: Failed to load model - not enough GPU memory. Try lowering "
            "--gpu-memory-utilization to free memory for weights, increasing "
            "--tensor-parallel-size, or using --quantization. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. "
            "(original error: CUDA out of memory. Tried to allocate 2.00 GiB.)",
        ),
        "weights do not fit",
    ),
    "out-of-memory": (engine_failure(TORCH_OOM), "ran out of memory"),
    "gpu-memory-busy": (
        engine_failure(
            "ValueError: Free memory on device cuda:0 (10.5/79.19 GiB) on startup is less than "
            "desired GPU memory utilization (0.92, 72.85 GiB). Decrease GPU memory utilization "
            "or reduce GPU memory used by other processes."
        ),
        "Only 10.5 of 79.19 GiB",
    ),
    "model-access-denied": (
        api_traceback(
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-abc)",
            "",
            "Cannot access gated repo for url "
            "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json.",
            "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted. You must have "
            "access to it and be authenticated to access it. Please log in.",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "ValueError: Invalid repository ID or local directory specified: "
            "'meta-llama/Llama-3.1-8B-Instruct'.",
            "Please verify the following requirements:",
            "1. Provide a valid Hugging Face repository ID.",
            version="0.11.0",
        ),
        "`meta-llama/Llama-3.1-8B-Instruct`",
    ),
    "architecture-unsupported": (
        api_traceback(
            "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. "
            "Supported architectures: dict_keys(['LlamaForCausalLM'])"
        ),
        "['FooForCausalLM']",
    ),
    "trust-remote-code-required": (
        api_traceback(
            "ValueError: Failed to load the model config. If the model is a custom model not yet "
            "available in the HuggingFace transformers library, consider setting "
            "`trust_remote_code=True` in LLM or using the `--trust-remote-code` flag in the CLI."
        ),
        "--trust-remote-code",
    ),
    "nccl-error": (
        engine_failure(
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for "
            "details)",
            prefix=WORKER,
        ).replace(
            "(EngineCore_DP0 pid=123) ERROR 11-30 07:40:33 [multiproc_executor.py:154] Worker",
            CORE + "Exception: WorkerProc initialization failed due to an exception in a "
            "background process. See stack trace for root cause.\nWorker",
        ),
        "NCCL",
    ),
    "quant-tp-shape": (
        engine_failure(
            "ValueError: Weight input_size_per_partition = 7392 is not divisible by min_thread_k "
            "= 128. Consider reducing tensor_parallel_size or running with --quantization gptq."
        ).replace("'port': 8000,", "'port': 8000, 'tensor_parallel_size': 4,"),
        "At TP 4",
    ),
    "process-killed": (
        # jetson-containers#795 (tests/data/corpus): 0.6.3 on a Jetson Orin NX 16 GB, killed by
        # the kernel after sizing the KV cache; the shell says only `Killed`.
        "INFO 01-23 07:34:26 gpu_executor.py:122] # GPU blocks: 11836, # CPU blocks: 4681\n"
        "INFO 01-23 07:34:26 gpu_executor.py:126] Maximum concurrency for 200 tokens per "
        "request: 946.88x\n"
        "Killed",
        "SIGKILL",
    ),
    "nccl-timeout": (
        # torch's ProcessGroupNCCL watchdog (vllm-6042 of tests/data/corpus, a Ray worker's
        # GATHER long after startup), then what it says next: the timeout is the cause.
        "\n".join(
            [
                f"{API}vLLM API server version 0.5.0.post1",
                "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] "
                "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=158046, "
                "OpType=GATHER, NumelIn=2867200, NumelOut=0, Timeout(ms)=600000) ran for 600027 "
                "milliseconds before timing out.",
                "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:583] [Rank 1] To "
                "avoid data inconsistency, we are taking the entire process down.",
            ]
        ),
        "watchdog",
    ),
    "engine-init-failed": (
        engine_failure(
            "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 local CPUWorkers. "
            "Allowed NUMA nodes are [0]. Please try to bind threads manually."
        ),
        "failed to start",
    ),
}


@pytest.mark.parametrize("diagnosis_id", sorted(CASES))
def test_every_diagnosis_has_a_log_that_triggers_it(diagnosis_id: str) -> None:
    text, title_part = CASES[diagnosis_id]
    report = diagnose(text)
    assert report.status == "failed"
    first = report.diagnoses[0]
    assert first.id == diagnosis_id
    assert title_part in first.title.text()
    assert first.evidence
    # evidence is a log line without its prefix (pydantic's field line joined to its message)
    assert any(
        part in text
        for part in (
            first.evidence,
            first.evidence.removeprefix("Value error, "),
            first.evidence.split(": ", 1)[-1],
        )
    )
    assert report.root_cause is not None


def test_cases_cover_the_contract_and_the_text_table() -> None:
    assert set(CASES) == CONTRACT_IDS | EXTRA_IDS
    ids = {key.rsplit(".", 1)[0].split(":")[0] for key in EN if not key.startswith("report.")}
    assert ids == CONTRACT_IDS | EXTRA_IDS | SERVING_IDS


# --- status ---------------------------------------------------------------------------------


def test_ready_then_sigterm_errors_is_ready() -> None:
    text = real("ready-then-sigterm")
    assert "EngineDeadError" in text.split("Application startup complete")[1]  # the trap is there
    report = diagnose(text)
    assert report.status == "ready"
    assert report.root_cause is None
    assert report.diagnoses == ()


def test_a_signal_after_ready_logged_by_the_api_servers_shutdown_steps_is_ready() -> None:
    # serve_http's signal handler (entrypoints/launcher.py, 0.23+) logs each step of the shutdown;
    # it runs only once the HTTP server task does. The engine's own exit after it is the
    # shutdown's, and the excerpt holds no other ready line.
    shutdown = "(APIServer pid=100) INFO 11-30 07:45:00 [launcher.py:{}] [shutdown] API server: {}"
    text = "\n".join(
        [
            "^C" + shutdown.format(256, "shutdown triggered"),
            shutdown.format(271, "stopping engine client mode=abort timeout=0s"),
            CORE + "EngineCore encountered a fatal error.",
            shutdown.format(306, "shutting down FastAPI HTTP server"),
        ]
    )
    report = diagnose(text)
    assert (report.status, report.root_cause, report.diagnoses) == ("ready", None, ())


def test_nccls_failed_cuda_call_beside_an_out_of_memory_is_the_out_of_memory() -> None:
    # torch's DistBackendError for NCCL's `unhandled cuda error` says only that a CUDA call
    # failed; the peer's out of memory in the same excerpt is that failure.
    nccl = [
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.cpp:77, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL "
        "version 2.21.5",
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "Last error:",
        "Cuda failure 2 'out of memory'",
    ]
    text = engine_failure(*nccl, prefix=WORKER)
    alone = diagnose(text)
    assert alone.root_cause == nccl[0]  # NCCL's own last error is the rest of its message
    assert [d.id for d in alone.diagnoses] == ["out-of-memory"]
    oom = WORKER.replace("TP1 pid=456", "TP0 pid=455") + TORCH_OOM
    report = diagnose(text.replace(WORKER + nccl[0], oom + "\n" + WORKER + nccl[0]))
    assert report.root_cause == TORCH_OOM
    assert [d.id for d in report.diagnoses] == ["out-of-memory"]


def test_half_written_log_is_starting() -> None:
    text = real("ready-then-sigterm")
    half = text[: text.index("Loading weights took")]
    report = diagnose(half)
    assert report.status == "starting"
    assert report.root_cause is None
    assert report.diagnoses == ()
    assert report.reported.vllm_version == "0.32.0"


def test_empty_log_is_starting() -> None:
    assert diagnose("").to_json() == {
        "status": "starting",
        "root_cause": None,
        "diagnoses": [],
        "reported": {"kv_cache_tokens": None, "max_concurrency": None, "vllm_version": None},
    }


def test_engine_error_without_the_wrapper_yet_is_starting_with_a_diagnosis() -> None:
    text = engine_failure(TORCH_OOM).split("\n(EngineCore_DP0 pid=123) ERROR 11-30 07:40:33")[0]
    report = diagnose(text)
    assert report.status == "failed"  # "EngineCore failed to start." is already fatal
    assert [d.id for d in report.diagnoses] == ["out-of-memory"]


def test_an_engine_that_dies_after_ready_is_failed_with_its_error() -> None:
    text = "\n".join(
        [
            f"{API}vLLM API server version 0.11.0",
            "INFO:     Application startup complete.",
            CORE + "EngineCore encountered a fatal error.",
            CORE + "Traceback (most recent call last):",
            CORE + '  File "/x/vllm/v1/engine/core.py", line 701, in run_engine_core',
            CORE + TORCH_OOM,
            "(APIServer pid=100) ERROR 11-30 07:41:00 [async_llm.py:480] AsyncLLM output_handler "
            "failed.",
            "(APIServer pid=100) ERROR 11-30 07:41:00 [async_llm.py:480] "
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See "
            "stack trace (above) for the root cause.",
        ]
    )
    report = diagnose(text)
    assert report.status == "failed"  # the server is up but serves nothing any more
    assert report.root_cause == TORCH_OOM
    # Why it died first, then that the server no longer serves.
    assert [d.id for d in report.diagnoses] == ["out-of-memory", "engine-dead-at-serving"]
    dead = report.diagnoses[1]
    assert dead.title.text() == "The server was up when this error stopped its engine"
    assert dead.evidence == "EngineCore encountered a fatal error."
    assert "這個錯誤讓它的引擎停了" in dead.title.text("zh-TW")


def test_only_the_last_run_of_an_appended_log_counts() -> None:
    text = real("ready-then-sigterm") + "\n" + real("port-in-use")
    report = diagnose(text)
    assert report.status == "failed"
    assert report.diagnoses[0].id == "port-in-use"


def test_uvicorn_bind_error_of_vllm_0_6_fails_with_the_default_port() -> None:
    text = "\n".join(
        [
            "INFO 12-10 10:00:00 api_server.py:585] vLLM API server version 0.6.6.post1",
            "INFO:     Started server process [1234]",
            "INFO:     Waiting for application startup.",
            "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): "
            "address already in use",
        ]
    )
    report = diagnose(text)
    assert report.status == "failed"
    assert report.diagnoses[0].id == "port-in-use"
    assert "`ss -ltnp | grep :8000`" in report.diagnoses[0].fix.text()


# --- root cause -----------------------------------------------------------------------------


def test_engine_failure_root_cause_is_the_real_error_not_the_last_line() -> None:
    text = real("kv-cache-too-small")
    report = diagnose(text)
    last_exception = next(line for line in reversed(text.splitlines()) if "Error:" in line)
    assert last_exception.startswith("RuntimeError: Engine core initialization failed.")
    assert report.root_cause is not None
    assert report.root_cause.startswith(
        "ValueError: To serve at least one request with the model's max seq len (1024)"
    )
    assert "estimated maximum model length is 256" in report.root_cause


def test_worker_error_behind_two_wrappers_is_the_root_cause() -> None:
    report = diagnose(CASES["nccl-error"][0])
    assert report.root_cause == (
        "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    )


def test_root_cause_of_a_wrapped_exception_chain_is_the_last_real_error() -> None:
    report = diagnose(CASES["weights-dont-fit"][0])
    assert report.root_cause is not None
    assert report.root_cause.startswith("RuntimeError: Failed to load model - not enough GPU")
    # the torch OOM text is the same cause: one diagnosis, not two
    assert [d.id for d in report.diagnoses] == ["weights-dont-fit"]


def test_pydantic_root_cause_is_the_value_error_message() -> None:
    report = diagnose(real("quant-awq"))
    assert report.root_cause == "Cannot find the config file for awq"
    assert report.diagnoses[0].evidence == "Value error, Cannot find the config file for awq"


def test_pydantic_field_error_names_the_field() -> None:
    report = diagnose(real("gpu-memory-utilization"))
    assert report.root_cause is not None
    assert report.root_cause.startswith(
        "gpu_memory_utilization: Input should be less than or equal to 1"
    )


def test_argparse_root_cause_is_the_error_line() -> None:
    report = diagnose(real("endash"))
    assert report.root_cause == "vllm: error: unrecognized arguments: –quantization awq"
    assert report.diagnoses[0].evidence == report.root_cause


def test_gated_repo_wins_over_its_invalid_repository_wrapper() -> None:
    report = diagnose(CASES["model-access-denied"][0])
    assert [d.id for d in report.diagnoses] == ["model-access-denied"]
    assert report.root_cause is not None
    assert report.root_cause.startswith("ValueError: Invalid repository ID")


def test_warning_that_mentions_an_oserror_is_not_a_cause() -> None:
    # vLLM 0.32 warns about `OSError: [Errno 24] Too many open files` on every start.
    report = diagnose(real("ready-then-sigterm"))
    assert "Errno 24" in real("ready-then-sigterm")
    assert report.diagnoses == ()


def test_evidence_is_stripped_of_the_process_prefix() -> None:
    report = diagnose(CASES["gpu-memory-busy"][0])
    assert report.diagnoses[0].evidence.startswith("ValueError: Free memory on device cuda:0")


# --- facts parsed into the texts ------------------------------------------------------------


def test_removed_flags_and_stray_values_and_typos_each_get_a_diagnosis() -> None:
    report = diagnose("vllm: error: unrecognized arguments: True --swap-space 4 —max-num-seqs 8")
    assert [(d.id, d.title.text().split()[0]) for d in report.diagnoses] == [
        ("bool-flag-value", "A"),  # `--enforce-eager True`: a value left over after a switch
        ("removed-flag", "`--swap-space`"),
        ("dash-typo", "`—max-num-seqs`"),
    ]
    assert "`--max-num-seqs`" in report.diagnoses[2].fix.text()
    stray = diagnose("vllm: error: unrecognized arguments: Qwen/Qwen3-8B")
    assert [(d.id, d.title.text().split()[0]) for d in stray.diagnoses] == [
        ("unknown-flag", "Stray")
    ]


def test_removed_flag_names_its_replacement() -> None:
    report = diagnose("vllm: error: unrecognized arguments: --guided-decoding-backend xgrammar")
    assert report.diagnoses[0].id == "removed-flag"
    assert "--structured-outputs-config.backend" in report.diagnoses[0].fix.text()


def test_flag_of_another_release() -> None:
    text = "api_server.py: error: unrecognized arguments: --kv-cache-memory-bytes 1G"
    report = diagnose(text)
    assert report.status == "failed"
    assert report.diagnoses[0].id == "unknown-flag"
    assert "not a flag of this vLLM release" in report.diagnoses[0].title.text()


def test_heads_diagnosis_lists_tensor_parallel_sizes_that_work() -> None:
    report = diagnose(
        pydantic(
            "Total number of attention heads (28) must be divisible by tensor parallel size (8)."
        )
    )
    assert "divides 28: 1, 2, 4, 7" in report.diagnoses[0].fix.text()


def test_kv_heads_split_assertion() -> None:
    report = diagnose(engine_failure("AssertionError: 6 is not divisible by 4"))
    assert report.diagnoses[0].id == "tp-heads-indivisible"
    assert "6 does not divide evenly by 4" in report.diagnoses[0].title.text()


def test_gpu_memory_busy_suggests_a_utilization_that_fits() -> None:
    diagnosis = diagnose(CASES["gpu-memory-busy"][0]).diagnoses[0]
    assert "68.69 GiB" in diagnosis.why.text()
    assert "--gpu-memory-utilization to 0.12 or less" in diagnosis.fix.text()


@pytest.mark.parametrize(
    ("line", "estimate"),
    [
        (
            "ValueError: To serve at least one request with the models's max seq len (131072), "
            "(16.00 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(9.47 GiB). Based on the available memory, the estimated maximum model length is "
            "77600. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.",
            "77600",
        ),
        (
            "ValueError: The model's max seq len (131072) is larger than the maximum number of "
            "tokens that can be stored in KV cache (45056). Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            "45056",
        ),
    ],
)
def test_kv_cache_too_small_gives_the_length_that_fits(line: str, estimate: str) -> None:
    diagnosis = diagnose(engine_failure(line)).diagnoses[0]
    assert diagnosis.id == "kv-cache-too-small"
    assert f"--max-model-len {estimate} or less" in diagnosis.fix.text()
    assert "131072" in diagnosis.title.text()


def test_no_memory_for_the_cache_blocks() -> None:
    text = engine_failure(
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine."
    )
    diagnosis = diagnose(text).diagnoses[0]
    assert (diagnosis.id, diagnosis.title.text()) == (
        "kv-cache-too-small",
        "No memory is left for the KV cache",
    )


def test_architecture_dropped_after_a_release() -> None:
    text = api_traceback(
        "ValueError: Model architecture QWenLMHeadModel was supported in vLLM until v0.23.0, and "
        "is not supported anymore. Please use an older version of vLLM if you want to use this "
        "model architecture."
    )
    diagnosis = diagnose(text).diagnoses[0]
    assert diagnosis.id == "architecture-unsupported"
    assert "vLLM 0.23.0 or older" in diagnosis.fix.text()


def test_offline_without_cached_model() -> None:
    text = api_traceback(
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't "
        "find it in the cached files and it looks like org/model is not the path to a directory "
        "containing a file named config.json."
    )
    diagnosis = diagnose(text).diagnoses[0]
    assert diagnosis.id == "model-not-found"
    assert "`org/model`" in diagnosis.title.text()  # from the Namespace(...) dump of the args


def test_tp_exceeds_gpus_on_old_vllm_without_ray() -> None:
    text = api_traceback(
        "ValueError: Unable to load Ray: No module named 'ray'. Ray is required for multi-node "
        "inference, please install Ray with `pip install ray`.",
        version="0.11.0",
    )
    assert diagnose(text).diagnoses[0].id == "tp-exceeds-gpus"


def test_unknown_error_falls_back_to_engine_init_failed_with_the_root_cause() -> None:
    report = diagnose(CASES["engine-init-failed"][0])
    assert [d.id for d in report.diagnoses] == ["engine-init-failed"]
    assert report.diagnoses[0].evidence == report.root_cause
    assert report.root_cause is not None
    assert report.root_cause.startswith("AssertionError: Not enough allowed NUMA nodes")


# --- reported numbers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "tokens", "concurrency"),
    [
        (  # 0.8.5 / 0.11: two lines
            [
                "INFO 05-01 12:00:10 [kv_cache_utils.py:634] GPU KV cache size: 1,234,560 tokens",
                "INFO 05-01 12:00:10 [kv_cache_utils.py:637] Maximum concurrency for 32,768 "
                "tokens per request: 37.68x",
            ],
            1234560,
            37.68,
        ),
        (  # 0.33: one line
            [
                "(EngineCore_DP0 pid=1) INFO 11-30 07:40:31 [kv_cache_utils.py:1291] GPU KV "
                "cache size: 1,234,560 tokens, Maximum concurrency for 32,768 tokens per "
                "request: 37.68x"
            ],
            1234560,
            37.68,
        ),
        (  # the CPU build
            [
                "(EngineCore pid=8212) INFO 11-30 07:39:09 [kv_cache_utils.py:2327] CPU KV cache "
                "size: 524,288 tokens, Maximum concurrency for 1,024 tokens per request: 512.00x"
            ],
            524288,
            512.0,
        ),
        (  # V0 (0.6.6): blocks of 16 tokens
            [
                "INFO 12-10 10:00:20 gpu_executor.py:122] # GPU blocks: 2000, # CPU blocks: 2048",
                "INFO 12-10 10:00:20 gpu_executor.py:126] Maximum concurrency for 4096 tokens "
                "per request: 7.81x",
            ],
            32000,
            7.81,
        ),
        (  # V0 with --block-size 32
            [
                "INFO 12-10 10:00:00 api_server.py:586] args: Namespace(block_size=32, port=8000)",
                "INFO 12-10 10:00:20 gpu_executor.py:122] # GPU blocks: 2000, # CPU blocks: 2048",
            ],
            64000,
            None,
        ),
    ],
)
def test_reported_capacity(lines: list[str], tokens: int, concurrency: float | None) -> None:
    reported = diagnose("\n".join(lines)).reported
    assert reported.kv_cache_tokens == tokens
    assert reported.max_concurrency == concurrency


def test_reported_from_a_real_ready_log() -> None:
    reported = diagnose(real("ready-then-sigterm")).reported
    assert (reported.kv_cache_tokens, reported.max_concurrency, reported.vllm_version) == (
        524288,
        512.0,
        "0.32.0",
    )


@pytest.mark.parametrize(
    ("line", "version"),
    [
        (
            "INFO 12-10 10:00:00 api_server.py:585] vLLM API server version 0.6.6.post1",
            "0.6.6.post1",
        ),
        (
            "INFO 05-01 12:00:00 [api_server.py:1043] vLLM API server version 0.8.5.post1",
            "0.8.5.post1",
        ),
        (f"{API}vLLM API server version 0.11.0", "0.11.0"),
        (
            "(APIServer pid=1) INFO 11-30 07:40:01 [api_utils.py:340] vLLM server version 0.33.0, "
            "serving model org/model",
            "0.33.0",
        ),
        (
            "(EngineCore_DP0 pid=2) INFO 11-30 07:40:05 [core.py:93] Initializing a V1 LLM engine "
            "(v0.20.2) with config: model='org/model'",
            "0.20.2",
        ),
        ("collect_env: vllm_version=0.15.1", "0.15.1"),
    ],
)
def test_vllm_version(line: str, version: str) -> None:
    assert diagnose(line).reported.vllm_version == version


def test_vllm_version_from_the_banner_of_a_real_log() -> None:
    assert diagnose(real("quant-awq")).reported.vllm_version == "0.32.0"


# --- JSON and languages ---------------------------------------------------------------------


def test_json_shape_is_exactly_the_contract() -> None:
    report = diagnose(real("kv-cache-too-small"))
    data = json.loads(json.dumps(report.to_json()))
    assert list(data) == ["status", "root_cause", "diagnoses", "reported"]
    assert data["status"] == "failed"
    assert isinstance(data["root_cause"], str)
    assert [list(d) for d in data["diagnoses"]] == [["id", "title", "why", "fix", "evidence"]]
    assert all(isinstance(v, str) for v in data["diagnoses"][0].values())
    assert data["reported"] == {
        "kv_cache_tokens": None,
        "max_concurrency": None,
        "vllm_version": "0.32.0",
    }


def test_report_is_a_frozen_value() -> None:
    report = diagnose(real("endash"))
    assert isinstance(report, DoctorReport)
    for value, name in ((report, "status"), (report.reported, "vllm_version")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, "x")


@pytest.mark.parametrize("diagnosis_id", sorted(CASES))
def test_zh_tw_texts_are_present(diagnosis_id: str) -> None:
    text, _ = CASES[diagnosis_id]
    diagnosis = diagnose(text).diagnoses[0]
    for said in (diagnosis.title, diagnosis.why, diagnosis.fix):
        chinese = said.text("zh-TW")
        assert re.search(r"[\u4e00-\u9fff]", chinese), chinese
        assert not MISSING_FACT.search(chinese), chinese


MISSING_FACT = re.compile(r"`\?`|(?:^|\s)\?(?:$|[\s,.)])")


def test_every_fact_the_english_texts_need_was_found_in_the_log() -> None:
    for diagnosis_id, (text, _) in CASES.items():
        for diagnosis in diagnose(text).diagnoses:
            for said in (diagnosis.title, diagnosis.why, diagnosis.fix):
                assert not MISSING_FACT.search(said.text()), (diagnosis_id, said)


def test_a_fact_the_log_lacks_shows_as_a_question_mark() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.12/site-packages/vllm/transformers_utils/config.py", line 9\n'
        "huggingface_hub.errors.RepositoryNotFoundError: x"
    )
    diagnosis = diagnose(text).diagnoses[0]
    assert (diagnosis.id, diagnosis.title.text()) == ("model-not-found", "Model `?` not found")
    assert MISSING_FACT.search(diagnosis.title.text())  # the check above would catch it


def test_coloured_and_timestamped_lines_are_read_like_plain_ones() -> None:
    # `docker logs -t` of a container started with `-t`: a timestamp, then vLLM's colours.
    stamp = "2026-11-30T07:40:31.123456789Z "
    coloured = "\n".join(
        stamp + line.replace("ERROR", "\x1b[31mERROR\x1b[0m")
        for line in CASES["gpu-memory-busy"][0].splitlines()
    )
    plain = diagnose(CASES["gpu-memory-busy"][0])
    assert diagnose(coloured) == plain


def test_v0_engine_process_failure_of_vllm_0_6() -> None:
    text = "\n".join(
        [
            "INFO 12-10 10:00:00 api_server.py:585] vLLM API server version 0.6.6.post1",
            "Process SpawnProcess-1:",
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
            "ValueError: The model's max seq len (32768) is larger than the maximum number of "
            "tokens that can be stored in KV cache (20000). Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
            "Traceback (most recent call last):",
            '  File "/usr/bin/vllm", line 8, in <module>',
            "RuntimeError: Engine process failed to start. See stack trace for the root cause.",
        ]
    )
    report = diagnose(text)
    assert report.status == "failed"
    assert report.root_cause is not None
    assert report.root_cause.startswith("ValueError: The model's max seq len (32768)")
    assert report.diagnoses[0].title.text() == (
        "The KV cache holds about 20000 tokens; max-model-len is 32768"
    )
    assert report.reported.vllm_version == "0.6.6.post1"


def test_a_wrapper_is_evidence_never_the_root_cause() -> None:
    wrapper = "RuntimeError: Engine core initialization failed. See root cause above."
    report = diagnose(wrapper)
    assert (report.status, report.root_cause) == ("failed", None)
    assert [(d.id, d.evidence) for d in report.diagnoses] == [("engine-init-failed", wrapper)]
    died = (
        "(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [multiproc_executor.py:154] Worker proc "
        "VllmWorker-1 died unexpectedly, shutting down executor."
    )
    report = diagnose(f"{died}\n{wrapper}")
    assert report.root_cause == died.split("] ", 1)[1]


@pytest.mark.parametrize(
    ("line", "variant_words"),
    [
        (
            "ValueError: Weight output_size_per_partition = 2736 is not divisible by  "
            "min_thread_n = 64. Consider reducing tensor_parallel_size or running with "
            "--quantization gptq.",
            "`--quantization gptq`",
        ),
        (
            "ValueError: Weight output_partition_size = 1344 is not divisible by weight "
            "quantization block_n = 128.",
            "--enable-expert-parallel",
        ),
        (
            "ValueError: The output_size of gate's and up's weight = 192 is not divisible by "
            "weight quantization block_n = 128.",
            "--enable-expert-parallel",
        ),
        (
            "ValueError: The input size is not aligned with the quantized weight shape. This can "
            "be caused by too large tensor parallel size.",
            "`--quantization awq`",
        ),
    ],
)
def test_quantized_layer_shapes_that_tp_breaks(line: str, variant_words: str) -> None:
    diagnosis = diagnose(engine_failure(line)).diagnoses[0]
    assert diagnosis.id == "quant-tp-shape"
    assert variant_words in diagnosis.fix.text()
    assert not MISSING_FACT.search(
        diagnosis.title.text() + diagnosis.why.text() + diagnosis.fix.text()
    )
