"""The scheduler's caps, which /metrics of no release exports: from a serve command (resolved as
`check` resolves it, with vLLM's defaults for the release and the GPUs) or from the server's
startup log (the caps it printed, and its KV cache size).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from servetune.review import hardware, model, settings
from servetune.vllm import log, serve_command

Source = Literal["serve-command", "log", "serve-command+log", "none"]


@dataclass(frozen=True)
class Caps:
    """The caps a limit is judged against; None where nobody said."""

    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    max_model_len: int | None = None
    kv_cache_tokens: int | None = None
    data_parallel_size: int = 1
    source: Source = "none"

    @property
    def seqs_ceiling(self) -> int | None:
        """Sequences running at once across the engines (/metrics adds the engines up)."""
        return None if self.max_num_seqs is None else self.max_num_seqs * self.data_parallel_size


def from_command(
    text: str, *, gpus: str | None, vllm_version: str | None, config_dir: Path | None = None
) -> Caps:
    """The caps of a `vllm serve` command, vLLM's defaults filled in for its release and GPUs."""
    command = serve_command.parse_text(text, version=vllm_version, config_dir=config_dir)
    machine = hardware.parse_gpus(gpus) if gpus else None
    facts = model.find_model(command.model)
    resolved = settings.resolve(command, facts, machine)
    return Caps(
        max_num_seqs=resolved.max_num_seqs,
        max_num_batched_tokens=resolved.max_num_batched_tokens,
        max_model_len=resolved.max_model_len,
        data_parallel_size=resolved.data_parallel_size,
        source="serve-command",
    )


def from_log(text: str) -> Caps:
    """The caps and the KV cache size a server's log printed at startup (its last start)."""
    said = log.reported(log.last_run(log.read_lines(text)))
    known = (said.max_num_seqs, said.max_num_batched_tokens, said.max_model_len)
    return Caps(
        max_num_seqs=said.max_num_seqs,
        max_num_batched_tokens=said.max_num_batched_tokens,
        max_model_len=said.max_model_len,
        kv_cache_tokens=said.kv_cache_tokens,
        source="log" if any(v is not None for v in known) else "none",
    )


def joined(command: Caps | None, started: Caps | None) -> Caps:
    """The command's caps, completed by what the log printed (the KV cache size among them)."""
    if command is None:
        return started or Caps()
    if started is None or (started.source == "none" and started.kv_cache_tokens is None):
        return command
    return replace(
        command,
        max_num_seqs=command.max_num_seqs or started.max_num_seqs,
        max_num_batched_tokens=command.max_num_batched_tokens or started.max_num_batched_tokens,
        max_model_len=command.max_model_len or started.max_model_len,
        kv_cache_tokens=started.kv_cache_tokens,
        source="serve-command+log",
    )
