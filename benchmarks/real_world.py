"""How servetune's judgements fare on real material: check, doctor and the memory estimate scored
against what really happened, on the `fit` part and the `held-out` part of the corpus apart.

The corpus (tests/data/corpus/, see its README) holds serve commands with their outcome, log
excerpts with their status and root cause, and the memory vLLM logged at startup, each with the
URL it came from. A record's `split` was fixed by its source when it was added (a hash of the
source), before servetune was run on it: rules and constants are tuned on `fit` only, so the
`held-out` scores are the ones that say how servetune does on material it was not built from.
The older tables (tests/data/real_commands.json, real_gpu_memory.json) are all `fit`: the rules
were written from them.

    .venv/bin/python benchmarks/real_world.py            # the score table
    .venv/bin/python benchmarks/real_world.py --misses   # and every record scored wrong
    .venv/bin/python benchmarks/real_world.py --misses --split fit   # the fit part's only
    .venv/bin/python benchmarks/real_world.py --json     # the scores as JSON

The targets (issue 18): check names the right rule on >= 90% of the failed starts a static
review can catch and raises no error on >= 95% of the commands that ran; doctor gets status, root
cause and diagnosis right on >= 90% of excerpts; the KV cache estimate is within 10% of vLLM's
figure on >= 80% of memory records.

How a record is read (fair, not lenient):
- `expect` (commands) and `diagnosis` (logs) name the check rule or doctor diagnosis id that
  says the record's cause. `other:X` is a family label the collector gave where no rule or
  diagnosis existed then: once a check rule or a doctor diagnosis with id X exists, X is the
  expected id (for check and doctor alike); until then a failed start labelled `other:X` counts
  as missed by check, and doctor is scored on status and root cause alone. `_SAME_CAUSE` names
  the few labels given for a rule that already existed under another id (the rule's own
  docstring quotes the record's error message); each is listed there with the reason.
- a record's `root_cause` that is itself a wrapper ("Engine core initialization failed. See
  root cause above.") says the excerpt holds no cause: doctor's contract is then no root cause
  (a wrapper is evidence, never the cause; tests/launch/test_doctor.py), and that is scored
  right; any other root cause doctor gives for it is wrong.
- `vllm_version` may be prose (">=0.21.0 (the log says ...)", "0.6.6 (main, ...; inferred)"):
  the first X.Y.Z in it (or X.Y) is the release reviewed, for commands and memory alike. A
  version the record does not give stays unknown: the newest release is assumed, as for a user
  who names none.
- a record whose `command` names no command (`CommandParseError`: a launcher script, a recipe,
  a summary of settings) is reviewed from the configuration vLLM itself logged in the record's
  quote (`vllm_said` for commands, `quote` for memory), where it holds one: the engine config
  line, `non-default args: {...}` or `args: Namespace(...)`, read as check reads them when
  pasted (python_spellings), the same for every record. Only those lines are read: what vLLM
  reported after starting (KV tokens, GPU blocks) is never an input.
- a memory record that names no release is dated by its own quoted lines: each logger prefix
  (`distributed_gpu_executor.py:45]`) is a place only some releases log from
  (tests/data/corpus/log_line_releases.json, built from every release's sdist by
  benchmarks/log_line_releases.py); the newest release every quoted place fits is reviewed.
  A record whose places fit no release, or that quotes none, stays undated (the newest).
- a V0 record that logged `# GPU blocks` without its block size ran with the one its command
  sets, as check reads it (`--block-size`, `block_size=` in `LLM(...)`), else vLLM's default,
  16 on GPUs in every release (`EngineArgs.block_size`); records on devices that size their own
  blocks (Gaudi, Neuron, TPU) are scored on GiB or not at all.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servetune import ServetuneError, check_text, diagnose
from servetune.review.check import CheckOptions, Report
from servetune.review.rules import RULES
from servetune.review.settings import DEFAULT_BLOCK_SIZE
from servetune.texts import table
from servetune.vllm import python_spellings
from servetune.vllm.log import is_wrapper, parse_line

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CORPUS = DATA / "corpus"
SPLITS = ("fit", "held-out")
KV_TOLERANCE = 0.10  # within 10% of vLLM's figure
FAR_OFF = 2.0  # more than 2x off needs a note in the report that says why


@dataclass(frozen=True)
class Score:
    """One record's outcome under one judgement: right or not, and in which family."""

    part: str  # "check: ran", "check: failed start", "doctor", "memory"
    split: str
    record: str
    right: bool
    family: str
    detail: str


@dataclass
class Tally:
    scores: list[Score] = field(default_factory=list)

    def add(self, score: Score) -> None:
        self.scores.append(score)

    def table(self) -> dict[str, dict[str, tuple[int, int]]]:
        out: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
        for part in dict.fromkeys(s.part for s in self.scores):
            for split in SPLITS:
                these = [s for s in self.scores if s.part == part and s.split == split]
                out[part][split] = (sum(s.right for s in these), len(these))
        return out


def _load(path: Path) -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _records(path: Path) -> list[Mapping[str, Any]]:
    if not path.exists():
        return []
    records: list[Mapping[str, Any]] = _load(path)["records"]
    return records


# --- reading a record ---------------------------------------------------------------------------

# Family labels given for a cause an existing rule already named under another id: the label's
# error message is the one the rule's docstring quotes.
_SAME_CAUSE = {
    # quant-tp-shape: "Weight input_size_per_partition = 14784 is not divisible by
    # min_thread_k = 128", "The input size is not aligned with the quantized weight shape".
    "other:quant-group-tp-misaligned": "quant-tp-shape",
}
_VERSION_IN_PROSE = re.compile(r"\d+\.\d+(?:\.\d+)?(?:\.post\d+)?")


def _known_ids() -> frozenset[str]:
    """Every check rule id and every doctor diagnosis id (those with texts)."""
    doctor = {key.split(".")[0].split(":")[0] for key in table("doctor", "en")}
    return frozenset({r.id for r in RULES} | doctor)


def expected_id(label: str | None) -> str | None:
    """The rule or diagnosis id a record's `expect` / `diagnosis` names (see the docstring)."""
    if label is None or not label.startswith("other:"):
        return label
    if label in _SAME_CAUSE:
        return _SAME_CAUSE[label]
    name = label.removeprefix("other:")
    return name if name in _known_ids() else label


def release(record: Mapping[str, Any]) -> str | None:
    """The release a record names: its `vllm_version`, or the first X.Y.Z of it where it is
    prose; None where it names none."""
    given = record.get("vllm_version")
    if not given:
        return None
    text = str(given).strip()
    if re.fullmatch(r"v?\d+\.\d+\S*", text):
        return text
    found = _VERSION_IN_PROSE.search(text)
    return found.group(0) if found else None


# --- check --------------------------------------------------------------------------------------


def _review(command: str, gpus: str | None, version: str | None) -> Report | str:
    options = CheckOptions(gpus=gpus, vllm_version=version, detect_hardware=False)
    try:
        return check_text(command, options)
    except ServetuneError as error:
        return f"{type(error).__name__}: {error.message}"


def _logged_command(quote: object) -> str | None:
    """The command vLLM's own logged configuration in a record's quote amounts to, if any."""
    if not isinstance(quote, str):
        return None
    words = python_spellings.logged_args(quote) or python_spellings.config_line(quote)
    return shlex.join(words) if words else None


def _review_record(record: Mapping[str, Any], quote_key: str) -> Report | str:
    """The record's command reviewed; where it names no command, the configuration vLLM
    logged in its quote (see the docstring)."""
    report = _review(record["command"], record.get("gpus"), release(record))
    logged = _logged_command(record.get(quote_key))
    if isinstance(report, str) and report.startswith("CommandParseError") and logged:
        return _review(logged, record.get("gpus"), release(record))
    return report


def _errors(report: Report) -> set[str]:
    return {f.rule for f in report.findings if f.severity == "error"}


def score_command(record: Mapping[str, Any]) -> Score | None:
    """A command that ran must draw no error; a failed start a static review can catch must draw
    the rule that names its cause. Failed starts only a run could show are not scored."""
    outcome, expect = record["outcome"], str(expected_id(str(record["expect"])))
    if outcome == "failed" and not record.get("static", True):
        return None
    report = _review_record(record, "vllm_said")
    split, name = record["split"], record["id"]
    if outcome == "ran":
        errors = set() if isinstance(report, str) else _errors(report)
        right = not isinstance(report, str) and not errors
        detail = report if isinstance(report, str) else f"errors {sorted(errors)}"
        return Score("check: ran", split, name, right, record.get("spelling", "?"), detail)
    found = set() if isinstance(report, str) else {f.rule for f in report.findings}
    right = expect in found
    detail = report if isinstance(report, str) else f"expected {expect}, found {sorted(found)}"
    return Score("check: failed start", split, name, right, expect, detail)


def _with_files(record: Mapping[str, Any], folder: Path) -> str:
    """The command with the files it names (a `--config` YAML) written out and pointed at."""
    command = str(record["command"])
    for index, (name, text) in enumerate(record.get("files", {}).items()):
        local = folder / f"{index}-{Path(name).name}"
        local.write_text(text, encoding="utf-8")
        command = command.replace(name, str(local))
    return command


def score_old_command(record: Mapping[str, Any]) -> Score:
    """tests/data/real_commands.json (all fit): `ran`, `parsed` or the rule vLLM's refusal names."""
    with tempfile.TemporaryDirectory() as folder:
        command = _with_files(record, Path(folder))
        report = _review(command, record.get("gpus"), release(record))
    expect = str(expected_id(str(record["expect"])))
    errors = set() if isinstance(report, str) else _errors(report)
    if expect in {"ran", "parsed"}:
        part = "check: ran"
        right = not isinstance(report, str) and (expect == "parsed" or not errors)
    else:
        part, right = "check: failed start", expect in errors
    return Score(part, "fit", record["url"], right, expect, f"errors {sorted(errors)}")


# --- doctor -------------------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")


def _same_line(ours: str | None, theirs: str | None) -> bool:
    """The record quotes the whole log line; ours is the error without its prefix. The quoted
    line is also read as doctor reads it (prefixes and colour codes, in any spelling, removed):
    a line a terminal wrapped is quoted by its first part, and ours joins the rest to it."""
    if theirs is None or is_wrapper(theirs):
        return ours is None
    if ours is None:
        return False
    a = _SPACES.sub(" ", ours).strip()
    quoted = (theirs, parse_line(theirs).text)
    # A short line (`Killed`) counts only whole: a part of 10 characters or more is enough.
    return any(
        a == b or (len(a) >= 10 and (a in b or b in a))
        for b in (_SPACES.sub(" ", text).strip() for text in quoted)
    )


def score_log(record: Mapping[str, Any]) -> Score:
    text = (CORPUS / "logs" / record["file"]).read_text(encoding="utf-8", errors="replace")
    split, name, status = record["split"], record["id"], record["status"]
    try:
        report = diagnose(text)
    except ServetuneError as error:
        right = status == "not-vllm"
        return Score("doctor", split, name, right, status, f"refused: {error.message}")
    ids = [d.id for d in report.diagnoses]
    problems = []
    if report.status != status:
        problems.append(f"status {report.status}, not {status}")
    if status == "failed" and not _same_line(report.root_cause, record.get("root_cause")):
        problems.append(f"root cause {report.root_cause!r}")
    wanted = expected_id(record.get("diagnosis"))
    if status == "failed" and wanted and not str(wanted).startswith("other:") and wanted not in ids:
        problems.append(f"diagnoses {ids}, not {wanted}")
    family = str(wanted or status)
    return Score("doctor", split, name, not problems, family, "; ".join(problems) or "right")


# --- memory -------------------------------------------------------------------------------------


def _kv_figures(report: Report) -> tuple[float | None, float | None]:
    est = report.estimate
    if est is None:
        return None, None
    tokens = None if est.kv_cache_tokens is None else float(est.kv_cache_tokens)
    return tokens, est.kv_available_gib_per_gpu


_OWN_BLOCK_SIZE = re.compile(r"gaudi|hpu|neuron|tpu|inferentia|trainium", re.IGNORECASE)


def _block_size(record: Mapping[str, Any], report: Report | str) -> int | None:
    """The block size a V0 start ran with: logged, else the one check reads from the command
    (`--block-size`, vLLM's default of 16 when unset); devices that size their own blocks are
    not read. A command check refuses ran at vLLM's default."""
    logged = record["logged"].get("block_size")
    if logged:
        return int(logged)
    if _OWN_BLOCK_SIZE.search(str(record.get("gpus") or "")):
        return None
    return DEFAULT_BLOCK_SIZE if isinstance(report, str) else report.settings.block_size


def _logged(record: Mapping[str, Any], report: Report | str) -> tuple[str, float] | None:
    """The KV figure vLLM logged: tokens (V1), blocks times the block size (V0), or GiB."""
    logged = record["logged"]
    if logged.get("kv_tokens"):
        return "tokens", float(logged["kv_tokens"])
    block_size = _block_size(record, report)
    if logged.get("gpu_blocks") and block_size:
        return "tokens", float(logged["gpu_blocks"] * block_size)
    if logged.get("kv_cache_gib"):
        return "gib", float(logged["kv_cache_gib"])
    return None


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def _named_checkpoint(record: Mapping[str, Any], report: Report | str) -> str | None:
    """The Hub id the record's `model` names for a command whose model check cannot resolve
    here (a local path, a shell variable): on the user's machine check reads that path's
    config.json, which is the checkpoint the collector named. None when check resolved the
    model, or the record names no Hub id (`org/name` as its first word)."""
    if isinstance(report, str) or report.model is not None or not report.command.model:
        return None
    words = str(record.get("model") or "").split()
    named = words[0] if words else ""
    if not _HUB_ID.fullmatch(named) or named.startswith((".", "/", "~")):
        return None
    return named if named != report.command.model else None


def _memory_review(record: Mapping[str, Any]) -> Report | str:
    """The record reviewed for its memory figures: where the command's model is a path or a
    variable check cannot read here, with the checkpoint the record names in its place."""
    report = _review_record(record, "quote")
    named = _named_checkpoint(record, report)
    if named is None or isinstance(report, str) or report.command.model is None:
        return report
    given = report.command.model
    command = record["command"]
    if given not in command:
        logged = _logged_command(record.get("quote"))
        command = logged if logged and given in logged else command
    if given not in command:
        return report
    replaced = {**record, "command": command.replace(given, named)}
    return _review_record(replaced, "quote")


_LOGGED_AT = re.compile(r"\b([A-Za-z_][\w]*\.py):(\d+)\]")


def _log_line_releases() -> Mapping[str, list[str]]:
    path = CORPUS / "log_line_releases.json"
    lines: Mapping[str, list[str]] = _load(path)["lines"] if path.exists() else {}
    return lines


def logged_release(record: Mapping[str, Any]) -> str | None:
    """The newest release whose source logs every line the record quotes from where the
    quote's prefixes say (`file.py:line]`), for a record that names no release; None where
    it names one, quotes no known place or no release fits them all."""
    if release(record) is not None:
        return None
    table = _log_line_releases()
    places = {f"{m.group(1)}:{m.group(2)}" for m in _LOGGED_AT.finditer(str(record.get("quote")))}
    known = [table[place] for place in sorted(places) if place in table]
    if not known:
        return None
    fits = set(known[0]).intersection(*known[1:])
    return next((v for v in reversed(known[0]) if v in fits), None)


def score_memory(record: Mapping[str, Any]) -> Score | None:
    if not record.get("gpus"):
        return None
    dated = logged_release(record)
    if dated is not None:
        record = {**record, "vllm_version": dated}
    report = _memory_review(record)
    figure = _logged(record, report)
    if figure is None:
        return None
    kind, theirs = figure
    split, name = record["split"], record["id"]
    if isinstance(report, str):
        return Score("memory", split, name, False, "refused", report)
    tokens, gib = _kv_figures(report)
    ours = tokens if kind == "tokens" else gib
    if ours is None:
        return Score("memory", split, name, False, "no estimate", "no KV figure")
    ratio = ours / theirs if theirs else float("inf")
    right = abs(ratio - 1) <= KV_TOLERANCE
    noted = bool(report.estimate and report.estimate.notes)
    family = "far off, no note" if not (1 / FAR_OFF <= ratio <= FAR_OFF) and not noted else kind
    return Score("memory", split, name, right, family, f"ours/vLLM {ratio:.2f} ({kind})")


def score_old_memory(case: Mapping[str, Any]) -> Score | None:
    """tests/data/real_gpu_memory.json (all fit): one logged number per case."""
    metric = case["metric"]
    if metric == "weights_gib":
        return None
    record = {"logged": {}, "gpus": case["gpus"], "command": case["command"]}
    record["vllm_version"], record["split"], record["id"] = case["vllm_version"], "fit", case["id"]
    key = {"kv_cache_gib": "kv_cache_gib", "kv_cache_tokens": "kv_tokens"}.get(metric)
    if metric == "gpu_blocks":
        record["logged"] = {"gpu_blocks": case["vllm_value"], "block_size": 16}
    elif key is not None:
        record["logged"] = {key: case["vllm_value"]}
    return score_memory(record)


# --- the run ------------------------------------------------------------------------------------


def _each(
    tally: Tally, records: Iterable[Mapping[str, Any]], scorer: Callable[..., Score | None]
) -> None:
    for record in records:
        score = scorer(record)
        if score is not None:
            tally.add(score)


def run() -> Tally:
    tally = Tally()
    _each(tally, _load(DATA / "real_commands.json")["commands"], score_old_command)
    _each(tally, _records(CORPUS / "commands.json"), score_command)
    _each(tally, _records(CORPUS / "logs.json"), score_log)
    _each(tally, _load(DATA / "real_gpu_memory.json")["cases"], score_old_memory)
    _each(tally, _records(CORPUS / "memory.json"), score_memory)
    return tally


def _pct(right: int, total: int) -> str:
    return f"{right}/{total} ({right / total:.0%})" if total else "-"


def _release(record: Mapping[str, Any]) -> str:
    found = re.match(r"v?(\d+\.\d+)", str(record.get("vllm_version") or ""))
    return found.group(1) if found else "not stated"


def _gpu(record: Mapping[str, Any]) -> str:
    gpus = str(record.get("gpus") or "").split("+")[0].strip()
    name = re.sub(r"^\d+\s*x\s*", "", gpus)
    name = re.sub(r"[-_ ]?\d+\s*GB$", "", name, flags=re.IGNORECASE).replace("-", " ")
    return name or "not stated"


def _family(part: str, record: Mapping[str, Any]) -> str:
    if part == "commands":
        return f"{record['outcome']}: {record['expect']}".split(":")[0] + (
            f" ({record.get('spelling')})" if record["outcome"] == "ran" else ""
        )
    if part == "logs":
        return str(record["status"])
    return str(record.get("engine") or "engine not stated")


def corpus_counts() -> dict[str, dict[str, Counter[str]]]:
    """Records by split, family, release and GPU in each part of the corpus (the README's)."""
    counts: dict[str, dict[str, Counter[str]]] = {}
    for part in ("commands", "logs", "memory"):
        records = _records(CORPUS / f"{part}.json")
        counts[part] = {
            "split": Counter(str(r["split"]) for r in records),
            "sources": Counter({"sources": len({r["source_key"] for r in records})}),
            "family": Counter(_family(part, r) for r in records),
            "release": Counter(_release(r) for r in records),
            "gpu": Counter(_gpu(r) for r in records),
        }
    return counts


def _print_counts() -> None:
    for part, by in corpus_counts().items():
        total = sum(by["split"].values())
        print(
            f"{part}: {total} records from {by['sources']['sources']} sources, {dict(by['split'])}"
        )
        for kind in ("family", "release", "gpu"):
            common = ", ".join(f"{name} {n}" for name, n in by[kind].most_common(12))
            print(f"  by {kind}: {common}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list every record scored wrong")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--counts", action="store_true", help="the corpus by family, release, GPU")
    parser.add_argument(
        "--split",
        choices=SPLITS,
        help="list the misses of this part only (tune on `fit`: look at held-out misses by family)",
    )
    args = parser.parse_args()
    if args.counts:
        _print_counts()
        return 0
    tally = run()
    table = tally.table()
    if args.json:
        scores = {
            p: {s: {"right": r, "total": t} for s, (r, t) in v.items()} for p, v in table.items()
        }
        print(json.dumps({"scores": scores, "corpus": corpus_counts()}, indent=2))
        return 0
    print(f"{'judgement':<22} {'fit':>16} {'held-out':>16}")
    for part, by_split in table.items():
        print(f"{part:<22} {_pct(*by_split['fit']):>16} {_pct(*by_split['held-out']):>16}")
    if args.misses:
        for score in tally.scores:
            if not score.right and args.split in (None, score.split):
                print(
                    f"  [{score.split}] {score.part} {score.record}: {score.family}: {score.detail}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
