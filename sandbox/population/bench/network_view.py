"""`sandbox bench network-view`: the network view of a 10,000-agent, 100-generation scripted naming run.

The run: the naming game's binary agreement model (Xie et al. 2011) on a small world (k = 6, p = 0.1), 15% of the
agents committed to A, the rest holding B: above the tipping point, so A spreads. Measured:

* the view's data: the network section's bytes in the page (`/api/run` and the report embed the same JSON), against
  the target of 5 MB;
* the report: its size (Plotly, sigma.js and the page), opened from disk in headless Chromium (Debian's package,
  `make browser`; without it the browser figures are left out and the table says so);
* first paint: from the navigation's start to the network drawn (sigma's first frame), against the same report's
  page without its network section opened in the same browser (the baseline: what the rest of the page costs);
* scrubbing: every generation shown in turn, each waiting for the browser's next frame, in generations a second
  (the screen's 60 frames a second is the ceiling).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["bench_network_view"]

AGENTS = 10_000
GENERATIONS = 100
TARGETS = {"data_mb": 5.0, "first_paint_s": 2.0, "scrub_per_s": 10.0}


def _scenario(agents: int, generations: int) -> Any:
    from sandbox.core.scenario_files import parse_kind

    return parse_kind(
        "population",
        {
            "name": "bench-network-view",
            "seed": 0,
            "population": {
                "agents": agents,
                "generations": generations,
                "members": [{"strategy": "A", "share": 0.15, "fixed": True}, {"strategy": "B", "share": 0.85}],
                "game": {"kind": "naming", "play": "scripted", "words": ["A", "B"], "stop_at_consensus": False},
                "network": {"kind": "small_world", "k": 6, "p": 0.1},
                "revision": {"rule": "memory"},
            },
        },
    )


def _browser_figures(report: Path, bare: Path) -> dict[str, float]:
    """First paint of the report and of its page without the network (the baseline), and the scrubbing rate."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(bare.resolve().as_uri())
        page.wait_for_selector("section h2")
        bare_s = (
            page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done(performance.now())))") / 1e3
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(report.resolve().as_uri())
        page.wait_for_selector('.network-canvas[data-drawn="yes"]', timeout=120_000)
        painted = page.evaluate(
            "() => new Promise((done) => requestAnimationFrame(() => "
            "done(Number(document.querySelector('.network-canvas').dataset.drawnAt))))"
        )
        scrub_ms = page.evaluate(
            """async () => {
              const net = document.querySelector('.network').network;
              const frames = Number(document.querySelector('.network').dataset.frames);
              const started = performance.now();
              for (let f = 0; f < frames; f++) { net.show(f); await new Promise((r) => requestAnimationFrame(r)); }
              return (performance.now() - started) / frames;
            }"""
        )
        browser.close()
    return {"first_paint_s": painted / 1e3, "baseline_paint_s": bare_s, "scrub_per_s": 1e3 / scrub_ms}


def bench_network_view(agents: int = AGENTS, generations: int = GENERATIONS) -> dict[str, Any]:
    """Figures of the network view of an `agents`-agent naming run of `generations` generations (module doc)."""
    from sandbox.population.run import run_population
    from sandbox.viewer.catalog import Catalog
    from sandbox.viewer.report import build_report
    from sandbox.viewer.server import finite, run_json, to_json

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        run = run_population(_scenario(agents, generations), root / "run")
        run_s = time.perf_counter() - started
        started = time.perf_counter()
        page = run_json(root, run.resolve(), Catalog(root))
        page_s = time.perf_counter() - started
        network = next(s for s in page["sections"] if s["type"] == "network")
        data_mb = len(to_json(finite(network))) / 1e6
        report = build_report(run, root / "report.html", transcripts="none")
        (run / "held.csv").rename(root / "held.csv")  # the same page without its network: the baseline
        (run / "population.csv").rename(root / "population.csv")
        bare = build_report(run, root / "bare.html", transcripts="none")
        browser = _browser_figures(report.path, bare.path)
    figures: dict[str, Any] = {
        "agents": agents,
        "generations": generations,
        "run_s": run_s,
        "page_s": page_s,
        "data_mb": data_mb,
        "report_mb": report.bytes / 1e6,
        **browser,
    }
    table = Table(title=f"The network view of {agents:,} agents over {generations} generations (naming, small world)")
    for column in ("", "measured", "target", "ratio"):
        table.add_column(column, justify="right")
    table.add_row("the run (s)", f"{run_s:.1f}", "", "")
    table.add_row("the page read from the run directory (s)", f"{page_s:.2f}", "", "")
    table.add_row("the view's data (MB)", f"{data_mb:.2f}", "5", f"{data_mb / TARGETS['data_mb']:.2f}")
    table.add_row("the report (MB)", f"{report.bytes / 1e6:.2f}", "", "")
    if browser:
        paint = browser["first_paint_s"]
        table.add_row("first paint (s)", f"{paint:.2f}", "2", f"{paint / TARGETS['first_paint_s']:.2f}")
        table.add_row(
            "  the page without the network (s)",
            f"{browser['baseline_paint_s']:.2f}",
            "",
            f"{paint / browser['baseline_paint_s']:.2f}x",
        )
        table.add_row(
            "scrubbing (generations/s)",
            f"{browser['scrub_per_s']:.1f}",
            "10",
            f"{browser['scrub_per_s'] / TARGETS['scrub_per_s']:.2f}",
        )
    else:
        table.add_row("first paint, scrubbing", "no chromium: make browser", "", "")
    Console().print(table)
    return figures
