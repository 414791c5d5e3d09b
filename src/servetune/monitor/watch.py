"""`watch`: sample a running server's /metrics every interval and name the limit that binds now.

The loop takes its clock, its sleeper and its fetcher as parameters (tests run it in virtual
time against recorded pages). A scrape that fails or times out is a gap, said so; the server
refusing connections `GONE_AFTER` times in a row has gone away, which ends the watch. The state
(`Watch`) lives outside the loop, so that an interrupted watch can still give its summary.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from servetune.errors import NoMetrics, ServerUnreachable, ServetuneError
from servetune.measure.client import HttpClient, RequestFailed
from servetune.monitor import window
from servetune.monitor.caps import Caps
from servetune.monitor.limits import STALL_S, Limit, Said, Verdict, diagnose, dominant
from servetune.monitor.scrape import Scrape, read
from servetune.texts import ErrorText

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
Fetch = Callable[[], Awaitable[str]]
FailureKind = Literal["timeout", "refused", "http", "error"]
GONE_AFTER = 3


class ScrapeFailed(Exception):
    """One scrape that brought no page."""

    def __init__(self, kind: FailureKind, detail: str = "", status: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind: FailureKind = kind
        self.detail = detail
        self.status = status

    def reason(self) -> Said:
        if self.kind == "http":
            return Said("gap.http", status=self.status or 0)
        if self.kind == "error":
            return Said("gap.error", detail=self.detail or "?")
        return Said(f"gap.{self.kind}")


@dataclass(frozen=True)
class WatchConfig:
    """One watch: where, how often, over which window, for how long (None: until stopped)."""

    url: str
    interval_s: float = 2.0
    window_s: float = 30.0
    duration_s: float | None = None
    timeout_s: float = 5.0


@dataclass(frozen=True)
class Tick:
    """One interval: the server's state, the window's rates and percentiles, and its limit."""

    t: float  # unix seconds (the clock's)
    elapsed_s: float
    verdict: Verdict
    cap: int | None = None  # the sequence ceiling the verdict was judged against
    running: int | None = None
    waiting: int | None = None
    kv_cache_usage: float | None = None
    preemptions_per_s: float | None = None
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    itl_p50_ms: float | None = None
    itl_p99_ms: float | None = None
    gap: Said | None = None  # why there was no page this interval

    def to_json(self) -> dict[str, object]:
        """One JSON Lines object (English, whatever the language of the terminal view)."""
        step = self.verdict.next_step
        return {
            "t": self.t,
            "running": self.running,
            "waiting": self.waiting,
            "kv_cache_usage": self.kv_cache_usage,
            "preemptions_per_s": self.preemptions_per_s,
            "prompt_tokens_per_s": self.prompt_tokens_per_s,
            "generation_tokens_per_s": self.generation_tokens_per_s,
            "ttft_p99_ms": self.ttft_p99_ms,
            "itl_p99_ms": self.itl_p99_ms,
            "limit": self.verdict.limit,
            "evidence": self.verdict.evidence.text(),
            "next_step": step.text() if step is not None else None,
        }


@dataclass(frozen=True)
class Summary:
    """The whole watch: seconds under each limit, the dominant one and its next step."""

    seconds: float
    by_limit: Mapping[Limit, float]
    dominant: Limit
    next_step: Said | None = None

    def to_json(self) -> dict[str, object]:
        by_limit = {limit: round(s, 3) for limit, s in self.by_limit.items()}
        return {
            "summary": {
                "seconds": round(self.seconds, 3),
                "by_limit": by_limit,
                "dominant": self.dominant,
            }
        }


@dataclass(frozen=True)
class Ending:
    """Why the loop stopped: the duration ran out, or the server went away."""

    kind: Literal["duration", "gone"]
    reason: Said | None = None


def _count(value: float | None) -> int | None:
    return None if value is None else round(value)


@dataclass
class Watch:
    """The state of one watch: the recent points, the seconds spent under each limit."""

    caps: Caps
    window_s: float
    start: float
    by_limit: dict[Limit, float] = field(default_factory=dict)
    _history: deque[window.Point] = field(default_factory=deque)
    _last_page: tuple[float, Scrape] | None = None
    _last_t: float | None = None
    _steps: dict[Limit, Said | None] = field(default_factory=dict)

    @property
    def seen(self) -> bool:
        return self._last_page is not None

    def _account(self, t: float, verdict: Verdict) -> None:
        if self._last_t is not None:
            self.by_limit[verdict.limit] = self.by_limit.get(verdict.limit, 0.0) + t - self._last_t
        self._last_t = t
        self._steps[verdict.limit] = verdict.next_step

    def _keep(self, p: window.Point) -> None:
        self._history.append(p)
        horizon = max(self.window_s, STALL_S) + p.dt
        while self._history and self._history[0].t < p.t - horizon:
            self._history.popleft()

    def add(self, t: float, page: str) -> Tick:
        """A page scraped at `t`: its point, the window's signals, the limit now."""
        scrape = read(page)
        p = window.point(t, scrape, self._last_page)
        self._last_page = (t, scrape)
        self._keep(p)
        history = list(self._history)
        signals = window.signals(window.recent(history, self.window_s), window.stalled_for(history))
        verdict = diagnose(signals, self.caps)
        self._account(t, verdict)
        return Tick(
            t=t,
            elapsed_s=t - self.start,
            verdict=verdict,
            cap=self.caps.seqs_ceiling,
            running=_count(p.running),
            waiting=_count(p.waiting),
            kv_cache_usage=p.kv_cache_usage,
            preemptions_per_s=signals.preemptions_per_s,
            prompt_tokens_per_s=signals.prompt_tokens_per_s,
            generation_tokens_per_s=signals.generation_tokens_per_s,
            ttft_p50_ms=signals.ttft_p50_ms,
            ttft_p99_ms=signals.ttft_p99_ms,
            itl_p50_ms=signals.itl_p50_ms,
            itl_p99_ms=signals.itl_p99_ms,
        )

    def gap(self, t: float, reason: Said) -> Tick:
        """An interval without a page: counted as `unknown`, said so."""
        verdict = Verdict("unknown", Said("evidence.unknown:gap", reason=reason))
        self._account(t, verdict)
        return Tick(t=t, elapsed_s=t - self.start, verdict=verdict, gap=reason)

    def summary(self) -> Summary:
        seconds = sum(self.by_limit.values())
        limit = dominant(self.by_limit)
        return Summary(seconds, dict(self.by_limit), limit, self._steps.get(limit))


def http_fetch(client: HttpClient, timeout_s: float) -> Fetch:
    """GET /metrics on `client`'s server; every failure a `ScrapeFailed`."""

    async def fetch() -> str:
        try:
            response = await client.request("GET", "/metrics", timeout_s=timeout_s)
        except TimeoutError as exc:
            raise ScrapeFailed("timeout") from exc
        except RequestFailed as exc:
            kind: FailureKind = "refused" if exc.kind == "connect" else "error"
            raise ScrapeFailed(kind, exc.detail) from exc
        except OSError as exc:
            raise ScrapeFailed("error", exc.strerror or str(exc)) from exc
        if response.status != 200:
            raise ScrapeFailed("http", status=response.status)
        return response.body.decode("utf-8", "replace")

    return fetch


def _first_failure(config: WatchConfig, failed: ScrapeFailed) -> ServetuneError:
    if failed.kind == "http" and failed.status == 404:
        return NoMetrics(ErrorText("monitor.no-metrics", url=config.url))
    return ServerUnreachable(
        ErrorText("monitor.cannot-scrape", url=config.url, reason=failed.reason())
    )


async def run(
    config: WatchConfig,
    state: Watch,
    fetch: Fetch,
    *,
    clock: Clock,
    sleep: Sleep,
    emit: Callable[[Tick], None],
) -> Ending:
    """Scrape every `interval_s` on the clock's cadence (a late scrape skips the ticks it
    missed), hand each interval to `emit`, and stop when the duration runs out or the server
    has gone away. The first scrape must succeed (else nothing can be watched)."""
    refused = 0
    tick = 0
    while True:
        try:
            page = await fetch()
        except ScrapeFailed as failed:
            if not state.seen:
                raise _first_failure(config, failed) from failed
            refused = refused + 1 if failed.kind == "refused" else 0
            if refused >= GONE_AFTER:
                return Ending("gone", failed.reason())
            emit(state.gap(clock(), failed.reason()))
        else:
            refused = 0
            emit(state.add(clock(), page))
        elapsed = clock() - state.start
        if config.duration_s is not None and elapsed >= config.duration_s - 1e-9:
            return Ending("duration")
        tick = max(tick + 1, math.floor(elapsed / config.interval_s) + 1)
        await sleep(max(0.0, state.start + tick * config.interval_s - clock()))
