"""`servetune watch` end to end against the scheduler stand-in (tests/fakes/vllm_sim.py): a
closed-loop load pinned at `--max-num-seqs` is named `max-num-seqs`, a light one `none`."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from servetune.cli.main import main

import vllm_sim

BODY = json.dumps({"prompt": "a b c d e f g h", "max_tokens": 60, "stream": True}).encode()
REQUEST = (
    b"POST /v1/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
    + f"content-length: {len(BODY)}\r\n\r\n".encode()
    + BODY
)


async def _user(port: int, stop: asyncio.Event) -> None:
    """One closed-loop user: a streamed completion, then the next, until stopped."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    while not stop.is_set():
        writer.write(REQUEST)
        await writer.drain()
        await reader.readuntil(b"\r\n0\r\n\r\n")
    writer.close()
    await writer.wait_closed()


async def _serve(users: int, seqs: int, ready: threading.Event, box: dict[str, object]) -> None:
    server = vllm_sim.SimServer(vllm_sim.World(), vllm_sim.Knobs(max_num_seqs=seqs), "sim", 1.0)
    engine = asyncio.create_task(server.engine())
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    stop = asyncio.Event()
    box.update(port=port, stop=stop, loop=asyncio.get_running_loop())
    load = [asyncio.create_task(_user(port, stop)) for _ in range(users)]
    ready.set()
    await stop.wait()
    await asyncio.gather(*load)  # each user finishes its request, then hangs up
    await asyncio.sleep(0.1)  # the server's handlers see the connections close
    engine.cancel()
    listener.close()


@contextmanager
def _sim(users: int, seqs: int) -> Iterator[int]:
    ready, box = threading.Event(), dict[str, object]()
    thread = threading.Thread(target=asyncio.run, args=(_serve(users, seqs, ready, box),))
    thread.start()
    assert ready.wait(10)
    time.sleep(0.5)  # the load settles
    try:
        yield int(str(box["port"]))
    finally:
        loop = box["loop"]
        assert isinstance(loop, asyncio.AbstractEventLoop)
        stop = box["stop"]
        assert isinstance(stop, asyncio.Event)
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)


def _watch(port: int, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    args = [
        "watch",
        f"http://127.0.0.1:{port}",
        "--interval",
        "0.25",
        "--window",
        "1.5",
        "--duration",
        "3",
        "--format",
        "json",
        "--serve-command",
        "vllm serve sim --max-num-seqs 4",
    ]
    assert main(args) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _dominant(lines: list[dict[str, object]]) -> object:
    summary = lines[-1]["summary"]
    assert isinstance(summary, dict)
    return summary["dominant"]


def test_a_load_pinned_at_the_sequence_cap(capsys: pytest.CaptureFixture[str]) -> None:
    with _sim(users=16, seqs=4) as port:
        lines = _watch(port, capsys)
    ticks = lines[:-1]
    assert _dominant(lines) == "max-num-seqs"
    pinned = [t for t in ticks if t["limit"] == "max-num-seqs"]
    assert len(pinned) >= len(ticks) // 2
    assert max(int(str(t["running"])) for t in pinned) == 4  # a step may catch all 4 finished
    assert "at the cap of 4" in str(pinned[-1]["evidence"])


def test_a_light_load_is_none(capsys: pytest.CaptureFixture[str]) -> None:
    with _sim(users=2, seqs=4) as port:
        lines = _watch(port, capsys)
    assert _dominant(lines) == "none"
    assert {t["limit"] for t in lines[:-1]} == {"none"}
