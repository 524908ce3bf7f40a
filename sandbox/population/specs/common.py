"""What every population game's settings share: the members, the revision rule, and the game's plug-in.

A game of the population kind is one module of `sandbox.population.specs`:
a pydantic model of its `game:` block, subclass of `PopulationGameSpec`,
whose plug-in of the engine (`sandbox.population.games`, found by `engine_game`) plays it, checks the whole
`population:` block for what the game cannot use (`check`), names the model roles a run
reads (`roles`), says what a run will do (`describe`) and counts its calls
for `sandbox run --dry-run` (`calls`). `sandbox.population.scenario` lists the games; nothing else in
the kind dispatches on the game.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from pydantic import Field

from sandbox.base.rounding import apportion
from sandbox.base.scenario_model import StrictModel

__all__ = [
    "ASSISTANT",
    "LLM",
    "Calls",
    "Member",
    "PopulationGameSpec",
    "Revision",
    "count_agents",
    "llm_user",
    "member_counts",
    "memory_only",
    "network_edges",
    "principle_checks",
    "refuse_unread",
    "retries_field",
]

LLM = "llm"  # a member whose LLM writes its own strategy
ASSISTANT = "assistant"  # SCAI's assistant as a member (the ultimatum game)


def member_counts(shares: list[float], agents: int) -> list[int]:
    """How many agents each member gets: the shares times the agents, rounded by largest remainders (the counts sum
    to `agents`; ties go to the earlier member).

    >>> member_counts([1 / 3, 1 / 3, 1 / 3], 8)
    [3, 3, 2]
    """
    return apportion([share * agents for share in shares], agents)


class Member(StrictModel):
    """A share of the population that starts with one strategy."""

    strategy: str = Field(
        ...,
        description="A matrix game: an axelrod strategy's name (Cooperator, Defector, Tit For "
        "Tat, Grudger, ...). The donor game: `llm` (the agent writes its own "
        "strategy) or a strategy's text, which the agents start from. The naming "
        "game: `llm`, or one of the words with fixed: true (a committed "
        "minority that always plays it); with play scripted, a word (fixed: true, committed to it; else the "
        "name the agents start with) or `empty` (no name at first). The commons game: `llm`, or a catch "
        "in tons with fixed: true (a fisher that always asks for it).",
    )
    share: float = Field(..., gt=0.0, le=1.0, description="Its share of the agents (the shares sum to 1).")
    fixed: bool = Field(
        False,
        description="Zealots: these agents never revise their strategy (a donor-game "
        "zealot always survives selection).",
    )


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
        "copy",
        description="imitate, LLM strategies: an agent that imitates copies its neighbour's text (copy), or "
        "the LLM merges the neighbour's text with its own (merge).",
    )
    check: bool = Field(
        False,
        description="LLM strategies, as CRSEC evaluates norms before adoption: a revised "
        "text without the strategy sentence is rejected (the agent keeps its "
        "norm), and a text equal to a known norm (case and spaces aside) is "
        "that norm, not a new one.",
    )
    survivors: float = Field(0.5, gt=0.0, lt=1.0, description="select: the share of agents that survive a generation.")
    show_scores: bool = Field(
        True,
        description="select: the survivors' final scores are shown with their "
        "strategies (the paper's prompt; the notebook showed none).",
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
        "members' strategies (matrix games) or writes a new "
        "one freely (the donor game).",
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
    model: Any
    calls: int
    prompt_tokens: int
    answer_tokens: int | None = None


class PopulationGameSpec(StrictModel):
    """The `game:` block of a population: the base of every game's settings, and what the game plugs into the
    population kind."""

    kind: str

    def engine_game(self) -> str:
        """The name its plug-in of the engine is registered under (`sandbox.population.games.plays`): the kind."""
        return self.kind

    def roles(self, block: Any) -> tuple[str, ...]:
        """The model roles a run reads (what `--model ROLE=SPEC` may name): the members' `user` by default."""
        return ("user",)

    def check(self, block: Any) -> None:
        """Refuse, with a ValueError naming the field, what of the `population:` block this game cannot use (its
        own fields are checked by its validators)."""

    def describe(self, scenario: Any) -> str:
        """One line on what a run of `scenario` does."""
        raise NotImplementedError

    def calls(self, scenario: Any) -> list[Calls]:
        """The calls a run of `scenario` makes, first asks (none: a game of scripted strategies)."""
        return []


def refuse_unread(
    block: Any, revision: Iterable[str], what: str, *, judge_play: bool = True, actors: bool = False
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


def memory_only(block: Any, what: str, adapt: str) -> None:
    """Refuse a `revision.rule` other than memory, and every other revision setting: the agents of `what` (a game,
    in words) adapt through `adapt` (in words: their memory, as in Ashery et al. and GovSim)."""
    if block.revision.rule != "memory":
        raise ValueError(f"revision.rule {block.revision.rule}: {adapt}; set revision.rule memory")
    refuse_unread(block, [f for f in Revision.model_fields if f != "rule"], what)


def llm_user(block: Any) -> tuple[str, ...]:
    """The roles of a game whose only model is its LLM members': `user`, or none where every member is fixed."""
    return ("user",) if any(m.strategy == LLM for m in block.members) else ()


def principle_checks(block: Any, game: str, *, assistant: bool, actors: bool = False) -> None:
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


def count_agents(block: Any, which: Any = None) -> int:
    """How many agents start as members for which `which(member)` holds (default: fixed members)."""
    counts = member_counts([m.share for m in block.members], block.agents)
    return sum(n for m, n in zip(block.members, counts) if (which(m) if which else m.fixed))


def network_edges(scenario: Any) -> int:
    """How many pairs of agents meet: every pair on a complete network, else the network's edges."""
    from sandbox.population.dynamics import network_of

    block = scenario.population
    _, neighbours = network_of(block.agents, block.network, scenario.seed)
    return block.agents * (block.agents - 1) // 2 if neighbours.complete else len(neighbours.edges)
