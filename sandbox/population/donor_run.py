"""A donor-game population (Vallinder & Hughes 2024): LLM agents write strategies, play, and the best survive.

Each generation:

1. agents without a strategy write one: in the first generation from the
   game's description (`prompts/population/donor/strategy.j2`), later from the
   survivors' strategies (`inherit.j2`); the text from "My strategy will be"
   on is the strategy, as in the authors' code;
2. the generation's games are played (`sandbox.games.donor`): every donor of
   a round is asked at once (`donate.j2`), an unreadable answer is asked again
   up to `game.retries` times, then recorded as an illegal move;
3. the top `revision.survivors` share by score keep their strategies (and
   `fixed` members always do); the others are replaced by new agents.

Every call goes through the LLM layer (cache, transcript, budget) as role
`user`, with a seed from the run's seed tree, so a resumed run replays a
killed generation from the cache and ends with the same tables. The tables
of a generation are written when it ends, with their sizes in `state.json`.

Run directory (beside the common files): `population.csv` (generation x
agent slot: name, strategy, score, donated share, survived), `donations.csv`
(every move), `norms.csv` (every strategy written, with its author, its
generation and the survivors it was written from), `generations.csv` (the
paper's figures per generation), `summary.json`, `donations.png`.
"""

from __future__ import annotations

import asyncio
import csv
import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from prompts import render
from sandbox import run_dir as layout
from sandbox.errors import RunFailedError
from sandbox.files import read_csv, read_json
from sandbox.games.donor import (DonorMove, DonorRecord, DonorView, apply_round, final_scores, pairings,
                                 parse_donation, parse_strategy, round_views, trace_text)  # fmt: skip
from sandbox.llm.cache import ResponseCache
from sandbox.llm.contracts import CallInfo
from sandbox.llm.resolve import model_stack
from sandbox.llm.transcript import TranscriptWriter, finalize_transcript
from sandbox.llm.wrapper import acall
from sandbox.population.scenario import LLM, PopulationScenario, member_counts
from sandbox.run_dir import RunDirectory, atomic_write_text
from sandbox.seeding import Branch, generator, seed_node
from sandbox.summary import write_summary

__all__ = ["DONATIONS", "NORMS", "play_donor"]

POPULATION, GENERATIONS, DONATIONS, NORMS, STATE = (
    "population.csv", "generations.csv", "donations.csv", "norms.csv", "state.json")  # fmt: skip
COLUMNS = {
    POPULATION: ["generation", "agent", "name", "born", "fixed", "strategy", "strategy_found", "score",
                 "mean_donated_share", "survived"],
    DONATIONS: ["generation", "game", "round", "donor", "recipient", "donor_name", "recipient_name", "donor_before",
                "recipient_before", "action", "amount", "share", "valid", "attempts"],
    NORMS: ["generation", "author", "strategy", "found", "justification", "parents"],
    GENERATIONS: ["generation", "mean_donated_share", "mean_final_resources", "survivor_gap", "punishment_rate",
                  "illegal_rate", "moves", "seconds"],
}  # fmt: skip


def _seed(root: int, *path: int) -> int:
    return int(seed_node(root, *path).generate_state(1)[0] % 2**31)


class _Players:
    """The population's LLM calls: strategies and donations, through one model stack."""

    def __init__(self, scenario: PopulationScenario, model: BaseChatModel) -> None:
        self.scenario, self.model = scenario, model
        game = scenario.population.game
        self.game = game
        share = scenario.population.revision.survivors
        self.system = render("population/donor/system.j2", endowment=game.endowment, multiplier=game.multiplier,
                             punishment=game.punishment, punishment_loss=game.punishment_loss,
                             trace_depth=game.trace_depth,
                             survivors_text="half" if share == 0.5 else f"{round(100 * share)}%")  # fmt: skip

    async def _ask(self, prompt: str, *, seed: int, call: CallInfo) -> str:
        answer = await acall(self.model, [SystemMessage(self.system), HumanMessage(prompt)], seed=seed, call=call)
        return str(answer.content).strip()

    async def strategy(self, name: str, generation: int, slot: int, survivors: Sequence[dict[str, Any]]) -> dict[str, Any]:
        game, revision = self.game, self.scenario.population.revision
        common = {"agent": name, "punishment": game.punishment, "punishment_loss": game.punishment_loss,
                  "trace_depth": game.trace_depth}  # fmt: skip
        if survivors:
            prompt = render("population/donor/inherit.j2", survivors=survivors, show_scores=revision.show_scores,
                            survivors_percent=round(100 * revision.survivors), **common)  # fmt: skip
        else:
            prompt = render("population/donor/strategy.j2", **common)
        call = CallInfo(role="user", agent=name, run=0, epoch=generation, step="strategy")
        answer = await self._ask(prompt, seed=_seed(self.scenario.seed, Branch.POLICY, generation, slot), call=call)
        justification, strategy, found = parse_strategy(answer)
        return {"strategy": strategy, "found": found, "justification": justification,
                "parents": ";".join(s["name"] for s in survivors)}  # fmt: skip

    async def donate(self, view: DonorView, names: Sequence[str], strategies: Sequence[str], generation: int,
                     history: Sequence[DonorRecord]) -> tuple[DonorMove, int]:  # fmt: skip
        game = self.game
        prompt = render("population/donor/donate.j2", agent=names[view.donor], strategy=strategies[view.donor],
                        generation=generation + 1, round=view.round + 1, recipient=names[view.recipient],
                        recipient_resources=view.recipient_resources, resources=view.donor_resources,
                        trace=trace_text(view.trace, names), punishment=game.punishment,
                        multiplier=game.multiplier, punishment_loss=game.punishment_loss)  # fmt: skip
        answer = ""
        for attempt in range(game.retries + 1):
            call = CallInfo(role="user", agent=names[view.donor], run=0, epoch=generation,
                            episode=f"game{view.game}/round{view.round}", step="donate", attempt=attempt)  # fmt: skip
            seed = _seed(self.scenario.seed, Branch.EPISODE, generation, view.game, view.round, view.donor, attempt)
            answer = await self._ask(prompt, seed=seed, call=call)
            move = parse_donation(answer, game.punishment)
            if move is not None:
                return DonorMove(move[0], move[1], answer), attempt + 1
        return DonorMove(None, None, answer), game.retries + 1


def _start_agents(scenario: PopulationScenario) -> list[dict[str, Any]]:
    """The first generation's agents, by slot: each member's share (largest remainders), placed by a seeded
    permutation; `llm` members have no strategy yet."""
    block = scenario.population
    counts = member_counts([m.share for m in block.members], block.agents)
    labels = generator(scenario.seed, Branch.POPULATION).permutation(np.repeat(np.arange(len(block.members)), counts))
    agents = []
    for slot, m in enumerate(labels):
        member = block.members[int(m)]
        text = None if member.strategy == LLM else member.strategy
        agents.append({"name": f"1_{slot + 1}", "born": 0, "fixed": member.fixed, "strategy": text,
                       "found": text is not None, "justification": "", "parents": ""})  # fmt: skip
    return agents


def _select(scores: np.ndarray, agents: Sequence[dict[str, Any]], share: float, rng: np.random.Generator) -> list[int]:
    """The surviving slots: fixed members, then the best scores up to the share; ties fall by a seeded draw (the
    notebook sorted a shuffled list)."""
    keep = max(1, round(len(agents) * share))
    fixed = [i for i, a in enumerate(agents) if a["fixed"]]
    draw = rng.permutation(len(agents))
    order = [i for i in sorted(range(len(agents)), key=lambda i: (-scores[i], draw[i])) if i not in fixed]
    return sorted(fixed + order[: max(0, keep - len(fixed))])


def _append(path: Path, rows: Sequence[Sequence[Any]]) -> None:
    with path.open("a", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


async def _aplay(run_dir: RunDirectory, scenario: PopulationScenario, models: Mapping[str, BaseChatModel],
                 hooks: Any, ledgers: Sequence[Any]) -> None:  # fmt: skip
    from sandbox.run_budget import budget_stop, run_ledgers

    path, block = run_dir.path, scenario.population
    rules = block.game.rules()
    state = read_json(path / STATE) if (path / STATE).is_file() else None
    if state:
        for name, size in state["bytes"].items():
            os.truncate(path / name, size)
        agents, done = state["agents"], state["generations_done"]
    else:
        for name, columns in COLUMNS.items():
            with (path / name).open("w", newline="", encoding="utf-8") as handle:
                csv.writer(handle).writerow(columns)
        agents, done = _start_agents(scenario), 0
    cache = ResponseCache(path / layout.CACHE)
    ledgers = run_ledgers(run_dir, scenario, ledgers)
    transcript = TranscriptWriter(path / layout.TRANSCRIPTS)
    stack = model_stack(scenario, cache, [transcript], ledgers)
    config = scenario.models.user
    players = _Players(scenario, stack.for_role("user", config.spec, config.sampling.model_dump(),
                                                given=models.get("user")))  # fmt: skip
    try:
        for g in range(done, block.generations):
            started = time.perf_counter()
            agents = await _generation(path, scenario, players, agents, g, rules)
            sizes = {name: (path / name).stat().st_size for name in COLUMNS}
            atomic_write_text(path / STATE, json.dumps({"generations_done": g + 1, "bytes": sizes, "agents": agents,
                                                        "seconds": time.perf_counter() - started}))  # fmt: skip
            if hooks:
                hooks(g)
    except BaseException as error:
        budget_stop(run_dir, [error])
        failed = isinstance(error, Exception)
        run_dir.write_status("failed" if failed else "interrupted", error=f"{type(error).__name__}: {error}")
        if failed:
            raise RunFailedError(f"population failed: {type(error).__name__}: {error}\n"
                                 f"The run directory is resumable: sandbox resume {path}") from error  # fmt: skip
        raise
    finally:
        transcript.close()
        cache.close()


async def _generation(path: Path, scenario: PopulationScenario, players: _Players, agents: list[dict[str, Any]],
                      g: int, rules: Any) -> list[dict[str, Any]]:  # fmt: skip
    """Play generation `g` and write its rows; the next generation's agents."""
    block, started = scenario.population, time.perf_counter()
    missing = [i for i, a in enumerate(agents) if a["strategy"] is None]
    if missing:  # the first generation's llm members, or the new agents of the last selection
        survivors = sorted(({"name": a["name"], "strategy": a["strategy"], "score": a.get("score", math.nan)}
                            for a in agents if a["strategy"] is not None and a.get("survived")),
                           key=lambda a: -a["score"])  # best first, as the notebook listed them  # fmt: skip
        written = await asyncio.gather(*(players.strategy(agents[i]["name"], g, i, survivors) for i in missing))
        for i, result in zip(missing, written):
            agents[i].update(strategy=result["strategy"], found=result["found"],
                             justification=result["justification"], parents=result["parents"])  # fmt: skip
        _append(path / NORMS, [[g, agents[i]["name"], agents[i]["strategy"], agents[i]["found"],
                                agents[i]["justification"], agents[i]["parents"]] for i in missing])  # fmt: skip
    names = [a["name"] for a in agents]
    strategies = [a["strategy"] for a in agents]
    records: list[DonorRecord] = []
    attempts: dict[tuple[int, int, int], int] = {}
    finals = []
    for game, rounds in enumerate(pairings(block.agents, rules, generator(scenario.seed, Branch.EPOCH, g))):
        resources = np.full(block.agents, float(rules.endowment))
        history: list[DonorRecord] = []
        for r, pairs in enumerate(rounds):
            views = round_views(game, r, pairs, resources, history, rules)
            answers = await asyncio.gather(*(players.donate(v, names, strategies, g, history) for v in views))
            for view, (_, tries) in zip(views, answers):
                attempts[(game, r, view.donor)] = tries
            history.extend(apply_round(views, [move for move, _ in answers], resources, rules))
        records.extend(history)
        finals.append(resources.copy())
    scores = final_scores(finals, rules)
    survived = _select(scores, agents, block.revision.survivors, generator(scenario.seed, Branch.META, g))
    shares = {i: [h.share for h in records if h.donor == i and h.action == "donate" and not math.isnan(h.share)]
              for i in range(block.agents)}  # a punishment is no donation  # fmt: skip
    mean_share = [float(np.mean(v)) if v else math.nan for v in shares.values()]
    _append(path / DONATIONS, [[g, h.game, h.round, h.donor, h.recipient, names[h.donor], names[h.recipient],
                                h.donor_before, h.recipient_before, h.action or "", h.amount, h.share, h.valid,
                                attempts[(h.game, h.round, h.donor)]] for h in records])  # fmt: skip
    _append(path / POPULATION, [[g, i, a["name"], a["born"], a["fixed"], a["strategy"], a["found"],
                                 round(float(scores[i]), 4), mean_share[i], i in survived]
                                for i, a in enumerate(agents)])  # fmt: skip
    valid = [h for h in records if h.action == "donate" and not math.isnan(h.share)]
    gap = _survivor_gap(mean_share, survived)
    _append(path / GENERATIONS, [[g, float(np.mean([h.share for h in valid])) if valid else math.nan,
                                  float(np.mean(np.stack(finals))), float(gap),
                                  sum(h.action == "punish" for h in records) / len(records),
                                  sum(not h.valid for h in records) / len(records), len(records),
                                  round(time.perf_counter() - started, 3)]])  # fmt: skip
    following = []
    for i, agent in enumerate(agents):
        if i in survived:
            following.append({**agent, "score": float(scores[i]), "survived": True})
        else:  # a new agent takes the slot; it writes its strategy at the start of the next generation
            following.append({"name": f"{g + 2}_{i + 1}", "born": g + 1, "fixed": False, "strategy": None,
                              "found": False, "justification": "", "parents": "", "survived": False})  # fmt: skip
    return following


def _survivor_gap(shares: Sequence[float], survived: Sequence[int]) -> float:
    """The survivors' mean donated share minus the others', over the generation's mean (Vallinder & Hughes' Fig. 6
    last row); NaN when a side has no valid donation or nobody donated."""
    kept = [v for i, v in enumerate(shares) if i in survived and not math.isnan(v)]
    gone = [v for i, v in enumerate(shares) if i not in survived and not math.isnan(v)]
    average = float(np.mean(kept + gone)) if kept + gone else math.nan
    if not kept or not gone or not average:
        return math.nan
    return (float(np.mean(kept)) - float(np.mean(gone))) / average


def play_donor(run_dir: RunDirectory, scenario: PopulationScenario, *, models: Mapping[str, BaseChatModel] | None,
               hooks: Any, ledgers: Sequence[Any] = ()) -> Path:  # fmt: skip
    """Play (or go on with) a donor-game population in `run_dir`, then write its summary and plot."""
    from sandbox._sync import run_sync

    run_sync(_aplay(run_dir, scenario, models or {}, hooks, ledgers))
    _finish(run_dir, scenario)
    return run_dir.path


def _finish(run_dir: RunDirectory, scenario: PopulationScenario) -> None:
    from sandbox.population.plots import plot_donations

    path = run_dir.path
    gens = read_csv(path / GENERATIONS)
    records = finalize_transcript(path / layout.TRANSCRIPTS)
    donation = gens["mean_donated_share"].to_numpy(dtype=float)
    ok = ~np.isnan(donation)
    slope = float(np.polyfit(gens["generation"][ok], donation[ok], 1)[0]) if ok.sum() >= 2 else math.nan
    write_summary(run_dir, {
        "scenario": scenario.name, "agents": scenario.population.agents,
        "generations": scenario.population.generations, "game": "donor", "rule": "select",
        "network": "complete", "mean_degree": float(scenario.population.agents - 1),
        "donation_by_generation": [None if math.isnan(v) else round(float(v), 4) for v in donation],
        "donation_slope_per_generation": None if math.isnan(slope) else round(slope, 5),
        "final_resources_by_generation": [round(float(v), 3) for v in gens["mean_final_resources"]],
        "survivor_gap_by_generation": [None if math.isnan(v) else round(float(v), 4) for v in gens["survivor_gap"]],
        "punishment_rate": float((gens["punishment_rate"] * gens["moves"]).sum() / gens["moves"].sum()),
        "illegal_rate": float((gens["illegal_rate"] * gens["moves"]).sum() / gens["moves"].sum()),
        "calls": len(records), "model": scenario.models.user.spec,
    }, kind="population")  # fmt: skip
    plot_donations(path).savefig(path / "donations.png", dpi=120)
    run_dir.write_status("complete")
