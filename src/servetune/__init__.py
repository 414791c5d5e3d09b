"""servetune: review, launch and measure vLLM deployments.

The library API mirrors the command line: `check_argv` / `check_text` review a `vllm serve`
command and return a `Report`; the pieces (`parse_text`, `find_model`, `parse_gpus`) are public
for tools that build on them. Every error servetune raises on purpose is a `ServetuneError`.
"""

from servetune.errors import (
    CommandParseError,
    HardwareError,
    ModelConfigError,
    ServetuneError,
    UsageError,
)
from servetune.review.capacity import Estimate
from servetune.review.check import CheckOptions, Finding, Report, check_argv, check_text
from servetune.review.hardware import GpuSpec, Hardware, parse_gpus
from servetune.review.model import ModelFacts, find_model
from servetune.vllm.serve_command import ServeCommand, parse_text, parse_tokens

__version__ = "0.1.0"

__all__ = [
    "CheckOptions",
    "CommandParseError",
    "Estimate",
    "Finding",
    "GpuSpec",
    "Hardware",
    "HardwareError",
    "ModelConfigError",
    "ModelFacts",
    "Report",
    "ServeCommand",
    "ServetuneError",
    "UsageError",
    "__version__",
    "check_argv",
    "check_text",
    "find_model",
    "parse_gpus",
    "parse_text",
    "parse_tokens",
]
