"""The public API is what it says (httpx's `tests/test_exported_members.py`): after every module
of servetune was imported, `from servetune import *` gives functions that are callable and
classes that are classes, `__all__` is sorted and says no more and no less than the package and
its docstring, and no public name is also a subpackage's."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import re
import types
from collections.abc import Callable
from pathlib import Path

import pytest

import servetune
from servetune.tune.trial import EventSink, TrialResult, TrialSpec

from answer_server import AnswerBook, serve
from result_files import Setup, write_runs
from stub_server import StubBehaviour, ThreadedStub

# Names every module with `from __future__ import annotations` and a `TYPE_CHECKING` block has.
IMPORT_MACHINERY = frozenset({"annotations", "TYPE_CHECKING"})


def _import_every_module() -> None:
    """Every subpackage and module (not `__main__`, which runs the CLI), so each has been bound
    as an attribute of its package before the public names are read back."""
    for info in pkgutil.walk_packages(servetune.__path__, "servetune."):
        if not info.name.endswith(".__main__"):
            importlib.import_module(info.name)


# Public names bound to a function of another name in its module (the module's name for it
# would read ambiguously at the package's top level).
ALIASES = {"evaluate_quality": "evaluate", "load_questions": "load"}


def _star_import() -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec("from servetune import *", namespace)  # noqa: S102  # the statement users write
    del namespace["__builtins__"]
    return namespace


def _own_modules() -> set[str]:
    return {info.name for info in pkgutil.iter_modules(servetune.__path__)}


def test_every_public_name_is_a_function_or_a_class_after_every_import() -> None:
    for name in servetune.__all__:  # the lazy names first, then every module on top of them
        getattr(servetune, name)
    _import_every_module()
    exported = _star_import()
    assert sorted(exported) == sorted(servetune.__all__)
    for name, member in exported.items():
        if name == "__version__":
            assert isinstance(member, str) and re.fullmatch(r"\d+\.\d+\.\d+", member)
        elif name[0].isupper():
            assert inspect.isclass(member), name
        else:
            assert inspect.isfunction(member), name
            assert member.__name__ == ALIASES.get(name, name), name


def test_no_public_name_is_also_a_module_of_the_package() -> None:
    assert _own_modules() & set(servetune.__all__) == set()
    assert {"tune", "plan"} <= _own_modules()  # the subpackages the entry points were named for


def test_all_is_sorted_and_is_every_public_name_of_the_package() -> None:
    assert servetune.__all__ == sorted(servetune.__all__)
    assert len(set(servetune.__all__)) == len(servetune.__all__)
    for name in servetune.__all__:
        getattr(servetune, name)
    _import_every_module()
    public = {
        name
        for name, value in vars(servetune).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - IMPORT_MACHINERY == set(servetune.__all__) - {"__version__"}
    assert set(dir(servetune)) >= set(servetune.__all__)


def test_the_docstring_names_every_public_name_and_no_other() -> None:
    """Each name in `__all__` is in the package docstring, and every name the docstring quotes
    is public, or is one of the subpackages it says the entry points are not named after."""
    assert servetune.__doc__ is not None
    quoted = set(re.findall(r"`(\w+)`", servetune.__doc__))
    assert set(servetune.__all__) - quoted == set()
    assert quoted - set(servetune.__all__) <= {"__all__"} | _own_modules()


def test_a_name_outside_the_api_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        servetune.no_such_name  # noqa: B018  # the attribute access is the subject


# --- every public function, called with valid arguments ----------------------------------------

DATA = Path(__file__).resolve().parent / "data"
READY_LOG = DATA / "vllm-logs" / "cpu-0.32-ready-then-sigterm.log"
FAILED_LOG = DATA / "vllm-logs" / "cpu-0.32-kv-cache-too-small.log"
MODEL = "Qwen/Qwen2.5-7B-Instruct"
TOKENS = ("vllm", "serve", MODEL, "--max-model-len", "8192")
OPTIONS = servetune.CheckOptions(gpus="1xA100-80GB")


def _sides(tmp_path: Path) -> tuple[Path, Path]:
    before = write_runs(tmp_path / "before", Setup(command=" ".join(TOKENS)), range(3))
    after_command = f"{' '.join(TOKENS)} --max-num-seqs 512"
    after = write_runs(tmp_path / "after", Setup(command=after_command), range(3, 6))
    return before, after


def _never_up(_host: str, _port: int) -> bool:
    return False


def _call_check_text(_: Path) -> object:
    return servetune.check_text(" ".join(TOKENS), OPTIONS)


def _call_check_argv(_: Path) -> object:
    return servetune.check_argv(TOKENS, OPTIONS)


def _call_parse_text(_: Path) -> object:
    return servetune.parse_text("vllm serve my/model \\\n  --max-num-seqs 64")


def _call_parse_tokens(_: Path) -> object:
    return servetune.parse_tokens(TOKENS)


def _call_find_model(_: Path) -> object:
    return servetune.find_model(MODEL)


def _call_parse_gpus(_: Path) -> object:
    return servetune.parse_gpus("2xA100-80GB")


def _call_diagnose(_: Path) -> object:
    return servetune.diagnose(FAILED_LOG.read_text(encoding="utf-8"))


def _call_load_side(tmp_path: Path) -> object:
    return servetune.load_side([_sides(tmp_path)[0]])


def _call_compare(tmp_path: Path) -> object:
    before, after = _sides(tmp_path)
    return servetune.compare(servetune.load_side([before]), servetune.load_side([after]))


def _call_accept(tmp_path: Path) -> object:
    before, after = _sides(tmp_path)
    report = servetune.check_argv(TOKENS, OPTIONS)
    return servetune.accept(report, log=READY_LOG, before=[before], after=[after], probe=_never_up)


def _call_run_plan(_: Path) -> object:
    report = servetune.check_argv(TOKENS, OPTIONS)
    load = servetune.Load(input_len=1000, output_len=200, num_prompts=200, concurrency=20)
    config = servetune.PlanConfig(load=load, slo=servetune.Slo(ttft_ms=2000), what_ifs=False)
    return servetune.run_plan(report, config, OPTIONS)


def _call_run_bench(_: Path) -> object:
    with ThreadedStub(StubBehaviour(model=MODEL)) as stub:
        workload = servetune.WorkloadSpec(num_prompts=4, random_input_len=16, random_output_len=4)
        config = servetune.BenchConfig(base_url=stub.base_url, model=MODEL, workload=workload)
        return asyncio.run(servetune.run_bench(config))


def _one_trial(spec: TrialSpec, on_event: EventSink) -> TrialResult:
    """A trial runner that starts nothing: every configuration fails to start."""
    on_event("trial: not started (a test runner)")
    return TrialResult(spec.index, spec.flags, "failed-start", None, "failed-start", "no server")


def _call_run_tune(tmp_path: Path) -> object:
    targets = servetune.Targets({"ttft": 2000.0})
    config = servetune.TuneConfig(
        argv=TOKENS, targets=targets, output=tmp_path, vllm="/bin/true", gpus="1xA100-80GB"
    )
    return servetune.run_tune(config, _one_trial)


def _call_load_questions(_: Path) -> object:
    return servetune.load_questions("builtin:math")


def _call_evaluate_quality(_: Path) -> object:
    questions = servetune.load_questions("builtin:math")[:4]
    book = AnswerBook({q.prompt: q.answer for q in questions})
    with serve(book) as url:
        server = servetune.QualityServer(url, "fake/model")
        config = servetune.QualityConfig(before=server, after=server, dataset="builtin:math")
        return servetune.evaluate_quality(config, questions)


# public function -> (a call with valid arguments, the type it returns)
CALLS: dict[str, tuple[Callable[[Path], object], type]] = {
    "accept": (_call_accept, servetune.Acceptance),
    "check_argv": (_call_check_argv, servetune.Report),
    "check_text": (_call_check_text, servetune.Report),
    "compare": (_call_compare, servetune.Comparison),
    "diagnose": (_call_diagnose, servetune.DoctorReport),
    "evaluate_quality": (_call_evaluate_quality, servetune.QualityResult),
    "find_model": (_call_find_model, servetune.ModelFacts),
    "load_questions": (_call_load_questions, list),
    "load_side": (_call_load_side, servetune.Side),
    "parse_gpus": (_call_parse_gpus, servetune.Hardware),
    "parse_text": (_call_parse_text, servetune.ServeCommand),
    "parse_tokens": (_call_parse_tokens, servetune.ServeCommand),
    "run_bench": (_call_run_bench, servetune.BenchRun),
    "run_plan": (_call_run_plan, servetune.PlanResult),
    "run_tune": (_call_run_tune, servetune.TuneResult),
}


def test_every_public_function_has_a_call_here() -> None:
    functions = {name for name in servetune.__all__ if inspect.isfunction(getattr(servetune, name))}
    assert set(CALLS) == functions


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_public_function_called_with_valid_arguments(name: str, tmp_path: Path) -> None:
    call, returns = CALLS[name]
    assert isinstance(call(tmp_path), returns)
