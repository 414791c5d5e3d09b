"""What `serve` says, in English: its status lines while it starts, follows and stops vLLM.

`why.*` says why a start failed (also the `why` of the JSON `failed` event).
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "starting": "starting vLLM (pid {pid}); log: {log}",
    "ready": (
        "ready: {url} (pid {pid}; vLLM reports KV cache {tokens} tokens, max concurrency "
        "{concurrency}x; check estimated {estimated_tokens} tokens, {estimated_concurrency}x)"
    ),
    "unknown": "unknown",
    "stopped-early": "stopped before vLLM was ready",
    "stopping": "stopping vLLM",
    "stopped": "vLLM stopped (exit code {code})",
    "failed": "vLLM did not start: {why}",
    "failed.log": "log: {log}",
    "why.exited": "the process exited",
    "why.fatal": "a fatal error in the log",
    "why.timeout": "not ready after {seconds} s",
    "why.died": "vLLM exited after it was ready",
    "refused": "error: refusing to launch: fix the errors above, or pass --force",
}
