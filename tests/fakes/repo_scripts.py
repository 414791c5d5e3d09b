"""The repository's own scripts (benchmarks/, scripts/) loaded as modules, for the tests that
call their functions: each once, its folder on the path as when it runs from there."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


@cache
def load(relative: str) -> ModuleType:
    """`benchmarks/real_world.py` as the module `real_world`."""
    path = ROOT / relative
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # its sibling modules, as when run from there
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module
