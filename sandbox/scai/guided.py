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
    from sandbox.scai.scenario import Scenario

__all__ = ["guided_game", "solve_guided"]


def guided_game(scenario: Scenario) -> DialogueScenario:
    """The dialogue scenario of `society.guided.solve`, its players and judge the society's user model unless set.

    Raises:
        ValueError: the game does not validate, or is not the instructed ultimatum game (the message names the
            field under `society.guided.solve`).
    """
    from pydantic import ValidationError

    from sandbox.dialogue.scenario import DialogueScenario
    from sandbox.files import read_yaml
    from sandbox.scenario_file import scenario_problems

    block = scenario.society.guided
    assert block is not None and block.solve is not None
    if isinstance(block.solve, str) and not Path(block.solve).is_file():
        raise ValueError(f"society.guided.solve: {block.solve} is not a file")
    data = read_yaml(Path(block.solve)) if isinstance(block.solve, str) else block.solve
    try:
        game = DialogueScenario.model_validate(data)
    except ValidationError as error:
        field, message = scenario_problems(error, DialogueScenario)[0]
        raise ValueError(f"society.guided.solve.{field}: {message}") from None
    if game.dialogue.domain.kind != "ultimatum" or len(game.dialogue.players) != 2:
        raise ValueError(
            "society.guided.solve.dialogue.domain.kind: guided members play the instructed ultimatum "
            f"game of two players, not {game.dialogue.domain.kind!r}"
        )
    if block.play == "any" and not all("any" in role for role in game.dialogue.instructions):
        raise ValueError(
            "society.guided.play: any plays the baseline style, and the game's instructions have no "
            '"any" for each role'
        )
    if isinstance(data, dict) and "models" not in data:
        user = scenario.models.user.spec
        models = game.models.model_copy(
            update={
                "players": game.models.players.model_copy(update={"spec": user}),
                "judge": game.models.judge.model_copy(update={"spec": user}),
            }
        )
        game = game.model_copy(update={"models": models})
    return game


def solve_guided(
    scenario: Scenario,
    run_dir: Any,
    models: Mapping[str, Any] | None = None,
    ledgers: Sequence[Any] = (),
    hooks: Any = None,
) -> Path:
    """Solve (or resume, or read back) the society's guided game in `run_dir/guided`; that run directory.

    `hooks`: the society run's progress hooks; their `on_phase` and `on_advance`, where set, show the solve."""
    from sandbox import run_dir as layout
    from sandbox.dialogue.run import SolveHooks, resume_solve, solve_scenario
    from sandbox.files import read_json

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
    return solve_scenario(guided_game(scenario), path, models=given, ledgers=ledgers, hooks=progress)
