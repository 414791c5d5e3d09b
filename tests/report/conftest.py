"""Fixtures of the report tests: the recorded results (tests/report/data, made by record.py), a
tune directory written by the real search over a fake trial runner, a page parser, and headless
Chromium (skipped, with the reason, where it is not installed)."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from tune_probes import probes

from servetune.tune import output
from servetune.tune.capacity import Capacity
from servetune.tune.limit import Limit
from servetune.tune.search import TuneConfig, run_tune
from servetune.tune.trial import TRIAL_FILE, EventSink, Targets, TrialResult, TrialSpec

DATA = Path(__file__).resolve().parent / "data"
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"


@pytest.fixture
def data() -> Path:
    return DATA


# --- a tune directory ---------------------------------------------------------------------------


class _Runner:
    """tune's trials without a server: capacity 10 with a 256-token budget, 30 from 512 on;
    each trial written to its folder as run_trial writes it (trial.json)."""

    def __init__(self, result_file: Path) -> None:
        self.result_file = result_file

    def __call__(self, spec: TrialSpec, on_event: EventSink) -> TrialResult:
        users = 10 if spec.flags["--max-num-batched-tokens"] == "256" else 30
        found = Capacity(users, users + 1, 50.0 * users, users / 4, 0.97)
        limit: Limit = "max-num-batched-tokens" if users == 10 else "kv-cache"
        result = TrialResult(
            spec.index,
            spec.flags,
            "ok",
            found,
            limit,
            None,
            probes(users, self.result_file),
            started=True,
            start_s=20.0,
            measure_s=60.0,
        )
        spec.folder.mkdir(parents=True, exist_ok=True)
        (spec.folder / TRIAL_FILE).write_text(json.dumps(result.to_json()), encoding="utf-8")
        return result


@pytest.fixture
def tune_dir(tmp_path: Path) -> Path:
    """A finished tune's --output folder (tune.json and the trials)."""
    folder = tmp_path / "tune-out"
    config = TuneConfig(
        argv=("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-num-batched-tokens", "256"),
        targets=Targets({"ttft": 2000, "tpot": 50}, 99),
        output=folder,
        vllm="/bin/true",
        gpus="1xA100-80GB",
        max_starts=4,
    )
    result = run_tune(config, _Runner(DATA / "before" / "run-1.json"))
    output.write_document(result)
    return folder


# --- reading a page back ------------------------------------------------------------------------


class Page(HTMLParser):
    """What a report page holds: its sections, figures, tables, and anything it would fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.figures: list[str] = []
        self.images: list[str] = []
        self.about: list[str] = []
        self.fetched: list[str] = []
        self.scripts = 0
        self.tables = 0
        self.lang: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.lang = found.get("lang")
        self.scripts += tag == "script"
        self.tables += tag == "table"
        if tag == "section":
            self.sections.append(found.get("data-section") or "")
        if "data-figure" in found:
            self.figures.append(found["data-figure"] or "")
        if "data-about" in found:
            self.about.append(found["data-about"] or "")
        if tag == "img":
            self.images.append(found.get("src") or "")
        for key in ("src", "href", "srcset", "poster", "data", "action"):
            value = found.get(key)
            if value and not value.startswith(("data:", "#")):
                self.fetched.append(f"{tag} {key}={value}")
        if tag == "link":
            self.fetched.append(f"link {found}")


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    return page


@pytest.fixture
def read_page() -> Callable[[str], Page]:
    return parse


# --- headless Chromium --------------------------------------------------------------------------

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)
PHONE_PX = 400
# Injected into a copy of the page (the page itself has no script): on load, every figure's
# drawn size, any error event (a script's, or a resource that failed to load), and whether the
# page is wider than its window, written into the top document for --dump-dom to print.
PROBE = """<script>
var errors = [];
addEventListener('error', function (e) {
  errors.push(String(e.message || (e.target && (e.target.src || e.target.href)) || e.type));
}, true);
addEventListener('load', function () {
  var found = document.querySelectorAll('[data-figure] svg, [data-figure] img, img.plot');
  var figures = Array.prototype.map.call(found, function (drawn) {
    var box = drawn.getBoundingClientRect(), named = drawn.closest('[data-figure]');
    return {name: named ? named.getAttribute('data-figure') : drawn.getAttribute('data-metric'),
            width: box.width, height: box.height,
            natural: drawn.tagName === 'IMG' ? drawn.naturalWidth : null};
  });
  var root = document.documentElement, out = parent.document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({figures: figures, errors: errors, width: innerWidth,
    scrollWidth: root.scrollWidth, clientWidth: root.clientWidth});
  parent.document.body.appendChild(out);
});
</script>"""


@dataclass(frozen=True)
class Chromium:
    """Debian's `chromium`, run headless and offline-minded on a fresh profile each time."""

    executable: str

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory(prefix="servetune-chromium-") as profile:
            argv = [self.executable, *FLAGS, f"--user-data-dir={profile}", *args]
            return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)

    def probe(self, page: str, folder: Path, width: int = PHONE_PX) -> dict[str, Any]:
        """Open the page in a frame `width` px wide; what PROBE found, and the console lines."""
        probed = page.replace("<head>", "<head>" + PROBE, 1)
        frame = (
            f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">'
            f'<iframe style="width:{width}px;height:900px;border:0" '
            f'srcdoc="{html.escape(probed, quote=True)}"></iframe></body></html>'
        )
        wrapper = folder / "probe.html"
        wrapper.write_text(frame, encoding="utf-8")
        done = self._run("--window-size=1000,1000", "--dump-dom", wrapper.as_uri())
        found = done.stdout.split('<pre id="probe">', 1)
        if len(found) < 2:
            pytest.fail(f"the probe did not report: {done.stderr[-2000:]}")
        result: dict[str, Any] = json.loads(html.unescape(found[1].split("</pre>", 1)[0]))
        result["console"] = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
        return result

    def screenshot(self, page: Path, png: Path, width: int = 1200, height: int = 1800) -> Path:
        self._run(f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri())
        if not png.is_file():
            pytest.fail(f"chromium wrote no screenshot of {page}")
        return png


@pytest.fixture(scope="session")
def chromium() -> Chromium:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip(
            "headless Chromium is not installed (Debian: apt-get install chromium; "
            "`make test` installs it where apt is available)"
        )
    return Chromium(found)
