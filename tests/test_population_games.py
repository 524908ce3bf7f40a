"""Every registered population game through the same checks, one case for each plug-in (its entry's conformance
cases, `sandbox.population.conformance.GameCase`): a run killed at a point drawn from the game's name resumes to
identical tables (`held.csv` among them); a fork without change and a replay are identical; bad input exits 2 naming
the field and writes nothing; the summary holds its fields; the figure draws its series on labelled axes; `held.csv`
holds a row a generation, one label an agent, the last agreeing with population.csv. A game of another package is
played here without an edit to this file. The games' own behaviour is tested beside them (test_population_*.py)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

import sandbox
from sandbox.base.files import read_json
from sandbox.cli.runs import app
from sandbox.core.kinds import resolve
from sandbox.core.scenario_files import parse_kind
from sandbox.engine.replay import replay_run
from sandbox.llm.scripted import scripted
from sandbox.population.conformance import GameCase
from sandbox.population.game import PopulationGame
from sandbox.population.held import HELD, read_held
from sandbox.population.registry import games, plugin_for
from sandbox.population.run import resume_population, run_population

CASES = [(kind, plugin) for kind, entry in games().items() for plugin in entry.plugins]
runner = CliRunner()


class Interrupted(BaseException):
    """A kill: raised from a model's call or a generation's hook, as Ctrl-C would be."""


def case_of(kind: str, plugin: str) -> GameCase:
    case = resolve(games()[kind].conformance[plugin])
    assert isinstance(case, GameCase)
    return case


def scenario_of(kind: str, plugin: str, block: Any = None) -> Any:
    block = dict(case_of(kind, plugin).block) if block is None else block
    return parse_kind("population", {"name": f"{kind}-{plugin}", "seed": 4, "population": block})


def models_of(case: GameCase, scenario: Any, stop_after: int | None = None) -> dict[str, Any] | None:
    """A scripted model answering by the case's rule for every role the game reads (None where it calls none);
    `stop_after`: raises `Interrupted` at the call after that many."""
    answer = case.answer
    if answer is None:
        return None
    calls = [0]

    def reply(messages: Any, kwargs: Any) -> str:
        calls[0] += 1
        if stop_after is not None and calls[0] > stop_after:
            raise Interrupted
        return answer(messages[0].content if len(messages) > 1 else "", messages[-1].content)

    model = scripted([(r".", reply)])
    return {role: model for role in scenario.population.game.roles(scenario.population)}


def checked_tables(case: GameCase, run: Path) -> tuple[str, ...]:
    """The case's tables that a resumed run, a fork and a replay must write identically, and `held.csv` where the
    run wrote it (every game whose plug-in says what its agents hold)."""
    return (*case.tables, HELD) if HELD not in case.tables and (run / HELD).is_file() else case.tables


def same_tables(a: Path, b: Path, tables: tuple[str, ...]) -> None:
    for table in tables:
        pd.testing.assert_frame_equal(
            pd.read_csv(a / table).drop(columns=["seconds"], errors="ignore"),
            pd.read_csv(b / table).drop(columns=["seconds"], errors="ignore"),
            obj=f"{b.name}/{table}",
        )


@pytest.fixture(scope="module", params=CASES, ids=[f"{kind}-{plugin}" for kind, plugin in CASES])
def finished(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    """A finished run of each case (the calls its models answered counted in `calls.txt` beside it)."""
    kind, plugin = request.param
    case, scenario = case_of(kind, plugin), scenario_of(*request.param)
    path = run_population(
        scenario, tmp_path_factory.mktemp(f"{kind}-{plugin}") / "run", models=models_of(case, scenario)
    )
    return kind, plugin, path


def test_every_plugin_of_every_game_has_a_case_of_its_kind() -> None:
    for kind, entry in games().items():
        assert set(entry.conformance) == set(entry.plugins), kind
        for plugin in entry.plugins:
            case = case_of(kind, plugin)
            spec = scenario_of(kind, plugin).population.game
            assert spec.kind == kind and spec.plugin() == plugin, (kind, plugin)
            assert (case.answer is None) == (not spec.roles(scenario_of(kind, plugin).population)), (kind, plugin)


def test_a_run_killed_at_random_points_resumes_to_identical_tables(
    finished: tuple[str, str, Path], tmp_path: Path
) -> None:
    """Killed at three points drawn from the game's name (a call, or a generation's end where it calls no model),
    each resumed to the tables of the run that was not killed."""
    kind, plugin, whole = finished
    case, scenario = case_of(kind, plugin), scenario_of(kind, plugin)
    rng = np.random.default_rng(zlib.crc32(f"{kind}-{plugin}".encode()))
    if case.answer is None:  # no call to stop at: a generation's end
        last = scenario.population.generations - 1
        points = sorted(rng.choice(last, size=min(3, last), replace=False).tolist())
    else:
        calls = int(read_json(whole / "summary.json")["calls"])
        points = sorted(rng.choice(np.arange(1, calls), size=min(3, calls - 1), replace=False).tolist())
    for point in points:
        hooks: Callable[[int], None] | None = None
        killed = None
        if case.answer is None:

            def hooks(generation: int, stop: int = point) -> None:
                if generation == stop:
                    raise Interrupted

        else:
            killed = models_of(case, scenario, stop_after=point)
        cut = tmp_path / f"cut{point}"
        with pytest.raises(Interrupted):
            run_population(scenario, cut, models=killed, hooks=hooks)
        resumed = resume_population(cut, models=models_of(case, scenario))
        same_tables(whole, resumed, checked_tables(case, whole))


def test_a_fork_without_change_and_a_replay_are_identical(finished: tuple[str, str, Path], tmp_path: Path) -> None:
    kind, plugin, parent = finished
    case, scenario = case_of(kind, plugin), scenario_of(kind, plugin)
    fork = sandbox.fork(parent, at=1, out=tmp_path / "fork", models=models_of(case, scenario))
    same_tables(parent, fork.path, checked_tables(case, parent))
    report = replay_run(parent, models=models_of(case, scenario))
    assert report.identical, report


def _population_labels(path: Path) -> tuple[int, list[str]] | str:
    """What population.csv says each agent holds at its last generation: (that generation, a label an agent, by
    agent), read from the column that records it (`held`; the scripted naming game's `names`; `strategy`; a scripted
    type's `kind` or an LLM member's `norm`, by norms.csv); else why it cannot say."""
    rows = pd.read_csv(path / "population.csv", dtype=str, keep_default_na=False)
    if rows.empty:
        return "population.csv has no per-agent rows"
    last = rows["generation"].astype(int).max()
    rows = rows[rows["generation"].astype(int) == last].sort_values("agent", key=lambda a: a.astype(int))
    if "held" in rows:  # the LLM naming game: the name held, "" before any pick
        return last, [h or "none" for h in rows["held"]]
    if "names" in rows:  # the scripted naming game: the names in memory
        return last, [n if len(n.split()) == 1 else "several" if n else "none" for n in rows["names"]]
    if "strategy" in rows:
        return last, rows["strategy"].tolist()
    if {"kind", "norm"} <= set(rows) and (path / "norms.csv").is_file():  # the public goods game
        norms = pd.read_csv(path / "norms.csv", dtype=str, keep_default_na=False)
        text = dict(zip(norms["norm"], norms["strategy"]))
        return last, [text[n] if k == "llm" else k for k, n in zip(rows["kind"], rows["norm"])]
    return f"population.csv records no per-agent label (its columns: {', '.join(rows.columns)})"


def test_held_holds_a_label_an_agent_for_every_generation(finished: tuple[str, str, Path]) -> None:
    """`held.csv` has a row for the first population (-1) and one after each generation played, one label an agent;
    what population.csv says each agent holds at the last generation is held.csv's row of that generation (the
    population it left: a game that revises nothing after its last generation, or whose play is its revision, as
    the naming games' and the donor game's strategies written in play) or the row before it (the population that
    played it, which population.csv records: the scripted matrix game revises after its last generation too)."""
    kind, plugin, path = finished
    case, scenario = case_of(kind, plugin), scenario_of(kind, plugin)
    if plugin_for(scenario.population.game).held is PopulationGame.held:
        pytest.skip(f"{kind}-{plugin} draws nothing: its plug-in keeps PopulationGame.held")
    held = read_held(path)
    played = pd.read_csv(path / "generations.csv")["generation"].astype(int).tolist()
    assert held.generations.tolist() == [-1, *played], (kind, plugin)
    assert held.codes.shape == (len(played) + 1, case.block["agents"]), (kind, plugin)
    said = _population_labels(path)
    if isinstance(said, str):
        pytest.skip(f"{kind}-{plugin}: held.csv checked for its shape only: {said}")
    last, labels = said
    assert last == played[-1], (kind, plugin)
    assert labels in (held.at(last), held.at(last - 1)), (kind, plugin, labels, held.at(last))


def test_bad_input_exits_2_naming_the_field_and_writes_nothing(tmp_path: Path) -> None:
    for kind, plugin in CASES:
        case = case_of(kind, plugin)
        assert case.bad, f"{kind}-{plugin} has no bad input to refuse"
        for change, says in case.bad:
            path = tmp_path / "bad.yaml"
            block = {**case.block, **change}
            path.write_text(yaml.safe_dump({"name": "bad", "seed": 0, "population": block}))
            out = tmp_path / "never"
            result = runner.invoke(app, ["run", str(path), "--out", str(out)])
            assert result.exit_code == 2, (kind, plugin, result.output)
            assert says in " ".join(result.output.split()), (kind, plugin, result.output)
            assert not out.exists()


def test_the_summary_holds_its_fields(finished: tuple[str, str, Path]) -> None:
    kind, plugin, path = finished
    summary = read_json(path / "summary.json")
    assert summary["kind"] == "population" and summary["scenario"] == f"{kind}-{plugin}"
    assert summary["agents"] == case_of(kind, plugin).block["agents"]
    missing = [f for f in case_of(kind, plugin).summary if f not in summary]
    assert not missing, (kind, plugin, missing)


def test_the_figure_draws_its_series_on_labelled_axes(finished: tuple[str, str, Path]) -> None:
    """The figure the run wrote is its plug-in's `figure`: each series of the case is a line whose values are its
    column's; every axes that draws has a y label, the figure an x label and a title."""
    kind, plugin, path = finished
    case, scenario = case_of(kind, plugin), scenario_of(kind, plugin)
    player = plugin_for(scenario.population.game)
    assert (path / player.figure_file).is_file()
    figure = player(scenario, lambda role: scripted([])).figure(path)
    axes = [ax for ax in figure.axes if ax.lines or ax.collections or ax.images]
    assert axes and all(ax.get_ylabel() for ax in axes if ax.lines or ax.collections), (kind, plugin)
    assert any(ax.get_xlabel() for ax in axes) and any(ax.get_title() for ax in axes), (kind, plugin)
    generations = pd.read_csv(path / "generations.csv")
    lines = [np.asarray(line.get_ydata(), dtype=float) for ax in axes for line in ax.lines]
    for column in case.series:
        values = generations[column].to_numpy(dtype=float)
        assert any(len(y) == len(values) and np.allclose(y, values, equal_nan=True) for y in lines), (
            f"{kind}-{plugin}: no line draws {column}"
        )


def test_a_game_registered_from_outside_is_played_by_this_test_without_an_edit() -> None:
    """`SANDBOX_POPULATION_GAMES` registers a game of another module (as another package's entry point does): the
    `game:` union takes it and this file's checks play it, all of them passing."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "SANDBOX_POPULATION_GAMES": "tests.toy_population_game:GAME"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            __file__,
            "-k",
            "toy_goods or bad_input or every_plugin",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "7 passed" in done.stdout, done.stdout[-2000:]
