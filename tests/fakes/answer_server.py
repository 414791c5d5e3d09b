"""A stand-in OpenAI-compatible server that answers a question set with a known score.

`AnswerServer(answers, wrong=..., fail=..., garbage=...)` serves /v1/models, /v1/chat/completions
and /v1/completions (non-streaming). For a prompt it knows, it replies with the right answer in a
sentence, unless the prompt is in `wrong` (then a wrong answer), `fail` (HTTP 500) or `garbage`
(a body that is not JSON). It records the payloads it received, so tests can check temperature 0
and the prompt as sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class AnswerBook:
    """What the fake answers, per prompt."""

    answers: dict[str, str]
    model: str = "fake/model"
    wrong: set[str] = field(default_factory=set)
    fail: set[str] = field(default_factory=set)
    garbage: set[str] = field(default_factory=set)
    received: list[dict[str, Any]] = field(default_factory=list)

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

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                self._send(200, json.dumps({"data": [{"id": book.model}]}).encode())
            else:
                self._send(404, b"{}")

        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            book.received.append(payload)
            chat = self.path == "/v1/chat/completions"
            prompt = payload["messages"][0]["content"] if chat else payload["prompt"]
            if prompt in book.fail:
                self._send(500, b'{"error": "boom"}')
            elif prompt in book.garbage:
                self._send(200, b"<html>not json")
            else:
                text = book.reply(prompt)
                choice = (
                    {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
                )
                self._send(200, json.dumps({"choices": [choice]}).encode())

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # bursts of concurrent connects, as a real server takes them
    daemon_threads = True


@contextmanager
def serve(book: AnswerBook) -> Iterator[str]:
    """Run the fake on a free loopback port; yields its base URL."""
    ThreadingHTTPServer.request_queue_size = (
        256  # bursts of concurrent connects, as real servers take
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(book))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
