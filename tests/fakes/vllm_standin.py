"""A stand-in for the `vllm` program that writes one kind of start to its log and, when that
start succeeds, serves GET /health, for testing how `servetune serve` follows a start.

`STANDIN_MODE` picks the start (vLLM 0.33's line formats, process prefixes included):
- `recovered` (default): a traceback vLLM handles and goes on from (logged raw, as
  `traceback.print_exc()` does), then the weights, the API server's lines, and /health;
- `fatal`: the engine fails (`EngineCore failed to start.` and its traceback) and the process
  then hangs, as vLLM's API server can while it waits for its engine;
- `crash`: a top-level traceback, then exit code 1.

Run it as `python vllm_standin.py serve MODEL --port P`, or through the executable that
`write_executable()` makes (servetune's `--vllm` needs a program).
"""

from __future__ import annotations

import http.server
import os
import stat
import sys
import threading
import time
from pathlib import Path

API = "(APIServer pid={pid}) INFO 11-30 07:40:{s:02d} [api_server.py:1885] "
CORE = "(EngineCore_DP0 pid={pid}) {level} 11-30 07:40:{s:02d} [core.py:710] "


def write_executable(path: Path) -> Path:
    """A `vllm` program at `path` that runs this stand-in with the current interpreter."""
    path.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = {str(__file__)!r}\n"
        f"runpy.run_path({str(__file__)!r}, run_name='__main__')\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _port(argv: list[str]) -> int:
    return int(argv[argv.index("--port") + 1]) if "--port" in argv else 8000


def _say(*lines: str) -> None:
    for line in lines:
        print(line, flush=True)
        time.sleep(0.05)


def _banner(pid: int) -> None:
    _say(
        API.format(pid=pid, s=1) + "vLLM API server version 0.33.0",
        API.format(pid=pid, s=1) + "non-default args: {'model': 'standin/tiny'}",
        CORE.format(pid=pid + 1, level="INFO", s=3) + "Starting to load model standin/tiny...",
    )


def _recovered_traceback() -> None:
    # A handled error: the plugin import fails, vLLM prints the traceback and carries on.
    _say(
        CORE.format(pid=os.getpid() + 1, level="WARNING", s=4)
        + "Failed to load the optional kernel plugin; using the default kernels.",
        "Traceback (most recent call last):",
        '  File "/opt/vllm/plugins/__init__.py", line 41, in load_plugins_by_group',
        "    func = plugin.load()",
        "ModuleNotFoundError: No module named 'standin_kernels'",
    )


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        code = 200 if self.path == "/health" else 404
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def _serve(port: int) -> None:
    pid = os.getpid()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _say(
        CORE.format(pid=pid + 1, level="INFO", s=6) + "Model loading took 0.01 GiB and 0.2 s",
        CORE.format(pid=pid + 1, level="INFO", s=7) + "GPU KV cache size: 65,536 tokens",
        API.format(pid=pid, s=8) + f"Starting vLLM API server 0 on http://127.0.0.1:{port}",
        f"(APIServer pid={pid}) INFO:     Application startup complete.",
    )
    while True:
        time.sleep(1)


def _fatal() -> None:
    core = CORE.format(pid=os.getpid() + 1, level="ERROR", s=9)
    _say(
        core + "EngineCore failed to start.",
        core + "Traceback (most recent call last):",
        core + '  File "/opt/vllm/v1/engine/core.py", line 699, in run_engine_core',
        core + "ValueError: To serve at least one request with the model's max seq len (32768), "
        "(4.00 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(1.50 GiB). Based on the available memory, the estimated maximum model length is 12288.",
    )
    time.sleep(300)


def _crash() -> None:
    _say(
        "Traceback (most recent call last):",
        '  File "/opt/vllm/entrypoints/cli/main.py", line 73, in main',
        "ValueError: Model architectures ['StandinForCausalLM'] are not supported for now.",
    )
    sys.exit(1)


def main(argv: list[str]) -> None:
    mode = os.environ.get("STANDIN_MODE", "recovered")
    _banner(os.getpid())
    if mode == "fatal":
        _fatal()
    elif mode == "crash":
        _crash()
    else:
        _recovered_traceback()
        _serve(_port(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
