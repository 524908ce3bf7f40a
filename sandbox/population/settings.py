"""What every population game's settings share: the members, the revision rule, the `population:` block's shared
fields and the scenario as a game reads it, and the base of a game's own settings.

A game's settings (its `game:` block, `sandbox.population.games.<game>.spec`) subclass `PopulationGameSpec`: they
name the plug-in that plays them (`plugin`), check the whole `population:` block for what the game cannot use
(`check`), name the model roles a run reads (`roles`) and the extras it needs (`extras`), say what a run will do
(`describe`) and count its calls for `sandbox run --dry-run` (`calls`). The registry
(`sandbox.population.registry`) lists the games; nothing else in the kind dispatches on the game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from pydantic import Field, model_validator

from sandbox.base.rounding import apportion
from sandbox.base.scenario_model import StrictModel
from sandbox.core.scenario import LLMScenario, ModelConfig, Models, Sampling
from societies.society_block import Network

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ASSISTANT",
    "LLM",
    "Calls",
    "Member",
    "PopulationGameSpec",
    "PopulationScenarioSettings",
    "PopulationSettings",
    "Revision",
    "SpecT",
    "count_agents",
    "llm_user",
    "member_counts",
    "memory_only",
    "network_edges",
    "place_members",
    "principle_checks",
    "refuse_unread",
    "retries_field",
    "spec_of",
]

LLM = "llm"  # a member whose LLM writes its own norm
ASSISTANT = "assistant"  # SCAI's assistant as a member (the ultimatum game)


def member_counts(shares: list[float], agents: int) -> list[int]:
    """How many agents each member gets: the shares times the agents, rounded by largest remainders (the counts sum
    to `agents`; ties go to the earlier member).

    >>> member_counts([1 / 3, 1 / 3, 1 / 3], 8)
    [3, 3, 2]
    """
    return apportion([share * agents for share in shares], agents)


class Member(StrictModel):
    """A share of the population that starts with one rule: a scripted strategy, or an LLM agent's norm (the field
    keeps the name `strategy` for both: the scenario files' and the tables' word)."""

    strategy: str = Field(
        ...,
        description="A scripted matrix game: an axelrod strategy's name (Cooperator, Defector, Tit For "
        "Tat, Grudger, ...). The donor game: `llm` (the agent writes its own "
        "norm, which the paper calls its strategy) or a norm's text, which the agents start from. The naming "
        "game: `llm`, or one of the words with fixed: true (a committed "
        "minority that always plays it); with play scripted, a word (fixed: true, committed to it; else the "
        "name the agents start with) or `empty` (no name at first). The commons game: `llm`, or a catch "
        "in tons with fixed: true (a fisher that always asks for it).",
    )
    share: float = Field(..., gt=0.0, le=1.0, description="Its share of the agents (the shares sum to 1).")
    fixed: bool = Field(
        False,
        description="Zealots: these agents never revise their strategy or norm (a donor-game "
        "zealot always survives selection).",
    )


class Revision(StrictModel):
    """How each agent revises its strategy (scripted) or its norm (LLM) after a generation's play."""

    rule: Literal["imitate", "proportional", "best", "select", "reflect", "mutate", "memory"] = Field(
        "imitate",
        description="imitate: each agent picks a random neighbour and adopts its strategy with the Fermi "
        "probability 1/(1+exp(-beta (P_neighbour - P_own))) (Szabo & Toke 1998); proportional: it adopts a "
        "random neighbour's strategy, when that neighbour scored more, with probability (P_neighbour - P_own) / "
        "(max(k_own, k_neighbour) D), D the game's payoff range (Santos & Pacheco 2005); best: each agent adopts "
        "the strategy of the best-scoring agent in its neighbourhood, itself included (Nowak & May 1992); select "
        "(the donor game): the top `survivors` by score keep their norms, and each new agent writes its own "
        "from theirs (Vallinder & Hughes 2024); reflect (the donor game): each agent's own MetaLM rewrites its "
        "norm from what happened to it (SCAI's verbal reinforcement, for every member); mutate: only "
        "`mutation` changes strategies (drift); memory (the naming and commons games, their only rule): agents "
        "adapt through their memory of their last interactions, as in Ashery et al. and GovSim.",
    )
    adopt: Literal["copy", "merge"] = Field(
        "copy",
        description="imitate, LLM norms: an agent that imitates copies its neighbour's text (copy), or "
        "the LLM merges the neighbour's text with its own (merge).",
    )
    check: bool = Field(
        False,
        description="LLM norms, as CRSEC evaluates norms before adoption: a revised text without the norm's "
        'sentence (the donor game\'s "My strategy will be") is rejected (the agent keeps its norm), and a text '
        "equal to a known norm (case and spaces aside) is that norm, not a new one.",
    )
    survivors: float = Field(0.5, gt=0.0, lt=1.0, description="select: the share of agents that survive a generation.")
    show_scores: bool = Field(
        True,
        description="select: the survivors' final scores are shown with their "
        "norms (the paper's prompt; the notebook showed none).",
    )
    beta: float = Field(
        10.0,
        gt=0.0,
        le=1e6,
        description="imitate: the selection strength, 1/K in Szabo & Toke's notation (K = 0.1 there).",
    )
    mutation: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="After the rule: the probability that an agent "
        "instead takes a strategy drawn uniformly from the "
        "members' strategies (scripted matrix games) or writes a new "
        "norm freely (the donor game).",
    )
    payoff: Literal["total", "mean"] = Field(
        "total",
        description="What agents compare: the payoff summed over their neighbours (the papers' "
        "accumulated payoff) or averaged per neighbour.",
    )


class Calls(NamedTuple):
    """A row of a dry run: `calls` first asks of `role` (as the table names it) to `model` (a `ModelConfig`), about
    `prompt_tokens` each, answers capped at the model's `max_tokens` (or `answer_tokens`)."""

    role: str
    model: ModelConfig
    calls: int
    prompt_tokens: int
    answer_tokens: int | None = None


class PopulationGameSpec(StrictModel):
    """The `game:` block of a population: the base of every game's settings, and what the game plugs into the
    population kind."""

    kind: str

    def plugin(self) -> str:
        """The name of the plug-in that plays these settings, among its game's (`GameEntry.plugins`): `game` for a
        game with one."""
        return "game"

    def extras(self, block: PopulationSettings) -> list[str]:
        """The sandbox's extras a run of these settings needs beyond the core (`pip install 'norm-sandbox[...]'`)."""
        return []

    def roles(self, block: PopulationSettings) -> tuple[str, ...]:
        """The model roles a run reads (what `--model ROLE=SPEC` may name): the members' `user` by default."""
        return ("user",)

    def check(self, block: PopulationSettings) -> None:
        """Refuse, with a ValueError naming the field, what of the `population:` block this game cannot use (its
        own fields are checked by its validators)."""

    def describe(self, scenario: PopulationScenarioSettings) -> str:
        """One line on what a run of `scenario` does."""
        raise NotImplementedError

    def calls(self, scenario: PopulationScenarioSettings) -> list[Calls]:
        """The calls a run of `scenario` makes, first asks (none: a game of scripted strategies)."""
        return []


SpecT = TypeVar("SpecT", bound=PopulationGameSpec)  # a game's own settings (its `game:` block)


def spec_of(scenario: PopulationScenarioSettings, cls: type[SpecT]) -> SpecT:
    """The scenario's game settings, as the game `cls` reads them; TypeError when they are another game's."""
    game = scenario.population.game
    if not isinstance(game, cls):
        raise TypeError(f"{cls.__name__} reads a {cls.__name__} game, not {type(game).__name__}")
    return game


def refuse_unread(
    block: PopulationSettings, revision: Iterable[str], what: str, *, judge_play: bool = True, actors: bool = False
) -> None:
    """Refuse the block's settings that `what` (a game, in words) does not read: the `revision` fields named,
    changed from their defaults; `self_play`; `actors` above 1, unless the game's calls are played on Ray actors
    (`actors`; elsewhere LLM calls are spread by the LLM layer's concurrency); and `judge_play`, unless the game
    reads it."""
    unread = [f"revision.{f}" for f in revision if getattr(block.revision, f) != Revision.model_fields[f].default]
    unread += ["self_play"] if block.self_play else []
    unread += ["actors"] if block.actors > 1 and not actors else []
    unread += ["judge_play"] if judge_play and block.judge_play else []
    if unread:
        raise ValueError(f"{', '.join(unread)}: not read by {what}")


def retries_field(default: int, description: str) -> Any:
    """The `retries` field of a game whose agents answer an LLM's question: how many times (0 to 50) an unreadable
    answer is asked again before it is recorded as an illegal move; `description` says what it is in that game."""
    return Field(default, ge=0, le=50, description=description)


def memory_only(block: PopulationSettings, what: str, adapt: str, *, actors: bool = False) -> None:
    """Refuse a `revision.rule` other than memory, and every other revision setting: the agents of `what` (a game,
    in words) adapt through `adapt` (in words: their memory, as in Ashery et al. and GovSim); `actors`: the game's
    calls may be played on Ray actors."""
    if block.revision.rule != "memory":
        raise ValueError(f"revision.rule {block.revision.rule}: {adapt}; set revision.rule memory")
    refuse_unread(block, [f for f in Revision.model_fields if f != "rule"], what, actors=actors)


def llm_user(block: PopulationSettings) -> tuple[str, ...]:
    """The roles of a game whose only model is its LLM members': `user`, or none where every member is fixed."""
    return ("user",) if any(m.strategy == LLM for m in block.members) else ()


def principle_checks(block: PopulationSettings, game: str, *, assistant: bool, actors: bool = False) -> None:
    """Members who follow principle texts (the ultimatum game, a matrix game played by the LLM), `game` in words;
    `assistant`: SCAI's assistant may be a member; `actors`: the matches may be played on Ray actors."""
    from societies.norms import NORMS

    rule = block.revision.rule
    if rule not in ("reflect", "imitate"):
        raise ValueError(
            f"revision.rule {rule}: {game} revises by reflect (each member's own MetaLM) or "
            "imitate (Fermi, copying a neighbour's principle)"
        )
    unread = ["beta"] if rule != "imitate" else []
    unread += ["adopt", "check", "mutation", "survivors", "show_scores"]
    unread += ["payoff"] if assistant else []  # a matrix game's payoff may be a mean per neighbour
    refuse_unread(block, unread, f"{game} with revision.rule {rule}", actors=actors)
    counts = member_counts([m.share for m in block.members], block.agents)
    for i, (member, count) in enumerate(zip(block.members, counts)):
        if member.strategy == LLM:
            raise ValueError(
                f"members[{i}].strategy llm: a member of {game} starts from a principle, a library "
                f"norm ({', '.join(NORMS.names())}), its text{', or assistant' if assistant else ''}"
            )
        if member.strategy == ASSISTANT and not assistant:
            raise ValueError(f"members[{i}].strategy assistant: SCAI's assistant plays the ultimatum game")
        if member.strategy == ASSISTANT and (member.fixed or count != 1):
            raise ValueError(
                f"members[{i}]: the assistant is one agent that learns (not fixed); its share gives "
                f"{count} agents of {block.agents}"
            )
        if member.strategy not in NORMS.names() and member.strategy != ASSISTANT and len(member.strategy) < 12:
            raise ValueError(
                f"members[{i}].strategy {member.strategy!r}: not a library norm "
                f"({', '.join(NORMS.names())}) nor a principle's text (12 characters or more)"
            )


def count_agents(block: PopulationSettings, which: Callable[[Member], bool] | None = None) -> int:
    """How many agents start as members for which `which(member)` holds (default: fixed members)."""
    counts = member_counts([m.share for m in block.members], block.agents)
    return sum(n for m, n in zip(block.members, counts) if (which(m) if which else m.fixed))


def network_edges(scenario: PopulationScenarioSettings) -> int:
    """How many pairs of agents meet: every pair on a complete network, else the network's edges."""
    from sandbox.population.network import edge_count, network_of

    block = scenario.population
    return edge_count(network_of(block.agents, block.network, scenario.seed)[1])


def place_members(scenario: PopulationScenarioSettings) -> npt.NDArray[np.int64]:
    """Which member each agent slot starts as (an int array): each member's share of the agents (`member_counts`),
    placed by a permutation seeded from the run's seed tree (`Branch.POPULATION`)."""
    import numpy as np

    from sandbox.base.seeding import Branch, generator

    block = scenario.population
    labels = np.repeat(np.arange(len(block.members)), member_counts([m.share for m in block.members], block.agents))
    return generator(scenario.seed, Branch.POPULATION).permutation(labels).astype(np.int64)


class PopulationSettings(StrictModel):
    """The `population:` block's fields that every game shares; `sandbox.population.scenario.PopulationBlock` adds
    the union of the games' settings (`game`). A game's plug-in reads the block as this type and its own settings
    as its own."""

    agents: int = Field(..., ge=2, le=1_000_000, description="Number of agents.")
    generations: int = Field(..., ge=1, le=100_000, description="Generations: play with every neighbour, then revise.")
    members: list[Member] = Field(..., min_length=1, description="The starting strategies or norms and their shares.")
    game: PopulationGameSpec  # each game's own settings: the union of the registered games' (PopulationBlock)
    network: Network = Field(default_factory=Network, description="Who meets whom (shared with societies).")
    self_play: bool = Field(False, description="Each agent also plays itself, as on Nowak & May's lattice.")
    revision: Revision = Field(
        default_factory=Revision, description="How each agent revises its norm after a generation."
    )
    actors: int = Field(
        1,
        ge=1,
        le=1024,
        description="Scripted strategies, the LLM members of a matrix game, or those of "
        "the naming game with update pairs: the matches (a round's pairs) are cut "
        "into this many blocks and each block is played by "
        "a Ray actor of its own (as AgentSociety groups agents; local Ray "
        "unless Ray is already initialised), LLM members with the actor's "
        "share of the run's concurrency and of its openai: endpoints; 1 "
        "plays in this process. The tables are the same for any number.",
    )
    judge_play: bool = Field(
        False,
        description="The donor game: after each generation the proxy judge (role judge) "
        "reads each agent's moves as donor and its written norm and "
        "answers whether the play follows the norm (fidelity.csv).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> PopulationSettings:
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
            raise ValueError(
                f"network.edges cover {covered} agents, fewer than the {self.agents} agents: each agent "
                "needs a neighbour"
            )
        self.game.check(self)
        return self


class PopulationScenarioSettings(LLMScenario):
    """A population scenario as a game reads it: a name, a seed, models for LLM members and the `population:` block's
    shared fields (`sandbox.population.scenario.PopulationScenario` is the file's model, with every game)."""

    models: Models = Field(
        default_factory=lambda: Models(user=ModelConfig(sampling=Sampling(temperature=0.8, max_tokens=400))),
        description="LLM members play as role `user` (--model user=SPEC); the paper sampled at temperature 0.8.",
    )
    population: PopulationSettings

    @model_validator(mode="after")
    def _actors_share(self) -> PopulationScenarioSettings:
        """LLM members on Ray actors (`population.actors`, the matrix game with play llm) each take a share of an
        `openai:` endpoint pool (`sandbox.population.actors.llm`): an embedded model would load once per actor, and
        a budget's ledger is kept by each process, so neither is taken there."""
        block = self.population
        if block.actors > 1 and block.game.roles(block):
            if not self.models.user.spec.startswith("openai:"):
                raise ValueError(
                    f"population.actors: LLM members on {block.actors} Ray actors call an openai: endpoint pool, each "
                    f"actor its share (models.user.spec {self.models.user.spec}; --model user=openai:MODEL@URL1,URL2)"
                )
            if self.concurrency < block.actors:
                raise ValueError(
                    f"population.actors: {block.actors} actors share the run's concurrency ({self.concurrency} calls "
                    "in flight): raise concurrency to at least the actors"
                )
            if self.budget.limits():
                raise ValueError(
                    "budget: each Ray actor keeps its own ledger, so a cap would not hold across them; drop the budget "
                    "or set population.actors 1"
                )
        return self
