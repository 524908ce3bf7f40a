"""The network view in a real browser (headless Chromium, as `tests/test_viewer_browser.py`): a small known run's
agents show the colour of what they hold at their places at two generations (read from the drawn pixels), the
scrubber and the play button move the generation and the legend's shares, hover shows an agent's text and whom it
took it from, and the report draws the same offline."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sandbox.population.held import read_held
from sandbox.population.report.network import network_data
from sandbox.viewer.report import build_report
from sandbox.viewer.server import Running
from tests import test_viewer_browser
from tests.test_viewer_browser import Watched

pytestmark = pytest.mark.browser
browser, watched = test_viewer_browser.browser, test_viewer_browser.watched  # the browser tests' fixtures

BLOCK = {
    "agents": 36,
    "generations": 6,
    "members": [{"strategy": "Cooperator", "share": 0.5}, {"strategy": "Defector", "share": 0.5, "fixed": False}],
    "game": {"name": "weak_prisoners_dilemma", "temptation": 1.6},
    "network": {"kind": "grid"},
    "self_play": True,
    "revision": {"rule": "imitate", "beta": 10.0},
}


@pytest.fixture(scope="module")
def network_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sandbox.core.scenario_files import parse_kind
    from sandbox.population.run import run_population

    root = tmp_path_factory.mktemp("network")
    scenario = parse_kind("population", {"name": "grid-known", "seed": 3, "population": BLOCK})
    run_population(scenario, root / "grid")
    return root


@pytest.fixture(scope="module")
def network_server(network_root: Path) -> Iterator[Running]:
    with Running(network_root) as running:
        yield running


def _hex(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def _drawn(page: Any, frame: int) -> tuple[Any, Any]:
    """Show `frame`, wait two animation frames, and return the canvas's screenshot (a PIL image) and its box."""
    from PIL import Image

    page.evaluate(f"document.querySelector('.network').network.show({frame})")
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    canvas = page.locator(".network-canvas")
    return Image.open(io.BytesIO(canvas.screenshot())).convert("RGB"), canvas.bounding_box()


def _check_colours(page: Any, run: Path) -> None:
    data = network_data(run)
    held = read_held(run)
    assert data is not None and held.codes.shape == (BLOCK["generations"] + 1, BLOCK["agents"])
    first, last = 0, len(held.generations) - 1
    changed = np.flatnonzero(held.codes[first] != held.codes[last])
    assert len(changed), "the known run must change some agents' strategies"
    agents = sorted({0, BLOCK["agents"] - 1, *changed[:4].tolist()})
    for frame in (first, last):
        image, _ = _drawn(page, frame)
        assert page.locator(".network").get_attribute("data-step") == str(held.generations[frame])
        for agent in agents:
            place = page.evaluate(f"document.querySelector('.network').network.place({agent})")
            expected = _hex(data.colours[data.group_of[held.codes[frame, agent]]])
            found = image.getpixel((round(place["x"]), round(place["y"])))
            assert all(abs(a - b) <= 12 for a, b in zip(found, expected)), (frame, agent, found, expected)


def test_the_network_view_colours_known_agents_scrubs_plays_and_hovers(
    watched: Watched, network_server: Running, network_root: Path
) -> None:
    page = watched.page
    run = network_root / "grid"
    page.goto(network_server.url + "#/run/grid")
    page.wait_for_selector('.network-canvas[data-drawn="yes"]')
    _check_colours(page, run)
    held = read_held(run)
    data = network_data(run)
    assert data is not None
    # the scrubber: the generation and the legend's counts follow it
    page.locator('[data-role="scrubber"]').fill("2")
    assert page.locator(".network").get_attribute("data-frame") == "2"
    counts = np.bincount(np.asarray(data.group_of)[held.codes[2]], minlength=len(data.groups))
    shown = [int(page.locator(f'[data-share="{g}"]').get_attribute("data-count")) for g in range(len(data.groups))]
    assert shown == counts.tolist()
    assert "generation 1" in page.locator('[data-role="step"]').inner_text()  # frame 2: after generation 1
    # hover: the agent under the mouse and what it holds
    _, box = _drawn(page, 2)
    agent = 7
    place = page.evaluate(f"document.querySelector('.network').network.place({agent})")
    page.mouse.move(box["x"] + place["x"], box["y"] + place["y"])
    tip = page.locator('[data-role="tooltip"]')
    tip.wait_for(state="visible")
    assert tip.get_attribute("data-agent") == str(agent)
    assert held.labels[held.codes[2, agent]] in tip.inner_text()
    assert tip.locator('[data-role="lineage"]').count() == 1
    # lineage: at the last generation, each agent that changed says how often and whom it took its strategy from
    # (lineage.csv, which the imitation rule records)
    lineage = pd.read_csv(run / "lineage.csv")
    last = len(held.generations) - 1
    page.evaluate(f"document.querySelector('.network').network.show({last})")
    checked = 0
    for agent in range(BLOCK["agents"]):
        changes = np.flatnonzero(held.codes[1:, agent] != held.codes[:-1, agent]) + 1
        if not len(changes):
            continue
        step = held.generations[changes[-1]]
        text = page.evaluate(f"document.querySelector('.network').network.lineage({agent})")
        assert text.startswith(f"revision {len(changes)}: at generation {step}, after holding"), text
        source = lineage[(lineage["generation"] == step) & (lineage["agent"] == agent)]["source"].tolist()
        assert source, (agent, step)  # every change of this run's strategies is a copy (no mutation)
        assert text.endswith(f"copied from agent {source[0]}"), text
        checked += 1
    assert checked >= 3
    # play runs to the last generation and stops there
    page.locator('[data-role="scrubber"]').fill("0")
    page.select_option('[data-role="speed"]', "40")
    page.click('[data-role="play"]')
    page.wait_for_function(f"document.querySelector('.network').dataset.frame === '{len(held.generations) - 1}'")
    page.wait_for_function("document.querySelector('[data-role=\"play\"]').textContent.includes('play')")
    page.locator(".network").screenshot(path=str(network_root / "network-view.png"))


def test_the_report_draws_the_network_offline(watched: Watched, network_root: Path, tmp_path: Path) -> None:
    report = build_report(network_root / "grid", tmp_path / "grid.html")
    page = watched.page
    page.goto(report.path.resolve().as_uri())
    page.wait_for_selector('.network-canvas[data-drawn="yes"]')
    _check_colours(page, network_root / "grid")


def test_a_forks_network_fades_what_the_parent_held_and_the_divergence_plot_follows(
    watched: Watched, tmp_path: Path
) -> None:
    from sandbox.population.report.network import fork_differences
    from tests.viewer_runs import build_family

    root = build_family(tmp_path / "runs")
    name, differs = fork_differences(root / "fork", root) or ("", np.zeros((0, 0), dtype=bool))
    assert name == "parent" and not differs[:4].any() and differs[-1].any()  # the same until the fork at 3
    assert fork_differences(root / "fork", tmp_path / "elsewhere") is None  # a parent outside the folder: not read
    data = network_data(root / "fork")
    held = read_held(root / "fork")
    assert data is not None
    page = watched.page
    with Running(root) as running:
        page.goto(running.url + "#/run/fork")
        page.wait_for_selector('.network-canvas[data-drawn="yes"]')
        plot = '[data-type="divergence"] .chart'
        last = len(held.generations) - 1
        page.wait_for_function(f"document.querySelector('{plot}')?.dataset.scrubber === '{held.generations[last]}'")
        page.locator('[data-role="scrubber"]').fill(str(last - 1))
        page.wait_for_function(f"document.querySelector('{plot}').dataset.scrubber === '{held.generations[last - 1]}'")
        count = page.locator('[data-role="differ-count"]')
        assert int(count.get_attribute("data-count")) == int(differs[last - 1].sum()) > 0
        assert "hold other than in parent" in count.inner_text()
        image, _ = _drawn(page, last - 1)
        for agent in (int(np.flatnonzero(differs[last - 1])[0]), int(np.flatnonzero(~differs[last - 1])[0])):
            colour = data.colours[data.group_of[held.codes[last - 1, agent]]]
            expected = (
                _hex(colour) if differs[last - 1, agent] else tuple(round(c + (255 - c) * 0.75) for c in _hex(colour))
            )
            place = page.evaluate(f"document.querySelector('.network').network.place({agent})")
            found = image.getpixel((round(place["x"]), round(place["y"])))
            assert all(abs(a - b) <= 12 for a, b in zip(found, expected)), (agent, found, expected)


def test_a_sweep_page_draws_a_metric_against_its_parameters_with_bands_and_a_heat_map(
    watched: Watched, tmp_path: Path
) -> None:
    import yaml
    from typer.testing import CliRunner

    from sandbox.cli import app

    sweep = {
        "name": "phase",
        "sweep": {
            "base": str(Path("scenarios/population/naming_binary_agreement.yaml").resolve()),
            "grid": {"population.members.0.share": [0.04, 0.1, 0.3]},
            "zip": [{"population.agents": [60, 120], "population.generations": [15, 15]}],
            "derive": {"population.members.1.share": "1 - population.members.0.share"},
            "seeds": 2,
            "workers": 2,
        },
    }
    (tmp_path / "phase.yaml").write_text(yaml.safe_dump(sweep))
    result = CliRunner().invoke(app, ["run", str(tmp_path / "phase.yaml"), "--out", str(tmp_path / "runs" / "phase")])
    assert result.exit_code == 0, result.output
    seeds = pd.read_csv(tmp_path / "runs" / "phase" / "seeds.csv")
    page = watched.page
    with Running(tmp_path / "runs") as running:
        page.goto(running.url + "#/run/phase")
        lines = '[data-role="sweep-lines"]'
        page.wait_for_selector(lines + " .main-svg")
        page.select_option('[data-role="metric"]', "final_committed_share")
        page.wait_for_function(f"document.querySelector('{lines}').dataset.traces === '2'")  # a line an agents' value
        assert page.locator(lines + " .scatterlayer .trace").count() == 2 + int(
            page.locator(lines).get_attribute("data-bands")
        )
        drawn = page.locator(lines + " .legendtext").all_text_contents()
        assert drawn == [f"population.agents with population.generations = {n}" for n in (60, 120)]
        assert int(page.locator('[data-role="sweep-heat"]').get_attribute("data-cells")) == len(seeds) == 6
        # one line: against the agents, the committed share held at 0.3 (the last of its values, chosen)
        page.select_option('[data-role="by"]', "")
        page.select_option('[data-role="x"]', "population.agents")
        page.select_option('[data-role="fixed"]', "0.3")
        page.wait_for_function(f"document.querySelector('{lines}').dataset.traces === '1'")
        ys = page.evaluate(f"document.querySelector('{lines}').data.filter((t) => !t.fill)[0].y")
        expected = seeds[seeds["population.members.0.share"] == 0.3].sort_values("population.agents")
        assert ys == pytest.approx(expected["summary.final_committed_share.mean"].tolist())


def test_the_notebooks_network_view_draws_inside_its_frame(watched: Watched, network_root: Path) -> None:
    from sandbox.core.result import RunResult

    view = RunResult.load(network_root / "grid").network_view()  # type: ignore[attr-defined]
    assert len(view.html) < 1_000_000 and "plotly" not in view.html.lower()[:2000]  # the network alone, no Plotly
    page = watched.page
    page.set_content(f"<html><body><h1>a notebook</h1>{view._repr_html_()}</body></html>")
    frame = page.frame_locator("iframe")
    frame.locator('.network-canvas[data-drawn="yes"]').wait_for()
    assert frame.locator('[data-role="legend"] li').count() == len(network_data(network_root / "grid").groups)  # type: ignore[union-attr]
