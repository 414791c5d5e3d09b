"""servetune: review, launch and measure vLLM deployments.

The library API mirrors the command line, one entry per flow; a function is named for what it
does (`run_tune`, not `tune`), so no name here is also a subpackage's:

- review: `check_argv` / `check_text` review a `vllm serve` command (`CheckOptions`) and return
  a `Report` of `Finding`s with its memory `Estimate`; the pieces are public for tools that
  build on them: `parse_text` / `parse_tokens` (a `ServeCommand`), `find_model` (`ModelFacts`),
  `parse_gpus` (a `Hardware` of `GpuSpec`s);
- launch: `diagnose` reads a vLLM log's text and returns a `DoctorReport`;
- measure: `run_bench` (a coroutine) runs the load test a `BenchConfig` describes (its prompts
  a `WorkloadSpec`) and returns a `BenchRun`;
- judge: `load_side` reads result files into a `Side`; `compare` judges two sides and returns a
  `Comparison`; `accept` runs the five acceptance checks and returns an `Acceptance` of `Check`s;
- tune: `run_tune` searches serve flags under latency `Targets` (a `TuneConfig`) and returns a
  `TuneResult`;
- plan: `run_plan` predicts a checked command (`Report`) under a `PlanConfig` (a `Load` and
  latency targets, `Slo`) and returns a `PlanResult`;
- quality: `evaluate_quality` asks two servers (each a `QualityServer`) the same `Question`s
  (`load_questions` reads a set) under a `QualityConfig` and returns a `QualityResult`.

Every error servetune raises on purpose is a `ServetuneError`: `UsageError`,
`CommandParseError`, `NotAVllmLog`, `ModelConfigError`, `HardwareError`, `ServerUnreachable`,
`NoMetrics` and `MissingExtra` among them.
`__version__` is the package's version. Everything not in `__all__` is internal, modules and
subpackages included. The review names load with the package; the other flows load on first
use, so `servetune check` starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from servetune.errors import (
    CommandParseError,
    HardwareError,
    MissingExtra,
    ModelConfigError,
    NoMetrics,
    NotAVllmLog,
    ServerUnreachable,
    ServetuneError,
    UsageError,
)
from servetune.review.capacity import Estimate
from servetune.review.check import CheckOptions, Finding, Report, check_argv, check_text
from servetune.review.hardware import GpuSpec, Hardware, parse_gpus
from servetune.review.model import ModelFacts, find_model
from servetune.vllm.serve_command import ServeCommand, parse_text, parse_tokens

if TYPE_CHECKING:  # the same names as `_LAZY` loads, for type checkers
    from servetune.judge.accept import Acceptance, Check, accept
    from servetune.judge.compare import Comparison, compare
    from servetune.judge.runs import Side, load_side
    from servetune.launch.doctor import DoctorReport, diagnose
    from servetune.measure.bench import BenchConfig, BenchRun, run_bench
    from servetune.measure.workload import WorkloadSpec
    from servetune.plan.planner import PlanConfig, PlanResult, run_plan
    from servetune.plan.predict import Slo
    from servetune.plan.simulate import Load
    from servetune.quality.ask import Server as QualityServer
    from servetune.quality.dataset import Question
    from servetune.quality.dataset import load as load_questions
    from servetune.quality.evaluate import QualityConfig, QualityResult
    from servetune.quality.evaluate import evaluate as evaluate_quality
    from servetune.tune.search import TuneConfig, TuneResult, run_tune
    from servetune.tune.trial import Targets

__version__ = "0.1.0"

# Public names of the flows that load on first use, and the module each one lives in.
_LAZY = {
    "diagnose": "servetune.launch.doctor",
    "DoctorReport": "servetune.launch.doctor",
    "run_bench": "servetune.measure.bench",
    "BenchConfig": "servetune.measure.bench",
    "BenchRun": "servetune.measure.bench",
    "WorkloadSpec": "servetune.measure.workload",
    "load_side": "servetune.judge.runs",
    "Side": "servetune.judge.runs",
    "compare": "servetune.judge.compare",
    "Comparison": "servetune.judge.compare",
    "accept": "servetune.judge.accept",
    "Acceptance": "servetune.judge.accept",
    "Check": "servetune.judge.accept",
    "run_tune": "servetune.tune.search",
    "TuneConfig": "servetune.tune.search",
    "TuneResult": "servetune.tune.search",
    "Targets": "servetune.tune.trial",
    "run_plan": "servetune.plan.planner",
    "PlanConfig": "servetune.plan.planner",
    "PlanResult": "servetune.plan.planner",
    "evaluate_quality": "servetune.quality.evaluate:evaluate",
    "QualityConfig": "servetune.quality.evaluate",
    "QualityResult": "servetune.quality.evaluate",
    "Load": "servetune.plan.simulate",
    "Slo": "servetune.plan.predict",
    "QualityServer": "servetune.quality.ask:Server",
    "Question": "servetune.quality.dataset",
    "load_questions": "servetune.quality.dataset:load",
}

__all__ = [
    "Acceptance",
    "BenchConfig",
    "BenchRun",
    "Check",
    "CheckOptions",
    "CommandParseError",
    "Comparison",
    "DoctorReport",
    "Estimate",
    "Finding",
    "GpuSpec",
    "Hardware",
    "HardwareError",
    "Load",
    "MissingExtra",
    "ModelConfigError",
    "ModelFacts",
    "NoMetrics",
    "NotAVllmLog",
    "PlanConfig",
    "PlanResult",
    "QualityConfig",
    "QualityResult",
    "QualityServer",
    "Question",
    "Report",
    "ServeCommand",
    "ServerUnreachable",
    "ServetuneError",
    "Side",
    "Slo",
    "Targets",
    "TuneConfig",
    "TuneResult",
    "UsageError",
    "WorkloadSpec",
    "__version__",
    "accept",
    "check_argv",
    "check_text",
    "compare",
    "diagnose",
    "evaluate_quality",
    "find_model",
    "load_questions",
    "load_side",
    "parse_gpus",
    "parse_text",
    "parse_tokens",
    "run_bench",
    "run_plan",
    "run_tune",
]


def __getattr__(name: str) -> object:
    """Load a launch/measure/judge/tune/plan/quality name on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'servetune' has no attribute {name!r}")
    module, _, attribute = module.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
