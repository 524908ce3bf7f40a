"""Head to head: solver-guided agents against the baseline, in dialogues the solver never saw (`sandbox play DIR`).

The solved run's game is played `episodes` times per pairing (every player on
"any"; one player guided by the solver's policy, the others on "any"; all
guided), with fresh LLM seeds drawn from the seed tree, so the messages are
new ones and not the tree's. The pairings share each episode's setup and
seeds (common random numbers). Payoffs are reported with 95% confidence
intervals beside the solver's prediction, the exact value of the same
pairing on the solved tree. Every call goes through the run's cache, so a
killed or repeated `play` ends with the same table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyspiel
from langchain_core.language_models import BaseChatModel

from agents.dialogue import BaselineSpeaker, GuidedSpeaker
from sandbox.base.errors import UsageError
from sandbox.base.files import read_csv, read_json
from sandbox.base.jobs import gather_jobs
from sandbox.base.seeding import Branch, generator, seed_node
from sandbox.base.stats import json_number, mean_ci
from sandbox.base.sync import run_sync
from sandbox.core import run_dir as layout
from sandbox.core.run_dir import RunDirectory, holding
from sandbox.core.summary import write_summary
from sandbox.dialogue.expand import expand
from sandbox.dialogue.game import DialogueGame
from sandbox.dialogue.llm_calls import StackModels, run_roles
from sandbox.rules.dialogue import Message, dialogue_text

PLAY = "play.csv"
PLAY_SUMMARY = "play_summary.csv"


def pairings(players: int) -> list[tuple[str, ...]]:
    """all on any; each player alone guided; all guided."""
    alone = [tuple("solver" if q == p else "any" for q in range(players)) for p in range(players)]
    return [("any",) * players, *alone, ("solver",) * players]


async def play_episode(
    game: DialogueGame, oracle: StackModels, speakers: list[Any], episode: int, root: int, pairing: int
) -> dict[str, Any]:
    """One dialogue: the setup and every message seed from `episode`; the guided choices from `pairing` too."""
    setup_index = int(generator(root, Branch.DIALOGUE, 6, episode).integers(len(game.setups)))
    setup = game.setups[setup_index]
    rng = generator(root, Branch.DIALOGUE, 7, episode, pairing)
    dialogue: tuple[Message, ...] = ()
    fallbacks = guided = 0
    while True:
        speaker = game.speaker(dialogue)
        choice = speakers[speaker].choose(
            game.infostate(setup_index, dialogue, speaker), len(dialogue), game.choices(dialogue, speaker), rng
        )
        fallbacks += choice.fallback
        guided += isinstance(speakers[speaker], GuidedSpeaker)
        seed = int(seed_node(root, Branch.DIALOGUE, 8, episode, len(dialogue)).generate_state(1)[0])
        prompt = game.domain.message(setup, speaker, choice.instruction, dialogue)
        text = await oracle.speak(prompt, seed, speaker=setup.players[speaker])
        dialogue = (*dialogue, Message(speaker, choice.instruction, text))
        over = game.ended(setup, dialogue)
        if over or (over is None and await oracle.is_over(setup, dialogue)):
            break
    outcome = game.domain.payoffs(setup, dialogue) or await oracle.reward(setup, dialogue)
    row: dict[str, Any] = {
        "episode": episode,
        "setup": setup_index,
        "instructions": " | ".join(m.instruction for m in dialogue),
        "guided": guided,
        "fallbacks": fallbacks,
        "illegal": outcome.illegal or "",
    }
    for p, payoff in enumerate(outcome.payoffs):
        row[f"payoff_{p}"] = payoff
    row["dialogue"] = dialogue_text(setup, dialogue, sep="\n")
    return row


@holding
def play(path: Path | str, *, episodes: int = 20, models: Mapping[str, BaseChatModel] | None = None) -> Path:
    """Play the solved run at `path` head to head; write `play.csv`, `play_summary.csv` and `summary.json["play"]`."""
    from sandbox.dialogue.run import build_game, dialogue_seed, load_solve_run_scenario, reward_model
    from sandbox.dialogue.solve import Table, any_table, expected_values, infostates, mix
    from sandbox.dialogue.spiel import DialogueSpielGame

    run_dir = RunDirectory.open(path)
    if run_dir.status().get("status") != "complete" or not (run_dir / "policy.csv").is_file():
        raise UsageError(f"{run_dir.path} is not a finished solve (no policy.csv); finish it with sandbox resume")
    scenario = load_solve_run_scenario(run_dir)
    game = build_game(scenario)
    policy = read_csv(run_dir / "policy.csv", keep_default_na=False)
    guided = [GuidedSpeaker.from_policy(policy, p) for p in range(game.num_players)]
    baseline = BaselineSpeaker()
    with run_roles(run_dir, scenario, models) as roles:
        oracle = StackModels(
            roles["players"],
            roles["judge"],
            judge_seed=dialogue_seed(scenario.seed, 2),
            reward_model=reward_model(scenario, game),
        )
        jobs = [
            (index, pairing, e) for index, pairing in enumerate(pairings(game.num_players)) for e in range(episodes)
        ]

        async def one(job: tuple[int, tuple[str, ...], int]) -> dict[str, Any]:
            index, pairing, episode = job
            speakers = [guided[p] if who == "solver" else baseline for p, who in enumerate(pairing)]
            row = await play_episode(game, oracle, speakers, episode, scenario.seed, index)
            return {"pairing": " vs ".join(pairing), **row}

        rows = run_sync(gather_jobs(jobs, one))
        tree = run_sync(expand(game, oracle))  # from the cache: the solved tree, for the prediction
    frame = pd.DataFrame(rows)
    frame.to_csv(run_dir / PLAY, index=False)
    spiel = pyspiel.convert_to_cached_tree(DialogueSpielGame(tree=tree))
    # the guided speakers' tables are policy.csv by state, in the form the prediction needs
    solver_table: Table = {
        s.key: [(a, guided[s.player].table[s.key].get(i, 0.0)) for a, i in enumerate(s.instructions)]
        for s in infostates(tree)
    }
    tables = {"solver": solver_table, "any": any_table(tree)}
    out = []
    for pairing in pairings(game.num_players):
        predicted = expected_values(spiel, mix(tree, [tables[who] for who in pairing]))
        group = frame[frame.pairing == " vs ".join(pairing)]
        for p in range(game.num_players):
            mean, low, high, n = mean_ci(group[f"payoff_{p}"])
            out.append(
                {
                    "pairing": " vs ".join(pairing),
                    "player": p,
                    "plays": pairing[p],
                    "mean": mean,
                    "ci_low": low,
                    "ci_high": high,
                    "n": n,
                    "predicted": predicted[p],
                    "fallback_rate": float(group["fallbacks"].sum() / max(group["guided"].sum(), 1)),
                    "illegal": int((group["illegal"] != "").sum()),
                }
            )
    table = pd.DataFrame(out)
    table.to_csv(run_dir / PLAY_SUMMARY, index=False)
    summary = read_json(run_dir / layout.SUMMARY)
    summary["play"] = {"episodes": episodes, "rows": [{k: json_number(v) for k, v in r.items()} for r in out]}
    write_summary(run_dir, summary, kind="dialogue")
    return run_dir.path


__all__ = ["pairings", "play", "play_episode"]
