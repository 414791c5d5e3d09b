"""vLLM's log as lines: every prefix other tools put before vLLM's own text removed, lines a
terminal wrapped joined again (`servetune.vllm.log` reads markers and numbers from these).

Prefixes, in any order and nesting: docker compose (`vllm-1  | `), kubectl/k9s (`  | `,
`[pod/x/c] `, k9s's `│ ... │` pane frame), journald, container timestamps (also on a line that is
nothing else), vLLM's process tags (`(EngineCore_DP0 pid=1) `, `(VllmWorker rank=1 pid=2) `),
Ray's (`(RayWorkerWrapper pid=3, ip=10.0.0.1) `) and its de-duplication suffix (`[repeated 7x
across cluster]`), torch's `[rank0]: `, and the level/time/file prefix of vLLM, NVIDIA NIM,
uvicorn, glog and Python logging. Records a collector wrapped are unwrapped first: JSON lines,
and CloudWatch's CSV export (`1756144012376,"a message, with ""quotes"" doubled"`). Colour codes
go, also spelled out as text the way pastes and collectors write them: caret notation
(`^[[1;36m`, `^M`), syslog's octal escapes (`#033[1;36m`, `#015`), CI viewers' `ESC[0m` and
source-text escapes (`\\033[0m`). Libraries beside vLLM write their own level prefix: oneCCL
(`2025:03:13-10:36:27:(  636) |CCL_ERROR| `, Intel GPUs). A prefix no rule knows (a user's own
sidecar logger) goes when vLLM's full logger prefix or uvicorn's padded level follows it on the
line, and, once two such lines show it, from every line that starts with the same prefix (its
digits and its stream aside): a traceback behind it. An indentation every line shares (a paste
inside a Markdown list) goes, and so does the terminal's `^C` echo glued to the front of a line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

# Colour codes, and the HTML a rich terminal viewer turns them into when copied. Pastes and
# collectors spell ESC and CR out as text: caret notation (`^[[1;36m` ... `^M`, what `cat -v` and
# many terminals copy), syslog's octal escapes (`#033[1;36m` ... `#015`, rsyslog's
# control-character escaping, kept by CloudWatch exports), the name CI log viewers and editors
# show (`ESC[0m`, the control picture `␛[0m`) and the string escapes of a log written as source
# text (`\033[0m`, `\x1b[0m`, `\u001b[0m`, `\e[0m`). And the terminal's echo of Ctrl-C (`^C`),
# glued to the front of the next line vLLM prints.
# `ESC ( B` selects the character set back (tput sgr0 prints it before `ESC [ m`).
# A web page that drops the control character keeps the rest of a colour code: GitHub shows
# `\x1b[36m(RayWorkerVllm pid=5085)\x1b[0m` as ` [36m(RayWorkerVllm pid=5085) [0m`, the ESC gone
# or turned into a space; such a bare SGR code (digits and `m` after no word, before a space, a
# bracket or the end: never a word's or a list's) goes with the space that stood for its ESC.
_ANSI = re.compile(
    r"(?:\x1b|\^\[|#033|ESC|\u241b|\\(?:033|x1[bB]|u001[bB]|e))(?:\[[0-9;]*[A-Za-z]|\([AB0-2])"
    r"|(?<![\w\[])\s?\[\d{1,3}(?:;\d{1,3})*m(?=[\s(\[]|$)"
    r"|</?(?:font|b|span)\b[^>]*>"
    r"|(?:\^M|#015)+$|^(?:\^C)+"
)
LEVELS = r"DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL"
# Prefixes added outside vLLM, in any order and nesting; removed until none is left.
_OUTER = re.compile(
    r"(?:"
    r"\d{4}-\d\d-\d\dT\S+ \S+ [\w.-]+\[\d+\]:\s"  # journalctl -o short-iso: host prog[pid]:
    r"|\d{4}-\d\d-\d\dT\S+ (?:stdout|stderr) [FP]\s"  # a node's CRI log file (/var/log/pods)
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:\s|$)"  # docker -t
    r"|\[\d{4}-\d\d-\d\dT[^\]]*\]\s"  # CI runners: [2025-03-10T15:07:20Z]
    # fastchat workers (`| ERROR | stderr | `, any logger name), loguru (`| ERROR    | m:f:1 - `)
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \| [A-Z]+\s*\| [\w.:-]+ (?:\| |- )"
    r"|\s*[A-Za-z][\w.-]*\s+\|\s"  # docker compose: `vllm-1  | `
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \[[A-Z][a-z]+\] (?:\(\w+\) )?"  # wrappers' own
    r"|\s*\|\s"  # kubectl / k9s panes: `  | `
    r"|\[pod/[^\]\s]+\]\s"  # kubectl logs --prefix
    r"|\S+\s+\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? \S+ [\w.-]+\[\d+\]:\s"  # journald
    r"|\[rank\d+\]:\s?"  # torch
    r"|\[Stage-\d+\]\s"  # vllm-omni stages
    r"|>\s?(?=\S)"  # a Markdown quote
    r"|`+(?=\S)"  # a Markdown code fence or span glued to the line it opens
    r"|\((?=[^()]*\b(?:pid|rank|ip)=)[^()]+\)\s?"  # vLLM and Ray process tags
    r"|\(raylet[^()]*\)\s?"
    r")"
)
# One level/time prefix: vLLM (0.6 `file.py:1]`, 0.8+ `[file.py:1]`), NIM (year and ms),
# uvicorn (`INFO:     `), Ray (`2025-02-26 11:14:54,614 INFO worker.py:1 -- `), Python logging.
_LEVEL = re.compile(
    rf"(?:(?P<a>{LEVELS})\s+(?:\d{{4}}-)?\d\d-\d\d\s+\d\d:\d\d:\d\d(?:[.,]\d+)?\s+"
    r"\[?(?P<source>[\w./-]+):\d+\]\s?"
    rf"|(?P<b>{LEVELS}):\s+"
    rf"|\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?\s+(?P<c>{LEVELS})\s+[\w./-]+:\d+ -- "
    rf"|(?:\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?\s+)?\[(?P<d>{LEVELS})\]\s+"
    rf"|\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? - [\w.]+ - (?P<e>{LEVELS}) - "
    r")"
)
# oneCCL's own lines (Intel's collective library under vLLM's XPU workers): `2025:03:13-10:36:27:(
# 636) |CCL_WARN| ...`, its levels named CCL_<level>.
_CCL = re.compile(r"\d{4}:\d\d:\d\d-\d\d:\d\d:\d\d:\(\s*\d+\) \|CCL_(?P<level>[A-Z]+)\| ")
_CCL_LEVELS = {"ERROR": "ERROR", "FATAL": "CRITICAL", "WARN": "WARNING"}
# Where vLLM's own text starts on a line some unknown prefix leads: vLLM's full logger prefix
# (level, date, time, file:line) or uvicorn's level padded to its column; specific enough that
# nothing else looks like them.
_OWN_START = re.compile(
    rf"(?<=\s)(?:(?:{LEVELS}) (?:\d{{4}}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[?[\w./-]+\.py:\d+\] "
    r"|(?:INFO: {5}|WARNING: {2}|ERROR: {4}|DEBUG: {4}|CRITICAL: )(?=\S))"
)
# torch/glog lines: `W1130 07:36:16.401000 7670 torch/_library/triton.py:53] ...`, and c10's own
# logger of torch's C++ code (ProcessGroupNCCL's watchdog...): `[E1001 16:06:04.537131842
# ProcessGroupNCCL.cpp:607] ` from torch 2.4, `[E ProcessGroupNCCL.cpp:475] ` before it.
_GLOG = re.compile(
    r"(?:\[?(?P<g>[IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+(?:\d+\s+)?[\w./-]+:\d+\]"
    r"|\[(?P<c>[IWEF]) [\w./-]+\.(?:cpp|cc|cu|c|h|hpp):\d+\])\s?"
)
_GLOG_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}
_REPEATED = re.compile(r"\s*\[repeated \d+x across cluster\]$")
QUIET = frozenset({"DEBUG", "INFO", "WARNING"})


@dataclass(frozen=True)
class LogLine:
    """One line of vLLM's own text, prefixes removed.

    `level` is None for raw stderr (tracebacks, argparse), never INFO noise; `text` is
    right-stripped with its indentation kept (traceback frames); `prefixed` says whether any
    prefix was removed (a line a terminal wrapped continues without one); `source` is the file
    vLLM's logger prefix names (`serving_chat.py`), None where the line has none.
    """

    level: str | None
    text: str
    prefixed: bool = False
    source: str | None = None

    @property
    def loud(self) -> bool:
        """Worth reading for errors: raw or ERROR/CRITICAL, and not a traceback frame."""
        if self.level in QUIET:
            return False
        return not self.text[:1].isspace() or self.text.lstrip().startswith("Value error, ")


def _strip_level(text: str) -> tuple[str | None, str, str | None] | None:
    """The level, the text after its prefix and the file the prefix names, or None."""
    glog = _GLOG.match(text)
    if glog:
        return _GLOG_LEVELS[glog["g"] or glog["c"]], text[glog.end() :], None
    ccl = _CCL.match(text)
    if ccl:
        return _CCL_LEVELS.get(ccl["level"], "INFO"), text[ccl.end() :], None
    match = _LEVEL.match(text)
    if match is None:
        return None
    groups = match.groupdict()
    source = groups.pop("source")
    level = next(v for v in groups.values() if v is not None)
    return ("WARNING" if level == "WARN" else level), text[match.end() :], source


def parse_line(raw: str) -> LogLine:
    """One raw line as a LogLine (always succeeds: every prefix is optional)."""
    text = _ANSI.sub("", raw).rstrip()
    level: str | None = None
    source: str | None = None
    prefixed = False
    for _ in range(12):  # bounded: each pass removes at least one prefix
        outer = _OUTER.match(text)
        if outer is not None and outer.end() > 0:
            text, prefixed = text[outer.end() :], True
            continue
        leveled = _strip_level(text) if level is None else None
        if leveled is None and level is None and (own := _OWN_START.search(text)) is not None:
            leveled = _strip_level(text[own.start() :])
        if leveled is None:
            break
        (level, text, source), prefixed = leveled, True
    return LogLine(level, _REPEATED.sub("", text), prefixed, source)


# pydantic prints `<field>` on one line and `  <message> [type=...]` on the next.
_PYDANTIC_FIELD = re.compile(r"^[a-z_][\w.]*$")
_PYDANTIC_VALUE_NOISE = re.compile(r"\s*\[type=value_error, input_value=.*\]$")
# A raw line that starts something of its own, never the rest of a wrapped line.
_OWN_LINE = re.compile(
    r"^(?:Traceback \(|\s*File \"|Process \w|Loading |[\w.]*(?:Error|Exception|Warning)\b"
    r"|During handling|The above exception|usage: )"
)


def _cut_width(raws: Sequence[str]) -> int | None:
    """The terminal width that wrapped this text: the longest length, seen at least twice."""
    lengths = [len(raw) for raw in raws]
    width = max(lengths, default=0)
    return width if width >= 60 and lengths.count(width) >= 2 else None


def _continues(previous: LogLine, prev_raw: str, line: LogLine, width: int | None) -> bool:
    """`line` is the rest of `previous`, cut by a terminal (no prefix of its own)."""
    if line.prefixed or line.level is not None or not line.text.strip():
        return False
    if _OWN_LINE.match(line.text) or not previous.text:
        return False
    if previous.text[-1].isdigit() and line.text[0].isdigit():
        return True  # a number split over two lines
    return width is not None and len(prev_raw) >= width - 1


_JSON_TEXT = ("message", "msg", "log")
_JSON_LEVEL = ("level", "levelname", "severity")
_JSON_TRACE = ("exc_info", "exception", "stack_trace", "traceback")


def _json_record(raw: str) -> list[str] | None:
    """A JSON-lines record (docker's json-file driver, NIM_JSONL_LOGGING, log collectors) as the
    plain lines it stands for, or None for any other line."""
    stripped = raw.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        record = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    text = next((record[k] for k in _JSON_TEXT if isinstance(record.get(k), str)), None)
    if text is None:
        return None
    level = next((record[k] for k in _JSON_LEVEL if isinstance(record.get(k), str)), None)
    lines = text.rstrip("\n").splitlines() or [""]
    if level and _strip_level(lines[0]) is None:
        lines[0] = f"{level.upper()}:    {lines[0]}"  # uvicorn's shape, read by _LEVEL
    trace = next((record[k] for k in _JSON_TRACE if isinstance(record.get(k), str)), "")
    return lines + trace.splitlines()


# k9s and other TUI log viewers box every line: `│ INFO ... [x.py:1] text      │`, padded to the
# pane's width; the frame and its padding are the viewer's, not vLLM's.
_PANE = re.compile(r"^\s*[│┃]\s?(?P<body>.*?)\s*[│┃]\s*$")


# CloudWatch Logs' CSV export: `<epoch ms>,<message>`, the message CSV-quoted (inner quotes
# doubled) when it holds a comma or a quote.
_CSV_EXPORT = re.compile(r"^\d{13},(?P<message>.*)$")


def _csv_message(raw: str) -> str:
    """The message of a CloudWatch CSV export row; any other line as it is."""
    row = _CSV_EXPORT.match(raw)
    if row is None:
        return raw
    message = row["message"]
    if len(message) >= 2 and message[0] == message[-1] == '"':
        return message[1:-1].replace('""', '"')
    return message


def raw_lines(text: str) -> Iterator[str]:
    """The text's lines, unwrapped from the records collectors wrap them in (JSON lines, CSV
    exports, TUI panes) and without colour codes; prefixes are `parse_line`'s."""
    for raw in map(_csv_message, text.splitlines()):
        record = _json_record(raw)
        for line in [raw] if record is None else record:
            plain = _ANSI.sub("", line).rstrip()
            pane = _PANE.match(plain)
            yield plain if pane is None else pane["body"]


# A prefix no rule knows, seen before vLLM's own logger prefix, is the same on the lines where
# vLLM's text has no prefix of its own (a traceback, an exception line): a wrapper, a sidecar or
# a platform puts it on every line it forwards. Its shape: the digits in it vary (timestamps,
# pids), and so does the stream it names (`1 stdout: `, `2 stderr: `).
_VARYING = re.compile(r"(\d+|stdout|stderr)")


def _shape(prefix: str) -> str:
    parts = _VARYING.split(prefix)
    return "".join(
        re.escape(part) if i % 2 == 0 else (r"\d+" if part[0].isdigit() else "std(?:out|err)")
        for i, part in enumerate(parts)
    )


def _learned_prefixes(raws: Sequence[str]) -> re.Pattern[str] | None:
    """The unknown prefixes seen on at least two lines before vLLM's own logger prefix."""
    shapes: dict[str, int] = {}
    for raw in raws:
        own = _OWN_START.search(raw)
        if own is None or own.start() == 0:
            continue
        prefix = raw[: own.start()]
        if _OUTER.fullmatch(prefix) is None:
            shape = _shape(prefix)
            shapes[shape] = shapes.get(shape, 0) + 1
    seen = sorted((shape for shape, count in shapes.items() if count >= 2), key=len, reverse=True)
    return re.compile("|".join(seen)) if seen else None


def _parse_with(raw: str, learned: re.Pattern[str] | None) -> LogLine:
    """`parse_line`, a learned prefix removed first where vLLM's own prefix does not follow."""
    match = None
    if learned is not None and _OWN_START.search(raw) is None:
        match = learned.match(raw)
    if match is None:
        return parse_line(raw)
    return replace(parse_line(raw[match.end() :]), prefixed=True)


def _dedented(raws: list[str]) -> list[str]:
    """Without the indentation every line shares: a paste inside a Markdown list or quote block
    indents the whole log, and vLLM's own lines start at the margin (a traceback's frames keep
    theirs, relative to it)."""
    indents = [len(raw) - len(raw.lstrip()) for raw in raws if raw.strip()]
    common = min(indents, default=0)
    if common == 0 or len(indents) < 2:
        return raws
    return [raw[common:] for raw in raws]


def read_lines(text: str) -> list[LogLine]:
    """The text as LogLines: prefixes removed (also one no rule knows, where vLLM's own lines
    show it), lines a terminal wrapped joined again, pydantic's two-line errors made one."""
    raws = _dedented(list(raw_lines(text)))
    learned = _learned_prefixes(raws)
    width = _cut_width(raws)
    merged: list[LogLine] = []
    last_raw = ""
    for raw in raws:
        line = _parse_with(raw, learned)
        previous = merged[-1] if merged else None
        if previous is not None and _continues(previous, last_raw, line, width):
            # A cut at a space loses the space to rstrip: the line is one short of the width.
            gap = " " if width is not None and len(last_raw) == width - 1 else ""
            merged[-1] = replace(previous, text=previous.text + gap + line.text)
        elif previous is not None and _pydantic_message(previous, line):
            merged[-1] = replace(previous, text=f"{previous.text}: {line.text.strip()}")
        else:
            merged.append(_without_pydantic_noise(line))
        last_raw = raw
    return merged


def _pydantic_message(previous: LogLine, line: LogLine) -> bool:
    return (
        line.text.startswith("  ")
        and "[type=" in line.text
        and _PYDANTIC_FIELD.match(previous.text) is not None
    )


def _without_pydantic_noise(line: LogLine) -> LogLine:
    body = line.text.strip()
    if not body.startswith("Value error, "):
        return line
    # Drop the `[type=..., input_value=ArgsKwargs(...)]` tail: the whole config, truncated.
    return replace(line, text="  " + _PYDANTIC_VALUE_NOISE.sub("", body))
