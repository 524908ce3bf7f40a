"""Solver-guided members whose game is solved inline (`society.guided.solve`), by the dialogue method.

The game is a dialogue scenario of the instructed ultimatum game; it is
solved by `sandbox.dialogue.run` (the dialogue method's public solving
module) into the society run's `guided/` folder, a normal `sandbox solve` run
directory, before the society plays. A killed run resumes the solve from its
cache; a finished solve is read back. Its calls count against the society
run's budget. Unless the game sets its own `models:`, its players and judge
are the society's user model spec, so `--model user=...` reaches it too; a
user model object a caller gives (a test's scripted model, the dry run's
stand-in) plays them in any case.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.dialogue.scenario import DialogueScenario

__all__ = ["solve_guided"]


def solve_guided(
    game: DialogueScenario,
    run_dir: Any,
    models: Mapping[str, Any] | None = None,
    ledgers: Sequence[Any] = (),
    hooks: Any = None,
) -> Path:
    """Solve (or resume, or read back) the society's guided game (`sandbox.scai.scenario.guided_game`) in
    `run_dir/guided`; that run directory.

    `hooks`: the society run's progress hooks; their `on_phase` and `on_advance`, where set, show the solve."""
    from sandbox.base.files import read_json
    from sandbox.core import run_dir as layout
    from sandbox.dialogue.run import SolveHooks, resume_solve, solve_scenario

    progress = SolveHooks()
    if getattr(hooks, "on_phase", None) is not None:
        progress.on_phase = lambda what, total: hooks.on_phase(f"guided game: {what}", total)
    if getattr(hooks, "on_advance", None) is not None:
        progress.on_advance = hooks.on_advance

    path = Path(run_dir.path if hasattr(run_dir, "path") else run_dir) / layout.GUIDED
    # a user model object given (tests, the dry run's stand-in) plays the game too: nothing else is called
    given = {"players": models["user"], "judge": models["user"]} if models and "user" in models else {}
    if (path / layout.STATUS).is_file():
        if read_json(path / layout.STATUS).get("status") == "complete":
            return path
        return resume_solve(path, models=given, ledgers=ledgers, hooks=progress)
    if path.exists():  # killed between making the folder and its status: nothing was solved yet
        shutil.rmtree(path)
    return solve_scenario(game, path, models=given, ledgers=ledgers, hooks=progress)
