"""vLLM's /metrics names by release, read from vLLM's own sources: every metric each release
defines (`data/vllm_metrics.json`, built by scripts/build_metric_tables.py from the sdists of
0.6.0 to 0.33.0), with its kind and the engine that exports it.

Names are kept as Prometheus scrapes them: a counter with `_total` (prometheus_client adds it,
so V1's `vllm:num_preemptions` and V0's `vllm:num_preemptions_total` are one series), a
histogram by its base name (scraped as `_bucket`, `_sum`, `_count`). In a release, a metric is
`live` in the engine `vllm serve` runs by default (V0 up to 0.7, V1 from 0.8), `hidden` (only
with `--show-hidden-metrics-for-version`), `other-engine` (only in the engine that release runs
when asked: `VLLM_USE_V1=0` in 0.8-0.10, `VLLM_USE_V1=1` in 0.7), or absent.

`scrape`'s tables (a field's names, newest first) are the ones `pick` reads against a release,
and they tell which name replaced which.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal, cast

from servetune import _data
from servetune.errors import UsageError
from servetune.measure.server_metrics import NAMES
from servetune.monitor.scrape import COUNTERS, GAUGES, HISTOGRAMS, canonical
from servetune.texts import ErrorText

Engine = Literal["v0", "v1"]
Kind = Literal["gauge", "counter", "histogram", "unknown"]
State = Literal["live", "hidden", "other-engine", "absent"]
Status = Literal["live", "hidden", "other-engine", "dead"]
# Why a name is dead: gone from the release, not in it yet, a counter without `_total`, a
# histogram queried without its `_bucket`/`_sum`/`_count`, a suffix its kind has not, no release.
Reason = Literal["gone", "not-yet", "no-total", "bare-histogram", "suffix", "never"]
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?")

# V0's gauges that V1 replaced by a query rather than a metric (vLLM's docs on metrics, and
# ../shared/reference/vllm-rules.md 7.2); `scrape`'s tables give the plain renames.
REPLACED_BY_QUERY: Mapping[str, str] = {
    "vllm:avg_prompt_throughput_toks_per_s": "rate(vllm:prompt_tokens_total[1m])",
    "vllm:avg_generation_throughput_toks_per_s": "rate(vllm:generation_tokens_total[1m])",
    "vllm:gpu_prefix_cache_hit_rate": (
        "rate(vllm:prefix_cache_hits_total[5m]) / rate(vllm:prefix_cache_queries_total[5m])"
    ),
    "vllm:time_in_queue_requests": "vllm:request_queue_time_seconds",
}


def version_key(version: str) -> tuple[int, ...]:
    """Release order: 0.6.1 < 0.6.1.post1 < 0.6.2, 0.9.0 < 0.9.0.1."""
    match = _RELEASE.match(version.strip())
    return tuple(int(part or 0) for part in match.groups()) if match else (0,)


@dataclass(frozen=True)
class Family:
    """One metric as scraped, and the releases it exists in, per engine."""

    name: str
    kind: Kind
    source: str  # the file of vLLM's source that defines it (its newest release)
    runs: Mapping[str, tuple[tuple[str, str], ...]]  # "v1", "v1-hidden", "v0", "v0-hidden"

    def releases(self) -> list[str]:
        """Every release it exists in (any engine, hidden or not), oldest first."""
        order = known_releases()
        found = {
            v
            for spans in self.runs.values()
            for first, last in spans
            for v in order[order.index(first) : order.index(last) + 1]
        }
        return sorted(found, key=version_key)


@dataclass(frozen=True)
class Release:
    """The release asked for, the one whose names stand for it, and its default engine."""

    asked: str
    table: str
    engine: Engine

    @property
    def hidden_flag(self) -> str:
        """The flag that brings back the metrics this release hides (those of its previous
        minor release)."""
        major, minor = version_key(self.table)[:2]
        return f"--show-hidden-metrics-for-version={major}.{max(0, minor - 1)}"


@cache
def _table() -> Mapping[str, object]:
    data: Mapping[str, object] = _data.load("vllm_metrics.json")
    return data


@cache
def known_releases() -> tuple[str, ...]:
    """The releases whose sources were read, oldest first."""
    return tuple(cast("list[str]", _table()["releases"]))


@cache
def families() -> Mapping[str, Family]:
    """Every metric any release defines, by its scraped name."""
    raw = cast("dict[str, dict[str, object]]", _table()["metrics"])
    found: dict[str, Family] = {}
    for name, entry in raw.items():
        runs = {
            key: tuple((str(a), str(b)) for a, b in cast("list[list[str]]", value))
            for key, value in entry.items()
            if key not in ("kind", "source")
        }
        found[name] = Family(name, cast("Kind", entry["kind"]), str(entry["source"]), runs)
    return found


def release(version: str | None) -> Release:
    """The names of `version` (None: the newest known): its own where its sources were read,
    else those of the release that stands in for it (a release without an sdist), else those
    of the nearest release at or below it."""
    order = known_releases()
    if version is None:
        return _release(order[-1], order[-1])
    if not _RELEASE.match(version.strip()):
        raise UsageError(ErrorText("monitor.not-a-version", version=repr(version)))
    asked = version.strip().removeprefix("v")
    fallbacks = cast("dict[str, str]", _table()["fallbacks"])
    if asked in order or asked in fallbacks:
        return _release(asked, asked if asked in order else fallbacks[asked])
    older = [v for v in order if version_key(v) <= version_key(asked)]
    if not older:
        raise UsageError(ErrorText("monitor.version-too-old", first=order[0], asked=asked))
    return _release(asked, older[-1])


def _release(asked: str, table: str) -> Release:
    v1_from = str(_table()["v1_default_from"])
    engine: Engine = "v1" if version_key(table) >= version_key(v1_from) else "v0"
    return Release(asked, table, engine)


def _within(spans: Iterable[tuple[str, str]], version: str) -> bool:
    key = version_key(version)
    return any(version_key(a) <= key <= version_key(b) for a, b in spans)


def state(family: Family, where: Release) -> State:
    """Whether a metric is exported by `where`'s default engine, hidden, in its other engine."""
    other = "v0" if where.engine == "v1" else "v1"
    if _within(family.runs.get(where.engine, ()), where.table):
        return "live"
    if _within(family.runs.get(f"{where.engine}-hidden", ()), where.table):
        return "hidden"
    if any(_within(family.runs.get(k, ()), where.table) for k in (other, f"{other}-hidden")):
        return "other-engine"
    return "absent"


def live(name: str, where: Release) -> bool:
    family = families().get(name)
    return family is not None and state(family, where) == "live"


def pick(names: Iterable[str], where: Release) -> str | None:
    """The first of a field's names (newest first) that `where` exports; None if none."""
    return next((n for n in names if live(n, where)), None)


@cache
def _renamed() -> Mapping[str, tuple[str, ...]]:
    """Each older name of a field -> the field's names, newest first (from `scrape`'s tables)."""
    tables = [*GAUGES.values(), *COUNTERS.values(), *HISTOGRAMS.values(), *NAMES.values()]
    return {old: names for names in tables for old in names[1:]}


def replacement(family: str, where: Release) -> str | None:
    """What to query instead of a metric `where` does not export: the field's newer name that
    it does, or the query that replaced a V0 gauge."""
    newer = pick(_renamed().get(family, ()), where)
    if newer is not None and newer != family:
        return newer
    return REPLACED_BY_QUERY.get(family)


@dataclass(frozen=True)
class NameCheck:
    """A series name a query uses, against one release."""

    name: str  # as written (Ray's spelling too)
    family: str | None  # the metric it belongs to; None: no release defines one
    status: Status
    reason: Reason | None = None  # why it is dead
    use: str | None = None  # the series to query instead
    last: str | None = None  # gone: the last release that had it
    first: str | None = None  # not yet: the first release that has it

    @property
    def dead(self) -> bool:
        return self.status == "dead"


def _family_of(series: str) -> tuple[Family | None, str]:
    """The metric a series belongs to, and the suffix it was queried with."""
    known = families()
    if series in known:
        return known[series], ""
    for suffix in (*HISTOGRAM_SUFFIXES, "_created"):
        base = series.removesuffix(suffix)
        if base != series:
            for name in (base, base + "_total"):
                if name in known:
                    return known[name], suffix
    return None, ""


def _shape(family: Family, suffix: str, series: str) -> NameCheck | None:
    """Dead by its spelling whatever the release: a bare histogram, a suffix its kind lacks."""
    if family.kind == "unknown" or suffix == "_created":
        return None
    if family.kind == "histogram" and not suffix:
        return NameCheck(series, family.name, "dead", "bare-histogram", family.name + "_bucket")
    if family.kind != "histogram" and suffix:
        return NameCheck(series, family.name, "dead", "suffix", family.name)
    return None


def _in_release(family: Family, series: str, where: Release) -> NameCheck:
    found = state(family, where)
    if found != "absent":
        return NameCheck(series, family.name, found)
    having = family.releases()
    key = version_key(where.table)
    later = [v for v in having if version_key(v) > key]
    earlier = [v for v in having if version_key(v) < key]
    use = replacement(family.name, where)
    if earlier and not later:
        return NameCheck(series, family.name, "dead", "gone", use, last=earlier[-1])
    if later and not earlier:
        return NameCheck(series, family.name, "dead", "not-yet", use, first=later[0])
    return NameCheck(
        series, family.name, "dead", "gone", use, last=earlier[-1] if earlier else None
    )


def check(series: str, where: Release) -> NameCheck:
    """Whether `where` exports the series a query names, and what to use where it does not."""
    name = canonical(series)
    family, suffix = _family_of(name)
    if family is None:
        if name + "_total" in families():
            return NameCheck(series, name + "_total", "dead", "no-total", name + "_total")
        close = difflib.get_close_matches(name, list(families()), n=1, cutoff=0.8)
        return NameCheck(series, None, "dead", "never", close[0] if close else None)
    shaped = _shape(family, suffix, name)
    if shaped is not None:
        return NameCheck(series, shaped.family, "dead", shaped.reason, shaped.use)
    checked = _in_release(family, series, where)
    if checked.dead and checked.use is not None and suffix and checked.use in families():
        return replace(checked, use=checked.use + suffix)
    return checked
