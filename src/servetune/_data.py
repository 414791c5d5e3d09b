"""Lazy loading of the JSON data files shipped inside the package."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load(name: str) -> Any:
    """Parse `servetune/data/<name>` once per process."""
    text = resources.files("servetune").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)
