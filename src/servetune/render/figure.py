"""Writing a matplotlib figure where the user asked (`plan --plot`, `postmortem --plot`)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from servetune.errors import ServetuneError
from servetune.texts import ErrorText

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def save(fig: Figure, path: Path) -> Path:
    """`fig` as SVG when `path` ends in .svg, else PNG; drawn in memory first, so an
    unwritable path leaves no half-written file."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg" if path.suffix.lower() == ".svg" else "png", dpi=110)
    try:
        path.write_bytes(buffer.getvalue())
    except OSError as exc:
        raise ServetuneError(ErrorText("plot.cannot-write", path=path, reason=exc)) from exc
    return path
