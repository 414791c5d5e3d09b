"""check's and explain's terminal views (80 columns, colour only on a TTY), in the language
asked for; their JSON is the results' own `to_json()` (English whatever the language)."""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from servetune import texts
from servetune.texts import Language

if TYPE_CHECKING:
    from servetune.review.capacity import Estimate
    from servetune.review.check import Finding, Report
    from servetune.review.explain import Explanation
    from servetune.review.hardware import Hardware
    from servetune.review.model import ModelFacts

WIDTH = 80

_COLOURS = {"error": "31", "warning": "33", "info": "36", "ok": "32", "bold": "1", "dim": "2"}


class Label(Protocol):
    """A text of the check report by its key (`report.<key>` in the review area), filled in."""

    def __call__(self, key: str, /, **facts: object) -> str: ...


def _labels(language: Language) -> Label:
    def label(key: str, /, **facts: object) -> str:
        return texts.format("review", f"report.{key}", language, **facts)

    return label


def _paint(text: str, style: str, colour: bool) -> str:
    return f"\x1b[{_COLOURS[style]}m{text}\x1b[0m" if colour else text


def display_width(text: str) -> int:
    """Terminal columns `text` takes: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


# A wrap unit: a run of spaces, a run of narrow non-space characters, or one wide character
# (Chinese text has no spaces: a line may break between any two of its characters).
_UNITS = re.compile(r"\s+|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+|.")


# Line-breaking rules for Chinese (kinsoku): closing punctuation never starts a line and
# opening brackets never end one; the units around them move down together.
_NO_LINE_START = frozenset("，。、；：？！）」』》〉】,.;:?!)")
_NO_LINE_END = frozenset("（「『《〈【(")


def _joined(units: list[tuple[str, str]]) -> str:
    return "".join(gap + unit for gap, unit in units)


def _wrap_wide(text: str, first_prefix: str, prefix: str) -> list[str]:
    lines: list[str] = []
    head = first_prefix
    units: list[tuple[str, str]] = []  # (the space before it or "", unit) on this line
    space = False
    for unit in _UNITS.findall(text):
        if unit.isspace():
            space = True
            continue
        units.append((" " if space and units else "", unit))
        space = False
        if display_width(head + _joined(units)) > WIDTH and len(units) > 1:
            cut = len(units) - 1
            while cut > 1 and (
                units[cut][1][0] in _NO_LINE_START or units[cut - 1][1][-1] in _NO_LINE_END
            ):
                cut -= 1  # move one more unit down
            lines.append(head + _joined(units[:cut]))
            head, units = prefix, [("", units[cut][1]), *units[cut + 1 :]]
    lines.append(head + _joined(units))
    return lines


def wrap(text: str, indent: str, first: str = "") -> list[str]:
    """Wrap to 80 columns; wide (Chinese) characters count two and may break anywhere."""
    if any(unicodedata.east_asian_width(ch) in "WF" for ch in text + first):
        return _wrap_wide(text, indent + first, indent + " " * display_width(first))
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent + first,
        subsequent_indent=indent + " " * len(first),
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent + first]


def _heading(label: Label, key: str, text: str) -> str:
    """`Model: ...`, `Hardware: ...` (a full-width colon in Chinese)."""
    return label("heading", name=label(key), text=text)


def _model_line(model: ModelFacts | None, label: Label) -> str:
    if model is None:
        return _heading(label, "model", label("none"))
    source = label(f"source.{model.source}")
    parts = [label("model_source", model=model.model_id, source=source)]
    if model.num_attention_heads:
        parts.append(label("heads", heads=model.num_attention_heads, kv_heads=model.num_kv_heads))
    if model.max_model_len:
        parts.append(label("context", tokens=f"{model.max_model_len:,}"))
    if model.dtype:
        parts.append(model.dtype)
    if model.quantization:
        q = model.quantization
        parts.append(f"{q.method}" + (f" {q.bits}-bit" if q.bits else ""))
    if model.is_moe:
        parts.append(label("experts", experts=model.num_experts))
    if model.is_mla:
        parts.append("MLA")
    return _heading(label, "model", label("list_separator").join(parts))


def _hardware_line(machine: Hardware | None, label: Label) -> str:
    if machine is None:
        return _heading(label, "hardware", label("none"))
    if machine.spec is None:
        gpus = label("gpu_count", count=machine.count, source=machine.source)
        return _heading(label, "hardware", gpus)
    spec = machine.spec
    gpus = label(
        "gpu_spec",
        count=machine.count,
        name=spec.name,
        memory=f"{spec.memory_gib:g}",
        capability=spec.compute_capability or "-",
        source=machine.source,
    )
    return _heading(label, "hardware", gpus)


def _finding_lines(finding: Finding, label: Label, language: Language, colour: bool) -> list[str]:
    mark = {"error": "x", "warning": "!", "info": "i"}[finding.severity]
    head = wrap(f"{finding.title.text(language)} [{finding.rule}]", "  ", f"{mark} ")
    lines = [_paint(head[0], finding.severity, colour), *head[1:]]
    lines += wrap(finding.why.text(language), "    ", _heading(label, "why", ""))
    lines += wrap(finding.fix.text(language), "    ", _heading(label, "fix", ""))
    if finding.ask_ai is not None:
        ask = finding.ask_ai.text(language)
        lines += wrap(f'"{ask}"', "    ", _heading(label, "ask", ""))
    return lines


def _gib(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} GiB"


def _estimate_lines(est: Estimate, label: Label) -> list[str]:
    rows = [
        (label("weights"), _gib(est.weights_gib_per_gpu)),
        (label("kv_token"), f"{est.kv_bytes_per_token_per_gpu:,} B"),
        (label("reserve"), _gib(est.reserve_gib_per_gpu)),
        (label("kv_cache"), _gib(est.kv_cache_gib_per_gpu)),
        (label("kv_tokens"), "-" if est.kv_cache_tokens is None else f"{est.kv_cache_tokens:,}"),
    ]
    conc = est.max_concurrent_seqs_at_max_model_len
    rows.append((label("concurrency"), "-" if conc is None else f"{conc:,.2f}"))
    return [f"  {_pad(name, 40)} {value}" for name, value in rows]


def _note_lines(est: Estimate, language: Language) -> list[str]:
    """Where the estimate is known to be rough, one wrapped sentence each."""
    lines: list[str] = []
    for note in est.notes:
        lines += wrap(texts.format("review", f"estimate-note.{note}", language), "    ", "* ")
    return lines


def _settings_lines(report: Report, label: Label, language: Language) -> list[str]:
    s = report.settings
    values = [
        ("--tensor-parallel-size", str(s.tensor_parallel_size)),
        ("--max-model-len", "auto" if s.max_model_len_auto else str(s.max_model_len or "-")),
        ("--max-num-seqs", str(s.max_num_seqs)),
        ("--max-num-batched-tokens", str(s.max_num_batched_tokens or "-")),
        ("--gpu-memory-utilization", f"{s.gpu_memory_utilization:g}"),
        ("--dtype", f"{s.dtype_flag} -> {s.dtype or label('unknown')}"),
        ("--enable-chunked-prefill", "on" if s.chunked_prefill else "off"),
    ]
    lines = []
    for flag, value in values:
        note = s.defaults.get(flag)
        said = note.text(language) if note else ""
        suffix = label("default_note", note=said) if note and flag not in s.user_set else ""
        lines += wrap(f"{flag} {value}{suffix}", "  ")
    return lines


def report_text(report: Report, language: Language = "en", *, colour: bool = False) -> str:
    """The human report in `language`: verdict first, then findings by severity, fix, and
    estimate."""
    label = _labels(language)
    errors, warnings = len(report.errors), len(report.warnings)
    if errors:
        verdict = _paint(label("stop", n=errors), "error", colour)
    elif warnings:
        verdict = _paint(label("warn", n=warnings), "warning", colour)
    else:
        verdict = _paint(label("ok"), "ok", colour)
    lines = [_paint(verdict, "bold", colour), ""]
    lines += wrap(_model_line(report.model, label), "")
    lines += wrap(_hardware_line(report.hardware, label), "")
    version = label(
        "version",
        version=report.command.version,
        source=report.command.version_origin.text(language),
    )
    lines.append(_heading(label, "vllm", version))
    for severity in ("error", "warning", "info"):
        group = [f for f in report.findings if f.severity == severity]
        if group:
            lines += ["", _paint(f"{label(severity)} ({len(group)})", "bold", colour)]
            for finding in group:
                lines += _finding_lines(finding, label, language, colour)
    if report.corrected_command:
        lines += ["", _paint(label("corrected"), "bold", colour)]
        lines += ["  " + ln for ln in report.corrected_command.splitlines()]
    if report.estimate is not None:
        lines += [
            "",
            _paint(label("capacity"), "bold", colour),
            *_estimate_lines(report.estimate, label),
            *_note_lines(report.estimate, language),
        ]
    settings = _settings_lines(report, label, language)
    lines += ["", _paint(label("settings"), "bold", colour), *settings]
    return "\n".join(lines) + "\n"


def explanations_text(items: Sequence[Explanation], language: Language = "en") -> str:
    """explain's view: each flag as written, its meaning below it in `language`."""
    lines: list[str] = []
    for item in items:
        lines.append(item.flag if item.value is None else f"{item.flag} {item.value}")
        lines += wrap(item.meaning.text(language), "    ")
    return "\n".join(lines) + "\n"
