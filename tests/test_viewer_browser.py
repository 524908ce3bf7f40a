"""The run viewer and the report in a real browser: Playwright drives headless Chromium (Debian's package, installed
by `make browser`; `.ci/run` sets SANDBOX_BROWSER=required, so there they fail rather than skip).

Every page is checked for what must never happen: a request that leaves the machine, and an error in the console.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from sandbox.core import kinds
from sandbox.core.run_dir import hold
from sandbox.viewer.report import build_report
from sandbox.viewer.server import Running

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("SANDBOX_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
# Chromium's own connections (updates, sync, safe browsing) are off: what a test sees is what the page asked for.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        message = "no chromium: run `make browser` (Debian's chromium package)"
        if os.environ.get("SANDBOX_BROWSER") == "required":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server(viewer_root: Path) -> Iterator[Running]:
    with Running(viewer_root) as running:
        yield running


class Watched:
    """A page whose requests and console are recorded: `outside` (requests to anywhere but this machine or the
    file itself) and `errors` (console errors, uncaught exceptions) must both stay empty."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", self._request)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _request(self, request: Any) -> None:
        url = urlparse(request.url)
        if url.scheme in ("data", "blob", "file", "about") or url.hostname in ("127.0.0.1", "localhost", "::1"):
            return
        self.outside.append(request.url)

    def check(self) -> None:
        assert self.outside == [], f"requests left the machine: {self.outside}"
        assert self.errors == [], f"console errors: {self.errors}"
        self.context.close()


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    page = Watched(browser)
    yield page
    page.check()


def test_the_list_shows_a_run_of_every_kind_sorts_and_filters(watched: Watched, server: Running) -> None:
    page = watched.page
    page.goto(server.url)
    page.wait_for_selector("#runs tbody tr")
    shown = page.locator("#runs tbody tr td:nth-child(2)").all_inner_texts()
    assert set(kinds.kinds()) | {"toy"} <= set(shown), shown
    assert page.locator('tr[data-path="corrupt"] [data-status="corrupt"]').count() == 1
    assert page.locator('tr[data-path="half"] [data-status="incomplete"]').count() == 1
    page.select_option('select[data-filter="kind"]', "sweep")
    assert page.locator("#runs tbody tr").count() == 1
    page.select_option('select[data-filter="kind"]', "")
    page.fill("#runs input.table-filter", "scai")  # the society runs' scenario
    texts = page.locator("#runs tbody tr").all_inner_texts()
    assert texts and all("scai" in t for t in texts) and len(texts) < len(shown)
    page.fill("#runs input.table-filter", "")
    page.click('#runs th[data-key="path"]')
    paths = page.locator("#runs tbody tr").evaluate_all("rows => rows.map(r => r.dataset.path)")
    assert paths == sorted(paths, key=str.lower) or paths == sorted(paths)


def test_a_scai_run_page_shows_its_chart_and_a_policy_diff(watched: Watched, server: Running) -> None:
    page = watched.page
    page.goto(server.url + "#/run/society")
    page.wait_for_selector('section[data-type="chart"] .main-svg')  # drawn by Plotly
    assert page.locator('section[data-type="chart"] .scatterlayer .trace').count() >= 2
    diff = page.locator(".version").nth(1).locator(".diff")
    assert diff.locator("ins").count() >= 1 and diff.locator("del").count() >= 1
    assert "Look after yourself" in diff.locator("ins").all_inner_texts()[0]
    page.locator(".version").nth(1).locator("summary", has_text="evidence").click()
    assert page.locator(".version").nth(1).locator("tbody tr").count() == 10
    page.locator('a[href="#/run/society"]').count()
    page.click("#home")
    page.wait_for_selector("#runs")


def test_the_transcript_filter_narrows_the_rows(watched: Watched, server: Running) -> None:
    page = watched.page
    page.goto(server.url + "#/run/society")
    count = page.locator(".transcripts .count")
    page.wait_for_function("document.querySelector('.transcripts .count')?.dataset.total > 0")
    total = int(count.get_attribute("data-total"))
    assert page.locator(".transcripts tbody tr.call").count() == 50 < total  # a page, not every row
    first = page.locator(".transcripts tbody tr.call").first.locator("td")
    assert first.nth(5).inner_text() == "propose" and '"responder"' in first.nth(7).inner_text()  # the parsed move
    assert first.nth(8).inner_text() == "legal"
    page.select_option('.transcripts select[data-filter="role"]', "assistant")
    page.wait_for_function(f"document.querySelector('.transcripts .count').dataset.matched < {total}")
    matched = int(count.get_attribute("data-matched"))
    roles = page.locator(".transcripts tbody tr.call td:nth-child(5)").all_inner_texts()
    assert 0 < matched < total and set(roles) == {"assistant"}
    page.fill('.transcripts input[data-filter="text"]', "no such words anywhere")
    page.wait_for_function("document.querySelector('.transcripts .count').dataset.matched === '0'")
    page.fill('.transcripts input[data-filter="text"]', "")
    page.select_option('.transcripts select[data-filter="role"]', "")
    page.wait_for_function(f"document.querySelector('.transcripts .count').dataset.matched == {total}")
    page.click(".transcripts button:has-text('next')")
    page.wait_for_function("document.querySelector('.transcripts tbody tr.call').dataset.index === '50'")
    page.locator(".transcripts tbody tr.call").first.click()
    assert page.locator(".transcripts tr.detail pre").count() >= 2  # the prompt's messages and the answer


def test_model_written_markup_shows_as_text(watched: Watched, server: Running) -> None:
    from tests.viewer_runs import HOSTILE

    page = watched.page
    page.goto(server.url + "#/run/hostile")
    page.wait_for_selector(".transcripts tbody tr.call")
    page.locator(".transcripts tbody tr.call").first.click()
    assert page.locator(".transcripts tr.detail pre.answer").inner_text() == HOSTILE
    assert HOSTILE in page.locator(".version").last.inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img[src=x]").count() == 0
    # the cut last line of the transcript is a row that says so
    page.select_option('.transcripts select[data-filter="role"]', "")
    page.wait_for_selector(".transcripts tbody tr.call")


def test_paths_out_of_the_folder_are_not_found(watched: Watched, server: Running, viewer_root: Path) -> None:
    page = watched.page
    secret = f"{viewer_root.name}-secret.txt"
    for path in [
        f"files/../{secret}",
        f"files/%2e%2e/{secret}",
        "files/society/leak.txt",
        f"files/society/up/{secret}",
        "files/%2Fetc%2Fpasswd",
        "api/run?path=..",
        "api/run?path=/etc",
        "static/server.py",
    ]:
        answer = page.request.get(server.url + path)
        assert answer.status == 404 and "secret" not in answer.text(), path
    answer = page.request.post(server.url + "api/runs")
    assert answer.status == 405


def test_a_run_in_progress_updates_without_a_reload(watched: Watched, server: Running, viewer_root: Path) -> None:
    run = viewer_root / "live"
    shutil.copytree(
        viewer_root / "society", run, ignore=shutil.ignore_patterns("*.sqlite", "summary.json", "leak.txt", "up")
    )
    status = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**status, "status": "running"}))
    lines = (run / "transcripts.jsonl").read_text().splitlines(keepends=True)
    (run / "transcripts.jsonl").write_text("".join(lines[:10]))
    held, finish, done = threading.Event(), threading.Event(), threading.Event()

    def the_run() -> None:  # a process holding the directory while it writes, as a run does
        with hold(run):
            held.set()
            finish.wait(60)
            with (run / "transcripts.jsonl").open("a") as out:
                out.writelines(lines[10:])
            shutil.copy(viewer_root / "society" / "summary.json", run / "summary.json")
            (run / "run.json").write_text(json.dumps({**status, "status": "complete"}))
        done.set()

    thread = threading.Thread(target=the_run)
    thread.start()
    try:
        held.wait(10)
        page = watched.page
        page.goto(server.url + "#/run/live")
        page.wait_for_selector('#facts [data-status="running"]')
        assert page.locator("#facts [data-fact='calls']").inner_text() == "10"
        page.evaluate("window.__same_page = true")
        finish.set()
        done.wait(10)
        page.wait_for_selector('#facts [data-status="complete"]', timeout=15_000)
        assert page.locator("#facts [data-fact='calls']").inner_text() == str(len(lines))
        page.wait_for_function(f"document.querySelector('.transcripts .count').dataset.total == {len(lines)}")
        assert page.evaluate("window.__same_page") is True  # updated in place, never reloaded
    finally:
        finish.set()
        thread.join()
        shutil.rmtree(run)


def test_the_report_opens_from_disk_and_works_the_same_with_no_network(
    watched: Watched, viewer_root: Path, tmp_path: Path
) -> None:
    report = build_report(viewer_root / "society", tmp_path / "society.html").path
    page = watched.page
    page.goto(report.resolve().as_uri())
    page.wait_for_selector('section[data-type="chart"] .main-svg', timeout=30_000)
    assert page.locator(".version .diff ins").count() >= 1
    assert page.locator('section[data-type="figures"] img').count() >= 1
    count = page.locator(".transcripts .count")
    page.wait_for_function("document.querySelector('.transcripts .count')?.dataset.total > 0")
    total = int(count.get_attribute("data-total"))
    page.select_option('.transcripts select[data-filter="role"]', "assistant")
    page.wait_for_function(f"document.querySelector('.transcripts .count').dataset.matched < {total}")
    started = time.monotonic()
    assert watched.outside == [] and time.monotonic() - started < 1


def test_bad_folders_are_corrupt_rows_and_every_good_run_is_listed(
    watched: Watched, browser: Any, viewer_root: Path, tmp_path: Path
) -> None:
    from sandbox.viewer.bench_limits import build_awkward

    root = build_awkward(tmp_path / "runs", viewer_root / "toy", good=50)
    with Running(root) as awkward:
        page = watched.page
        page.goto(awkward.url)
        page.wait_for_selector("#runs tbody tr")
        shown = page.locator("#runs tbody tr").evaluate_all(
            "rows => rows.map(r => [r.dataset.path, r.querySelector('[data-status]').dataset.status])"
        )
        status = dict(shown)  # was: "500 Internal Server Error" in place of the whole list
        assert len(shown) == 54 and all(status[f"good-{i:02d}"] == "complete" for i in range(50))
        assert status["bad-\\xff\\xfe"] == status["back\\slash"] == status["deep"] == "corrupt"
        assert page.locator('#runs [data-opens="no"]').count() == 2  # named, but no link to a page that is 404
        problem = page.locator('#runs tr[data-path="deep"] td').nth(2).bounding_box()
        assert problem is not None and problem["width"] <= 520  # a long problem wraps (36em), never widens the list
        page.goto(awkward.url + "#/run/deep")  # its summary cannot be read: the page says so, no 500
        page.wait_for_selector('#facts [data-status="corrupt"]')
        page.goto(awkward.url + "#/run/%E0%A4%A")  # a malformed escape: an error and a way back, not "Loading…"
        page.wait_for_selector("#bad-address")
        page.click("#bad-address a")
        page.wait_for_selector("#runs tbody tr")


def test_each_band_takes_its_lines_colour_and_one_line_is_named(
    watched: Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sandbox.viewer.page as viewer_page
    from sandbox.viewer.sections import Chart

    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text("{}")
    rows = ["group,epoch,mean,low,high"] + [
        f"{g},{e},{m + e / 100},{m - 0.1},{m + 0.1}" for g, m in (("users", 0.3), ("assistant", 0.6)) for e in range(4)
    ]
    (run / "epochs.csv").write_text("\n".join(rows) + "\n")
    (run / "single.csv").write_text("norm,share\n\"<a href='https://example.com'>fair</a>\",0.5\nselfish,0.5025\n")
    monkeypatch.setattr(
        viewer_page,
        "sections_of",
        lambda kind, path: [
            Chart("epochs.csv", x="epoch", y="mean", group="group", band=("low", "high"), title="bands"),
            Chart("single.csv", x="norm", y="share", title="one line"),
        ],
    )
    page = watched.page
    with Running(tmp_path) as here:
        page.goto(here.url + "#/run/run")
        page.wait_for_selector("#chart-1 .main-svg")
        data = page.evaluate(
            "Array.from(document.getElementById('chart-0')._fullData).map(t => ({fill: t.fill,"
            " fillcolor: t.fillcolor, line: t.line && t.line.color}))"
        )
        bands = [t for t in data if t["fill"] == "toself"]
        lines = [t for t in data if t["fill"] != "toself"]
        assert len(bands) == len(lines) == 2
        for band, line in zip(bands, lines, strict=True):  # was: band i took trace 2i's colour, its line 2i+1's
            n = int(line["line"][1:], 16)
            assert band["fillcolor"].replace(" ", "") == f"rgba({n >> 16},{(n >> 8) & 255},{n & 255},0.2)", (band, line)
        assert page.locator("#chart-1 .legend .traces").count() == 1  # one line is named in a legend too
        assert page.locator("#chart-1 a").count() == 0  # a category is text, never a link
        assert any("<a href" in t for t in page.locator("#chart-1 .xtick").all_text_contents())
        low = page.evaluate("document.getElementById('chart-1')._fullLayout.yaxis.range[0]")
        assert low <= 0  # 0.5 against 0.5025: the axis starts at zero, not at 0.4998


def test_policy_versions_say_which_epoch_they_were_written_from(watched: Watched, server: Running) -> None:
    page = watched.page
    page.goto(server.url + "#/run/society")
    page.wait_for_selector(".version .version-label")
    labels = page.locator(".version .version-label").all_inner_texts()
    assert "played in epoch 0" in labels[0] and "written from" not in labels[0]
    assert "version 1 · written from epoch 0's interactions · played in epoch 1" in labels[1], labels
    figure = page.locator('section[data-type="figures"] figure').first
    small = figure.bounding_box()
    figure.click()  # a figure enlarges on a click, and shrinks on the next
    assert "wide" in (figure.get_attribute("class") or "") and figure.bounding_box()["width"] > 1.5 * small["width"]
    figure.click()
    assert "wide" not in (figure.get_attribute("class") or "")


def test_a_report_that_left_calls_out_says_so_above_its_calls(
    watched: Watched, viewer_root: Path, tmp_path: Path
) -> None:
    report = build_report(viewer_root / "society", tmp_path / "sample.html", max_calls=5)
    page = watched.page
    page.goto(report.path.resolve().as_uri())
    note = page.locator('section[data-type="transcripts"] .note')
    note.wait_for(timeout=30_000)
    assert note.inner_text().startswith(f"This report holds 5 of the {report.calls + report.left_out:,} calls")
    assert "sandbox report" in note.inner_text() and "`" not in note.inner_text()
    page.wait_for_function("document.querySelector('.transcripts .count')?.dataset.total == 5")


def test_a_forks_page_draws_its_branches_and_marks_the_fork_steps(watched: Watched, tmp_path: Path) -> None:
    from tests.viewer_runs import build_family

    root = build_family(tmp_path / "runs")
    page = watched.page
    with Running(root) as running:
        page.goto(running.url)
        page.wait_for_selector('tr[data-path="fork"] .fork-of')
        assert page.locator('tr[data-path="fork"] .fork-of').inner_text() == "fork of parent at generation 3"
        page.goto(running.url + "#/run/fork")
        plot = 'section[data-type="branches"] [data-type="divergence"]'
        page.wait_for_selector(plot + " .main-svg")
        assert page.locator(plot + " .scatterlayer .trace").count() == 3  # the parent, the fork, its fork
        page.wait_for_selector(plot + " .chart[data-scrubber]")  # the network view's generation, marked too
        assert page.locator(plot + " .shapelayer path").count() == 3  # the fork steps, 3 and 4, and the scrubber
        assert "fork: fork" in page.locator(plot + " .annotation-text").all_text_contents()
        tree = page.locator('section[data-type="branches"] ul.branches')
        assert tree.locator("li.current strong").inner_text() == "fork"
        assert tree.locator('li[data-run="parent"] > a').get_attribute("href") == "#/run/parent"
        assert "forked at generation 4" in tree.locator('li[data-run="grandchild"]').inner_text()
    report = build_report(root / "fork", tmp_path / "fork.html").path
    page.goto(report.resolve().as_uri())
    page.wait_for_selector(plot + " .main-svg", timeout=30_000)
    assert page.locator(plot + " .scatterlayer .trace").count() == 3  # the report draws the parent's curve too


def test_the_cost_charts_draw_each_roles_tokens_and_latency_by_epoch(
    watched: Watched, server: Running, viewer_root: Path
) -> None:
    from sandbox.core.costs import read_costs

    roles = sorted(set(read_costs(viewer_root / "society")["role"]))
    page = watched.page
    page.goto(server.url + "#/run/society")
    tokens = '.chart[data-title="Tokens by step and role"]'
    page.wait_for_selector(tokens + " .main-svg")
    assert page.locator(tokens + " .barlayer .trace").count() == 2 * len(roles) >= 4  # in and out, by role
    names = page.locator(tokens + " .legendtext").all_text_contents()
    assert {f"{role}: input_tokens" for role in roles} <= set(names)
    latency = '.chart[data-title^="Latency of the calls"]'
    page.wait_for_selector(latency + " .main-svg")
    assert page.locator(latency + " .scatterlayer .trace").count() == 2 * len(roles)


def test_a_run_a_users_function_answered_says_not_an_llm_in_the_list_and_on_its_page(
    watched: Watched, server: Running, tmp_path: Path
) -> None:
    """A population run on a `rules:` model (a dry pipeline) is marked in the list and on its page as not an LLM,
    with the function named; the runs of every kind on models (`server`'s) are not."""
    from typer.testing import CliRunner

    from sandbox.cli.runs import app
    from tests.test_rules_model import RULES, _scenario

    (tmp_path / "my_rules.py").write_text(RULES)
    spec = f"rules:{tmp_path / 'my_rules.py'}:answer"
    root = tmp_path / "runs"
    result = CliRunner().invoke(app, ["run", str(_scenario(tmp_path, spec)), "--out", str(root / "dry")])
    assert result.exit_code == 0, result.output
    said = f"user answered by {spec}: a dry pipeline, not an LLM"
    page = watched.page
    with Running(root) as running:
        page.goto(running.url)
        page.wait_for_selector('tr[data-path="dry"]')
        mark = page.locator('tr[data-path="dry"] [data-not-llm="yes"]')
        assert mark.inner_text() == "not an LLM" and mark.get_attribute("title") == said
        page.goto(running.url + "#/run/dry")
        page.wait_for_selector('#facts dd[data-fact="not an LLM"]')
        assert page.locator('#facts dd[data-fact="not an LLM"]').inner_text() == said
    page.goto(server.url)
    page.wait_for_selector("#runs tbody tr")
    assert page.locator("#runs tbody tr").count() > 5 and page.locator("[data-not-llm]").count() == 0
