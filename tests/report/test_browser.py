"""Each kind of report page in a real browser: headless Chromium (Debian's `chromium`) opens it
in a frame as wide as a phone (400 px) and reports every figure's drawn size, any error event
and console line, and whether the page is wider than the frame; then it takes a screenshot of
the page at desktop width. Skipped, with the reason, where Chromium is not installed.

With SERVETUNE_REPORT_SCREENSHOTS=DIR set, the bench and comparison screenshots are kept in DIR
as report-bench.png and report-compare.png (the README's pictures: `make screenshots`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from servetune.render.report import ReportRequest, build, write
from servetune.texts import Language

if TYPE_CHECKING:
    from tests.report.conftest import Chromium

PNG = b"\x89PNG\r\n\x1a\n"


def _requests(data: Path, tune_dir: Path) -> dict[str, tuple[ReportRequest, Language]]:
    return {
        "bench": (ReportRequest(paths=(data / "before" / "run-1.json",)), "en"),
        "bench-vllm": (ReportRequest(paths=(data / "vllm-detailed-0.32.0.json",)), "zh-TW"),
        "compare": (ReportRequest(before=(data / "before",), after=(data / "after",)), "en"),
        "compare-zh-TW": (
            ReportRequest(before=(data / "before",), after=(data / "after",)),
            "zh-TW",
        ),
        "tune": (ReportRequest(paths=(tune_dir,)), "en"),
        "plan": (ReportRequest(paths=(data / "plan.json",)), "zh-TW"),
        "postmortem": (ReportRequest(paths=(data / "postmortem.json",)), "en"),
    }


KINDS = ["bench", "bench-vllm", "compare", "compare-zh-TW", "tune", "plan", "postmortem"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_page_renders_in_chromium_at_phone_width(
    kind: str, chromium: Chromium, data: Path, tune_dir: Path, tmp_path: Path
) -> None:
    if kind == "tune":
        pytest.importorskip("matplotlib")
    request, language = _requests(data, tune_dir)[kind]
    page = build(request, language)
    found = chromium.probe(page, tmp_path)
    assert found["console"] == [] and found["errors"] == []
    assert found["width"] == 400
    assert found["scrollWidth"] <= found["clientWidth"], "wider than a phone: it scrolls sideways"
    figures = found["figures"]
    expected = page.count("data-figure=") + page.count('class="plot"')
    assert len(figures) == expected > 0
    small = [f for f in figures if f["width"] < 100 or f["height"] < 40]
    assert small == [], f"figures drawn too small or not at all: {small}"
    assert all(f["natural"] is None or f["natural"] > 0 for f in figures)  # images decoded
    shot = chromium.screenshot(write(tmp_path / f"{kind}.html", page), tmp_path / f"{kind}.png")
    assert shot.read_bytes().startswith(PNG) and shot.stat().st_size > 20_000
    keep = os.environ.get("SERVETUNE_REPORT_SCREENSHOTS")
    if keep and kind in ("bench", "compare"):
        shutil.copyfile(shot, Path(keep) / f"report-{kind}.png")


def test_the_probe_sees_what_the_test_fails_on(
    chromium: Chromium, data: Path, tmp_path: Path
) -> None:
    """The checks above can fail: a page wider than a phone, a figure of zero size, a console
    error and a resource that cannot load are all seen."""
    page = build(ReportRequest(paths=(data / "plan.json",)))
    broken = (
        '<div style="width:900px">wide</div><figure data-figure="empty"><svg width="0" '
        'height="0"></svg></figure><img src="missing.png" alt="">'
        "<script>console.error('broken')</script></body>"
    )
    found = chromium.probe(page.replace("</body>", broken), tmp_path)
    assert found["scrollWidth"] > found["clientWidth"]
    assert {"name": "empty", "width": 0, "height": 0, "natural": None} in found["figures"]
    assert any('"broken"' in line for line in found["console"])
    assert any("missing.png" in error for error in found["errors"])
