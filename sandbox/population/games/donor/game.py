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
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.base.files import read_csv
from sandbox.base.jobs import gather_jobs, jobs_ahead
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.donor.fidelity import FIDELITY, FIDELITY_COLUMNS, judge_play
from sandbox.population.games.donor.norms import NormBook, edit_strategy, revise_norms
from sandbox.population.games.donor.players import Players
from sandbox.population.games.donor.report import print_table
from sandbox.population.games.donor.rules import DonorRecord, apply_round, final_scores, pairings, round_views
from sandbox.population.games.donor.spec import DonorSpec
from sandbox.population.llm_session import finish_llm_run, listed, model_label, summary_head
from sandbox.population.network import network_of
from sandbox.population.norm_map import norm_map_summary
from sandbox.population.revision.texts import REVISIONS_COLUMNS
from sandbox.population.settings import LLM, PopulationScenarioSettings, place_members, spec_of

__all__ = ["DONATIONS", "NORMS", "DonorGame"]

POPULATION, GENERATIONS, DONATIONS, NORMS, REVISIONS, EDGES = (
    "population.csv",
    "generations.csv",
    "donations.csv",
    "norms.csv",
    "revisions.csv",
    "edges.csv",
)
COLUMNS = {
    POPULATION: [
        "generation",
        "agent",
        "name",
        "born",
        "fixed",
        "norm",
        "strategy",
        "strategy_found",
        "score",
        "mean_donated_share",
        "survived",
    ],
    DONATIONS: [
        "generation",
        "game",
        "round",
        "donor",
        "recipient",
        "donor_name",
        "recipient_name",
        "donor_before",
        "recipient_before",
        "action",
        "amount",
        "share",
        "valid",
        "attempts",
    ],
    NORMS: ["generation", "norm", "author", "rule", "strategy", "found", "parents", "justification", "evidence"],
    REVISIONS: REVISIONS_COLUMNS,
    FIDELITY: FIDELITY_COLUMNS,
    GENERATIONS: [
        "generation",
        "mean_donated_share",
        "mean_final_resources",
        "survivor_gap",
        "punishment_rate",
        "illegal_rate",
        "moves",
        "seconds",
    ],
    EDGES: ["a", "b"],
}


def _start_agents(scenario: PopulationScenarioSettings, book: NormBook) -> tuple[list[dict[str, Any]], list[list[Any]]]:
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
        agents.append(
            {
                "name": f"1_{slot + 1}",
                "born": 0,
                "fixed": member.fixed,
                "strategy": text,
                "found": text is not None,
                "norm": None if text is None else given[member.strategy],
            }
        )
    return agents, rows


def _select(scores: np.ndarray, agents: Sequence[dict[str, Any]], share: float, rng: np.random.Generator) -> list[int]:
    """The surviving slots: fixed members, then the best scores up to the share; ties fall by a seeded draw (the
    notebook sorted a shuffled list)."""
    keep = max(1, round(len(agents) * share))
    fixed = [i for i, a in enumerate(agents) if a["fixed"]]
    draw = rng.permutation(len(agents))
    level = np.round(scores, 6)  # resources equal but for their last digits tie (sandbox.base.rounding)
    order = [i for i in sorted(range(len(agents)), key=lambda i: (-level[i], draw[i])) if i not in fixed]
    return sorted(fixed + order[: max(0, keep - len(fixed))])


class _Network:
    """The population's network: the donor pairing's matchings and the neighbours that `imitate` draws from."""

    def __init__(self, scenario: PopulationScenarioSettings) -> None:
        block = scenario.population
        self.graph, self.neighbours = network_of(block.agents, block.network, scenario.seed)
        self.matching = self.graph.maximal_matching if spec_of(scenario, DonorSpec).pairing == "network" else None


async def _write_missing(
    players: Players, agents: list[dict[str, Any]], g: int, book: NormBook
) -> tuple[list[list[Any]], list[list[Any]]]:
    """Agents without a strategy write one: the first generation's `llm` members from the game's description, the
    new agents of the last selection from the survivors' strategies (with their scores, best first); the norms'
    and the revisions' rows."""
    missing = [i for i, a in enumerate(agents) if a["strategy"] is None]
    if not missing:
        return [], []
    survivors = sorted(
        (
            {"name": a["name"], "strategy": a["strategy"], "score": a.get("score", math.nan), "norm": a["norm"]}
            for a in agents
            if a["strategy"] is not None and a.get("survived")
        ),
        key=lambda a: -a["score"],
    )  # best first, as the notebook listed them
    written = await gather_jobs(
        missing,
        lambda i: players.strategy(agents[i]["name"], g, i, survivors),
        limit=jobs_ahead(players.scenario.concurrency),
    )
    parents = ";".join(str(s["norm"]) for s in survivors)
    norm_rows, revision_rows = [], []
    for i, result in zip(missing, written):
        norm, outcome = book.add(result["strategy"], result["found"])
        if norm is None:  # rejected by the check: a new agent has no norm to keep, so it holds the text unchecked
            norm, outcome = book.next_id, "rejected, kept"
            book.next_id += 1
        agents[i].update(strategy=book.text(norm, result["strategy"]), found=result["found"], norm=norm)
        if outcome != "duplicate":
            norm_rows.append(
                [
                    g,
                    norm,
                    agents[i]["name"],
                    "inherit" if survivors else "write",
                    result["strategy"],
                    result["found"],
                    parents,
                    result["justification"],
                    "",
                ]
            )
        if survivors:
            revision_rows.append(
                [g - 1, i, agents[i]["name"], "select", "", "", outcome, agents[i].pop("replaced_norm", ""), norm]
            )
    return norm_rows, revision_rows


def _records(played: Any) -> list[DonorRecord]:
    return [DonorRecord(**r) for r in played["records"]]


class DonorGame(PopulationGame[DonorSpec]):
    """The donor game: the population is the agents (name, birth, strategy, norm id) and the run's norm book."""

    print_table = staticmethod(print_table)

    edit_state = staticmethod(edit_strategy)  # a fork's state.agents.I.strategy=TEXT: a norm of its own

    columns = COLUMNS

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        self.rules = self.spec.rules()
        self.network = _Network(scenario)
        self.players = Players(scenario, self.model("user"))
        self.judge: Any = None
        if self.block.judge_play:
            from sandbox.rewards.judge import ProxyJudge

            self.judge = ProxyJudge(self.model("judge"))

    def start(self) -> tuple[Any, dict[str, list[list[Any]]]]:
        book = NormBook(check=self.block.revision.check)
        agents, rows = _start_agents(self.scenario, book)
        edges = self.network.neighbours.edges
        return {"agents": agents, "norms": book.state()}, {EDGES: [] if edges is None else edges.tolist(), NORMS: rows}

    def pair(self, population: Any, g: int) -> Any:
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

    async def play(self, population: Any, g: int, pairs: Any) -> Any:
        """The missing strategies written, then the generation's games, round by round (every donor of a round
        asked at once)."""
        agents, book, rules = (
            copy.deepcopy(population["agents"]),
            NormBook(**copy.deepcopy(population["norms"])),
            self.rules,
        )
        norm_rows, revision_rows = await _write_missing(self.players, agents, g, book)
        names, strategies = [a["name"] for a in agents], [a["strategy"] for a in agents]
        records: list[DonorRecord] = []
        attempts, finals = [], []
        for game, rounds in enumerate(pairs):
            resources = np.full(self.block.agents, float(rules.endowment))
            history: list[DonorRecord] = []
            for r, round_pairs in enumerate(rounds):
                views = round_views(game, r, [tuple(p) for p in round_pairs], resources, history, rules)
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
            "records": [asdict(h) for h in records],
            "attempts": attempts,
            "finals": finals,
        }

    def score(self, population: Any, g: int, played: Any) -> Any:
        """The agents' scores; under select, the surviving slots."""
        agents = played["agents"]
        scores = final_scores([np.array(f) for f in played["finals"]], self.rules)
        survived = list(range(self.block.agents))
        if self.block.revision.rule == "select":
            survived = _select(
                scores, agents, self.block.revision.survivors, generator(self.scenario.seed, Branch.META, g)
            )
        return {"scores": scores.tolist(), "survived": survived}

    async def revise(self, population: Any, g: int, played: Any, scores: Any) -> Any:
        """The judge's verdicts (with `judge_play`), then the next generation's agents: the survivors and new agents
        under select, else each agent's own revision (none after the last generation)."""
        block, agents, records = self.block, played["agents"], _records(played)
        names = [a["name"] for a in agents]
        fidelity = []
        if self.judge is not None:
            fidelity = await judge_play(self.judge, agents, records, names, g, self.scenario.seed, self.spec)
        result = {
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

    def next_agents(self, state: GenerationState) -> Any:
        return {"agents": state["revised"]["agents"], "norms": state["revised"]["norms"]}

    def record(self, state: GenerationState, seconds: float) -> dict[str, list[list[Any]]]:
        g, played, revised = state["generation"], state["played"], state["revised"]
        agents, records, survived = played["agents"], _records(played), state["scores"]["survived"]
        scores = state["scores"]["scores"]
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
                [
                    g,
                    h.game,
                    h.round,
                    h.donor,
                    h.recipient,
                    names[h.donor],
                    names[h.recipient],
                    h.donor_before,
                    h.recipient_before,
                    h.action or "",
                    h.amount,
                    h.share,
                    h.valid,
                    tries,
                ]
                for h, tries in zip(records, played["attempts"])
            ],
            POPULATION: [
                [
                    g,
                    i,
                    a["name"],
                    a["born"],
                    a["fixed"],
                    a["norm"],
                    a["strategy"],
                    a["found"],
                    round(float(scores[i]), 4),
                    mean_share[i],
                    i in survived,
                ]
                for i, a in enumerate(agents)
            ],
            FIDELITY: revised["fidelity"],
            GENERATIONS: [
                [
                    g,
                    float(np.mean([h.share for h in valid])) if valid else math.nan,
                    float(np.mean(np.array(played["finals"]))),
                    float(_survivor_gap(mean_share, survived)),
                    sum(h.action == "punish" for h in records) / moves,
                    sum(not h.valid for h in records) / moves,
                    len(records),
                    round(seconds, 3),
                ]
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


def _survivor_gap(shares: Sequence[float], survived: Sequence[int]) -> float:
    """The survivors' mean donated share minus the others', over the generation's mean (Vallinder & Hughes' Fig. 6
    last row); NaN when a side has no valid donation or nobody donated."""
    kept = [v for i, v in enumerate(shares) if i in survived and not math.isnan(v)]
    gone = [v for i, v in enumerate(shares) if i not in survived and not math.isnan(v)]
    average = float(np.mean(kept + gone)) if kept + gone else math.nan
    if not kept or not gone or not average:
        return math.nan
    return (float(np.mean(kept)) - float(np.mean(gone))) / average


def _finish(
    run_dir: RunDirectory, scenario: PopulationScenarioSettings, model: str, mean_degree: float, figure: Any
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


def _fidelity_summary(path: Path, judged: bool, generations: int) -> dict[str, Any]:
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
