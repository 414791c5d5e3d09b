"""`servetune tune`'s options for where trials run: one after another here, or placed by Ray.

`--executor local` (default) is tune's own loop, trials one after another on this machine;
`--executor ray` places trials side by side on a Ray cluster's GPUs (`--ray-address`,
`--parallel`, `--interference-check`). Ray is imported only when asked for.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Self

from servetune.errors import UsageError
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from servetune.tune.search import TuneConfig, TuneResult
    from servetune.tune.trial import EventSink


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from exc
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("where trials run")
    g.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: one trial after another on this machine (default); ray: trials "
        "side by side on the GPUs of a Ray cluster (pip install "
        "'servetune[ray]')",
    )
    g.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="with --executor ray: auto (the cluster this machine belongs to, the "
        "default), ray://HOST:PORT, or local (a private Ray on this machine with "
        "the GPUs of --gpus, stopped at the end)",
    )
    g.add_argument(
        "--parallel",
        type=_count,
        metavar="N",
        help="with --executor ray: at most N trials in flight (default: as many as the GPUs allow)",
    )
    g.add_argument(
        "--interference-check",
        action="store_true",
        help="with --executor ray: run your command alone and beside other trials "
        "once and report the difference; above 3%% tune runs one trial per "
        "node",
    )


@dataclass(frozen=True)
class ExecutorArgs:
    """Where tune's trials run, as the options say: `from_namespace` reads them, `check`
    refuses a combination that only makes sense with Ray."""

    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    parallel: int | None = None
    interference_check: bool = False

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Self:
        return cls(ns.executor, ns.ray_address, ns.parallel, ns.interference_check)

    def check(self) -> None:
        if self.executor == "ray":
            return
        hint = ErrorText("hint.executor-ray")
        if self.ray_address is not None:
            raise UsageError(ErrorText("tune.ray-address"), hint)
        if self.parallel is not None and self.parallel > 1:
            raise UsageError(ErrorText("tune.parallel"), hint)
        if self.interference_check:
            raise UsageError(ErrorText("tune.interference-check"), hint)


def _gpu_count(gpus: str | None) -> int | None:
    from servetune.review.hardware import parse_gpus

    return None if gpus is None else parse_gpus(gpus).count


def run(config: TuneConfig, options: ExecutorArgs, on_event: EventSink) -> TuneResult:
    """Run the tune with the executor the options ask for; a bad combination is a usage error
    before anything starts. KeyboardInterrupt passes through once every trial has stopped."""
    options.check()
    if options.executor == "local":
        from servetune.tune.executor import LocalExecutor
        from servetune.tune.search import run_tune

        return run_tune(config, runner=LocalExecutor().run_one, on_event=on_event)

    from servetune.tune import parallel
    from servetune.tune.ray_executor import RayExecutor, check_address

    address = check_address(options.ray_address or "auto")
    executor = RayExecutor(address, gpus=_gpu_count(config.gpus), parallel=options.parallel)
    try:
        return parallel.search(
            config, executor, on_event, interference_check=options.interference_check
        )
    finally:
        executor.close()
