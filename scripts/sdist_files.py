"""vLLM's release sdists as the build scripts read them: which releases a folder holds, the files
of one release, and the runs of releases where something holds.

The sdists are the ones `build_flag_tables.py` fetches into .cache/vllm-sdist/ (checked against
the package index's sha256).
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

_SDIST = re.compile(r"vllm-(\d+\.\d+(?:\.\d+)*(?:\.post\d+)?)\.tar\.gz$")


def release_key(version: str) -> tuple[int, ...]:
    """0.6.1 < 0.6.1.post1 < 0.6.2; 0.9.0 < 0.9.0.1."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?", version)
    if match is None:
        raise ValueError(version)
    return tuple(int(part or 0) for part in match.groups())


def local_sdists(folder: Path) -> dict[str, Path]:
    """The release sdists in `folder` by version, oldest first."""
    found = {m.group(1): p for p in folder.glob("vllm-*.tar.gz") if (m := _SDIST.search(p.name))}
    return {version: found[version] for version in sorted(found, key=release_key)}


def read_files(path: Path, wanted: re.Pattern[str]) -> dict[str, str]:
    """The text of each file of the sdist whose member name `wanted` matches, by its group 1."""
    found: dict[str, str] = {}
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            match = wanted.match(member.name)
            handle = archive.extractfile(member) if match and member.isfile() else None
            if match and handle is not None:
                found[match.group(1)] = handle.read().decode("utf-8", errors="replace")
    return found


def release_runs(versions: list[str], having: list[bool]) -> list[list[str]]:
    """The runs [first, last] of consecutive releases (of `versions`, in order) that have it."""
    runs: list[list[str]] = []
    previous = None
    for version, present in zip(versions, having, strict=True):
        if present and runs and runs[-1][1] == previous:
            runs[-1][1] = version
        elif present:
            runs.append([version, version])
        previous = version
    return runs
