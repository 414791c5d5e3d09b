"""The changes `plan` tries without being asked: "add a GPU or quantize?".

Each what-if is a new serve command (and GPUs), checked like any other: a change vLLM would
refuse is left out with a note instead of a prediction. The list:
- one more GPU as tensor parallelism (TP x2), and as a second replica (DP x2: each replica
  takes half the users or half the arrivals; throughput adds up);
- the quantized checkpoint of the same model where the catalog has one (AWQ, GPTQ-Int4, FP8),
  else `--quantization fp8` on GPUs that run it (compute capability >= 8.0);
- `--kv-cache-dtype fp8` (half the KV bytes per token);
- the `--max-num-seqs` the KV room suggests, and a larger `--max-num-batched-tokens`, when those
  are what bounds the base configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from servetune.errors import ServetuneError
from servetune.plan import predict
from servetune.plan.note import Note
from servetune.plan.simulate import Load
from servetune.review import model as model_facts
from servetune.review.check import CheckOptions, Report, check_command
from servetune.vllm import serve_command
from servetune.vllm.serve_command import ArgValue, ServeCommand

QUANT_SUFFIXES = ("-AWQ", "-GPTQ-Int4", "-FP8")
MAX_SUGGESTED_SEQS = 1024


@dataclass(frozen=True)
class Change:
    """One what-if before it is predicted: what changes, the command and the GPUs."""

    change: str  # a short name: "tp x2", "replica x2", "awq checkpoint", ...
    command: ServeCommand
    gpus: str
    replicas: int = 1  # DP served as separate replicas: the load is split between them


@dataclass(frozen=True)
class WhatIf:
    """A predicted what-if, or the reason it was left out (`outcome` None)."""

    change: str
    command: str
    gpus: str
    outcome: predict.Outcome | None
    note: Note | None = None  # why it was left out


def one_line(command: ServeCommand) -> str:
    """The command as one shell line."""
    return serve_command.render(command, command.args, command.order).replace(" \\\n  ", " ")


def _with(command: ServeCommand, flag: str, value: ArgValue) -> ServeCommand:
    args = dict(command.args)
    args[flag] = value
    order = command.order if flag in command.order else (*command.order, flag)
    return replace(command, args=args, order=order)


def _gpus(report: Report, factor: int) -> str:
    machine = report.hardware
    count = machine.count if machine else 1
    name = machine.name if machine and machine.name else ""
    return f"{count * factor}x{name}" if name else str(count * factor)


def _more_gpus(report: Report) -> Iterator[Change]:
    s = report.settings
    tp = _with(report.command, "--tensor-parallel-size", str(s.tensor_parallel_size * 2))
    yield Change("tp x2", tp, _gpus(report, 2))
    dp = _with(report.command, "--data-parallel-size", str(s.data_parallel_size * 2))
    yield Change("replica x2", dp, _gpus(report, 2), replicas=2)


def _quantized(report: Report) -> Iterator[Change]:
    model = report.model
    if model is None or model.quantization is not None or report.settings.quantization:
        return
    for suffix in QUANT_SUFFIXES:
        name = model_facts.catalog_id(model.model_id + suffix)
        if name is not None and name.lower() == (model.model_id + suffix).lower():
            yield Change(
                f"{suffix[1:].lower()} checkpoint",
                replace(report.command, model=name),
                _gpus(report, 1),
            )
            return
    spec = report.hardware.spec if report.hardware else None
    if spec is not None and (spec.capability or 0) >= 80:
        yield Change(
            "--quantization fp8", _with(report.command, "--quantization", "fp8"), _gpus(report, 1)
        )


def _kv_fp8(report: Report) -> Iterator[Change]:
    if report.settings.kv_cache_dtype.startswith("fp8"):
        return
    yield Change(
        "--kv-cache-dtype fp8", _with(report.command, "--kv-cache-dtype", "fp8"), _gpus(report, 1)
    )


def _batch_knobs(report: Report, base: predict.Outcome, load: Load) -> Iterator[Change]:
    s, est = report.settings, report.estimate
    if base.bound == "max-num-seqs" and est is not None and est.kv_cache_tokens:
        room = est.kv_cache_tokens // max(load.input_len + load.output_len, 1)
        seqs = min(room, MAX_SUGGESTED_SEQS) // 16 * 16
        if seqs > s.max_num_seqs:
            yield Change(
                f"--max-num-seqs {seqs}",
                _with(report.command, "--max-num-seqs", str(seqs)),
                _gpus(report, 1),
            )
    budget = s.max_num_batched_tokens or 0
    if base.bound == "max-num-batched-tokens" or budget < 2048:
        bigger = max(8192, budget * 2)
        yield Change(
            f"--max-num-batched-tokens {bigger}",
            _with(report.command, "--max-num-batched-tokens", str(bigger)),
            _gpus(report, 1),
        )


def _split(load: Load, replicas: int) -> Load:
    if replicas == 1:
        return load
    if load.concurrency is not None:
        return replace(
            load,
            concurrency=max(1, load.concurrency // replicas),
            num_prompts=max(1, load.num_prompts // replicas),
        )
    rate = load.request_rate / replicas if load.request_rate else None
    return replace(load, request_rate=rate, num_prompts=max(1, load.num_prompts // replicas))


def _scale(outcome: predict.Outcome, replicas: int, gpus: int) -> predict.Outcome:
    """A replica's prediction for the whole fleet: throughputs add up; latencies are a
    replica's; users meeting the targets add up; QPS per GPU stays."""
    if replicas == 1:
        return outcome
    p = outcome.prediction
    users = (
        p.max_concurrency_meeting_slo * replicas
        if p.max_concurrency_meeting_slo
        else p.max_concurrency_meeting_slo
    )
    scaled = replace(
        p,
        output_throughput=p.output_throughput * replicas,
        request_throughput=p.request_throughput * replicas,
        max_concurrency_meeting_slo=users,
    )
    del gpus
    return replace(outcome, prediction=scaled)


def evaluate(
    change: Change,
    options: CheckOptions,
    load: Load,
    slo: predict.Slo,
    make_setup: Callable[[Report], predict.Setup],
) -> WhatIf:
    """Check the changed command on its GPUs and predict it; refusals become notes."""
    command_text = one_line(change.command)
    try:
        report = check_command(change.command, replace(options, gpus=change.gpus))
        if report.errors:
            rules = ", ".join(sorted({f.rule for f in report.errors}))
            refused = Note("what_if.refused.rules", rules=rules)
            return WhatIf(change.change, command_text, change.gpus, None, refused)
        if change.replicas > 1:  # each replica is the base configuration on its share of GPUs
            single = _with(
                change.command,
                "--data-parallel-size",
                str(report.settings.data_parallel_size // change.replicas),
            )
            base_gpus = _gpus_of(report, change.replicas)
            report = check_command(single, replace(options, gpus=base_gpus))
        setup_ = make_setup(report)
    except ServetuneError as exc:
        refused = Note("what_if.refused.error", error=exc.message)
        return WhatIf(change.change, command_text, change.gpus, None, refused)
    outcome = predict.predict(setup_, _split(load, change.replicas), slo)
    return WhatIf(
        change.change, command_text, change.gpus, _scale(outcome, change.replicas, setup_.gpus)
    )


def _gpus_of(report: Report, replicas: int) -> str:
    machine = report.hardware
    count = machine.count // replicas if machine else 1
    name = machine.name if machine and machine.name else ""
    return f"{count}x{name}" if name else str(count)


def changes(report: Report, base: predict.Outcome, load: Load) -> list[Change]:
    """Every what-if that applies to this configuration, in the order they are reported."""
    return [
        *_more_gpus(report),
        *_quantized(report),
        *_kv_fp8(report),
        *_batch_knobs(report, base, load),
    ]
