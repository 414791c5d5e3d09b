"""vLLM 0.32.0's exact stream bytes, captured from the real server (CPU build, a tiny model) with
curl -N; copied from shared/reference/vllm-stream-0.32.0.txt into tests/data/streams/."""

from __future__ import annotations

from pathlib import Path

CAPTURE = Path(__file__).resolve().parent.parent / "data" / "streams" / "vllm-stream-0.32.0.txt"


def captured_streams() -> list[list[bytes]]:
    """The two captured streams (completions, chat), each as its `data: ...` lines (without the
    blank line that ends each event)."""
    streams: list[list[bytes]] = []
    for line in CAPTURE.read_bytes().splitlines():
        if line.startswith(b"# POST"):
            streams.append([])
        elif line.startswith(b"data: "):
            streams[-1].append(line)
    return streams
