"""Dialogue-game scenarios: a file with a `dialogue:` block, solved by `sandbox solve`.

    name: dialogue-ultimatum-small
    seed: 7
    models:
      players: {spec: embedded, sampling: {temperature: 0.7}}
      judge: embedded
    dialogue:
      domain: {kind: ultimatum, amount: 10, currency: dollars}
      players: [Alice, Bob]
      instructions: [[generous, greedy, any], [tough, lenient, any]]
      max_messages: 2
      seeds_per_message: 2
      scenarios: 1
    solver: {algorithm: cfr, iterations: 1000}

The tree's size is estimated at load, and a scenario whose tree would hold
more messages than `dialogue.max_tree_messages` is refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from sandbox.base.scenario_model import StrictModel
from sandbox.core.scenario import LLMScenario, ModelConfig, Sampling, model_config_from_shorthand
from sandbox.dialogue.domains import DebateConfig, FruitConfig, MeetingConfig, UltimatumConfig
from sandbox.dialogue.game import Decisions, Termination
from sandbox.rules.dialogue import ANY

__all__ = [
    "DialogueBlock",
    "DialogueModelsConfig",
    "DialogueScenario",
    "PSROBlock",
    "SolverBlock",
    "apply_dialogue_overrides",
    "estimate_messages",
]

DomainConfig = Annotated[UltimatumConfig | MeetingConfig | FruitConfig | DebateConfig, Field(discriminator="kind")]
DIALOGUE_ROLES = ("players", "judge")


def _player_sampling() -> ModelConfig:
    # The players sample (each chance outcome is a seed); the paper's models sampled too.
    return ModelConfig(sampling=Sampling(temperature=0.7, max_tokens=128))


def _judge_sampling() -> ModelConfig:
    return ModelConfig(sampling=Sampling(temperature=0.0, max_tokens=16))


class DialogueModelsConfig(StrictModel):
    """Models per role: `players` write the messages; `judge` ends dialogues, scores them (the reward model) and
    classifies instruction following. A role may be a bare spec string."""

    players: ModelConfig = Field(default_factory=_player_sampling)
    judge: ModelConfig = Field(default_factory=_judge_sampling)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict):
            defaults = {"players": _player_sampling(), "judge": _judge_sampling()}
            out = {}
            for key, value in data.items():
                value = model_config_from_shorthand(value)
                if isinstance(value, dict) and "sampling" not in value and key in defaults:
                    value = {**value, "sampling": defaults[key].sampling.model_dump()}
                out[key] = value
            return out
        return data


class DialogueBlock(StrictModel):
    """The game: its domain, players, instructions, message limit, seeds and setups."""

    domain: DomainConfig
    players: tuple[str, ...] = Field(("Alice", "Bob"), min_length=2, max_length=10, description="Names, in turn order.")
    instructions: tuple[tuple[str, ...], ...] = Field(
        ...,
        description='Per player, the instructions it may be given (its actions); each list includes "any", '
        "the baseline.",
    )
    max_messages: int = Field(2, ge=1, le=12, description="The dialogue ends after this many messages.")
    seeds_per_message: int = Field(1, ge=1, le=16, description="Chance outcomes (LLM seeds) after each decision.")
    scenarios: int = Field(
        1, ge=1, le=1000, description="Setups the root chance node draws from (private information)."
    )
    termination: Termination = Field(
        "rules",
        description="rules: the domain's rules and max_messages end a dialogue; judge: the judge is also "
        "asked after every message whether it is over.",
    )
    decisions: Decisions = Field(
        "every_message",
        description="every_message (the paper's): an instruction is chosen before each message; "
        "first_message: before each player's first message only, held for the rest of the dialogue (longer "
        "dialogues without a larger tree; not in the paper).",
    )
    max_tree_messages: int = Field(5000, ge=1, description="Refuse a game whose tree would hold more messages.")

    @field_validator("players")
    @classmethod
    def _two_players(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        domain = info.data.get("domain")
        if domain is not None and len(value) != 2:
            raise ValueError(f"the {domain.kind} domain has two players")
        if len(set(value)) != len(value):
            raise ValueError(f"the players' names repeat: {list(value)}")
        return value

    @field_validator("instructions")
    @classmethod
    def _instructions(cls, value: tuple[tuple[str, ...], ...], info: ValidationInfo) -> tuple[tuple[str, ...], ...]:
        for player, own in enumerate(value):
            if ANY not in own:
                raise ValueError(f'player {player}\'s instructions must include the baseline "{ANY}"')
            if len(set(own)) != len(own):
                raise ValueError(f"player {player}'s instructions repeat one: {list(own)}")
            if any(not i.strip() for i in own):
                raise ValueError(f"player {player}'s instructions include an empty one")
        players = info.data.get("players")
        if players is not None and len(value) != len(players):
            raise ValueError(f"{len(value)} lists for {len(players)} players")
        domain = info.data.get("domain")
        if domain is not None:
            domain.check_instructions(value)
        return value

    @field_validator("max_messages")
    @classmethod
    def _messages(cls, value: int, info: ValidationInfo) -> int:
        domain = info.data.get("domain")
        if domain is not None and domain.kind == "ultimatum" and value != 2:
            raise ValueError("the ultimatum game has two messages (the proposal and the answer)")
        return value

    @model_validator(mode="after")
    def _small_enough(self) -> DialogueBlock:
        messages = estimate_messages(self)
        if messages > self.max_tree_messages:
            raise ValueError(
                f"max_tree_messages: the tree would hold up to {messages} messages (scenarios x "
                f"(instructions x seeds_per_message) per decision, over max_messages); lower them or "
                f"raise max_tree_messages ({self.max_tree_messages})"
            )
        return self


def estimate_messages(block: DialogueBlock, extra: int = 0) -> int:
    """The most messages the tree can hold (every dialogue runs to max_messages), with `extra` more instructions
    per player (PSRO's)."""
    total, paths = 0, block.scenarios
    for depth in range(block.max_messages):
        chooses = block.decisions == "every_message" or depth < len(block.players)
        paths *= (
            len(block.instructions[depth % len(block.players)]) + extra if chooses else 1
        ) * block.seeds_per_message
        total += paths
    return total


class SolverBlock(StrictModel):
    """How the game is solved."""

    algorithm: Literal["cfr", "cfr_plus"] = Field("cfr", description="OpenSpiel's C++ CFR or CFR+.")
    iterations: int = Field(1000, ge=1, le=1_000_000, description="Solver iterations on the cached tree.")
    steering: bool = Field(True, description="Measure instruction following with the judge (one call per message).")


class PSROBlock(StrictModel):
    """PSRO with LLM-proposed instructions (`sandbox.dialogue.psro`), run after the CFR solve."""

    iterations: int = Field(3, ge=1, le=20, description="PSRO iterations (each adds one instruction per player).")
    candidates: int = Field(2, ge=1, le=8, description="Instructions the LLM proposes per player and iteration.")
    meta_solver: Literal["prd", "nash_bargaining"] = Field(
        "prd", description="prd: projected replicator dynamics; nash_bargaining: the Nash bargaining solution."
    )
    shared: bool | None = Field(
        None,
        description="One instruction set for both players (a symmetric game; default: when their "
        "instruction lists are equal).",
    )
    prd_iterations: int = Field(10_000, ge=100, le=1_000_000, description="Steps of projected replicator dynamics.")


class DialogueScenario(LLMScenario):
    """A dialogue game and how to solve it, as written in a scenario file with a `dialogue:` block."""

    # A dialogue's roles are its players and its judge, not a society's: its own models block in the base's place.
    models: DialogueModelsConfig = Field(default_factory=DialogueModelsConfig)  # type: ignore[assignment]
    dialogue: DialogueBlock
    solver: SolverBlock = Field(default_factory=SolverBlock)
    psro: PSROBlock | None = Field(None, description="Grow the instruction sets by PSRO after the solve.")

    @model_validator(mode="after")
    def _psro_two_players(self) -> DialogueScenario:
        if self.psro is None:
            return self
        if self.psro.shared and len(set(self.dialogue.instructions)) != 1:
            raise ValueError("psro.shared: the players' instruction lists differ; a shared set needs them equal")
        # the last iteration scores its candidates with every instruction added so far
        grown = estimate_messages(self.dialogue, self.psro.iterations + self.psro.candidates)
        if grown > self.dialogue.max_tree_messages:
            raise ValueError(
                f"psro.iterations: with the instructions PSRO adds, the tree would hold up to {grown} "
                f"messages; lower psro.iterations or psro.candidates, or raise "
                f"dialogue.max_tree_messages ({self.dialogue.max_tree_messages})"
            )
        return self


def apply_dialogue_overrides(
    scenario: Any,
    *,
    seed: int | None = None,
    iterations: int | None = None,
    models: list[str] | None = None,
    source: str = "<command line>",
) -> Any:
    """Return a dialogue scenario with `--seed`, `--iterations` and `--model ROLE=SPEC` (players, judge) applied."""
    from sandbox.core.scenario_files import model_overrides, parse_kind

    data = scenario.model_dump(mode="json", exclude_none=True)
    if seed is not None:
        data["seed"] = seed
    if iterations is not None:
        data["solver"]["iterations"] = iterations
    model_overrides(data, models, ("players", "judge"), source)
    return parse_kind("dialogue", data, source)
