"""A donor-game population (Vallinder & Hughes 2024): LLM agents write strategies, play, and the best survive.

Each generation:

1. agents without a strategy write one: in the first generation from the
   game's description (`prompts/population/donor/strategy.j2`), later from the
   survivors' strategies (`inherit.j2`); the text from "My strategy will be"
   on is the strategy, as in the authors' code;
2. the generation's games are played (`sandbox.population.games.donor.rules`): every donor of
   a round is asked at once (`donate.j2`), an unreadable answer is asked again
   up to `game.retries` times, then recorded as an illegal move;
3. the agents revise (`revision.rule`): by `select`, the top
   `revision.survivors` share by score keep their strategies (and `fixed`
   members always do) and the others are replaced by new agents; by
   `reflect`, `imitate` or `mutate`, each agent revises its own strategy
   (`sandbox.population.games.donor.norms`).

On the engine (`sandbox.engine.generations`): `pair` draws the generation's
pairings, `play` writes the missing strategies (step 1) and plays the games
(2), `score` scores them and selects the survivors, `revise` asks the judge
(with `judge_play`) and revises (3), `record` writes the generation's rows.
The calls (`sandbox.population.games.donor.players`) go through the LLM layer
(cache, transcript, budget) as role `user`, with a seed from the run's seed
tree, so a resumed run replays a killed generation from the cache and ends
with the same tables.

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

import copy
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.base.files import read_csv
from sandbox.base.jobs import gather_jobs, jobs_ahead
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.donor.agents import select, start_agents, survivor_gap, write_missing
from sandbox.population.games.donor.fidelity import FIDELITY, FidelityRow, judge_play
from sandbox.population.games.donor.norms import NormBook, edit_strategy, revise_norms
from sandbox.population.games.donor.players import Players
from sandbox.population.games.donor.records import (
    COLUMNS,
    DONATIONS,
    EDGES,
    GENERATIONS,
    NORMS,
    POPULATION,
    REVISIONS,
    DonationRow,
    DonorPlay,
    DonorPopulation,
    DonorRevision,
    DonorScores,
    GenerationRow,
    Pairings,
    PopulationRow,
    record_data,
    records_of,
)
from sandbox.population.games.donor.report import print_table
from sandbox.population.games.donor.rules import DonorRecord, apply_round, final_scores, pairings, round_views
from sandbox.population.games.donor.spec import DonorSpec
from sandbox.population.llm_session import finish_llm_run, listed, model_label, summary_head
from sandbox.population.network import network_of
from sandbox.population.norm_map import norm_map_summary
from sandbox.population.settings import PopulationScenarioSettings, spec_of

if TYPE_CHECKING:
    from sandbox.rewards.judge import ProxyJudge

__all__ = ["DONATIONS", "NORMS", "DonorGame"]


class _Network:
    """The population's network: the donor pairing's matchings and the neighbours that `imitate` draws from."""

    def __init__(self, scenario: PopulationScenarioSettings) -> None:
        block = scenario.population
        self.graph, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.matching = self.graph.maximal_matching if spec_of(scenario, DonorSpec).pairing == "network" else None


class DonorGame(PopulationGame[DonorSpec, DonorPopulation, DonorPlay, Pairings, DonorScores, DonorRevision]):
    """The donor game: the population is the agents (name, birth, strategy, norm id) and the run's norm book."""

    print_table = staticmethod(print_table)

    edit_state = staticmethod(edit_strategy)  # a fork's state.agents.I.strategy=TEXT: a norm of its own

    columns = COLUMNS

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        self.rules = self.spec.rules()
        self.network = _Network(scenario)
        self.players = Players(scenario, self.model("user"))
        self.judge: ProxyJudge | None = None
        if self.block.judge_play:
            from sandbox.rewards.judge import ProxyJudge

            self.judge = ProxyJudge(self.model("judge"))

    def start(self) -> tuple[DonorPopulation, Rows]:
        book = NormBook(check=self.block.revision.check)
        agents, rows = start_agents(self.scenario, book)
        edges = self.network.neighbours.edges
        return {"agents": agents, "norms": book.state()}, {EDGES: [] if edges is None else edges, NORMS: rows}

    def pair(self, population: DonorPopulation, g: int) -> Pairings:
        """Each game's rounds of (donor, recipient) pairs; with `game.activation` below 1, each pair kept with that
        probability, drawn after the pairing from the same generator (so 1 draws nothing and changes nothing)."""
        rng = generator(self.scenario.seed, Branch.EPOCH, g)
        rounds = pairings(self.block.agents, self.rules, rng, self.network.matching)
        activation = self.spec.activation
        if activation < 1:
            rounds = [
                [[p for p, kept in zip(pairs, rng.random(len(pairs)) < activation) if kept] for pairs in game]
                for game in rounds
            ]
        return [[[list(pair) for pair in pairs] for pairs in game] for game in rounds]

    async def play(self, population: DonorPopulation, g: int, pairs: Pairings) -> DonorPlay:
        """The missing strategies written, then the generation's games, round by round (every donor of a round
        asked at once)."""
        agents, book, rules = (
            copy.deepcopy(population["agents"]),
            NormBook(**copy.deepcopy(population["norms"])),
            self.rules,
        )
        norm_rows, revision_rows = await write_missing(self.players, agents, g, book)
        names, strategies = [a["name"] for a in agents], [a["strategy"] or "" for a in agents]  # each written
        records: list[DonorRecord] = []
        attempts: list[int] = []
        finals: list[list[float]] = []
        for game, rounds in enumerate(pairs):
            resources = np.full(self.block.agents, float(rules.endowment))
            history: list[DonorRecord] = []
            for r, round_pairs in enumerate(rounds):
                views = round_views(
                    game, r, [(donor, recipient) for donor, recipient in round_pairs], resources, history, rules
                )
                answers = await gather_jobs(
                    views,
                    lambda v: self.players.donate(v, names, strategies, g),
                    limit=jobs_ahead(self.players.scenario.concurrency),
                )
                attempts += [tries for _, tries in answers]
                history.extend(apply_round(views, [move for move, _ in answers], resources, rules))
            records.extend(history)
            finals.append(resources.tolist())
        return {
            "agents": agents,
            "norms": book.state(),
            "norm_rows": norm_rows,
            "revision_rows": revision_rows,
            "records": [record_data(h) for h in records],
            "attempts": attempts,
            "finals": finals,
        }

    def score(self, population: DonorPopulation, g: int, played: DonorPlay) -> DonorScores:
        """The agents' scores; under select, the surviving slots."""
        agents = played["agents"]
        scores = final_scores([np.array(f) for f in played["finals"]], self.rules)
        survived = list(range(self.block.agents))
        if self.block.revision.rule == "select":
            survived = select(
                scores, agents, self.block.revision.survivors, generator(self.scenario.seed, Branch.META, g)
            )
        return {"scores": scores.tolist(), "survived": survived}

    async def revise(
        self, population: DonorPopulation, g: int, played: DonorPlay, scores: DonorScores
    ) -> DonorRevision:
        """The judge's verdicts (with `judge_play`), then the next generation's agents: the survivors and new agents
        under select, else each agent's own revision (none after the last generation)."""
        block, agents, records = self.block, played["agents"], records_of(played)
        names = [a["name"] for a in agents]
        fidelity: list[FidelityRow] = []
        if self.judge is not None:
            fidelity = await judge_play(self.judge, agents, records, names, g, self.scenario.seed, self.spec)
        result: DonorRevision = {
            "agents": agents,
            "norms": played["norms"],
            "norm_rows": [],
            "revision_rows": [],
            "fidelity": fidelity,
        }
        if g + 1 == block.generations:  # no revision after the last generation
            return result
        score = np.array(scores["scores"])
        if block.revision.rule != "select":
            book = NormBook(**copy.deepcopy(played["norms"]))
            following, norm_rows, revision_rows = await revise_norms(
                self.players,
                copy.deepcopy(agents),
                g,
                records,
                [np.array(f) for f in played["finals"]],
                score,
                self.network.neighbours,
                book,
                block.revision,
                generator(self.scenario.seed, Branch.META, g),
                self.rules,
            )
            return {
                **result,
                "agents": following,
                "norms": book.state(),
                "norm_rows": norm_rows,
                "revision_rows": revision_rows,
            }
        following = []
        for i, agent in enumerate(agents):
            if i in scores["survived"]:
                following.append({**agent, "score": float(score[i]), "survived": True})
            else:  # a new agent takes the slot; it writes its strategy at the start of the next generation
                following.append(
                    {
                        "name": f"{g + 2}_{i + 1}",
                        "born": g + 1,
                        "fixed": False,
                        "strategy": None,
                        "found": False,
                        "norm": None,
                        "replaced_norm": agent["norm"],
                        "survived": False,
                    }
                )
        return {**result, "agents": following}

    def next_agents(self, state: GenerationState) -> DonorPopulation:
        revised = self.generation(state).revised
        return {"agents": revised["agents"], "norms": revised["norms"]}

    def held(self, agents: DonorPopulation) -> list[str]:
        """Each agent slot's strategy text, as population.csv's `strategy` (`none` until its agent writes one)."""
        return [a["strategy"] if a["strategy"] is not None else "none" for a in agents["agents"]]

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step = self.generation(state)
        g, played, revised = step.g, step.played, step.revised
        agents, records, survived = played["agents"], records_of(played), step.scores["survived"]
        scores = step.scores["scores"]
        names = [a["name"] for a in agents]
        shares = {
            i: [h.share for h in records if h.donor == i and h.action == "donate" and not math.isnan(h.share)]
            for i in range(self.block.agents)
        }  # a punishment is no donation
        mean_share = [float(np.mean(v)) if v else math.nan for v in shares.values()]
        valid = [h for h in records if h.action == "donate" and not math.isnan(h.share)]
        moves = max(1, len(records))
        return {
            DONATIONS: [
                DonationRow(
                    generation=g,
                    game=h.game,
                    round=h.round,
                    donor=h.donor,
                    recipient=h.recipient,
                    donor_name=names[h.donor],
                    recipient_name=names[h.recipient],
                    donor_before=h.donor_before,
                    recipient_before=h.recipient_before,
                    action=h.action or "",
                    amount=h.amount,
                    share=h.share,
                    valid=h.valid,
                    attempts=tries,
                )
                for h, tries in zip(records, played["attempts"])
            ],
            POPULATION: [
                PopulationRow(
                    generation=g,
                    agent=i,
                    name=a["name"],
                    born=a["born"],
                    fixed=a["fixed"],
                    norm=a["norm"],
                    strategy=a["strategy"],
                    strategy_found=a["found"],
                    score=round(float(scores[i]), 4),
                    mean_donated_share=mean_share[i],
                    survived=i in survived,
                )
                for i, a in enumerate(agents)
            ],
            FIDELITY: revised["fidelity"],
            GENERATIONS: [
                GenerationRow(
                    generation=g,
                    mean_donated_share=float(np.mean([h.share for h in valid])) if valid else math.nan,
                    mean_final_resources=float(np.mean(np.array(played["finals"]))),
                    survivor_gap=float(survivor_gap(mean_share, survived)),
                    punishment_rate=sum(h.action == "punish" for h in records) / moves,
                    illegal_rate=sum(not h.valid for h in records) / moves,
                    moves=len(records),
                    seconds=round(seconds, 3),
                )
            ],
            NORMS: played["norm_rows"] + revised["norm_rows"],
            REVISIONS: played["revision_rows"] + revised["revision_rows"],
        }

    figure_file = "donations.png"

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.donor.report import plot_donations

        return plot_donations(path)

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        _finish(
            run_dir,
            self.scenario,
            model_label(self.scenario, models),
            float(self.network.neighbours.degree().mean()),
            lambda: self.figure(run_dir.path),
        )


def _finish(
    run_dir: RunDirectory,
    scenario: PopulationScenarioSettings,
    model: str,
    mean_degree: float,
    figure: Callable[[], Figure],
) -> None:
    path = run_dir.path
    gens = read_csv(path / GENERATIONS)
    donation = gens["mean_donated_share"].to_numpy(dtype=float)
    ok = ~np.isnan(donation)
    slope = float(np.polyfit(gens["generation"][ok], donation[ok], 1)[0]) if ok.sum() >= 2 else math.nan
    block = scenario.population
    norms = read_csv(path / NORMS)
    revisions = read_csv(path / REVISIONS)
    finish_llm_run(
        run_dir,
        {
            **summary_head(scenario, "donor"),
            "rule": block.revision.rule,
            "network": block.network.kind,
            "mean_degree": mean_degree,
            "norm_versions": len(norms),
            "revisions_changed": int(revisions["outcome"].isin(["new", "copied"]).sum()),
            "donation_by_generation": listed(donation),
            "donation_slope_per_generation": None if math.isnan(slope) else round(slope, 5),
            "final_resources_by_generation": [round(float(v), 3) for v in gens["mean_final_resources"]],
            "survivor_gap_by_generation": listed(gens["survivor_gap"]),
            "punishment_rate": float((gens["punishment_rate"] * gens["moves"]).sum() / gens["moves"].sum()),
            "illegal_rate": float((gens["illegal_rate"] * gens["moves"]).sum() / gens["moves"].sum()),
            "model": model,
            **_fidelity_summary(path, block.judge_play, block.generations),
            **norm_map_summary(path),
        },
        figure,
        DonorGame.figure_file,
    )


def _fidelity_summary(path: Path, judged: bool, generations: int) -> dict[str, object]:
    """With `judge_play`: per generation, the share of the judged agents whose play the judge found to follow their
    norm (unparsed answers left out) and how many answers did not parse."""
    if not judged:
        return {}
    rows = read_csv(path / FIDELITY)
    parsed = rows[rows["label"].notna()]
    by_generation = parsed.groupby("generation")["label"].apply(lambda v: round(float(v.astype(bool).mean()), 4))
    by_generation = by_generation.reindex(range(generations))  # a generation without a parsed verdict: None
    return {
        "norm_fidelity_by_generation": [None if v != v else v for v in by_generation.tolist()],
        "fidelity_unparsed": int(rows["label"].isna().sum()),
    }
