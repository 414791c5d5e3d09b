"""Asking an OpenAI-compatible server the questions: one non-streaming request per question,
temperature 0, a fixed number in flight per server, every failure recorded as an error kind
(never as a wrong answer).

The requests go through the load test's HTTP client (`servetune.measure.client.HttpClient`: one
per server, keep-alive connections, https where the URL says so) on one event loop; an `Asker`
holds the clients and the in-flight limits. The error kinds are the load test's: `http_<status>`,
`connect`, `timeout`, `stream_cut` (the connection closed before the whole answer came),
`malformed` (not HTTP, not JSON, or not a completion) and `cancelled` (Ctrl-C came first).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

from servetune._did_you_mean import suggest
from servetune.errors import UsageError
from servetune.measure.client import (
    ClientLimits,
    Endpoint,
    HttpClient,
    RequestFailed,
    json_body,
    run_event_loop,
)
from servetune.texts import ErrorText

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
MODELS_TIMEOUT_S = 30.0  # GET /v1/models: a server that takes longer is not up
T = TypeVar("T")


@dataclass(frozen=True)
class Server:
    """Where and how to ask: base URL, served model name, endpoint, limits."""

    base_url: str
    model: str
    endpoint: str = CHAT
    max_tokens: int = 512
    timeout_s: float = 300.0
    api_key: str | None = None


@dataclass(frozen=True)
class Reply:
    """What one request gave: the reply text, or the kind of failure."""

    text: str | None
    error: str | None = None


def _body(server: Server, prompt: str) -> bytes:
    payload: dict[str, object] = {
        "model": server.model,
        "temperature": 0,
        "max_tokens": server.max_tokens,
    }
    if server.endpoint == CHAT:
        payload["messages"] = [{"role": "user", "content": prompt}]
    else:
        payload["prompt"] = prompt
    return json_body(payload)


def reply_text(server: Server, data: object) -> str | None:
    """The generated text of a chat or completions answer, None when the shape is not one."""
    if not isinstance(data, dict):
        return None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    if server.endpoint == CHAT:
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return content if isinstance(content, str) else ("" if isinstance(message, dict) else None)
    text = choice.get("text")
    return text if isinstance(text, str) else None


def check_url(base_url: str) -> None:
    """Only http(s) URLs with a host are servers; anything else (file:, a bare host, a bad port)
    is a usage error."""
    try:
        Endpoint.parse(base_url)
    except (UsageError, ValueError):  # ValueError: urllib's port check ("http://h:99999")
        raise UsageError(ErrorText("quality.not-a-url", url=base_url)) from None


def _client(server: Server) -> HttpClient:
    """No idle connections kept: each question gets a fresh one, as with urllib before. A
    server that closes after every answer (HTTP/1.0 style, as Python's http.server does) or an
    idle timeout closing a kept connection just as it is reused would otherwise fail a question
    (`stream_cut`); one connect costs nothing beside a generated answer."""
    limits = ClientLimits(
        connect_timeout_s=server.timeout_s,
        request_timeout_s=server.timeout_s,
        max_idle_connections=0,
    )
    headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
    return HttpClient(Endpoint.parse(server.base_url), limits, headers)


def _failure(exc: Exception) -> str:
    """The error kind of a request that raised `exc`."""
    if isinstance(exc, RequestFailed):
        return exc.kind
    if isinstance(exc, TimeoutError):
        return "timeout"
    return "connect"


def _parse(server: Server, body: bytes) -> Reply:
    try:
        text = reply_text(server, json.loads(body))
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested beyond reason
        return Reply(None, "malformed")
    return Reply(text, None) if text is not None else Reply(None, "malformed")


async def ask(client: HttpClient, server: Server, prompt: str) -> Reply:
    """One question and its reply, or the kind of failure (see the module's docstring)."""
    try:
        response = await client.request("POST", server.endpoint, _body(server, prompt))
    except (RequestFailed, OSError) as exc:  # OSError includes TimeoutError
        return Reply(None, _failure(exc))
    if not 200 <= response.status < 300:
        return Reply(None, f"http_{response.status}")
    return _parse(server, response.body)


def _unreachable(server: Server, why: str | ErrorText) -> UsageError:
    return UsageError(ErrorText("quality.unreachable", url=server.base_url, why=why))


async def served_models(client: HttpClient, server: Server) -> list[str]:
    """Model names from GET /v1/models (empty when the server has no such list); raises a
    usage error when the server cannot be reached, refuses the API key or answers garbage."""
    timeout_s = min(server.timeout_s, MODELS_TIMEOUT_S)
    try:
        response = await client.request("GET", "/v1/models", timeout_s=timeout_s)
    except TimeoutError as exc:
        raise _unreachable(server, ErrorText("quality.no-answer", timeout_s=timeout_s)) from exc
    except RequestFailed as exc:
        malformed = exc.kind == "malformed"
        why = ErrorText("quality.not-http", detail=exc.detail) if malformed else exc.detail
        raise _unreachable(server, why) from exc
    except OSError as exc:
        raise _unreachable(server, str(exc)) from exc
    if response.status in (401, 403):
        raise UsageError(
            ErrorText("quality.key-refused", url=server.base_url, status=response.status)
        )
    if not 200 <= response.status < 300:
        return []
    try:
        data = json.loads(response.body)
    except (ValueError, RecursionError) as exc:
        raise UsageError(ErrorText("quality.models-not-json", url=server.base_url)) from exc
    items = data.get("data") if isinstance(data, dict) else None
    return [m["id"] for m in items or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _wrong_model(server: Server, names: list[str]) -> UsageError:
    guess = suggest(server.model, names)
    served = ", ".join(names)
    message = ErrorText(
        "quality.wrong-model", url=server.base_url, model=server.model, names=served
    )
    if not guess:
        return UsageError(message)
    return UsageError(message, ErrorText("quality.serves-guess", names=served, guess=guess))


def _settled(task: asyncio.Task[tuple[int, Reply]]) -> Reply:
    if task.done() and not task.cancelled() and task.exception() is None:
        return task.result()[1]
    return Reply(None, "cancelled")


class Asker:
    """One HTTP client per server and `concurrency` requests in flight per server (base URL
    and model), for the life of one event loop: `async with Asker(8) as asker: ...`."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self._clients: dict[Server, HttpClient] = {}
        self._slots: dict[tuple[str, str], asyncio.Semaphore] = {}

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.gather(*(client.aclose() for client in self._clients.values()))

    def client(self, server: Server) -> HttpClient:
        if server not in self._clients:
            self._clients[server] = _client(server)
        return self._clients[server]

    async def check_model(self, server: Server) -> None:
        """Fail early, with the served names, when the server does not serve `server.model`."""
        names = await served_models(self.client(server), server)
        if names and server.model not in names:
            raise _wrong_model(server, names)

    async def _ask(self, index: int, server: Server, prompt: str) -> tuple[int, Reply]:
        key = (server.base_url, server.model)
        if key not in self._slots:
            self._slots[key] = asyncio.Semaphore(self.concurrency)
        async with self._slots[key]:
            return index, await ask(self.client(server), server, prompt)

    async def ask_all(
        self,
        pairs: Sequence[tuple[Server, str]],
        on_reply: Callable[[int, Reply], None] | None = None,
    ) -> tuple[list[Reply], bool]:
        """Every (server, prompt) pair answered, in the pairs' order, and whether the run was
        cut short: cancelling this coroutine (Ctrl-C under `run`) cancels the requests still
        pending, recorded as `cancelled`, and keeps the replies already in. `on_reply(index,
        reply)` hears each reply as it comes."""
        tasks = [asyncio.create_task(self._ask(i, s, p)) for i, (s, p) in enumerate(pairs)]
        interrupted = False
        try:
            for done in asyncio.as_completed(tasks):
                index, reply = await done
                if on_reply is not None:
                    on_reply(index, reply)
        except (asyncio.CancelledError, KeyboardInterrupt):
            interrupted = True
            _uncancel()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return [_settled(task) for task in tasks], interrupted


def _uncancel() -> None:
    """Ctrl-C was handled here (the run stops with what it has): clear the pending cancel."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        task.uncancel()


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` on an event loop of its own (uvloop where installed), in a helper thread when
    this thread already runs one (a notebook), so the synchronous API works everywhere."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_event_loop(main)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run_event_loop, main).result()
