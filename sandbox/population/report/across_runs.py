"""Population runs side by side: the finished runs of a game under a folder (a sweep's, or any). Each game's report
reads them into one table (`sandbox.population.games.<game>.report`: the matrix game's `runs_table`, the donor
game's `donor_table`, the naming game's `naming_phase_table`)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["game_runs"]


def game_runs(root: str | Path, game: str, plugin: str | None = None) -> list[Path]:
    """The finished population runs of `game` (a registered game's kind: matrix, donor, naming, ...) under `root`, as
    their scenarios say; `plugin`: only those played by that plug-in (the matrix and naming games' `scripted` or
    `llm`)."""
    from sandbox.base.files import read_json
    from sandbox.core.scenario_files import load_run_scenario

    found = []
    for path in sorted(Path(root).glob("**/summary.json")):
        if read_json(path).get("kind") != "population":
            continue
        spec = load_run_scenario(path.parent).population.game
        if spec.kind == game and (plugin is None or spec.plugin() == plugin):
            found.append(path.parent)
    return found
