"""Asking an OpenAI-compatible server the questions: one non-streaming request per question,
temperature 0, a fixed number in flight, every failure recorded as an error kind (never as a wrong
answer)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from servetune._did_you_mean import suggest
from servetune.errors import UsageError

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


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


def _headers(server: Server) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if server.api_key:
        headers["Authorization"] = f"Bearer {server.api_key}"
    return headers


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
    return json.dumps(payload).encode()


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
    """Only http(s) URLs are servers; anything else (file:, a bare host) is a usage error."""
    if not base_url.startswith(("http://", "https://")):
        raise UsageError(
            f"{base_url!r} is not a server URL", "give the base URL, e.g. http://127.0.0.1:8000"
        )


def ask(server: Server, prompt: str) -> Reply:
    """One question and its reply, or the failure: http_<status>, connect, timeout, malformed."""
    url = server.base_url.rstrip("/") + server.endpoint
    request = urllib.request.Request(  # noqa: S310 (scheme checked by check_url)
        url, _body(server, prompt), _headers(server), method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=server.timeout_s) as response:  # noqa: S310 (http(s) only, see check_url)
            raw = response.read()
    except urllib.error.HTTPError as exc:
        return Reply(None, f"http_{exc.code}")
    except TimeoutError:
        return Reply(None, "timeout")
    except (urllib.error.URLError, OSError):
        return Reply(None, "connect")
    try:
        text = reply_text(server, json.loads(raw))
    except ValueError:
        return Reply(None, "malformed")
    return Reply(text, None) if text is not None else Reply(None, "malformed")


def served_models(server: Server) -> list[str]:
    """Model names from GET /v1/models; raises a usage error when the server cannot be reached."""
    check_url(server.base_url)
    url = server.base_url.rstrip("/") + "/v1/models"
    request = urllib.request.Request(url, headers=_headers(server))  # noqa: S310 (checked above)
    try:
        with urllib.request.urlopen(request, timeout=min(server.timeout_s, 30.0)) as response:  # noqa: S310 (http(s) only, see check_url)
            data = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise UsageError(
                f"{server.base_url} refused the API key ({exc.code})", "pass --api-key"
            ) from exc
        return []
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise UsageError(
            f"cannot reach the server at {server.base_url}: {exc}",
            "check the URL and that the server is up (curl URL/v1/models)",
        ) from exc
    items = data.get("data") if isinstance(data, dict) else None
    return [m["id"] for m in items or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def check_model(server: Server) -> None:
    """Fail early, with the served names, when the server does not serve `server.model`."""
    names = served_models(server)
    if names and server.model not in names:
        guess = suggest(server.model, names)
        raise UsageError(
            f"{server.base_url} does not serve a model named {server.model!r}",
            f"it serves: {', '.join(names)}" + (f" (did you mean {guess}?)" if guess else ""),
        )


def ask_all(
    pairs: Sequence[tuple[Server, str]],
    concurrency: int,
    on_reply: Callable[[int, Reply], None] | None = None,
) -> tuple[list[Reply], bool]:
    """Every (server, prompt) pair answered, `concurrency` requests in flight per server, and
    whether Ctrl-C cut the run short. On Ctrl-C the pending requests are cancelled and recorded as
    `cancelled`; the replies already in are kept."""
    keys = {s.base_url + s.model for s, _ in pairs}
    pools = {key: ThreadPoolExecutor(max_workers=concurrency) for key in keys}
    futures = [pools[s.base_url + s.model].submit(ask, s, p) for s, p in pairs]
    interrupted = False
    try:
        for index, future in enumerate(futures):
            reply = future.result()
            if on_reply is not None:
                on_reply(index, reply)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        for pool in pools.values():
            pool.shutdown(wait=False, cancel_futures=True)
    return [_settled(f) for f in futures], interrupted


def _settled(future: Future[Reply]) -> Reply:
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return Reply(None, "cancelled")
