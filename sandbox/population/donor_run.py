"""A donor-game population (Vallinder & Hughes 2024): LLM agents write strategies, play, and the best survive.

Each generation:

1. agents without a strategy write one: in the first generation from the
   game's description (`prompts/population/donor/strategy.j2`), later from the
   survivors' strategies (`inherit.j2`); the text from "My strategy will be"
   on is the strategy, as in the authors' code;
2. the generation's games are played (`sandbox.games.donor`): every donor of
   a round is asked at once (`donate.j2`), an unreadable answer is asked again
   up to `game.retries` times, then recorded as an illegal move;
3. the agents revise (`revision.rule`): by `select`, the top
   `revision.survivors` share by score keep their strategies (and `fixed`
   members always do) and the others are replaced by new agents; by
   `reflect`, `imitate` or `mutate`, each agent revises its own strategy
   (`sandbox.population.donor_norms`).

The calls (`sandbox.population.donor_players`) go through the LLM layer (cache, transcript, budget) as role
`user`, with a seed from the run's seed tree, so a resumed run replays a
killed generation from the cache and ends with the same tables. The tables
of a generation are written when it ends, with their sizes in `state.json`.

Run directory (beside the common files): `population.csv` (generation x
agent slot: name, norm id, strategy, score, donated share, survived),
`donations.csv` (every move), `norms.csv` (every norm version: its id, the
generation it is first played in, its author, the rule that made it, its
parents' ids, the justification and the evidence shown), `revisions.csv`
(every revision: rule, partner, probability, outcome, old and new norm),
`generations.csv` (the paper's figures per generation), `edges.csv` (the
network, empty for a complete one), `summary.json`, `donations.png`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel

from sandbox.errors import RunFailedError
from sandbox.files import read_csv
from sandbox.games.donor import DonorRecord, apply_round, final_scores, pairings, round_views
from sandbox.population.donor_norms import REVISIONS_COLUMNS, NormBook, revise_norms
from sandbox.population.donor_players import Players
from sandbox.population.fidelity import FIDELITY, FIDELITY_COLUMNS, judge_play
from sandbox.population.dynamics import network_of
from sandbox.population.llm_session import finish_llm_run, listed, llm_session, model_label
from sandbox.population.norm_map import norm_map_summary
from sandbox.population.scenario import LLM, PopulationScenario, place_members
from sandbox.population.tables import append_rows, load_state, save_state, start_tables
from sandbox.run_dir import RunDirectory
from sandbox.seeding import Branch, generator

__all__ = ["DONATIONS", "NORMS", "play_donor"]

POPULATION, GENERATIONS, DONATIONS, NORMS, REVISIONS, EDGES = (
    "population.csv", "generations.csv", "donations.csv", "norms.csv", "revisions.csv", "edges.csv")  # fmt: skip
COLUMNS = {
    POPULATION: ["generation", "agent", "name", "born", "fixed", "norm", "strategy", "strategy_found", "score",
                 "mean_donated_share", "survived"],
    DONATIONS: ["generation", "game", "round", "donor", "recipient", "donor_name", "recipient_name", "donor_before",
                "recipient_before", "action", "amount", "share", "valid", "attempts"],
    NORMS: ["generation", "norm", "author", "rule", "strategy", "found", "parents", "justification", "evidence"],
    REVISIONS: REVISIONS_COLUMNS,
    FIDELITY: FIDELITY_COLUMNS,
    GENERATIONS: ["generation", "mean_donated_share", "mean_final_resources", "survivor_gap", "punishment_rate",
                  "illegal_rate", "moves", "seconds"],
}  # fmt: skip


def _start_agents(scenario: PopulationScenario, book: NormBook) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """The first generation's agents, by slot (`place_members`); `llm` members have no strategy yet, a given
    text is norm version of its own (and its `norms.csv` row)."""
    block = scenario.population
    agents, rows, given = [], [], {}
    for slot, m in enumerate(place_members(scenario)):
        member = block.members[int(m)]
        text = None if member.strategy == LLM else member.strategy
        if text is not None and text not in given:
            given[text], outcome = book.add(text, True)
            if outcome == "new":  # with the check, a text differing in case or spaces only is the same norm
                rows.append([0, given[text], "", "given", text, True, "", "", ""])
        if text is not None:
            text = book.text(given[member.strategy], text)
        agents.append({"name": f"1_{slot + 1}", "born": 0, "fixed": member.fixed, "strategy": text,
                       "found": text is not None, "norm": None if text is None else given[member.strategy]})  # fmt: skip
    return agents, rows


def _select(scores: np.ndarray, agents: Sequence[dict[str, Any]], share: float, rng: np.random.Generator) -> list[int]:
    """The surviving slots: fixed members, then the best scores up to the share; ties fall by a seeded draw (the
    notebook sorted a shuffled list)."""
    keep = max(1, round(len(agents) * share))
    fixed = [i for i, a in enumerate(agents) if a["fixed"]]
    draw = rng.permutation(len(agents))
    order = [i for i in sorted(range(len(agents)), key=lambda i: (-scores[i], draw[i])) if i not in fixed]
    return sorted(fixed + order[: max(0, keep - len(fixed))])


class _Network:
    """The population's network: the donor pairing's matchings and the neighbours that `imitate` draws from."""

    def __init__(self, scenario: PopulationScenario) -> None:
        block = scenario.population
        self.graph, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.matching = self.graph.maximal_matching if block.game.pairing == "network" else None


async def _aplay(run_dir: RunDirectory, scenario: PopulationScenario, network: _Network,
                 models: Mapping[str, BaseChatModel], hooks: Any, ledgers: Sequence[Any]) -> None:  # fmt: skip
    path, block = run_dir.path, scenario.population
    rules = block.game.rules()
    state = load_state(path)
    if state and "norms" not in state:
        raise RunFailedError(f"{path} was made by an older sandbox (no norm ids in its state); it cannot be resumed "
                             "by this one: run the scenario again")  # fmt: skip
    if state:
        norms = {k: v for k, v in state["norms"].items() if k != "known"}  # an earlier state kept the index too
        agents, done, book = state["agents"], state["generations_done"], NormBook(**norms)
        if not (path / FIDELITY).is_file():  # a run made before the judge existed
            start_tables(path, {FIDELITY: FIDELITY_COLUMNS})
    else:
        start_tables(path, COLUMNS)
        edges = network.neighbours.edges
        start_tables(path, {EDGES: ["a", "b"]})
        append_rows(path / EDGES, [] if edges is None else edges.tolist())
        book = NormBook(check=block.revision.check)
        agents, rows = _start_agents(scenario, book)
        append_rows(path / NORMS, rows)
        done = 0
    with llm_session(run_dir, scenario, ledgers, models) as model:
        players = Players(scenario, model("user"))
        judge = None
        if block.judge_play:
            from sandbox.proxy.judge import ProxyJudge

            judge = ProxyJudge(model("judge"))
        for g in range(done, block.generations):
            started = time.perf_counter()
            agents = await _generation(path, scenario, players, agents, g, rules, network, book, judge)
            save_state(path, COLUMNS, generations_done=g + 1, agents=agents, norms=book.state(),
                       seconds=time.perf_counter() - started)  # fmt: skip
            if hooks:
                hooks(g)


async def _write_missing(path: Path, players: Players, agents: list[dict[str, Any]], g: int,
                         book: NormBook) -> None:  # fmt: skip
    """Agents without a strategy write one: the first generation's `llm` members from the game's description, the
    new agents of the last selection from the survivors' strategies (with their scores, best first)."""
    missing = [i for i, a in enumerate(agents) if a["strategy"] is None]
    if not missing:
        return
    survivors = sorted(({"name": a["name"], "strategy": a["strategy"], "score": a.get("score", math.nan),
                         "norm": a["norm"]} for a in agents if a["strategy"] is not None and a.get("survived")),
                       key=lambda a: -a["score"])  # best first, as the notebook listed them  # fmt: skip
    written = await asyncio.gather(*(players.strategy(agents[i]["name"], g, i, survivors) for i in missing))
    parents = ";".join(str(s["norm"]) for s in survivors)
    norm_rows, revision_rows = [], []
    for i, result in zip(missing, written):
        norm, outcome = book.add(result["strategy"], result["found"])
        if norm is None:  # rejected by the check: a new agent has no norm to keep, so it holds the text unchecked
            norm, outcome = book.next_id, "rejected, kept"
            book.next_id += 1
        agents[i].update(strategy=book.text(norm, result["strategy"]), found=result["found"], norm=norm)
        if outcome != "duplicate":
            norm_rows.append([g, norm, agents[i]["name"], "inherit" if survivors else "write", result["strategy"],
                              result["found"], parents, result["justification"], ""])  # fmt: skip
        if survivors:
            revision_rows.append([g - 1, i, agents[i]["name"], "select", "", "", outcome,
                                  agents[i].pop("replaced_norm", ""), norm])  # fmt: skip
    append_rows(path / NORMS, norm_rows)
    append_rows(path / REVISIONS, revision_rows)


async def _generation(path: Path, scenario: PopulationScenario, players: Players, agents: list[dict[str, Any]],
                      g: int, rules: Any, network: _Network, book: NormBook, judge: Any = None) -> list[dict[str, Any]]:  # fmt: skip
    """Play generation `g` and write its rows; the next generation's agents."""
    block, started = scenario.population, time.perf_counter()
    await _write_missing(path, players, agents, g, book)
    names = [a["name"] for a in agents]
    strategies = [a["strategy"] for a in agents]
    records: list[DonorRecord] = []
    attempts: dict[tuple[int, int, int], int] = {}
    finals = []
    rounds_by_game = pairings(block.agents, rules, generator(scenario.seed, Branch.EPOCH, g), network.matching)
    for game, rounds in enumerate(rounds_by_game):
        resources = np.full(block.agents, float(rules.endowment))
        history: list[DonorRecord] = []
        for r, pairs in enumerate(rounds):
            views = round_views(game, r, pairs, resources, history, rules)
            answers = await asyncio.gather(*(players.donate(v, names, strategies, g) for v in views))
            for view, (_, tries) in zip(views, answers):
                attempts[(game, r, view.donor)] = tries
            history.extend(apply_round(views, [move for move, _ in answers], resources, rules))
        records.extend(history)
        finals.append(resources.copy())
    scores = final_scores(finals, rules)
    select = block.revision.rule == "select"
    rng = generator(scenario.seed, Branch.META, g)
    survived = _select(scores, agents, block.revision.survivors, rng) if select else list(range(block.agents))
    shares = {i: [h.share for h in records if h.donor == i and h.action == "donate" and not math.isnan(h.share)]
              for i in range(block.agents)}  # a punishment is no donation  # fmt: skip
    mean_share = [float(np.mean(v)) if v else math.nan for v in shares.values()]
    append_rows(path / DONATIONS, [[g, h.game, h.round, h.donor, h.recipient, names[h.donor], names[h.recipient],
                                    h.donor_before, h.recipient_before, h.action or "", h.amount, h.share, h.valid,
                                    attempts[(h.game, h.round, h.donor)]] for h in records])  # fmt: skip
    append_rows(path / POPULATION, [[g, i, a["name"], a["born"], a["fixed"], a["norm"], a["strategy"], a["found"],
                                     round(float(scores[i]), 4), mean_share[i], i in survived]
                                    for i, a in enumerate(agents)])  # fmt: skip
    if judge is not None:
        append_rows(path / FIDELITY, await judge_play(judge, agents, records, names, g, scenario.seed, block.game))
    valid = [h for h in records if h.action == "donate" and not math.isnan(h.share)]
    moves = max(1, len(records))
    append_rows(path / GENERATIONS, [[g, float(np.mean([h.share for h in valid])) if valid else math.nan,
                                      float(np.mean(np.stack(finals))), float(_survivor_gap(mean_share, survived)),
                                      sum(h.action == "punish" for h in records) / moves,
                                      sum(not h.valid for h in records) / moves, len(records),
                                      round(time.perf_counter() - started, 3)]])  # fmt: skip
    if g + 1 == block.generations:  # no revision after the last generation
        return agents
    if not select:
        following, norm_rows, revision_rows = await revise_norms(players, agents, g, records, finals, scores,
                                                                 network.neighbours, book, block.revision, rng,
                                                                 rules)  # fmt: skip
        append_rows(path / NORMS, norm_rows)
        append_rows(path / REVISIONS, revision_rows)
        return following
    following = []
    for i, agent in enumerate(agents):
        if i in survived:
            following.append({**agent, "score": float(scores[i]), "survived": True})
        else:  # a new agent takes the slot; it writes its strategy at the start of the next generation
            following.append({"name": f"{g + 2}_{i + 1}", "born": g + 1, "fixed": False, "strategy": None,
                              "found": False, "norm": None, "replaced_norm": agent["norm"], "survived": False})  # fmt: skip
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

    network = _Network(scenario)
    run_sync(_aplay(run_dir, scenario, network, models or {}, hooks, ledgers))
    _finish(run_dir, scenario, model_label(scenario, models), float(network.neighbours.degree().mean()))
    return run_dir.path


def _finish(run_dir: RunDirectory, scenario: PopulationScenario, model: str, mean_degree: float) -> None:
    from sandbox.population.plots import plot_donations

    path = run_dir.path
    gens = read_csv(path / GENERATIONS)
    donation = gens["mean_donated_share"].to_numpy(dtype=float)
    ok = ~np.isnan(donation)
    slope = float(np.polyfit(gens["generation"][ok], donation[ok], 1)[0]) if ok.sum() >= 2 else math.nan
    block = scenario.population
    norms = read_csv(path / NORMS)
    revisions = read_csv(path / REVISIONS)
    finish_llm_run(run_dir, {
        "scenario": scenario.name, "agents": block.agents, "generations": block.generations, "game": "donor",
        "rule": block.revision.rule, "network": block.network.kind, "mean_degree": mean_degree,
        "norm_versions": len(norms), "revisions_changed": int(revisions["outcome"].isin(["new", "copied"]).sum()),
        "donation_by_generation": listed(donation),
        "donation_slope_per_generation": None if math.isnan(slope) else round(slope, 5),
        "final_resources_by_generation": [round(float(v), 3) for v in gens["mean_final_resources"]],
        "survivor_gap_by_generation": listed(gens["survivor_gap"]),
        "punishment_rate": float((gens["punishment_rate"] * gens["moves"]).sum() / gens["moves"].sum()),
        "illegal_rate": float((gens["illegal_rate"] * gens["moves"]).sum() / gens["moves"].sum()),
        "model": model, **_fidelity_summary(path, block.judge_play, block.generations),
        **norm_map_summary(path),
    }, lambda: plot_donations(path), "donations.png")  # fmt: skip


def _fidelity_summary(path: Path, judged: bool, generations: int) -> dict[str, Any]:
    """With `judge_play`: per generation, the share of the judged agents whose play the judge found to follow their
    norm (unparsed answers left out) and how many answers did not parse."""
    if not judged:
        return {}
    rows = read_csv(path / FIDELITY)
    parsed = rows[rows["label"].notna()]
    by_generation = parsed.groupby("generation")["label"].apply(lambda v: round(float(v.astype(bool).mean()), 4))
    by_generation = by_generation.reindex(range(generations))  # a generation without a parsed verdict: None
    return {"norm_fidelity_by_generation": [None if v != v else v for v in by_generation.tolist()],
            "fidelity_unparsed": int(rows["label"].isna().sum())}
