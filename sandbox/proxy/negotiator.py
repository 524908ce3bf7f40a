"""The negotiator: Alice as a small policy trained by REINFORCE against the fixed partner (Kwon et al. §4.3).

Kwon et al. fine-tuned Lewis et al.'s pretrained dialogue model (a GRU that
writes utterances) with REINFORCE: gamma 0.95, SGD at 0.1 with momentum 0.1,
gradients clipped at 1, rewards normalised by their running mean and
deviation, one epoch over 250 contexts, the reward given once at the end of
the dialogue. Here Alice chooses among seven dialogue acts instead of
writing words: agree, disagree, insist (on her last proposal), or propose
the split best for her, a fair one (about 5 of her 10 points), a generous
one (about 2), or a new random split. The policy is a one-hidden-layer
network over the dialogue's state (turn, what she said, the worth to her of
Bob's last offer), illegal acts masked. The learning rule, discount,
normalisation and clipping are the paper's; the optimiser is Adam at 0.01,
since SGD at 0.1 hardly moves a network trained from scratch in 250 dialogues
(the paper's started from a pretrained model).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np
import torch

from sandbox.base.seeding import generator
from sandbox.rewards.objectives import NEGOTIATION_STYLES
from sandbox.rules.negotiation import (
    Allocation,
    Context,
    FixedPartner,
    Negotiation,
    Utterance,
    allocations,
    draw_context,
    play,
)

__all__ = ["ACTS", "Negotiator", "style_accuracy", "train_negotiator"]

ACTS = ("agree", "disagree", "insist", "propose_best", "propose_fair", "propose_generous", "propose_new")
GAMMA = 0.95
_FEATURES = 8


def _closest(context: Context, worth: int) -> Allocation:
    """The split whose worth to Alice is closest to `worth` (ties: fewest items, then the first)."""
    return min(allocations(context.counts), key=lambda a: (abs(context.worth("Alice", a) - worth), sum(a), a))


def _state(episode: Negotiation, turn_limit: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The features and the mask of legal acts."""
    own = [u.allocation for u in episode.by("Alice") if u.allocation is not None]
    offered = episode.last_proposal("Bob")
    worth = episode.context.worth("Alice", episode.context.rest(offered)) if offered is not None else 0
    x = torch.tensor(
        [
            1.0,
            len(episode.utterances) / turn_limit,
            len(episode.by("Alice")) / 5,
            float(bool(own)),
            float(offered is not None),
            worth / 10,
            len(set(own)) / 5,
            float(len(set(own)) < len(own)),
        ]
    )
    mask = torch.tensor([offered is not None, True, bool(own), True, True, True, True])
    return x, mask


@dataclass
class Negotiator:
    """Alice's policy; `act` is the `AlicePolicy` that `play` calls (it records log-probabilities while training)."""

    network: torch.nn.Module
    rng: np.random.Generator
    turn_limit: int = 10

    @classmethod
    def new(cls, seed: int, turn_limit: int = 10) -> Negotiator:
        with torch.random.fork_rng(devices=[]):  # the initialisation from `seed`, the global RNG untouched
            torch.manual_seed(seed)
            network = torch.nn.Sequential(
                torch.nn.Linear(_FEATURES, 32), torch.nn.Tanh(), torch.nn.Linear(32, len(ACTS))
            )
        return cls(network, generator(seed, 0), turn_limit)

    def reseed(self, seed: int) -> None:
        """Restart the agent's own draws (its acts and its new splits) from `seed`."""
        self.rng = generator(seed, 0)
        self.sampler.manual_seed(int(self.rng.integers(1 << 62)))

    def __post_init__(self) -> None:
        self.log_probs: list[torch.Tensor] = []
        self.sampler = torch.Generator().manual_seed(int(self.rng.integers(1 << 62)))

    def act(self, episode: Negotiation) -> Utterance:
        x, mask = _state(episode, self.turn_limit)
        logits = self.network(x).masked_fill(~mask, float("-inf"))
        distribution = torch.distributions.Categorical(logits=logits)
        choice = int(torch.multinomial(distribution.probs, 1, generator=self.sampler).item())
        self.log_probs.append(distribution.log_prob(torch.tensor(choice)))
        return self._utterance(ACTS[choice], episode)

    def _utterance(self, act: str, episode: Negotiation) -> Utterance:
        context = episode.context
        if act in ("agree", "disagree"):
            return Utterance("Alice", act)  # type: ignore[arg-type]
        if act == "insist":
            return Utterance("Alice", "insist", episode.last_proposal("Alice"))
        if act == "propose_new":
            said = {u.allocation for u in episode.by("Alice")}
            fresh = [a for a in allocations(context.counts) if a not in said]
            return Utterance("Alice", "propose", fresh[int(self.rng.integers(len(fresh)))])
        target = {"propose_best": 10, "propose_fair": 5, "propose_generous": 2}[act]
        return Utterance("Alice", "propose", _closest(context, target))

    def play(self, context: Context, alice_first: bool) -> Negotiation:
        self.log_probs = []
        return play(context, self.act, FixedPartner(), alice_first=alice_first, turn_limit=self.turn_limit)


Reward = Callable[[Negotiation], Awaitable[float | None]]


async def train_negotiator(
    reward: Reward,
    *,
    episodes: int = 250,
    seed: int = 0,
    turn_limit: int = 10,
    learning_rate: float = 0.01,
    on_dialogue: Callable[[], None] | None = None,
) -> tuple[Negotiator, dict[str, int]]:
    """REINFORCE on `reward` (awaited once per dialogue; None = unparsed, the dialogue is skipped as the paper
    did). Contexts and who opens come from `seed`. Returns the policy and counts (dialogues, skipped)."""
    agent = Negotiator.new(seed, turn_limit)
    contexts = generator(seed, 1)
    optimiser = torch.optim.Adam(agent.network.parameters(), lr=learning_rate)
    mean, var, seen, skipped = 0.0, 1.0, 0, 0
    for _ in range(episodes):
        episode = agent.play(draw_context(contexts), alice_first=bool(contexts.integers(2)))
        value = await reward(episode)
        if on_dialogue:
            on_dialogue()
        if value is None or not agent.log_probs:
            skipped += value is None
            continue
        seen += 1  # the running normalisation of Lewis et al.'s UtilityRewarder
        delta = value - mean
        mean += delta / seen
        var += (delta * (value - mean) - var) / seen
        normalised = (value - mean) / (var**0.5 + 1e-6) if seen > 1 else 0.0
        steps = len(agent.log_probs)
        loss = -sum(lp * normalised * GAMMA ** (steps - 1 - t) for t, lp in enumerate(agent.log_probs))
        optimiser.zero_grad()
        loss.backward()  # type: ignore[union-attr]
        torch.nn.utils.clip_grad_norm_(agent.network.parameters(), 1.0)
        optimiser.step()
    return agent, {"dialogues": episodes, "skipped": skipped}


def style_accuracy(agent: Negotiator, style: str, *, dialogues: int = 200, seed: int = 0) -> float:
    """The agent accuracy: the share of fresh dialogues (contexts from `seed`) in which Alice has the style."""
    rng = generator(seed, 2)
    agent.reseed(seed)
    truth = NEGOTIATION_STYLES.get(style)
    with torch.no_grad():
        hits = [truth(agent.play(draw_context(rng), alice_first=bool(rng.integers(2)))) for _ in range(dialogues)]
    return float(np.mean(hits))
