"""`sandbox solve`: expand a dialogue game once, solve it with CFR, measure it, and write a run directory.

Layout (besides scenario.yaml, run.json, cache.sqlite, transcripts.jsonl):
    dialogues.csv   one row per terminal history: setup, instructions, seeds, messages, payoffs, illegal moves
    policy.csv      the solver's policy: one row per information state and instruction
    steering.csv    instruction following: one row per classified message
    summary.json    tree size, LLM calls, NashConv, CFR Gain, payoffs (solver vs any, any vs any), steering rate
    policy.png, payoffs.png

A resumed (or repeated) solve expands the tree again from the run's cache,
with no new calls for what was already answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel

from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.base.stats import json_number
from sandbox.base.sync import run_sync
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory, default_out, hold, holding
from sandbox.core.summary import write_summary
from sandbox.dialogue.expand import Tree, expand
from sandbox.dialogue.game import DialogueGame
from sandbox.dialogue.llm_calls import StackModels, run_roles
from sandbox.dialogue.psro import PSROResult, run_psro
from sandbox.dialogue.reward import RewardModel
from sandbox.dialogue.scenario import DialogueScenario
from sandbox.dialogue.solve import Solution, infostates, solve
from sandbox.dialogue.steering import classify, steering_table
from sandbox.rules.dialogue import said

__all__ = ["SolveHooks", "build_game", "is_solve_run", "resume_solve", "solve_scenario"]

DIALOGUES = "dialogues.csv"
POLICY = "policy.csv"
STEERING = "steering.csv"
PSRO_META = "psro.csv"
PSRO_CANDIDATES = "psro_candidates.csv"


@dataclass
class SolveHooks:
    """Progress callbacks: a phase starts (`what`, its total or None), and advances by `n`."""

    on_phase: Callable[[str, int | None], None] = field(default=lambda what, total: None)
    on_advance: Callable[[int], None] = field(default=lambda n: None)


def dialogue_seed(root: int, *path: int) -> int:
    """The seed at `path` of a dialogue run's branch of the seed tree (expansion, judge, steering, PSRO, play)."""
    return int(seed_node(root, Branch.DIALOGUE, *path).generate_state(1)[0])


def build_game(scenario: DialogueScenario) -> DialogueGame:
    """The scenario's game: its setups drawn from the seed tree, and one fixed LLM seed per chance outcome."""
    block = scenario.dialogue
    domain, setups = block.domain.build(block.players, block.scenarios, generator(scenario.seed, Branch.DIALOGUE, 0))
    seeds = tuple(dialogue_seed(scenario.seed, 1, k) for k in range(block.seeds_per_message))
    return DialogueGame(
        domain, setups, block.instructions, block.max_messages, seeds, block.termination, block.decisions
    )


def reward_model(scenario: DialogueScenario, game: DialogueGame) -> RewardModel | None:
    """The domain's LLM reward model, where its payoffs come from one."""
    mode = getattr(scenario.dialogue.domain, "reward", None)
    return None if mode is None else RewardModel(game.domain, mode)  # type: ignore[arg-type]


def solve_scenario(
    scenario: DialogueScenario,
    out: Path | str | None = None,
    *,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: SolveHooks | None = None,
    ledgers: Sequence[Any] = (),
) -> Path:
    """Solve the scenario's game into a new run directory and return its path.

    Args:
        scenario: The dialogue scenario.
        out: The run directory (default `runs/<name>-<time>`); it must not hold files.
        models: Chat models by role (`players`, `judge`) instead of the scenario's specs.
        hooks: Progress callbacks.
        ledgers: Budget ledgers beyond the run's own `budget` (a sweep's).
    """
    from sandbox.core.kinds import get as kind_named

    kind_named("dialogue").require(scenario)  # the extras it needs (a smollm2 student, an hf: judge), first
    path = Path(out) if out is not None else default_out(scenario)
    RunDirectory.check_new(path)
    game = build_game(scenario)  # a game that cannot be built writes nothing
    with hold(path):
        run_dir = RunDirectory.create(path, scenario)
        return _solve(run_dir, scenario, game, models or {}, hooks or SolveHooks(), ledgers)


@holding
def resume_solve(
    path: Path | str,
    *,
    models: Mapping[str, BaseChatModel] | None = None,
    hooks: SolveHooks | None = None,
    ledgers: Sequence[Any] = (),
) -> Path:
    """Finish an interrupted solve: the calls already answered come from the run's cache."""
    run_dir = RunDirectory.open(path)
    if run_dir.status().get("status") == "complete":
        return run_dir.path
    scenario = load_solve_run_scenario(run_dir)
    return _solve(run_dir, scenario, build_game(scenario), models or {}, hooks or SolveHooks(), ledgers)


def load_solve_run_scenario(run_dir: RunDirectory) -> DialogueScenario:
    from sandbox.core.scenario_files import load_scenario

    return load_scenario(run_dir / layout.SCENARIO, kind="dialogue")


def is_solve_run(path: Path | str) -> bool:
    """Whether `path` is a run directory of `sandbox solve`."""
    from sandbox.base.files import read_yaml
    from sandbox.core.kinds import kind_of_data
    from sandbox.dialogue.reward_error import is_reward_model_run

    scenario = Path(path) / layout.SCENARIO
    return scenario.is_file() and kind_of_data(read_yaml(scenario)).name == "dialogue" and not is_reward_model_run(path)


def _solve(
    run_dir: RunDirectory,
    scenario: DialogueScenario,
    game: DialogueGame,
    models: Mapping[str, BaseChatModel],
    hooks: SolveHooks,
    ledgers: Sequence[Any] = (),
) -> Path:
    from sandbox.core.budget import budget_stop
    from sandbox.llm.accounting import TokenLedger

    started = time.time()
    ledger = TokenLedger()
    try:
        result = _expand_and_solve(run_dir, scenario, game, models, hooks, ledger, ledgers)
    except BaseException as error:
        budget_stop(run_dir, [error])  # a cap reached: stopped, resumable with a higher one
        run_dir.write_status("failed", error=f"{type(error).__name__}: {error}"[:500])
        raise
    tree, solution, steered, psro, (expanded, solved) = result
    _write(
        run_dir,
        scenario,
        tree,
        solution,
        steered,
        ledger.totals(),
        {"expand": expanded - started, "solve": solved - expanded, "total": time.time() - started},
        psro,
    )
    run_dir.write_status("complete", finished=time.time())
    return run_dir.path


def _expand_and_solve(
    run_dir: RunDirectory,
    scenario: DialogueScenario,
    game: DialogueGame,
    models: Mapping[str, BaseChatModel],
    hooks: SolveHooks,
    ledger: Any,
    ledgers: Sequence[Any] = (),
) -> tuple[Any, ...]:
    with run_roles(run_dir, scenario, models, sinks=[ledger], ledgers=ledgers) as roles:
        oracle = StackModels(
            roles["players"],
            roles["judge"],
            judge_seed=dialogue_seed(scenario.seed, 2),
            reward_model=reward_model(scenario, game),
        )
        hooks.on_phase("expanding", None)
        tree = run_sync(expand(game, oracle, on_level=lambda what, n: hooks.on_advance(n)))
        expanded = time.time()
        hooks.on_phase("solving", scenario.solver.iterations)
        solution = solve(
            tree,
            algorithm=scenario.solver.algorithm,
            iterations=scenario.solver.iterations,
            on_iteration=lambda i: hooks.on_advance(1),
        )
        solved = time.time()
        steered = []
        if scenario.solver.steering:
            hooks.on_phase("steering", None)
            steered = run_sync(classify(tree, roles["judge"], seed=dialogue_seed(scenario.seed, 3)))
        psro = None
        if scenario.psro is not None:
            hooks.on_phase("psro", scenario.psro.iterations + 1)
            psro = run_sync(_psro(scenario, game, oracle, roles["players"], hooks))
    return tree, solution, steered, psro, (expanded, solved)


async def _psro(
    scenario: DialogueScenario, game: DialogueGame, oracle: StackModels, proposer: BaseChatModel, hooks: SolveHooks
) -> PSROResult:
    block = scenario.psro
    assert block is not None
    shared = block.shared if block.shared is not None else len(set(game.instructions)) == 1
    options = getattr(scenario.dialogue.domain, "candidate_options", lambda: None)()
    solver_options = {"iterations": block.prd_iterations} if block.meta_solver == "prd" else {}
    return await run_psro(
        game,
        oracle,
        proposer,
        iterations=block.iterations,
        candidates=block.candidates,
        solver=block.meta_solver,
        shared=shared,
        options=options,
        solver_options=solver_options,
        seeds=lambda it, p: [dialogue_seed(scenario.seed, 4, it, p, k) for k in range(3 * block.candidates)],
        on_iteration=lambda i: hooks.on_advance(1),
    )


def dialogues_frame(tree: Tree) -> pd.DataFrame:
    """One row per terminal history."""
    rows = []
    for node in tree.terminals():
        setup = tree.game.setups[node.setup]
        row: dict[str, Any] = {
            "setup": node.setup,
            "instructions": " | ".join(m.instruction for m in node.dialogue),
            "seeds": " ".join(str(m.seed_index) for m in node.dialogue),
            "messages": len(node.dialogue),
        }
        for i, m in enumerate(node.dialogue):
            row[f"message_{i}"] = said(setup, m)
        for p, payoff in enumerate(node.outcome.payoffs):  # type: ignore[union-attr]
            row[f"payoff_{p}"] = payoff
        row["illegal"] = node.outcome.illegal or ""  # type: ignore[union-attr]
        rows.append(row)
    return pd.DataFrame(rows)


def policy_frame(tree: Tree, solution: Solution) -> pd.DataFrame:
    """The solver's policy: one row per information state and instruction."""
    rows = []
    for index, state in enumerate(infostates(tree)):
        node = tree.nodes[state.node]
        last = node.dialogue[-1].text if node.dialogue else ""
        own = [m.instruction for m in node.dialogue if m.speaker == state.player]
        for action, probability in solution.table[state.key]:
            rows.append(
                {
                    "infostate": index,
                    "player": state.player,
                    "setup": node.setup,
                    "depth": len(node.dialogue),
                    "own_instructions": " | ".join(own),
                    "last_message": last,
                    "instruction": state.instructions[action],
                    "probability": probability,
                    "infostate_text": state.key,
                }
            )
    return pd.DataFrame(rows)


def _write(
    run_dir: RunDirectory,
    scenario: DialogueScenario,
    tree: Tree,
    solution: Solution,
    steered: list[Any],
    usage: dict[str, Any],
    seconds: dict[str, float],
    psro: PSROResult | None = None,
) -> None:
    from sandbox.dialogue.plots import plot_payoffs, plot_policy, plot_psro

    dialogues = dialogues_frame(tree)
    policy = policy_frame(tree, solution)
    dialogues.to_csv(run_dir / DIALOGUES, index=False)
    policy.to_csv(run_dir / POLICY, index=False)
    steering_rows = steering_table(tree, steered)
    pd.DataFrame(
        [
            {
                "player": s.player,
                "instruction": s.instruction,
                "judged": s.judged,
                "follows": s.follows,
                "message": s.text,
            }
            for s in steered
        ],
        columns=["player", "instruction", "judged", "follows", "message"],
    ).to_csv(run_dir / STEERING, index=False)
    follows = sum(s.follows for s in steered)
    steering_calls = len({(s.player, s.text) for s in steered})
    scorer = reward_model(scenario, tree.game)
    rewarded = {
        (node.setup, tuple((m.speaker, m.text) for m in node.dialogue)): node
        for node in tree.terminals()
        if tree.game.domain.payoffs(tree.game.setups[node.setup], node.dialogue) is None
    }  # one call per text
    reward_calls = sum(scorer.calls(tree.game.setups[n.setup], n.dialogue) for n in rewarded.values()) if scorer else 0
    players = tree.game.num_players
    summary = {
        "scenario": scenario.name,
        "domain": scenario.dialogue.domain.kind,
        "players": list(scenario.dialogue.players),
        "instructions": [list(own) for own in scenario.dialogue.instructions],
        "tree": tree.counts(),
        "llm_calls": {
            **tree.calls,
            "reward_calls": reward_calls,
            "steering": steering_calls,
            "distinct": tree.calls["messages"] + tree.calls["judgments"] + reward_calls + steering_calls,
        },
        "backend_calls": {role: int(u["calls"] - u["cache_hits"]) for role, u in usage.items()},
        "illegal_terminals": int((dialogues["illegal"] != "").sum()) if len(dialogues) else 0,
        "solver": {"algorithm": scenario.solver.algorithm, "iterations": solution.iterations},
        "nash_conv": json_number(solution.nash_conv, 6),
        "values": [json_number(v, 6) for v in solution.values],
        "any_vs_any": [json_number(v, 6) for v in solution.any_values],
        "solver_vs_any": [json_number(v, 6) for v in solution.solver_vs_any],
        "cfr_gain": [json_number(v, 6) for v in solution.cfr_gain],
        "cfr_gain_mean": json_number(sum(solution.cfr_gain) / players, 6),
        "steering_rate": json_number(follows / len(steered), 6) if steered else None,
        "steering": steering_rows,
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
    }
    if psro is not None:
        meta = pd.DataFrame(psro.meta)
        meta.to_csv(run_dir / PSRO_META, index=False)
        pd.DataFrame(psro.candidates, columns=["iteration", "player", "candidate", "status", "score"]).to_csv(
            run_dir / PSRO_CANDIDATES, index=False
        )
        last = meta[meta["iteration"] == meta["iteration"].max()]
        summary["psro"] = {
            "meta_solver": scenario.psro.meta_solver,  # type: ignore[union-attr]
            "instructions": psro.instructions,
            "added": [c["candidate"] for c in psro.candidates if c["status"] == "added"],
            "refused": sum(c["status"] == "duplicate" for c in psro.candidates),
            "final": {
                int(p): dict(zip(g["instruction"], g["probability"].round(4))) for p, g in last.groupby("player")
            },
        }
        plot_psro(meta, summary, run_dir / "psro.png")
    write_summary(run_dir, summary, kind="dialogue")
    plot_policy(policy, tree, run_dir / "policy.png")
    plot_payoffs(summary, run_dir / "payoffs.png")
