"""`servetune serve`, `doctor` and `accept`: launch vLLM safely, explain failed starts, and run
the seed's five acceptance checks.

Exit codes. serve: 0 stopped by Ctrl-C/SIGTERM after a good start; 1 refused (error findings
without --force), failed to start, or died; 2 bad usage. doctor: 0 ready or still starting,
1 failed, 2 unreadable log. accept: 0 only when all five checks pass, else 1; 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from servetune.errors import UsageError

if TYPE_CHECKING:  # only for annotations: the CLI imports the heavy modules lazily
    from servetune.launch.doctor import DoctorReport
    from servetune.launch.launcher import ManagedServer
    from servetune.review.check import Report
    from servetune.texts.review_en import Language

EXIT_OK, EXIT_FAILED = 0, 1


def add_parsers(
    sub: argparse._SubParsersAction[Any],
    common: Callable[[argparse.ArgumentParser], None],
    language: Callable[[str], Language],
) -> None:
    serve = sub.add_parser(
        "serve",
        help="check, then launch vLLM and say in plain words why a start failed",
        usage="servetune serve [options] -- vllm serve MODEL [flags]",
    )
    common(serve)
    serve.add_argument("--vllm", metavar="PATH", help="the vllm program ($SERVETUNE_VLLM, PATH)")
    serve.add_argument("--ready-timeout", type=float, default=1800.0, metavar="S")
    serve.add_argument("--log", type=Path, metavar="FILE", help="where vLLM's output goes")
    serve.add_argument("--force", action="store_true", help="launch despite error findings")
    doctor = sub.add_parser("doctor", help="explain a vLLM log: ready, failed or starting, and why")
    doctor.add_argument("logfile", type=Path)
    doctor.add_argument("--format", choices=("text", "json"), default="text")
    doctor.add_argument("--lang", type=language, default=None, help="en or zh-TW")
    doctor.add_argument("--debug", action="store_true")
    accept = sub.add_parser(
        "accept",
        help="the five acceptance checks: hardware, quantization, startup, data, one knob",
        usage="servetune accept [options] -- vllm serve MODEL [flags]",
    )
    common(accept)
    accept.add_argument("--log", type=Path, metavar="FILE", help="the server's log")
    accept.add_argument("--before", type=Path, nargs="+", metavar="PATH")
    accept.add_argument("--after", type=Path, nargs="+", metavar="PATH")
    compare = sub.add_parser(
        "compare",
        help="before/after with statistics: changes, confidence intervals, verdicts",
        usage="servetune compare BEFORE AFTER [--metric NAME ...] [--format json]",
    )
    compare.add_argument("before", type=Path, nargs="?", help="a result file or a folder of runs")
    compare.add_argument("after", type=Path, nargs="?")
    compare.add_argument("--before", dest="before_more", type=Path, nargs="+", metavar="PATH")
    compare.add_argument("--after", dest="after_more", type=Path, nargs="+", metavar="PATH")
    compare.add_argument("--metric", nargs="+", metavar="NAME", help="e.g. p99_ttft_ms")
    compare.add_argument("--format", choices=("text", "json"), default="text")
    compare.add_argument("--debug", action="store_true")


def run_compare(ns: argparse.Namespace, stdout: TextIO) -> int:
    from servetune.judge.compare import compare, comparison_text, load_side

    before = [p for p in [ns.before, *(ns.before_more or [])] if p is not None]
    after = [p for p in [ns.after, *(ns.after_more or [])] if p is not None]
    if not before or not after:
        raise UsageError(
            "compare needs a BEFORE and an AFTER", "servetune compare OLD.json NEW.json"
        )
    result = compare(load_side(before), load_side(after), ns.metric)
    if ns.format == "json":
        stdout.write(json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        stdout.write(comparison_text(result))
    return EXIT_OK


# --- doctor ---------------------------------------------------------------------------------


def doctor_text(report: DoctorReport) -> str:
    from servetune.render.check import wrap

    lines = [f"status: {report.status}"]
    if report.root_cause:
        lines += wrap(report.root_cause, "", "root cause: ")
    for d in report.diagnoses:
        lines += ["", *wrap(d.title, "", f"[{d.id}] ")]
        lines += wrap(d.why, "  ", "why: ") + wrap(d.fix, "  ", "fix: ")
        if d.evidence:
            lines += wrap(d.evidence, "  ", "evidence: ")
    reported = report.reported
    numbers = []
    if reported.vllm_version:
        numbers.append(f"vLLM {reported.vllm_version}")
    if reported.kv_cache_tokens is not None:
        numbers.append(f"KV cache {reported.kv_cache_tokens:,} tokens")
    if reported.max_concurrency is not None:
        numbers.append(f"max concurrency {reported.max_concurrency:.2f}x")
    if numbers:
        lines += ["", "reported: " + ", ".join(numbers)]
    return "\n".join(lines) + "\n"


def _read_log(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(
            f"cannot read {path}: {exc.strerror or exc}", "give a vLLM log file"
        ) from exc


def run_doctor(ns: argparse.Namespace, stdout: TextIO, language: Language) -> int:
    from servetune.launch.doctor import diagnose

    report = diagnose(_read_log(ns.logfile), language)
    if ns.format == "json":
        stdout.write(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        stdout.write(doctor_text(report))
    return EXIT_FAILED if report.status == "failed" else EXIT_OK


# --- serve ----------------------------------------------------------------------------------


class _Flag:
    """Set by SIGINT/SIGTERM: the server is then stopped, never left behind."""

    def __init__(self) -> None:
        self.raised = False

    def __call__(self, _signum: int, _frame: object) -> None:
        self.raised = True


def _emit(stdout: TextIO, fmt: str, text: str, doc: dict[str, Any] | None = None) -> None:
    if fmt == "json":
        if doc is not None:
            stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        stdout.write(text + "\n")
    stdout.flush()


def _ready_doc(server: ManagedServer, report: Report, url: str) -> tuple[str, dict[str, Any]]:
    from servetune.launch.doctor import diagnose

    reported = diagnose(server.log_text()).reported  # the doctor knows every release's lines
    tokens, concurrency = reported.kv_cache_tokens, reported.max_concurrency
    est = report.estimate
    est_tokens = est.kv_cache_tokens if est else None
    est_conc = est.max_concurrent_seqs_at_max_model_len if est else None

    def num(value: float | None, fmt: str) -> str:
        return "unknown" if value is None else format(value, fmt)

    text = (
        f"ready: {url} (pid {server.pid}; vLLM reports KV cache {num(tokens, ',')} tokens, "
        f"max concurrency {num(concurrency, '.2f')}x; check estimated {num(est_tokens, ',')} "
        f"tokens, {num(est_conc, '.2f')}x)"
    )
    doc = {
        "status": "ready",
        "url": url,
        "pid": server.pid,
        "log": str(server.log_path),
        "reported": {"kv_cache_tokens": tokens, "max_concurrency": concurrency},
        "estimate": {"kv_cache_tokens": est_tokens, "max_concurrency": est_conc},
    }
    return text, doc


def _failure(server: ManagedServer, stdout: TextIO, fmt: str, why: str, language: Language) -> int:
    from servetune.launch.doctor import diagnose

    report = diagnose(server.log_text(), language)
    doc = {"status": "failed", "why": why, "log": str(server.log_path), "doctor": report.to_json()}
    _emit(
        stdout,
        fmt,
        f"vLLM did not start: {why}\nlog: {server.log_path}\n" + doctor_text(report),
        doc,
    )
    return EXIT_FAILED


def run_serve(ns: argparse.Namespace, report: Report, stdout: TextIO) -> int:
    """Launch the reviewed command; `report` is check's review of it."""
    from servetune.launch import launcher
    from servetune.render import check as render

    if report.errors and not ns.force:
        if ns.format == "json":
            stdout.write(
                json.dumps({"status": "refused", "check": render.report_json(report)}) + "\n"
            )
        else:
            stdout.write(render.report_text(report))
        print("error: refusing to launch: fix the errors above, or pass --force", file=sys.stderr)
        return EXIT_FAILED
    vllm = launcher.find_vllm(ns.vllm)
    host, port = launcher.server_address(report.command)
    server = launcher.ManagedServer(
        argv=launcher.launch_argv(report.command, vllm),
        log_path=ns.log or launcher.default_log_path(port),
        host=host,
        port=port,
    )
    flag = _Flag()
    previous = {sig: signal.signal(sig, flag) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        _emit(stdout, ns.format, f"starting vLLM (pid {server.pid}); log: {server.log_path}")
        return _follow(server, report, ns, stdout, flag)
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _follow(
    server: ManagedServer, report: Report, ns: argparse.Namespace, stdout: TextIO, flag: _Flag
) -> int:
    from servetune.launch import launcher

    shown: set[str] = set()

    def on_line(line: str) -> None:
        label = launcher.phase(line)
        if label and label not in shown:
            shown.add(label)
            _emit(stdout, ns.format, f"  {label}")

    outcome = server.wait_ready(ns.ready_timeout, on_line, lambda: flag.raised)
    language = report.language
    if outcome == "interrupted":
        _emit(stdout, ns.format, "stopped before vLLM was ready", {"status": "stopped"})
        return EXIT_OK
    if outcome != "ready":
        why = {"exited": "the process exited", "fatal": "a fatal error in the log",
               "timeout": f"not ready after {ns.ready_timeout:g} s"}[outcome]  # fmt: skip
        return _failure(server, stdout, ns.format, why, language)
    url = f"http://{server.host}:{server.port}"
    text, doc = _ready_doc(server, report, url)
    _emit(stdout, ns.format, text, doc)
    while not flag.raised:
        if server.poll() is not None:
            return _failure(server, stdout, ns.format, "vLLM exited after it was ready", language)
        server.new_lines()
        time.sleep(0.5)
    _emit(stdout, ns.format, "stopping vLLM", {"status": "stopping"})
    code = server.stop()
    _emit(
        stdout,
        ns.format,
        f"vLLM stopped (exit code {code})",
        {"status": "stopped", "exit_code": code},
    )
    return EXIT_OK


# --- accept ---------------------------------------------------------------------------------

Check = tuple[str, str, str, str]  # (id, name, status, evidence)


def _hardware_check(report: Report) -> Check:
    name = "hardware matches TP"
    s, machine = report.settings, report.hardware
    grid = (
        f"TP {s.tensor_parallel_size} x PP {s.pipeline_parallel_size} x "
        f"DP {s.data_parallel_size} = {s.gpus_needed}"
    )
    if machine is None:
        return ("hardware", name, "unknown", f"no --gpus and NVML found no GPU; {grid}")
    have = f"{machine.count} GPU(s)" + (f" ({machine.name})" if machine.name else "")
    status = "pass" if machine.count == s.gpus_needed else "fail"
    return ("hardware", name, status, f"{have} from {machine.source}; {grid}")


def _quant_check(report: Report) -> Check:
    name = "quantization matches the checkpoint"
    bad = [
        f for f in report.findings if f.rule in ("quant-on-unquantized", "quant-method-mismatch")
    ]
    if bad:
        return ("quantization", name, "fail", bad[0].title)
    if report.model is None:
        return ("quantization", name, "unknown", "the model's config.json was not found")
    quant = report.model.quantization
    flag = report.settings.quantization
    ckpt = f"checkpoint: {quant.method}" if quant else "checkpoint: not quantized"
    return ("quantization", name, "pass", f"{ckpt}; --quantization {flag or '(auto)'}")


def _started_check(report: Report, log: Path | None, language: Language) -> Check:
    from servetune.launch.doctor import diagnose
    from servetune.launch.launcher import healthy, server_address

    name = "the server started"
    if log is not None:
        doctor = diagnose(_read_log(log), language)
        if doctor.status == "ready":
            return ("started", name, "pass", f"{log}: Application startup complete")
        if doctor.status == "failed":
            return ("started", name, "fail", doctor.root_cause or "the log shows a failed start")
        return ("started", name, "unknown", f"{log}: still starting, no ready line yet")
    host, port = server_address(report.command)
    if healthy(host, port):
        return ("started", name, "pass", f"GET http://{host}:{port}/health answered 200")
    return (
        "started",
        name,
        "unknown",
        f"no --log, and nothing answers http://{host}:{port}/health",
    )


def _data_checks(before: list[Path] | None, after: list[Path] | None) -> tuple[Check, Check]:
    from servetune.judge.compare import compare, load_side

    data_name, knob_name = "before/after numbers exist", "only one knob changed"
    if not before or not after:
        missing = "no --before/--after results given: measure with `servetune bench` first"
        return ("data", data_name, "fail", missing), ("one-knob", knob_name, "unknown", missing)
    try:
        doc = compare(load_side(before), load_side(after)).to_json()
    except UsageError as exc:
        return ("data", data_name, "fail", exc.message), ("one-knob", knob_name, "unknown", "")
    runs = "results found on both sides"
    single = [w["message"] for w in doc["warnings"] if w["rule"] == "single-run"]
    data = ("data", data_name, "pass", runs + (f" ({single[0]})" if single else ""))
    changes = doc["config_changes"]
    said = ", ".join(f"{c['flag']} {c['before']} -> {c['after']}" for c in changes)
    if any(w["rule"] == "config-unknown" for w in doc["warnings"]):
        return data, ("one-knob", knob_name, "unknown", "no server command recorded in the results")
    if len(changes) == 1:
        return data, ("one-knob", knob_name, "pass", said)
    if not changes:
        return data, ("one-knob", knob_name, "fail", "no serving flag changed between the runs")
    return data, ("one-knob", knob_name, "fail", f"{len(changes)} knobs changed: {said}")


def run_accept(ns: argparse.Namespace, report: Report, stdout: TextIO) -> int:
    checks = [
        _hardware_check(report),
        _quant_check(report),
        _started_check(report, ns.log, report.language),
        *_data_checks(ns.before, ns.after),
    ]
    accepted = all(status == "pass" for _, _, status, _ in checks)
    if ns.format == "json":
        doc = {
            "accepted": accepted,
            "checks": [
                {"id": cid, "name": name, "status": status, "evidence": evidence}
                for cid, name, status, evidence in checks
            ],
        }
        stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        failed = sum(1 for c in checks if c[2] == "fail")
        unknown = sum(1 for c in checks if c[2] == "unknown")
        head = "ACCEPTED" if accepted else f"NOT ACCEPTED ({failed} failed, {unknown} unknown)"
        lines = [head]
        lines += [f"  [{status}] {name}: {evidence}" for _, name, status, evidence in checks]
        stdout.write("\n".join(lines) + "\n")
    return EXIT_OK if accepted else EXIT_FAILED
