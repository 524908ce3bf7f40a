"""GovSim's fishery among LLM agents (Piatti et al. 2024): fishers who share a lake, talk and remember.

A generation is a month, run as in the authors' code (`giorgiopiatti/GovSim`;
the prompts are theirs, in `prompts/population/commons/`):

1. **Lake.** Each fisher remembers "Before everyone fishes, there are S tons
   of fish in the lake." and, at once, asks for a catch (system prompt v3,
   its key memories, "how many tons of fish would you catch this month?
   Let's think step-by-step ... Answer: N tons"). An answer without a number
   after "Answer:" is asked again up to `game.retries` times (the code asked
   once), then recorded as an illegal move that catches nothing (the code
   read 0). Fixed fishers (a catch in tons with `fixed: true`) always ask
   for it and call no model.
2. **Harvest** by `sandbox.population.games.commons.rules.allocate` (stochastic or
   proportional sharing of a shortfall, seeded); each fisher remembers "X
   wanted to catch W tons of fish, and caught C tons."
3. **Restaurant** (`game.talk`). The Mayor reads out every catch; the first
   LLM fisher speaks, then whoever the speaker names, until a speaker
   concludes or `game.talk_steps` utterances (the report included) were
   made. As in the code, the next speaker may be any LLM fisher in the
   chat, the speaker included; an unreadable conclusion ends the chat and an
   unreadable next speaker is the first fisher; both are recorded
   (`talk.csv`: `ended_read`, `next_read`). Then the agents' model
   summarises the chat in one sentence (kept in `notes.csv`; the code's
   retrieval never shows chat records) and reads the limit the group agreed,
   if any ("Answer: N" or N/A); every fisher remembers an agreed limit as
   "The community agreed on a maximum limit of N tons of fish per person.",
   always shown while it lasts.
4. **Notes** (`game.notes`): each LLM fisher writes down what it must
   remember for its planning and what it found interesting (the code's two
   notes after a chat; cut at the first "."), kept in its memory.
5. **Home.** A stock below `game.collapse_below` has collapsed and the run
   ends; otherwise it doubles, capped at the capacity. No chat is held in the
   month of a collapse (nothing after it can change the figures).

With `game.universalization`, every prompt also shows "Given the current
situation, if everyone fishes more than X tons, the lake population will
shrink next month." (X the sustainable catch, (stock // 2) // fishers).

Memories, as in the code's configuration: a month's events (the stock,
the catch) last that month; notes and agreed limits about two months more
(the code's 63 days). Where this differs from the code: a prompt shows the
always-included memories and the latest of the others, `game.memory` (10)
in all, by date, not the top 10 by recency, importance and relevance, and
the home reflection's insights are not asked (they fed that retrieval). An
unreadable harvest asked again (`game.retries`, 0 as in the code) is asked
with the answer and the format restated. `game.answer: constrained` prefills each answer's label and holds
it to its format, with no reasoning: a named switch for small models.

A month runs on the engine (`sandbox.engine.generations`): `play` is the
fishers' asks (step 1), `score` the harvest (2), `revise` the restaurant and
the notes (3, 4), `record` the month's rows and the home step (5); the
fishers' memories are checkpointed after each, so a run killed inside a month
replays it from the cache.

Run directory: `population.csv` (month x fisher: the stock, the ask,
validity, attempts, the catch, the gain so far), `generations.csv` (month:
stock, asks, catches, what was left, collapse, the sustainable catch, the
month's over-usage and illegal rate, the agreed limit, the chat's length),
`talk.csv` (every utterance), `notes.csv` (the chat summaries, agreed limits
and notes), `summary.json` (GovSim's figures: survival months, total gain,
efficiency, equality, over-usage), `commons.png`.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Mapping
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from matplotlib.figure import Figure

from sandbox.base.files import read_csv
from sandbox.base.seeding import Branch, generator
from sandbox.core.run_dir import RunDirectory
from sandbox.engine.generations import GenerationState, Rows
from sandbox.population.game import ModelOf, PopulationGame
from sandbox.population.games.commons.chat import MAYOR, restaurant
from sandbox.population.games.commons.fishers import Fishers
from sandbox.population.games.commons.memory import date_of, remember, shown
from sandbox.population.games.commons.records import (
    COLUMNS,
    GENERATIONS,
    NOTES,
    POPULATION,
    TALK,
    Ask,
    Asked,
    Fisher,
    FisherRow,
    GenerationRow,
    Harvest,
    Lake,
    Memory,
    MonthRow,
    NoteRow,
    Restaurant,
    TalkRow,
)
from sandbox.population.games.commons.report import print_table
from sandbox.population.games.commons.rules import Month, Outcome, allocate, figures, sustainable_catch
from sandbox.population.games.commons.spec import CommonsSpec
from sandbox.population.llm_session import finish_llm_run, model_label
from sandbox.population.settings import LLM, PopulationScenarioSettings, place_members, spec_of

__all__ = ["COLUMNS", "CommonsGame", "MonthRow", "outcome_of"]


class CommonsGame(PopulationGame[CommonsSpec, Lake, Asked, None, Harvest, Restaurant]):
    """GovSim's fishery: the population is the fishers (name, fixed catch, memories, gain) and the lake's stock."""

    print_table = staticmethod(print_table)

    columns = COLUMNS

    def __init__(self, scenario: PopulationScenarioSettings, model: ModelOf | None) -> None:
        super().__init__(scenario, model)
        self.fishers = Fishers(scenario, self.model("user"), list(self.spec.names[: self.block.agents]))

    def start(self) -> tuple[Lake, Rows]:
        block = self.block
        fixed = [
            None if block.members[int(m)].strategy == LLM else int(block.members[int(m)].strategy)
            for m in place_members(self.scenario)
        ]
        agents = [Fisher(name=self.spec.names[i], fixed=f, memories=[], gain=0) for i, f in enumerate(fixed)]
        return {"agents": agents, "stock": self.spec.capacity}, {}

    def _hint(self, stock: int, g: int) -> Memory | None:
        """The universalization sentence, always shown that month (`game.universalization`)."""
        if not self.spec.universalization:
            return None
        return Memory(
            date=date_of(g),
            text=f"Given the current situation, if everyone fishes more than "
            f"{sustainable_catch(stock, self.block.agents)} tons, the lake population will shrink "
            "next month.",
            until=g,
            always=True,
        )

    async def play(self, population: Lake, g: int, pairs: None) -> Asked:
        """Each fisher remembers the stock and asks for its catch, all at once."""
        agents, stock, game = copy.deepcopy(population["agents"]), population["stock"], self.spec
        hint = self._hint(stock, g)
        for a in agents:
            remember(a, date_of(g), f"Before everyone fishes, there are {stock} tons of fish in the lake.", g)

        async def ask(i: int) -> Ask:
            if agents[i]["fixed"] is not None:
                return Ask(tons=agents[i]["fixed"], attempts=0)
            return await self.fishers.harvest(i, shown(agents[i], game.memory, g, hint), stock, g)

        asked = await asyncio.gather(*(ask(i) for i in range(len(agents))))
        return {"agents": agents, "asked": list(asked)}

    def score(self, population: Lake, g: int, played: Asked) -> Harvest:
        """The harvest: the catches shared out of the stock; each fisher's gain, and its memory of the catch."""
        agents, asked, stock = copy.deepcopy(played["agents"]), played["asked"], population["stock"]
        caught = [
            int(c)
            for c in allocate(
                [a["tons"] or 0 for a in asked],
                stock,
                self.spec.allocation,
                generator(self.scenario.seed, Branch.EPOCH, g),
            )
        ]
        for a, ask, got in zip(agents, asked, caught):
            want = ask["tons"]
            a["gain"] += got
            remember(
                a,
                date_of(g),
                f"{a['name']} wanted to catch {want} tons of fish, and caught {got} tons."
                if want is not None
                else f"{a['name']} gave no readable catch, and caught 0 tons.",
                g,
            )
        return {"agents": agents, "caught": caught}

    async def revise(self, population: Lake, g: int, played: Asked, scores: Harvest) -> Restaurant:
        """The restaurant (the chat, its summary, the agreed limit) and the notes, unless the lake collapsed."""
        agents, caught, stock, game = (
            copy.deepcopy(scores["agents"]),
            scores["caught"],
            population["stock"],
            self.spec,
        )
        llm = [i for i, a in enumerate(agents) if a["fixed"] is None]
        talk: list[TalkRow] = []
        notes: list[NoteRow] = []
        limit = None
        if game.talk and llm and stock - sum(caught) >= game.collapse_below:
            talk, notes, limit = await restaurant(
                self.fishers, self.scenario, agents, llm, caught, g, self._hint(stock, g)
            )
        return {"agents": agents, "talk": talk, "notes": notes, "limit": limit}

    def _month(self, state: GenerationState) -> MonthRow:
        """The month's row of generations.csv (without its seconds), from the state its steps left."""
        step, game, n = self.generation(state), self.spec, self.block.agents
        g, stock, asked, caught = step.g, step.agents["stock"], step.played["asked"], step.scores["caught"]
        llm = sum(a["fixed"] is None for a in step.agents["agents"])
        sustainable, left = sustainable_catch(stock, n), stock - sum(caught)
        collapsed = left < game.collapse_below
        limit = step.revised["limit"]
        return MonthRow(
            generation=g,
            stock=stock,
            asked=sum(a["tons"] or 0 for a in asked),
            caught=sum(caught),
            left=left,
            collapsed=collapsed,
            next_stock=0 if collapsed else min(game.capacity, 2 * left),
            sustainable=sustainable,
            over_usage=round(sum(c > sustainable for c in caught) / n, 6),
            illegal_rate=round(sum(a["tons"] is None for a in asked) / max(1, llm), 6),
            agreed_limit="" if limit is None else limit,
            talk_steps=len(step.revised["talk"]),
        )

    def record(self, state: GenerationState, seconds: float) -> Rows:
        step = self.generation(state)
        g, stock, asked = step.g, step.agents["stock"], step.played["asked"]
        agents, caught = step.scores["agents"], step.scores["caught"]
        rows = [
            FisherRow(
                generation=g,
                agent=i,
                name=a["name"],
                fixed=a["fixed"] is not None,
                stock=stock,
                asked="" if ask["tons"] is None else ask["tons"],
                valid=ask["tons"] is not None,
                attempts=ask["attempts"],
                caught=got,
                gain=a["gain"],
            )
            for i, (a, ask, got) in enumerate(zip(agents, asked, caught))
        ]
        return {
            POPULATION: rows,
            GENERATIONS: [GenerationRow(**self._month(state), seconds=round(seconds, 3))],
            TALK: step.revised["talk"],
            NOTES: step.revised["notes"],
        }

    def next_agents(self, state: GenerationState) -> Lake:
        return {"agents": self.generation(state).revised["agents"], "stock": self._month(state)["next_stock"]}

    def held(self, agents: Lake) -> list[str]:
        """What each fisher is (no norm text): `llm`, or a fixed fisher's `always N tons` (population.csv's `fixed`)."""
        return ["llm" if a["fixed"] is None else f"always {a['fixed']} tons" for a in agents["agents"]]

    def stopped(self, state: GenerationState) -> bool:
        return self._month(state)["collapsed"]  # the lake collapsed

    figure_file = "commons.png"

    def figure(self, path: Path) -> Figure:
        from sandbox.population.games.commons.report import plot_commons
        from sandbox.population.report.caption import figure_title

        gens, rows = read_csv(path / GENERATIONS), read_csv(path / POPULATION)
        return plot_commons(
            gens, rows, capacity=self.spec.capacity, collapse_below=self.spec.collapse_below, title=figure_title(path)
        )

    def finish(self, run_dir: RunDirectory, models: Mapping[str, BaseChatModel] | None) -> None:
        _finish(run_dir, self.scenario, model_label(self.scenario, models), lambda: self.figure(run_dir.path))


def outcome_of(path: Path, scenario: PopulationScenarioSettings) -> Outcome:
    """The run's months as `sandbox.population.games.commons.rules` months, for its figures."""
    block, spec = scenario.population, spec_of(scenario, CommonsSpec)
    gens, rows = read_csv(path / GENERATIONS), read_csv(path / POPULATION)
    outcome = Outcome(spec.rules(block.agents, block.generations))
    for month in gens.itertuples():
        these = rows[rows["generation"] == month.generation].sort_values("agent")
        asked = tuple(None if a != a else int(a) for a in these["asked"])
        outcome.months.append(
            Month(
                int(month.generation),
                int(month.stock),
                asked,
                tuple(int(c) for c in these["caught"]),
                int(month.left),
                bool(month.collapsed),
                int(month.next_stock),
            )
        )
    return outcome


def _finish(
    run_dir: RunDirectory, scenario: PopulationScenarioSettings, model: str, figure: Callable[[], Figure]
) -> None:
    path, block, spec = run_dir.path, scenario.population, spec_of(scenario, CommonsSpec)
    gens, rows = read_csv(path / GENERATIONS), read_csv(path / POPULATION)
    found = figures(outcome_of(path, scenario))
    llm_rows = rows[~rows["fixed"].astype(bool)]
    talk = read_csv(path / TALK)
    spoken = talk[talk["speaker"] != MAYOR]
    finish_llm_run(
        run_dir,
        {
            "scenario": scenario.name,
            "agents": block.agents,
            "game": "commons",
            "months": block.generations,
            "months_played": len(gens),
            "talk": spec.talk,
            "universalization": spec.universalization,
            **found,
            "collapsed": bool(gens["collapsed"].astype(bool).any()),
            "stock_by_month": gens["stock"].astype(int).tolist(),
            "agreed_limits": [None if v != v else int(v) for v in gens["agreed_limit"]],
            "illegal_rate": float((~llm_rows["valid"].astype(bool)).mean()) if len(llm_rows) else 0.0,
            "utterances": len(spoken),
            "unread_conclusions": int((~spoken["ended_read"].astype(bool)).sum()) if len(spoken) else 0,
            "unread_next_speakers": int((~spoken["next_read"].astype(bool)).sum()) if len(spoken) else 0,
            "model": model,
        },
        figure,
        CommonsGame.figure_file,
    )
