"""A guard process: when servetune disappears (even by SIGKILL), it stops vLLM's process group.

`ManagedServer.start` runs it beside vLLM, in a session of its own (so a kill of servetune's
process group does not reach it):

    python -I .../servetune/launch/watchdog.py PARENT_PID PGID GRACE_S

It polls while the group lives and its parent is still `PARENT_PID`; once the parent is gone
(the guard is re-parented), it sends the group SIGTERM, waits up to `GRACE_S` seconds for it
to end, then sends SIGKILL. When the group ends first, it simply exits.

Why a process and not only the parent-death signal vLLM gets: vLLM's API server ignores
SIGTERM while it waits for its engine to start (measured on the 0.32 CPU build), and the
engine processes have no such signal. The guard imports nothing but the standard library and
is started by its file path in isolated mode (`-I`), so it starts fast and works whatever
`sys.path` servetune itself was imported from; `python -m servetune.launch.watchdog` runs it
the same way by hand.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence

POLL_S = 0.5  # how often the guard looks at its parent and the group
STOP_POLL_S = 0.2  # how often it looks at the group while the group is stopping


def argv(parent: int, pgid: int, grace_s: float) -> list[str]:
    """The command that guards process group `pgid` for as long as process `parent` lives."""
    return [sys.executable, "-I", __file__, str(parent), str(pgid), f"{grace_s:g}"]


def alive(pgid: int) -> bool:
    """True while any process of the group exists (one we may not signal counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def guard(parent: int, pgid: int, grace_s: float) -> None:
    """Wait while the group lives and `parent` is our parent; then stop the group."""
    while alive(pgid) and os.getppid() == parent:
        time.sleep(POLL_S)
    if not alive(pgid):
        return
    with contextlib.suppress(ProcessLookupError):  # it may end between the look and the signal
        os.killpg(pgid, signal.SIGTERM)
    end = time.monotonic() + grace_s
    while alive(pgid) and time.monotonic() < end:
        time.sleep(STOP_POLL_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def main(args: Sequence[str]) -> int:
    parent, pgid, grace_s = int(args[0]), int(args[1]), float(args[2])
    guard(parent, pgid, grace_s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
