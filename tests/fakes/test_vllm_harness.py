"""The real-vLLM harness itself: one good start and one failing start of the tiny model.

Each real start costs ~10-25 s on 2 cores, so this file keeps to exactly two.
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

import pytest

from vllm_cpu import (
    MAX_MODEL_LEN,
    SERVED_MODEL_NAME,
    base_serve_args,
    free_port,
    pids_in_group,
    run_until_exit,
    start_server,
)

pytestmark = [pytest.mark.vllm, pytest.mark.usefixtures("vllm_cpu")]


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.status == 200
        return json.load(resp)


def _stream_events(url: str, body: dict[str, Any]) -> list[str]:
    """POST `body` and return the `data:` payloads of the server-sent event stream, in order."""
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    events: list[str] = []
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert resp.status == 200
        assert resp.headers.get_content_type() == "text/event-stream"
        for raw in resp:
            line = raw.decode().strip()
            if line.startswith("data:"):
                events.append(line.removeprefix("data:").strip())
    return events


def test_tiny_server_serves_and_leaves_nothing_behind() -> None:
    with start_server() as srv:
        pgid = srv.pid
        assert srv.base_url == f"http://127.0.0.1:{srv.port}"
        with urllib.request.urlopen(srv.base_url + "/health", timeout=10) as resp:
            assert resp.status == 200

        models = _get_json(srv.base_url + "/v1/models")
        by_id = {m["id"]: m for m in models["data"]}
        assert SERVED_MODEL_NAME in by_id, models
        assert by_id[SERVED_MODEL_NAME]["max_model_len"] == MAX_MODEL_LEN

        events = _stream_events(
            srv.base_url + "/v1/completions",
            {
                "model": SERVED_MODEL_NAME,
                "prompt": "def fibonacci(n):",
                "max_tokens": 8,
                "temperature": 0,
                "ignore_eos": True,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        usage = [c["usage"] for c in chunks if c.get("usage")]
        assert len(usage) == 1, chunks
        assert usage[0]["completion_tokens"] == 8
        assert usage[0]["prompt_tokens"] > 0
        assert any(
            c["choices"] and c["choices"][0].get("finish_reason") == "length" for c in chunks
        )
        assert "Application startup complete" in srv.log_text()

    assert srv.returncode == 0, srv.log_text()[-3000:]
    assert pids_in_group(pgid, include_zombies=True) == []
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)


def test_tensor_parallel_that_does_not_divide_the_heads_fails_fast() -> None:
    outcome = run_until_exit([*base_serve_args(free_port()), "-tp", "3"], timeout_s=120)
    assert not outcome.became_ready
    assert outcome.returncode not in (None, 0), outcome.log[-3000:]
    assert (
        "Total number of attention heads (4) must be divisible by tensor parallel size (3)."
        in outcome.log
    ), outcome.log[-3000:]
