"""`alerts --lint FILE`: the vLLM metric names an existing rule file or dashboard queries,
checked against a release's (`names.check`), so that a rule that can never fire is found before
the night it should have.

FILE: a Prometheus rule file, a Prometheus Operator `PrometheusRule` (YAML, several documents
allowed) or a Grafana dashboard (JSON). The PromQL is read where those formats keep it (`expr`,
Grafana's `query`/`definition`); string literals and comments in it are skipped, and so are
the recording rules the file defines itself. Names are vLLM's (`vllm:...`) and Ray Serve's
re-exports of them (`ray_vllm:...`, `ray_vllm_...`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from servetune.errors import UsageError
from servetune.monitor import names
from servetune.monitor.limits import Said
from servetune.texts import ErrorText

SCHEMA_VERSION = 1
PROMQL_KEYS = frozenset({"expr", "query", "definition", "expression"})
Format = Literal["rules", "dashboard"]
_NAME = re.compile(r"(?<![\w:])((?:ray_vllm[:_]|vllm:)[A-Za-z0-9_:]*[A-Za-z0-9_])")
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")
_COMMENT = re.compile(r"#[^\n]*")


@dataclass(frozen=True)
class Query:
    """One PromQL expression of the file, and where it is (an alert, a record, a panel)."""

    expr: str
    where: Said


@dataclass(frozen=True)
class Finding:
    check: names.NameCheck
    where: tuple[Said, ...]


@dataclass(frozen=True)
class LintReport:
    file: str
    format: Format
    release: names.Release
    findings: tuple[Finding, ...]

    @property
    def dead(self) -> int:
        return sum(1 for f in self.findings if f.check.dead)

    def to_json(self) -> dict[str, object]:
        """What `alerts --lint FILE --format json` prints (English)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "file": self.file,
            "format": self.format,
            "vllm_version": self.release.asked,
            "names_of": self.release.table,
            "engine": self.release.engine,
            "names": [
                {
                    "name": f.check.name,
                    "status": f.check.status,
                    "reason": f.check.reason,
                    "metric": f.check.family,
                    "use": f.check.use,
                    "last": f.check.last,
                    "first": f.check.first,
                    "where": [w.text() for w in f.where],
                }
                for f in self.findings
            ],
            "dead": self.dead,
        }


def _documents(text: str, file: str) -> tuple[Format, list[object]]:
    try:
        return "dashboard", [json.loads(text)]
    except ValueError:
        pass
    import yaml

    try:
        return "rules", [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        reason = str(exc).splitlines()[0]
        error = ErrorText("monitor.not-rules", path=file, reason=reason)
        raise UsageError(error, ErrorText("hint.alert-rules")) from exc


def _where(node: dict[object, object], path: str) -> Said:
    for key, text_key in (("alert", "alert"), ("record", "record"), ("title", "panel")):
        value = node.get(key)
        if isinstance(value, str):
            return Said(f"lint.where.{text_key}", name=value)
    return Said("lint.where.path", path=path or "/")


def _walk(node: object, path: str, where: Said | None) -> Iterator[tuple[str, object, Said]]:
    """(key, value, where) of every mapping entry, the nearest alert/record/panel as where."""
    if isinstance(node, dict):
        here = _where(node, path)
        if here.key == "lint.where.path" and where is not None:
            here = where
        for key, value in node.items():
            yield str(key), value, here
            yield from _walk(value, f"{path}.{key}" if path else str(key), here)
    elif isinstance(node, list):
        for n, item in enumerate(node):
            yield from _walk(item, f"{path}[{n}]", where)


def queries(documents: list[object]) -> tuple[list[Query], set[str]]:
    """The file's PromQL expressions, and the series its own recording rules define."""
    found: list[Query] = []
    records: set[str] = set()
    for document in documents:
        for key, value, where in _walk(document, "", None):
            if key == "record" and isinstance(value, str):
                records.add(value)
            elif key in PROMQL_KEYS and isinstance(value, str):
                found.append(Query(value, where))
    return found, records


def series_names(expr: str) -> list[str]:
    """The vLLM series an expression names (outside string literals and comments)."""
    bare = _STRING.sub('""', _COMMENT.sub("", expr))
    return list(dict.fromkeys(_NAME.findall(bare)))


def lint(text: str, file: str, vllm_version: str | None) -> LintReport:
    """Every vLLM series the file queries, checked against the release (None: the newest)."""
    where = names.release(vllm_version)
    kind, documents = _documents(text, file)
    found, records = queries(documents)
    places: dict[str, list[Said]] = {}
    for query in found:
        for name in series_names(query.expr):
            if name not in records:
                spots = places.setdefault(name, [])
                if query.where not in spots:
                    spots.append(query.where)
    findings = tuple(
        Finding(names.check(name, where), tuple(spots)) for name, spots in places.items()
    )
    return LintReport(file, kind, where, findings)
