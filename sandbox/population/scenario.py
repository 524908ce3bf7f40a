"""The population scenario (`population:` block): who the agents are, whom they meet, what they play, how they revise.

This first part of the kind holds members with *scripted* strategies (the
`axelrod` library's), so that the dynamics are checked against evolutionary
game theory without an LLM: payoff imitation by the Fermi rule (Szabo & Toke
1998) and Nowak & May's (1992) best-neighbour rule, with an optional mutation,
on a networkx graph (`sandbox.scenario.Network`, shared with the societies).
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, model_validator

from sandbox.llm.budget import Budget
from sandbox.llm.embedded_tuning import EmbeddedSettings
from sandbox.scenario import ModelConfig, Models, Network, Sampling, UltimatumGame
from sandbox.schema import StrictModel

__all__ = ["ASSISTANT", "CommonsGameSpec", "DonorGameSpec", "UltimatumPopulationGame", "MatrixGameSpec", "Member", "NamingGameSpec", "PopulationBlock", "PopulationScenario", "Revision",
           "member_counts", "place_members"]

def member_counts(shares: list[float], agents: int) -> list[int]:
    """How many agents each member gets: the shares times the agents, rounded by largest remainders (the counts sum
    to `agents`; ties go to the earlier member).

    >>> member_counts([1 / 3, 1 / 3, 1 / 3], 8)
    [3, 3, 2]
    """
    exact = [share * agents for share in shares]
    counts = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(shares)), key=lambda i: -(exact[i] - counts[i]))
    for i in by_remainder[: agents - sum(counts)]:
        counts[i] += 1
    return counts


def place_members(scenario: PopulationScenario) -> Any:
    """Which member each agent slot starts as (an int array): each member's share of the agents (`member_counts`),
    placed by a permutation seeded from the run's seed tree (`Branch.POPULATION`)."""
    import numpy as np

    from sandbox.seeding import Branch, generator

    block = scenario.population
    labels = np.repeat(np.arange(len(block.members)), member_counts([m.share for m in block.members], block.agents))
    return generator(scenario.seed, Branch.POPULATION).permutation(labels).astype(np.int64)


COMPLETE_STOCHASTIC_LIMIT = 2000  # a stochastic strategy on a complete graph plays n(n-1)/2 matches a generation


class MatrixGameSpec(StrictModel):
    """A symmetric 2x2 game, played as an iterated match of `turns` turns between neighbours."""

    kind: Literal["matrix"] = "matrix"
    name: str = Field("prisoners_dilemma", description="A game of `sandbox.games.matrix.MATRIX_GAMES`, or `weak_"
                                                       "prisoners_dilemma` (R=1, T=temptation, S=P=0: Nowak & May "
                                                       "1992, Santos & Pacheco 2005).")  # fmt: skip
    temptation: float | None = Field(None, ge=1.0, le=10.0, description="weak_prisoners_dilemma: T, the "
                                                                         "temptation b (1 < b <= 2 in the papers).")
    turns: int = Field(1, ge=1, le=1000, description="Turns of each match (1: a one-shot game).")
    play: Literal["scripted", "llm"] = Field(
        "scripted", description="scripted: the members are axelrod strategies; llm: the members are principle texts "
                                "an LLM follows (role user), asked each move with the moral package's implicit game "
                                "prompt (Tennant et al.'s: neutral action tokens, the payoff table, the last moves).")  # fmt: skip
    history: int = Field(1, ge=0, le=20, description="play llm: the last moves of the match shown (the moral "
                                                     "package's default, 1).")  # fmt: skip
    tokens: tuple[str, str] = Field(("action1", "action2"), description="play llm: the tokens that stand for cooperate "
                                                                       "and defect.")  # fmt: skip
    answer: Literal["free", "constrained"] = Field(
        "free", description="play llm: free, the prompt's own format (one token; anything else is an illegal move); "
                            "constrained: the answer is held to the two tokens (a grammar where the backend takes "
                            "one).")  # fmt: skip

    @model_validator(mode="after")
    def _temptation(self) -> MatrixGameSpec:
        if (self.name == "weak_prisoners_dilemma") != (self.temptation is not None):
            raise ValueError("`temptation` is set for name weak_prisoners_dilemma, and only for it")
        from sandbox.population.strategies import payoff_table, symmetric
        from sandbox.registry import UnknownNameError

        try:
            table = payoff_table(self.name, self.temptation)
        except UnknownNameError as error:
            raise ValueError(str(error).strip("'\"")) from None
        if not symmetric(table):
            raise ValueError(f"game {self.name!r} is not symmetric; a population plays symmetric games")
        if self.play == "scripted":
            changed = [f for f in ("history", "tokens", "answer") if getattr(self, f) != MatrixGameSpec.model_fields[f].default]
            if changed:
                raise ValueError(f"{', '.join(changed)}: read with play llm only")
        else:
            from sandbox.games.matrix_prompt import ActionTokens

            ActionTokens.of(self.tokens)
        return self


class DonorGameSpec(StrictModel):
    """Vallinder & Hughes' donor game (`sandbox.games.donor`), the paper's values by default."""

    kind: Literal["donor"]
    endowment: float = Field(10.0, gt=0, le=1e6, description="Units each agent starts a game with.")
    multiplier: float = Field(2.0, gt=0, le=100, description="The recipient receives this times the donation "
                                                            "(cooperationGain; the paper also ran 1.5 and 3).")  # fmt: skip
    punishment: bool = Field(False, description="Costly punishment: a donor may spend x to take punishment_loss "
                                                "x from the recipient.")  # fmt: skip
    punishment_loss: float = Field(2.0, gt=0, le=100, description="What each unit spent on punishing takes away.")
    trace_depth: int = Field(3, ge=1, le=10, description="How far back the trace of the recipient's partners "
                                                         "goes (3 in the paper; 1 and 2 in its ablations).")  # fmt: skip
    pairing: Literal["notebook", "round_robin", "network"] = Field(
        "notebook", description="notebook: the authors' code (pairs met twice, same-half agents never); "
                                "round_robin: no partner twice within a game (the paper's words); network: each "
                                "round a random maximal matching of the network's edges, the donor of each pair "
                                "drawn (needed on a network that is not complete).")  # fmt: skip
    rounds: int | None = Field(None, ge=1, le=1000, description="pairing network: rounds of a game (default: as "
                                                                "many as agents, as the notebook's pairing).")  # fmt: skip
    games: int = Field(2, ge=1, le=10, description="Games per generation, resources and traces reset (2: each "
                                                   "agent a final-round recipient once).")  # fmt: skip
    selection_score: Literal["mean", "notebook"] = Field(
        "mean", description="mean: the games' mean final resources (the paper); notebook: twice the last game's "
                            "(the authors' code).")  # fmt: skip
    retries: int = Field(10, ge=0, le=50, description="Times an unreadable donation is asked again (the "
                                                      "notebook's 10) before it is recorded as an illegal move.")  # fmt: skip

    def rules(self) -> Any:
        from sandbox.games.donor import DonorRules

        return DonorRules(endowment=self.endowment, multiplier=self.multiplier, punishment=self.punishment,
                          punishment_loss=self.punishment_loss, trace_depth=self.trace_depth, pairing=self.pairing,
                          games=self.games, selection_score=self.selection_score, rounds=self.rounds)  # fmt: skip

    @model_validator(mode="after")
    def _rounds_for_network(self) -> DonorGameSpec:
        if self.rounds is not None and self.pairing != "network":
            raise ValueError(f"rounds is read by pairing network only; pairing {self.pairing} fixes its own rounds")
        return self


NAMING_WORDS = ["Q", "M", "X", "Y", "F", "J", "P", "R", "C", "D"]


class NamingGameSpec(StrictModel):
    """Ashery, Aiello & Baronchelli's naming game among LLM agents (`sandbox.games.naming`), their code's values
    by default: a random agent and a random neighbour pick a name at once, the same name pays both `reward`."""

    kind: Literal["naming"]
    words: list[str] = Field(default_factory=lambda: list(NAMING_WORDS), min_length=2, max_length=52,
                             description="The names to pick from (the paper's main figures: these 10 letters; "
                                         "its code's default: Q and M).")  # fmt: skip
    reward: float = Field(100.0, gt=0, le=1e6, description="Both players' payoff for the same name.")
    penalty: float = Field(-50.0, ge=-1e6, le=0, description="Both players' payoff for different names.")
    memory: int = Field(5, ge=1, le=50, description="The past interactions each agent sees (the paper's 5).")
    prepared: str | None = Field(None, description="A name every agent's memory starts full of (as successful "
                                                   "plays): the code's setup for a committed minority, which "
                                                   "holds another name.")  # fmt: skip
    stop_at_consensus: bool = Field(True, description="Stop once 3 N interactions in a row succeeded (the "
                                                      "paper's convergence).")  # fmt: skip
    retries: int = Field(3, ge=0, le=50, description="Times an unreadable answer is asked again before it is "
                                                     "recorded as an illegal move (which fails the interaction).")  # fmt: skip
    answer: Literal["free", "constrained"] = Field(
        "free", description="free: the code's prompt, answered as the model likes; constrained: the answer is "
                            "prefilled with `{'value': '` and held to one of the words (a grammar, where the "
                            "backend takes one), with no reason: the embedded 1.5B model reasons first and runs out "
                            "of tokens, 19% then 62% illegal moves under free.")  # fmt: skip

    @model_validator(mode="after")
    def _words(self) -> NamingGameSpec:
        bad = [w for w in self.words if not re.fullmatch(r"[A-Za-z0-9]+", w) or w.lower() == "none"]
        if bad or len({w.lower() for w in self.words}) != len(self.words):  # answers are read case aside
            raise ValueError(f"words must be distinct (case aside) ASCII letters or digits, and not 'none' (an "
                             f"illegal move in the prompts): {bad or self.words}")  # fmt: skip
        if self.prepared is not None and self.prepared not in self.words:
            raise ValueError(f"prepared {self.prepared!r} is not one of the words {self.words}")
        return self


GOVSIM_NAMES = ["John", "Kate", "Jack", "Emma", "Luke"]


class CommonsGameSpec(StrictModel):
    """GovSim's fishery among LLM agents (Piatti et al. 2024; `sandbox.games.commons`), the authors' code's values
    by default. A generation is a month: harvest, the Mayor's report and the group chat, the agreed limit, each
    agent's note for its planning."""

    kind: Literal["commons"]
    capacity: int = Field(100, ge=10, le=999, description="Tons of fish in the full lake (the carrying capacity).")
    collapse_below: int = Field(5, ge=1, le=999, description="A stock below this after the harvest has collapsed.")
    allocation: Literal["stochastic", "proportional"] = Field(
        "stochastic", description="When the asks exceed the stock: one ton at a time to a random agent that still "
                                  "wants more (the code's default), or in proportion to the asks.")  # fmt: skip
    talk: bool = Field(True, description="After the harvest the Mayor reads out every catch and the agents talk "
                                         "(off: the paper's ablation without communication, which also hides the "
                                         "others' catches).")  # fmt: skip
    talk_steps: int = Field(10, ge=2, le=50, description="The most utterances of a month's chat, the Mayor's report "
                                                         "included (the code's max_conversation_steps).")  # fmt: skip
    universalization: bool = Field(False, description="Every agent always remembers \"if everyone fishes more than "
                                                      "X tons, the lake population will shrink next month\", X the "
                                                      "sustainable catch (the paper's universalization variant).")  # fmt: skip
    notes: bool = Field(True, description="After the chat each LLM fisher writes down what it must remember for "
                                          "its planning and what it found interesting (the code's two notes), kept "
                                          "in its memory.")  # fmt: skip
    memory: int = Field(10, ge=1, le=100, description="The dated memories shown in each prompt, the latest (the "
                                                      "code retrieved the top 10 by recency, importance and "
                                                      "relevance); the agreed limits and the universalization "
                                                      "hint are always shown.")  # fmt: skip
    names: list[str] = Field(default_factory=lambda: list(GOVSIM_NAMES), min_length=2, max_length=100,
                             description="The fishers' names, one per agent (the code's five).")  # fmt: skip
    retries: int = Field(0, ge=0, le=50, description="Times an unreadable harvest is asked again before it is "
                                                     "recorded as an illegal move that catches nothing (the code "
                                                     "asked once and read 0).")  # fmt: skip
    answer: Literal["free", "constrained"] = Field(
        "free", description="free: the code's prompts (think step by step, then \"Answer: N tons\"); constrained: "
                            "every answer is prefilled with its label and held to its format (a number of tons, "
                            "yes or no, a name), with no reasoning before it: a named switch for small models "
                            "that run out of tokens while they reason.")  # fmt: skip

    def rules(self, agents: int, months: int) -> Any:
        from sandbox.games.commons import CommonsRules

        return CommonsRules(agents=agents, months=months, capacity=self.capacity, collapse_below=self.collapse_below,
                            allocation=self.allocation)  # fmt: skip

    @model_validator(mode="after")
    def _names(self) -> CommonsGameSpec:
        if len({n.lower() for n in self.names}) != len(self.names) or not all(re.fullmatch(r"[A-Za-z][A-Za-z0-9 ]*", n)
                                                                               for n in self.names):  # fmt: skip
            raise ValueError(f"names must be distinct (case aside) and made of letters, digits and spaces: {self.names}")
        reserved = [n for n in self.names if n.lower() in ("mayor", "na", "nan", "none", "null", "framework")]
        if reserved:  # the chat's reporter, the framework's calls, and what a table reads back as empty
            raise ValueError(f"names: {', '.join(reserved)} cannot name a fisher")
        if self.collapse_below >= self.capacity:
            raise ValueError(f"collapse_below {self.collapse_below} is not below the capacity {self.capacity}")
        return self


ASSISTANT = "assistant"


class UltimatumPopulationGame(UltimatumGame):
    """The ultimatum game among a population's members (SCAI's game, `sandbox.games.ultimatum_episode`): each
    generation every agent proposes to each neighbour `rounds` times. Members follow a principle as SCAI's assistant
    does; fixed members are SCAI's users; a member `assistant` is SCAI's assistant, whose MetaLM reads the
    generation's interactions."""

    kind: Literal["ultimatum"]
    rounds: int = Field(1, ge=1, le=100, description="Times each agent proposes to each neighbour a generation (the "
                                                     "neighbour proposes back as often).")  # fmt: skip
    reading: Literal["scored", "lead_in", "none"] = Field(
        "scored", description="How a member's proposal follows its principle (SCAI's assistant.reading): scored, "
                              "lead_in, or none (the proposal asked directly).")  # fmt: skip
    responder: Literal["paper", "guided", "rule"] = Field(
        "paper", description="How a member decides on a proposal (SCAI's assistant.responder).")
    assistant_policy: str | None = Field(None, min_length=1, description="The assistant member's first principle; "
                                                                         "default: drawn from SCAI's first policies "
                                                                         "(prompts/scai/initial_policies.j2).")  # fmt: skip
    assistant_interactions: int = Field(40, ge=1, le=1000, description="Most interactions of a generation the "
                                                                       "assistant's MetaLM reads (a seeded sample; "
                                                                       "SCAI's max_interactions).")  # fmt: skip
    meta_reasks: int = Field(1, ge=0, le=5, description="Times an unusable principle from a MetaLM is asked again.")


def _game_kind(value: Any) -> str:
    return value.get("kind", "matrix") if isinstance(value, dict) else getattr(value, "kind", "matrix")


GameSpec = Annotated[Union[Annotated[MatrixGameSpec, Tag("matrix")], Annotated[DonorGameSpec, Tag("donor")],
                           Annotated[NamingGameSpec, Tag("naming")], Annotated[CommonsGameSpec, Tag("commons")],
                           Annotated[UltimatumPopulationGame, Tag("ultimatum")]],
                   Discriminator(_game_kind)]  # fmt: skip
LLM = "llm"


class Member(StrictModel):
    """A share of the population that starts with one strategy."""

    strategy: str = Field(..., description="A matrix game: an axelrod strategy's name (Cooperator, Defector, Tit For "
                                           "Tat, Grudger, ...). The donor game: `llm` (the agent writes its own "
                                           "strategy) or a strategy's text, which the agents start from. The naming "
                                           "game: `llm`, or one of the words with fixed: true (a committed "
                                           "minority that always plays it). The commons game: `llm`, or a catch "
                                           "in tons with fixed: true (a fisher that always asks for it).")  # fmt: skip
    share: float = Field(..., gt=0.0, le=1.0, description="Its share of the agents (the shares sum to 1).")
    fixed: bool = Field(False, description="Zealots: these agents never revise their strategy (a donor-game "
                                           "zealot always survives selection).")  # fmt: skip


class Revision(StrictModel):
    """How each agent revises its strategy after a generation's play."""

    rule: Literal["imitate", "proportional", "best", "select", "reflect", "mutate", "memory"] = Field(
        "imitate",
        description="imitate: each agent picks a random neighbour and adopts its strategy with the Fermi "
        "probability 1/(1+exp(-beta (P_neighbour - P_own))) (Szabo & Toke 1998); proportional: it adopts a "
        "random neighbour's strategy, when that neighbour scored more, with probability (P_neighbour - P_own) / "
        "(max(k_own, k_neighbour) D), D the game's payoff range (Santos & Pacheco 2005); best: each agent adopts "
        "the strategy of the best-scoring agent in its neighbourhood, itself included (Nowak & May 1992); select "
        "(the donor game): the top `survivors` by score keep their strategies, and each new agent writes its own "
        "from theirs (Vallinder & Hughes 2024); reflect (the donor game): each agent's own MetaLM rewrites its "
        "strategy from what happened to it (SCAI's verbal reinforcement, for every member); mutate: only "
        "`mutation` changes strategies (drift); memory (the naming and commons games, their only rule): agents "
        "adapt through their memory of their last interactions, as in Ashery et al. and GovSim.",
    )
    adopt: Literal["copy", "merge"] = Field(
        "copy", description="imitate, LLM strategies: an agent that imitates copies its neighbour's text (copy), or "
                            "the LLM merges the neighbour's text with its own (merge).")  # fmt: skip
    check: bool = Field(False, description="LLM strategies, as CRSEC evaluates norms before adoption: a revised "
                                           "text without the strategy sentence is rejected (the agent keeps its "
                                           "norm), and a text equal to a known norm (case and spaces aside) is "
                                           "that norm, not a new one.")  # fmt: skip
    survivors: float = Field(0.5, gt=0.0, lt=1.0, description="select: the share of agents that survive a "
                                                              "generation.")  # fmt: skip
    show_scores: bool = Field(True, description="select: the survivors' final scores are shown with their "
                                                "strategies (the paper's prompt; the notebook showed none).")  # fmt: skip
    beta: float = Field(10.0, gt=0.0, le=1e6, description="imitate: the selection strength, 1/K in Szabo & Toke's "
                                                          "notation (K = 0.1 there).")  # fmt: skip
    mutation: float = Field(0.0, ge=0.0, le=1.0, description="After the rule: the probability that an agent "
                                                             "instead takes a strategy drawn uniformly from the "
                                                             "members' strategies (matrix games) or writes a new "
                                                             "one freely (the donor game).")  # fmt: skip
    payoff: Literal["total", "mean"] = Field(
        "total", description="What agents compare: the payoff summed over their neighbours (the papers' "
                             "accumulated payoff) or averaged per neighbour.")  # fmt: skip


class PopulationBlock(StrictModel):
    """A population whose strategies spread over generations."""

    agents: int = Field(..., ge=2, le=1_000_000, description="Number of agents.")
    generations: int = Field(..., ge=1, le=100_000, description="Generations: play with every neighbour, then "
                                                               "revise.")  # fmt: skip
    members: list[Member] = Field(..., min_length=1, description="The starting strategies and their shares.")
    game: GameSpec = Field(default_factory=MatrixGameSpec, description="kind matrix (default), donor, naming "
                                                                       "or commons.")
    network: Network = Field(default_factory=Network, description="Who meets whom (shared with societies).")
    self_play: bool = Field(False, description="Each agent also plays itself, as on Nowak & May's lattice.")
    revision: Revision = Field(default_factory=Revision)
    actors: int = Field(1, ge=1, le=1024, description="Scripted strategies: the agents are cut into this many blocks "
                                                      "and each block's matches are played by a Ray actor of its own "
                                                      "(as AgentSociety groups agents; local Ray unless Ray is "
                                                      "already initialised); 1 plays in this process. The tables are "
                                                      "the same for any number.")  # fmt: skip
    judge_play: bool = Field(False, description="The donor game: after each generation the proxy judge (role judge) "
                                                "reads each agent's moves as donor and its written strategy and "
                                                "answers whether the play follows the norm (fidelity.csv).")  # fmt: skip

    @model_validator(mode="after")
    def _consistent(self) -> PopulationBlock:
        total = sum(m.share for m in self.members)
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"the members' shares sum to {total:g}, not 1")
        names = [m.strategy for m in self.members]
        if len(set(names)) != len(names):
            raise ValueError("a strategy is listed twice in members")
        problem = self.network.size_problem(self.agents)
        if problem:
            raise ValueError(problem)
        edges = self.network.edges
        if edges is not None and len({n for edge in edges for n in edge}) < self.agents:
            covered = len({n for edge in edges for n in edge})
            raise ValueError(f"network.edges cover {covered} agents, fewer than the {self.agents} agents: each agent "
                             "needs a neighbour")  # fmt: skip
        if isinstance(self.game, DonorGameSpec):
            self._donor_checks()
            return self
        if isinstance(self.game, NamingGameSpec):
            self._naming_checks()
            return self
        if isinstance(self.game, CommonsGameSpec):
            self._commons_checks()
            return self
        if isinstance(self.game, UltimatumPopulationGame):
            self._ultimatum_checks()
            return self
        if self.game.play == "llm":
            self._principle_checks(assistant=False)
            return self
        if self.judge_play:
            raise ValueError("judge_play: a matrix game's strategies are the axelrod library's, which their play "
                             "follows by construction; the judge reads the donor game's written strategies")  # fmt: skip
        if self.revision.rule == "memory":
            raise ValueError("revision.rule memory is the naming game's; a matrix game revises by imitate, "
                             "proportional, best or mutate")  # fmt: skip
        if self.revision.rule in ("select", "reflect"):
            raise ValueError(f"revision.rule {self.revision.rule} rewrites strategy texts, the donor game's; a matrix "
                             "game revises by imitate, proportional, best or mutate")  # fmt: skip
        text_only = [f"revision.{f}" for f in ("adopt", "check")
                     if getattr(self.revision, f) != Revision.model_fields[f].default]  # fmt: skip
        if text_only:
            raise ValueError(f"{', '.join(text_only)}: read for LLM strategies (the donor game) only")
        if self.revision.rule == "mutate" and not self.revision.mutation:
            raise ValueError("revision.rule mutate changes strategies by mutation alone: set revision.mutation above 0")
        from sandbox.population.strategies import strategy_class

        for i, member in enumerate(self.members):
            try:
                strategy_class(member.strategy)
            except ValueError as error:
                raise ValueError(f"members[{i}].strategy: {error}") from None
        if self.network.kind == "complete" and self.agents > COMPLETE_STOCHASTIC_LIMIT:
            from sandbox.population.strategies import is_stochastic

            random = [m.strategy for m in self.members if is_stochastic(m.strategy)]
            if random:
                raise ValueError(f"a complete network of {self.agents} agents with the stochastic strateg"
                                 f"{'ies' if len(random) > 1 else 'y'} {', '.join(random)} plays every pair's own "
                                 f"match each generation; use at most {COMPLETE_STOCHASTIC_LIMIT} agents or a "
                                 "sparser network")  # fmt: skip
        return self


    def _donor_checks(self) -> None:
        rule, revision = self.revision.rule, self.revision
        if rule in ("proportional", "best", "memory"):
            raise ValueError(f"revision.rule {rule} is {'the naming' if rule == 'memory' else 'a matrix'} game's; "
                             "the donor game revises by select, reflect, imitate or mutate")  # fmt: skip
        unread = {"payoff": True, "beta": rule != "imitate", "adopt": rule != "imitate",
                  "mutation": rule == "select", "survivors": rule != "select", "show_scores": rule != "select"}
        ignored = [f"revision.{f}" for f, off in unread.items()
                   if off and getattr(revision, f) != Revision.model_fields[f].default]  # fmt: skip
        ignored += ["self_play"] if self.self_play else []
        ignored += ["actors"] if self.actors > 1 else []  # LLM calls are spread by the LLM layer's concurrency
        if ignored:
            raise ValueError(f"{', '.join(ignored)}: not read by the donor game with revision.rule {rule}")
        if rule == "mutate" and not revision.mutation:
            raise ValueError("revision.rule mutate rewrites strategies by mutation alone: set revision.mutation "
                             "above 0")  # fmt: skip
        if self.agents % 2 and self.game.pairing != "network":
            raise ValueError(f"the donor game pairs agents: agents must be even, not {self.agents} (or use "
                             "game.pairing network)")  # fmt: skip
        if self.network.kind != "complete" and self.game.pairing != "network":
            raise ValueError(f"network.kind {self.network.kind}: the donor game's pairing {self.game.pairing} pairs "
                             "every agent with every other; set game.pairing network to pair along the edges, or "
                             "network.kind complete")  # fmt: skip
        keep = round(self.agents * revision.survivors)
        if rule == "select" and (keep < 1 or keep >= self.agents):
            raise ValueError(f"revision.survivors {revision.survivors} keeps no agent, or all of them, of "
                             f"{self.agents}")  # fmt: skip


    def _naming_checks(self) -> None:
        if self.revision.rule != "memory":
            raise ValueError(f"revision.rule {self.revision.rule}: the naming game's agents adapt through their "
                             "memory; set revision.rule memory")  # fmt: skip
        changed = [f"revision.{f}" for f in Revision.model_fields
                   if f != "rule" and getattr(self.revision, f) != Revision.model_fields[f].default]  # fmt: skip
        changed += ["self_play"] if self.self_play else []
        changed += ["actors"] if self.actors > 1 else []
        changed += ["judge_play"] if self.judge_play else []  # the agents write no norm to judge
        if changed:
            raise ValueError(f"{', '.join(changed)}: not read by the naming game")
        for i, member in enumerate(self.members):
            if member.strategy == LLM:
                if member.fixed:
                    raise ValueError(f"members[{i}]: an llm member of the naming game cannot be fixed; a committed "
                                     "member names its word as strategy")  # fmt: skip
            elif member.strategy not in self.game.words:
                raise ValueError(f"members[{i}].strategy {member.strategy!r}: the naming game's members are llm or "
                                 f"a committed member's word, one of {self.game.words}")  # fmt: skip
            elif not member.fixed:
                raise ValueError(f"members[{i}]: a member with the word {member.strategy!r} is a committed minority "
                                 "and always plays it: set fixed: true")  # fmt: skip


    def _ultimatum_checks(self) -> None:
        self._principle_checks(assistant=True)
        game, fields = self.game, UltimatumPopulationGame.model_fields
        has_assistant = ASSISTANT in [m.strategy for m in self.members]
        unread = [f"game.{f}" for f in ("assistant_policy", "assistant_interactions")
                  if not has_assistant and getattr(game, f) != fields[f].default]  # fmt: skip
        if not has_assistant and self.revision.rule == "imitate" and game.meta_reasks != fields["meta_reasks"].default:
            unread.append("game.meta_reasks")  # no MetaLM is asked
        if unread:
            raise ValueError(f"{', '.join(unread)}: no member is the assistant"
                             + (", and imitation asks no MetaLM" if "game.meta_reasks" in unread else ""))

    def _principle_checks(self, assistant: bool) -> None:
        """Members who follow principle texts (the ultimatum game, a matrix game played by the LLM)."""
        from societies.norms import NORMS

        rule, revision = self.revision.rule, self.revision
        game = "the ultimatum population" if assistant else "a matrix game with play llm"
        if rule not in ("reflect", "imitate"):
            raise ValueError(f"revision.rule {rule}: {game} revises by reflect (each member's own MetaLM) or "
                             "imitate (Fermi, copying a neighbour's principle)")  # fmt: skip
        unread = {"beta": rule != "imitate", "adopt": True, "check": True, "mutation": True, "survivors": True,
                  "show_scores": True, "payoff": assistant}  # a matrix game's payoff may be a mean per neighbour
        ignored = [f"revision.{f}" for f, off in unread.items()
                   if off and getattr(revision, f) != Revision.model_fields[f].default]  # fmt: skip
        ignored += ["self_play"] if self.self_play else []
        ignored += ["actors"] if self.actors > 1 else []
        ignored += ["judge_play"] if self.judge_play else []
        if ignored:
            raise ValueError(f"{', '.join(ignored)}: not read by {game} with revision.rule {rule}")
        counts = member_counts([m.share for m in self.members], self.agents)
        for i, (member, count) in enumerate(zip(self.members, counts)):
            if member.strategy == LLM:
                raise ValueError(f"members[{i}].strategy llm: a member of {game} starts from a principle, a library "
                                 f"norm ({', '.join(NORMS.names())}), its text{', or assistant' if assistant else ''}")  # fmt: skip
            if member.strategy == ASSISTANT and not assistant:
                raise ValueError(f"members[{i}].strategy assistant: SCAI's assistant plays the ultimatum game")
            if member.strategy == ASSISTANT and (member.fixed or count != 1):
                raise ValueError(f"members[{i}]: the assistant is one agent that learns (not fixed); its share gives "
                                 f"{count} agents of {self.agents}")  # fmt: skip
            if member.strategy not in NORMS.names() and member.strategy != ASSISTANT and len(member.strategy) < 12:
                raise ValueError(f"members[{i}].strategy {member.strategy!r}: not a library norm "
                                 f"({', '.join(NORMS.names())}) nor a principle's text (12 characters or more)")  # fmt: skip

    def _commons_checks(self) -> None:
        if self.revision.rule != "memory":
            raise ValueError(f"revision.rule {self.revision.rule}: GovSim's fishers adapt through their memory, the "
                             "chat and the agreed limits; set revision.rule memory")  # fmt: skip
        changed = [f"revision.{f}" for f in Revision.model_fields
                   if f != "rule" and getattr(self.revision, f) != Revision.model_fields[f].default]  # fmt: skip
        changed += ["self_play"] if self.self_play else []
        changed += ["actors"] if self.actors > 1 else []
        changed += ["judge_play"] if self.judge_play else []
        if changed:
            raise ValueError(f"{', '.join(changed)}: not read by the commons game")
        if self.network.kind != "complete":
            raise ValueError(f"network.kind {self.network.kind}: the fishers share one lake and one group chat; "
                             "the commons game is played on a complete network")  # fmt: skip
        if self.agents > len(self.game.names):
            raise ValueError(f"game.names has {len(self.game.names)} names for {self.agents} agents")
        for i, member in enumerate(self.members):
            if member.strategy == LLM:
                if member.fixed:
                    raise ValueError(f"members[{i}]: an llm fisher cannot be fixed; a fixed fisher names its catch "
                                     "as strategy (a whole number of tons)")  # fmt: skip
            elif not re.fullmatch(r"\d+", member.strategy) or int(member.strategy) > self.game.capacity:
                raise ValueError(f"members[{i}].strategy {member.strategy!r}: the commons game's members are llm or "
                                 f"a fixed catch, a whole number of tons from 0 to {self.game.capacity}")  # fmt: skip
            elif not member.fixed:
                raise ValueError(f"members[{i}]: a member with the catch {member.strategy} always asks for it: set "
                                 "fixed: true")  # fmt: skip


class PopulationScenario(StrictModel):
    """A population scenario file: a name, a seed, models for LLM members and a `population:` block."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    seed: int = Field(0, ge=0)
    description: str = ""
    concurrency: int = Field(8, ge=1, le=4096, description="Most LLM calls in flight at once.")
    budget: Budget = Field(default_factory=Budget, description="Caps on the run's LLM calls, tokens and dollars; "
                                                               "a run that reaches one stops, resumable.")  # fmt: skip
    models: Models = Field(default_factory=lambda: Models(user=ModelConfig(sampling=Sampling(temperature=0.8,
                                                                                               max_tokens=400))),
                           description="LLM members play as role `user` (--model user=SPEC); the paper sampled "
                                       "at temperature 0.8.")  # fmt: skip
    embedded: EmbeddedSettings = Field(default_factory=EmbeddedSettings,
                                       description="Slots, threads and prompt cache of the embedded model.")
    population: PopulationBlock
