"""Build tests/data/corpus/log_line_releases.json: which vLLM releases log each startup memory
line at which `file.py:line` (the logger's own prefix, `distributed_gpu_executor.py:45]`).

A memory record that names no release still quotes lines such as `INFO 06-12 08:12:23
distributed_gpu_executor.py:45] # GPU blocks: 507`; the places its lines were logged from date
it (benchmarks/real_world.py, `logged_release`). Read from the sdist of every release:

    .venv/bin/python benchmarks/log_line_releases.py /path/to/vllm-sdists
"""

from __future__ import annotations

import json
import re
import sys
import tarfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus" / "log_line_releases.json"
# The statements that log what the memory records quote (V0 and V1 alike).
_MESSAGES = re.compile(
    r"# GPU blocks|GPU KV cache size|Available KV cache memory|Memory profiling"
    r"|Loading model weights took|Model loading took|Maximum concurrency for|KV cache size"
    r"|num_gpu_blocks"
)
_CALL = re.compile(r"\blogger\.(?:info|warning|debug|info_once|warning_once)\(")
_STATEMENT_LINES = 4  # a call's message may start a few lines below `logger.info(`


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _lines_of(source: str, name: str) -> set[str]:
    lines = source.splitlines()
    found = set()
    for index, line in enumerate(lines):
        statement = " ".join(lines[index : index + _STATEMENT_LINES])
        if _CALL.search(line) and _MESSAGES.search(statement):
            found.add(f"{name}:{index + 1}")
    return found


def _versions(sdists: Path) -> list[tuple[str, Path]]:
    found = [(s.name.removeprefix("vllm-").removesuffix(".tar.gz"), s) for s in sdists.iterdir()]
    return sorted(
        ((v, s) for v, s in found if s.name.endswith(".tar.gz")), key=lambda p: _version_key(p[0])
    )


def index(sdists: Path) -> dict[str, list[str]]:
    releases: dict[str, set[str]] = {}
    for version, sdist in _versions(sdists):
        with tarfile.open(sdist) as archive:
            for member in archive:
                path = Path(member.name)
                if not member.isfile() or path.suffix != ".py" or "vllm" not in path.parts[1:2]:
                    continue
                handle = archive.extractfile(member)
                source = handle.read().decode("utf-8", "replace") if handle else ""
                if _MESSAGES.search(source):
                    for place in _lines_of(source, path.name):
                        releases.setdefault(place, set()).add(version)
    return {place: sorted(found, key=_version_key) for place, found in sorted(releases.items())}


def main() -> int:
    sdists = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".cache/vllm-sdist")
    table = index(sdists)
    about = (
        "vLLM's startup memory log statements by the `file.py:line` the logger prints, and the "
        "releases whose source has such a statement there (benchmarks/log_line_releases.py, "
        "from each release's sdist)."
    )
    releases = [version for version, _ in _versions(sdists)]
    data = {"about": about, "releases_read": releases, "lines": table}
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{len(table)} places over {len(releases)} releases -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
