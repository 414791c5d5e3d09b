"""The knob search on a fake trial runner (no server): decisions, budget, tune.json, report."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from tune_probes import probes

from servetune.render import tune_report
from servetune.texts import Language
from servetune.tune import output
from servetune.tune.capacity import Capacity
from servetune.tune.limit import Limit
from servetune.tune.search import TuneConfig, TuneResult, run_tune
from servetune.tune.trial import EventSink, Targets, TrialResult, TrialSpec

START = ("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-num-batched-tokens", "256")
CAP_KEYS = {"max_concurrency", "output_throughput", "request_throughput"}


class FakeRunner:
    """Capacity 10 with a 256-token budget, 30 from 512 on; utilization 0.95 does not start."""

    def __init__(self) -> None:
        self.specs: list[TrialSpec] = []

    def __call__(self, spec: TrialSpec, on_event: EventSink) -> TrialResult:
        self.specs.append(spec)
        on_event("probe: fake")
        flags = spec.flags
        if flags["--gpu-memory-utilization"] == "0.95":
            return TrialResult(
                spec.index,
                flags,
                "failed-start",
                None,
                "failed-start",
                "torch.OutOfMemoryError: CUDA out of memory",
                started=True,
            )
        users = 10 if flags["--max-num-batched-tokens"] == "256" else 30
        limit: Limit = "max-num-batched-tokens" if users == 10 else "kv-cache"
        found = Capacity(users, users + 1, 50.0 * users, users / 4, 0.97)
        return TrialResult(
            spec.index,
            flags,
            "ok",
            found,
            limit,
            None,
            probes(users),
            started=True,
            start_s=20.0,
            measure_s=60.0,
        )


def config(tmp_path: Path, max_starts: int = 12) -> TuneConfig:
    return TuneConfig(
        argv=START,
        targets=Targets({"ttft": 2000, "tpot": 50}, 99),
        output=tmp_path,
        vllm="/bin/true",
        gpus="1xA100-80GB",
        max_starts=max_starts,
    )


def test_search_moves_the_knob_the_limit_points_to_and_keeps_the_better(tmp_path: Path) -> None:
    runner = FakeRunner()
    events: list[str] = []
    result = run_tune(config(tmp_path), runner, events.append)
    first, second = runner.specs[0].flags, runner.specs[1].flags
    assert first["--max-num-batched-tokens"] == "256" and first["--max-num-seqs"] == "256"
    assert second["--max-num-batched-tokens"] == "512"  # the limit's knob, one step up
    assert {k for k in second if second[k] != first[k]} == {"--max-num-batched-tokens"}
    assert result.best is not None and result.best.flags["--max-num-batched-tokens"] == "512"
    assert result.baseline.limit == "max-num-batched-tokens"
    assert result.server_starts == len(runner.specs) <= 12
    assert len(runner.specs) == len({json.dumps(s.flags, sort_keys=True) for s in runner.specs})
    assert events[0].startswith("trial 1: your command")


def test_max_starts_bounds_the_search(tmp_path: Path) -> None:
    runner = FakeRunner()
    result = run_tune(config(tmp_path, max_starts=2), runner)
    assert len(runner.specs) == 2 and result.server_starts == 2


def test_tune_json_is_the_contract(tmp_path: Path) -> None:
    result = run_tune(config(tmp_path), FakeRunner())
    doc = output.write_document(result)
    assert json.loads((tmp_path / "tune.json").read_text()) == doc
    assert list(doc) == [
        "schema_version",
        "slo",
        "baseline",
        "best",
        "trials",
        "server_starts",
        "report",
        "next_step",
    ]
    assert doc["slo"] == {"p99_ttft_ms": 2000, "p99_tpot_ms": 50}
    assert set(doc["baseline"]) == {"flags", "capacity", "limit"}
    assert doc["baseline"]["capacity"] == {
        "max_concurrency": 10,
        "output_throughput": 500.0,
        "request_throughput": 2.5,
    }
    best = doc["best"]
    assert set(best) == {
        "flags",
        "command",
        "capacity",
        "improvement_pct",
        "ci_low_pct",
        "ci_high_pct",
    }
    assert best["command"].startswith("vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert "--max-num-batched-tokens 512" in best["command"]
    assert best["flags"]["--gpu-memory-utilization"] == "0.92"  # vLLM's default, spelled out
    for trial in doc["trials"]:
        assert set(trial) == {
            "flags",
            "status",
            "capacity",
            "limit",
            "root_cause",
            "runs",
            "placement",
            "started_at",
            "ended_at",
        }
        assert trial["status"] in ("ok", "failed-start", "slo-unreachable")
        assert trial["capacity"] is None or set(trial["capacity"]) == CAP_KEYS
        assert all(isinstance(v, str) for v in trial["flags"].values())
    failed = [t for t in doc["trials"] if t["status"] == "failed-start"]
    assert failed and failed[0]["root_cause"].startswith("torch.OutOfMemoryError")
    assert doc["server_starts"] == len(doc["trials"])
    assert doc["report"] == str(tmp_path / "report.html")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.plots: list[dict[str, str | None]] = []
        self.rows = 0
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "img" and found.get("class") == "plot":
            self.plots.append(found)
        if tag == "tr":
            self.rows += 1
        for key in ("src", "href"):
            value = found.get(key)
            if value and not value.startswith("data:"):
                self.external.append(value)


@pytest.mark.parametrize("language", ["en", "zh-TW"])
def test_report_is_self_contained_with_real_plots(tmp_path: Path, language: Language) -> None:
    pytest.importorskip("matplotlib")
    result: TuneResult = run_tune(config(tmp_path), FakeRunner())
    page_path = tune_report.write(result, language)
    page = page_path.read_text(encoding="utf-8")
    parsed = _Page()
    parsed.feed(page)
    assert not parsed.external  # opens offline: nothing fetched from anywhere
    assert [p["data-metric"] for p in parsed.plots] == ["ttft", "tpot", "throughput"]
    for plot in parsed.plots:
        src = plot["src"] or ""
        assert src.startswith("data:image/svg+xml;base64,")
        svg = base64.b64decode(src.split(",", 1)[1]).decode()
        assert svg.count("<path") > 5 and "Matplotlib" in svg  # drawn by the library
    ttft_svg = base64.b64decode((parsed.plots[0]["src"] or "").split(",", 1)[1]).decode()
    assert "#1 yours" in ttft_svg and "target" in ttft_svg  # a curve per trial, the SLO line
    assert parsed.rows == 1 + len(result.trials)
    assert "- --max-num-batched-tokens 256" in page and "+ --max-num-batched-tokens 512" in page
    if language == "zh-TW":
        assert "改用最佳指令" in page and "Serve with the best command" in page


def test_report_renders_in_a_real_browser(tmp_path: Path) -> None:
    """Headless Chromium opens the page offline and paints its plots (skipped without it)."""
    import shutil
    import subprocess

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    image = pytest.importorskip("matplotlib.image")
    page = tune_report.write(run_tune(config(tmp_path), FakeRunner()))
    shot = tmp_path / "shot.png"
    argv = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1200,900",
        f"--screenshot={shot}",
        page.as_uri(),
    ]
    subprocess.run(argv, capture_output=True, timeout=120, check=False)
    assert shot.is_file()
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (900, 1200)
    colours = {tuple(int(255 * c) for c in px[:3]) for px in pixels[::7, ::7].reshape(-1, 4)}
    assert len(colours) > 50  # curves, axes and text, not an empty or error page
    blue = sum(1 for r, g, b in colours if b > 150 and r < 100)  # matplotlib's first curve
    assert blue > 0
