"""Training scenarios: a moral fine-tuning experiment as strict pydantic models (a file with `training:`).

A training scenario names the base model (`models.policy`), the game, the
opponent, the reward schedule and the PPO hyper-parameters. `training.ppo`
holds the fields of `PPOConfig` (each with its help text); `batch_size`
defaults to `parallel x rounds`, and `mini_batch_size` to `batch_size`.

    name: utilitarian-vs-tft
    models: {policy: tiny}
    training:
      episodes: 80
      reward: utilitarian          # or a schedule: game,utilitarian@500
      opponent: tit_for_tat
      parallel: 2
      rounds: 20
      ppo: {learning_rate: 0.01, lora_r: 8}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from sandbox.base.errors import ScenarioError
from sandbox.base.scenario_model import StrictModel
from sandbox.core.scenario import NamedScenario
from sandbox.rewards.intrinsic import TABLE_PREFIXES, RewardFn, RewardParams, Schedule
from sandbox.rewards.proxy import ProxyRewardSpec
from sandbox.rules.matrix import MATRIX_GAMES, PayoffTable
from sandbox.rules.matrix_prompt import TABLE_ORDERS, TEST_TOKENS, TRAIN_TOKENS, ActionTokens
from sandbox.training.ppo_config import PPOConfig
from sandbox.training.scenario_block import PPOFields, batch_ppo_config, check_trl_block

__all__ = [
    "CustomGame",
    "MoralEvaluation",
    "Training",
    "TrainingModels",
    "TrainingScenario",
    "apply_training_overrides",
]


def _known(lookup: Any, name: str) -> None:
    """A registry lookup whose failure pydantic reports at the field (it only wraps ValueError)."""
    try:
        lookup(name)
    except KeyError as error:
        raise ValueError(str(error)) from None


LLM_OPPONENTS = ("llm", "learner")

EVALUATION_GAMES = ("prisoners_dilemma", "stag_hunt", "chicken", "bach_or_stravinsky", "defective_coordination")


class CustomGame(StrictModel):
    """A 2x2 game not in the registry: rows as printed, `[[CC, CD], [DC, DD]]`, each cell `[own, other]`."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9_]+$")
    payoffs: list[list[list[float]]] = Field(..., description="[[CC, CD], [DC, DD]], each cell [row, column].")

    @model_validator(mode="after")
    def _shape(self) -> CustomGame:
        if len(self.payoffs) != 2 or any(len(row) != 2 or any(len(cell) != 2 for cell in row) for row in self.payoffs):
            raise ValueError("payoffs are 2 rows of 2 cells of 2 numbers: [[CC, CD], [DC, DD]]")
        return self

    def table(self) -> PayoffTable:
        return PayoffTable.from_rows(self.name, self.payoffs)


TokenPair = Annotated[list[str], Field(min_length=2, max_length=2)]


class MoralEvaluation(StrictModel):
    """`sandbox evaluate-moral`: the trained adapter on several games against a random opponent, new tokens."""

    games: list[str] = Field(list(EVALUATION_GAMES), min_length=1, description="Registered matrix games.")
    opponent: str = Field("random", description="A fixed strategy (the paper: random, to visit every state).")
    games_per_game: int = Field(50, ge=1, le=10_000, description="Test games per matrix game (the paper: 50).")
    rounds: int = Field(5, ge=1, le=1000, description="Rounds per test game.")
    conditions: list[Literal["test", "training", "reversed"]] = Field(
        ["test", "reversed"],
        min_length=1,
        description="Token conditions: test (the new test tokens), training (the training tokens), "
        "reversed (the training tokens with their meanings swapped).",
    )
    orders: list[Literal[TABLE_ORDERS]] = Field(  # type: ignore[valid-type]
        ["CD-CD"],
        min_length=1,
        description="Orders of the payoff table's rows-columns in the prompt: CD-CD (the paper's), and the "
        "authors' permuted-matrix check (Figs. 9, 22, 23): DC-DC, CD-DC, DC-CD.",
    )
    baseline: bool = Field(
        True, description="Also evaluate the base model with the adapter off ('no fine-tuning', Figs. 4 and 5)."
    )

    @field_validator("games")
    @classmethod
    def _known_games(cls, games: list[str]) -> list[str]:
        for name in games:
            _known(MATRIX_GAMES.get, name)
        return games

    @field_validator("opponent")
    @classmethod
    def _known_opponent(cls, name: str) -> str:
        from agents.strategies import STRATEGIES

        _known(STRATEGIES.get, name)
        return name


class Training(StrictModel):
    """What is played, how it is rewarded, and the PPO hyper-parameters."""

    algorithm: Literal["ppo", "grpo", "rloo"] = Field(
        "ppo", description="ppo (the project's), or TRL's grpo or rloo behind the same rewards."
    )
    episodes: int = Field(1000, ge=1, le=1_000_000, description="PPO steps; each plays parallel x rounds rounds.")
    game: str | CustomGame = Field("prisoners_dilemma", description="A registered game or a custom table.")
    opponent: str = Field(
        "tit_for_tat",
        description="A fixed strategy (tit_for_tat, always_defect, always_cooperate, random), llm (the base "
        "model, fixed) or learner (a second LLM that learns too, with opponent_reward).",
    )
    opponent_reward: str | None = Field(None, description="learner: its reward or schedule; default: `reward`.")
    reward: str = Field("game", description="A reward or a schedule: game, utilitarian, game,utilitarian@500.")
    xi: float = Field(3.0, ge=0, description="The Deontological penalty for defecting against a cooperator.")
    illegal: float = Field(-6.0, le=0, description="The reward of an output that is not a legal action token.")
    tokens: TokenPair = Field(list(TRAIN_TOKENS), description="[cooperate token, defect token] in training.")
    test_tokens: TokenPair = Field(list(TEST_TOKENS), description="[cooperate token, defect token] at evaluation.")
    history_length: int = Field(1, ge=1, le=20, description="Rounds of history in the state the model sees.")
    parallel: int = Field(1, ge=1, le=4096, description="Games played side by side per episode (batched).")
    rounds: int = Field(5, ge=1, le=1000, description="Rounds each game plays per episode.")
    checkpoint_every: int = Field(50, ge=1, description="Episodes between checkpoints (adapter, optimiser, state).")
    ppo_preset: Literal["authors", "multi_step"] | None = Field(
        None,
        description="A named set of ppo fields, which the ppo block overrides: authors (what the authors' code "
        "ran: one optimiser step per episode, LoRA alpha 32, no gradient clipping) or multi_step (mini-batches "
        "of 1, accumulation 4, alpha 128, norm clip 1: several clipped PPO steps per episode).",
    )
    ppo: PPOFields = Field(default_factory=PPOFields, description="PPOConfig fields (see `sandbox train --help-ppo`).")
    trl: dict[str, Any] = Field(
        default_factory=dict,
        description="grpo/rloo: fields of TRL's GRPOConfig/RLOOConfig (num_generations, beta, ...). LoRA, "
        "learning_rate, max_new_tokens, temperature and seed come from the ppo block.",
    )
    proxies: dict[str, ProxyRewardSpec] = Field(
        default_factory=dict,
        description="Proxy rewards by name, used as proxy:NAME in reward (Kwon et al.: the judge names the joint "
        "outcomes that meet the objective once, and the table rewards them; truth:NAME is the ground truth).",
    )
    evaluation: MoralEvaluation = Field(default_factory=MoralEvaluation)
    seed_ci: Literal["normal", "t"] = Field(
        "normal",
        description="The 95% CI across the seeds of `train --seeds`: normal (the authors' 1.96 x sd / sqrt(n), "
        "plotting.py) or t (Student's t: wider, and right for few seeds; 2.2 times as wide as normal at 3 seeds).",
    )

    @field_validator("game")
    @classmethod
    def _known_game(cls, game: str | CustomGame) -> str | CustomGame:
        if isinstance(game, str):
            _known(MATRIX_GAMES.get, game)
        return game

    @field_validator("opponent")
    @classmethod
    def _known_opponent(cls, name: str) -> str:
        from agents.strategies import STRATEGIES

        if name not in LLM_OPPONENTS:
            try:
                STRATEGIES.get(name)
            except KeyError as error:
                raise ValueError(f"{error}; or an LLM: {', '.join(LLM_OPPONENTS)}") from None
        return name

    @field_validator("reward", "opponent_reward")
    @classmethod
    def _schedule(cls, text: str | None) -> str | None:
        if text is not None:
            _known(Schedule.parse, text)
        return text

    @field_validator("tokens", "test_tokens")
    @classmethod
    def _tokens(cls, pair: list[str]) -> list[str]:
        ActionTokens.of(pair)
        return pair

    @model_validator(mode="after")
    def _ppo_config(self) -> Training:
        self.ppo_config(seed=0)  # PPOConfig's own checks, with the defaults filled in
        for name in self.proxies:
            if not name.replace("_", "").isalnum():
                raise ValueError(f"training.proxies: a name is letters, digits and _, not {name!r}")
        for _, kind in Schedule.parse(self.reward).phases:
            _, _, name = kind.partition(":")
            if kind.startswith(TABLE_PREFIXES) and name not in self.proxies:
                raise ValueError(
                    f"training.reward: {kind} is not declared in training.proxies "
                    f"({', '.join(self.proxies) or 'none declared'})"
                )
        if self.opponent_reward is not None and any(
            kind.startswith(TABLE_PREFIXES) for _, kind in Schedule.parse(self.opponent_reward).phases
        ):
            raise ValueError("training.opponent_reward: a learning opponent takes the registered rewards only")
        if self.proxies and self.opponent in LLM_OPPONENTS:
            raise ValueError(f"training.proxies: proxy rewards train against a fixed strategy, not {self.opponent!r}")
        if self.opponent_reward is not None and self.opponent != "learner":
            raise ValueError("training.opponent_reward is the reward of a learning opponent (opponent: learner)")
        if self.algorithm != "ppo" and self.opponent in LLM_OPPONENTS:
            raise ValueError(f"training.opponent: {self.algorithm} plays fixed strategies; an LLM opponent needs ppo")
        check_trl_block(self.algorithm, self.trl, self.parallel, self.rounds)
        return self

    def ppo_config(self, seed: int) -> PPOConfig:
        """The `PPOConfig`: the fields given, `batch_size = parallel x rounds` and `seed` unless given."""
        return batch_ppo_config(self.ppo, self.parallel, self.rounds, seed, self.ppo_preset)

    def game_table(self) -> PayoffTable:
        return self.game.table() if isinstance(self.game, CustomGame) else MATRIX_GAMES.get(self.game)

    def setup(self, seed: int, opponent: Any = None, proxies: Mapping[str, RewardFn] | None = None) -> Any:
        """The `MoralSetup` this block describes (`opponent`: the LLM opponent object, for llm and learner;
        `proxies`: the run's table rewards, from `sandbox.rewards.proxy.proxy_rewards`)."""
        from sandbox.moral.environment import MoralSetup

        if self.opponent in LLM_OPPONENTS and opponent is None:
            raise ValueError(f"opponent {self.opponent!r} needs its LLM: pass opponent=")
        if self.proxies and not proxies:
            raise ValueError("training.proxies needs the run's judge tables: pass proxies=")
        return MoralSetup(
            game=self.game_table(),
            opponent=opponent or self.opponent,
            schedule=Schedule.parse(self.reward),
            tokens=ActionTokens.of(self.tokens),
            history_length=self.history_length,
            parallel=self.parallel,
            rounds=self.rounds,
            rewards=RewardParams(xi=self.xi, illegal=self.illegal),
            seed=seed,
            proxies=dict(proxies or {}),
        )


class TrainingModels(StrictModel):
    """The model that learns."""

    policy: str = Field("tiny", description="Base model: tiny, tiny:SEED, hf:PATH, gguf:FILE, embedded, smollm2.")
    judge: str = Field(
        "embedded", description="The judge of training.proxies: a model spec (embedded, openai:MODEL, hf:PATH, ...)."
    )
    device: str | None = Field(
        None,
        pattern=r"^(cpu|cuda(:\d+)?|mps)$",
        description="cpu, cuda, cuda:1...; default: CUDA when present. A device "
        "that is absent is an error, never a fallback to the CPU.",
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="auto = bfloat16 on a GPU, float32 on CPU."
    )

    @field_validator("policy")
    @classmethod
    def _known(cls, spec: str) -> str:
        from sandbox.llm.base_model import check_base_model_spec

        check_base_model_spec(spec)
        return spec

    @field_validator("judge")
    @classmethod
    def _judge_spec(cls, spec: str) -> str:
        from sandbox.llm.resolve import check_spec

        check_spec(spec)
        return spec


class TrainingScenario(NamedScenario):
    """A moral fine-tuning experiment, as written in a scenario file with a `training:` block."""

    models: TrainingModels = Field(default_factory=TrainingModels)
    training: Training = Field(default_factory=Training)


def apply_training_overrides(
    scenario: TrainingScenario,
    *,
    episodes: int | None = None,
    seed: int | None = None,
    policy: str | None = None,
    ppo: list[str] | None = None,
    models: list[str] | None = None,
    device: str | None = None,
    source: str = "<command line>",
) -> TrainingScenario:
    """Return a training scenario with command-line overrides applied and validated again.

    `ppo` holds `FIELD=VALUE` strings for `training.ppo` (values read as YAML scalars); `models` holds
    `ROLE=SPEC` strings for `models.policy` and `models.judge` (the judge of proxy rewards).
    """
    import yaml

    from sandbox.core.scenario_files import model_overrides, parse_kind

    data = scenario.model_dump(mode="json", exclude_none=True)
    model_overrides(data, models, ("policy", "judge"), source, nested=False, allow_all=False)
    if episodes is not None:
        data["training"]["episodes"] = episodes
    if seed is not None:
        data["seed"] = seed
    if policy is not None:
        data["models"]["policy"] = policy
    if device is not None:
        data["models"]["device"] = device
    for item in ppo or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(source, [("--ppo", f"{item!r} is not FIELD=VALUE, e.g. learning_rate=1e-4")])
        data["training"].setdefault("ppo", {})[key.strip()] = yaml.safe_load(value)
    return parse_kind("training", data, source)
