"""A stand-in OpenAI-compatible server that answers a question set with a known score.

`serve(AnswerBook(answers, wrong=..., fail=..., garbage=..., drop=..., hang=...))` serves
/v1/models, /v1/chat/completions and /v1/completions (non-streaming), one answer per connection
as Python's http.server does (HTTP/1.0: it closes after each answer). For a prompt it knows, it
replies with the right answer in a sentence, unless the prompt is in `wrong` (then a wrong
answer), `fail` (HTTP 500), `garbage` (a body that is not JSON), `drop` (the connection closes
with no answer) or `hang` (no answer until the test lets go: `book.hung` is set when the first
such request arrives). Every answer takes `delay_s`; `peak` is the most answers it worked on
at once. With `api_key` set, requests without that bearer token get 401. It records the payloads
and Authorization headers it received, so tests can check temperature 0, the prompt as sent and
the key. `serve_not_http(data)` is a port that answers anything with `data` and hangs up.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_LIMIT_S = 60.0  # a hung answer gives up by itself, should a test forget to let go


@dataclass
class AnswerBook:
    """What the fake answers, per prompt."""

    answers: dict[str, str]
    model: str = "fake/model"
    wrong: set[str] = field(default_factory=set)
    fail: set[str] = field(default_factory=set)
    garbage: set[str] = field(default_factory=set)
    drop: set[str] = field(default_factory=set)
    hang: set[str] = field(default_factory=set)
    api_key: str | None = None
    delay_s: float = 0.0
    peak: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)
    hung: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    _busy: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refusal(self, authorization: str | None) -> tuple[int, bytes] | None:
        """Record the Authorization header; a 401 answer when it lacks the book's key."""
        self.keys.append(authorization)
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            return 401, b'{"error": "bad key"}'
        return None

    def listing(self, path: str) -> tuple[int, bytes]:
        if path == "/v1/models":
            return 200, json.dumps({"data": [{"id": self.model}]}).encode()
        return 404, b"{}"

    def respond(self, payload: dict[str, Any], *, chat: bool) -> tuple[int, bytes] | None:
        """(status, body) of the answer to a completion request, None to hang up without one."""
        prompt = payload["messages"][0]["content"] if chat else payload["prompt"]
        self._working(+1)
        try:
            time.sleep(self.delay_s)
            if prompt in self.hang:
                self.hung.set()
                self.release.wait(HANG_LIMIT_S)
            return self._answer(prompt, chat=chat)
        finally:
            self._working(-1)

    def _answer(self, prompt: str, *, chat: bool) -> tuple[int, bytes] | None:
        if prompt in self.fail or prompt in self.hang:
            return 500, b'{"error": "boom"}'
        if prompt in self.drop:
            return None
        if prompt in self.garbage:
            return 200, b"<html>not json"
        text = self.reply(prompt)
        choice = {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
        return 200, json.dumps({"choices": [choice]}).encode()

    def _working(self, step: int) -> None:
        with self._lock:
            self._busy += step
            self.peak = max(self.peak, self._busy)

    def reply(self, prompt: str) -> str:
        answer = self.answers.get(prompt, "")
        if prompt in self.wrong:
            number = answer.replace(".", "", 1).isdigit()
            answer = str(float(answer) + 1) if number else "unsure"
        return f"Let me think. The answer is {answer}"


def _handler(book: AnswerBook) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _reply(self, answer: tuple[int, bytes] | None) -> None:
            if answer is None:
                self.close_connection = True  # no status line, no body: the socket just closes
            else:
                self._send(*answer)

        def do_GET(self) -> None:
            refusal = book.refusal(self.headers.get("Authorization"))
            self._reply(refusal or book.listing(self.path))

        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            book.received.append(payload)
            refusal = book.refusal(self.headers.get("Authorization"))
            chat = self.path == "/v1/chat/completions"
            self._reply(refusal or book.respond(payload, chat=chat))

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # bursts of concurrent connects, as a real server takes them
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (a timeout, Ctrl-C) leaves a broken pipe: not worth a trace."""


@contextmanager
def serve(book: AnswerBook) -> Iterator[str]:
    """Run the fake on a free loopback port; yields its base URL."""
    server = _Server(("127.0.0.1", 0), _handler(book))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        book.release.set()
        server.shutdown()
        server.server_close()


@contextmanager
def serve_not_http(data: bytes) -> Iterator[str]:
    """A port that answers every connection with `data` (not HTTP) and closes it; yields a
    base URL pointing at it."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # the listener was closed: the test is over
                return
            with conn:
                conn.recv(65536)
                conn.sendall(data)

    threading.Thread(target=answer, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
