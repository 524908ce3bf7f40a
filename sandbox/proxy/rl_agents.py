"""RL agents trained on a reward table and scored on the true reward (the paper's "RL agent accuracy").

Kwon et al. queried the LLM once per distinct episode, saved the labels, and
trained Stable-Baselines3's DQN on the lookup table: the Ultimatum responder
over the 50 labelled proposals (observation: both amounts; actions accept and
reject), the matrix agent as a 4-armed bandit over joint outcomes. Every
episode is one step, so the learning problem is a contextual bandit; here it
is solved by tabular epsilon-greedy value learning from optimistic initial
values, one state per labelled episode, which needs no network and converges
to the table's greedy choice.
The judge is never asked during training: its table was filled once, so an RL
run makes no more judge calls than there are distinct episodes (it makes none).

Agent accuracy is the share of states whose greedy action the true objective
approves, averaged over seeds.

>>> table = np.array([[0.0, 1.0], [1.0, 0.0]])   # state 0: action 1 pays; state 1: action 0
>>> q = train_bandit(table, np.random.default_rng(0), steps=400)
>>> greedy(q, np.random.default_rng(1)).tolist()
[1, 0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["agent_accuracy", "greedy", "train_bandit"]


def train_bandit(
    rewards: np.ndarray,
    rng: np.random.Generator,
    *,
    steps: int = 2000,
    epsilon: float = 0.1,
    learning_rate: float = 0.1,
) -> np.ndarray:
    """Action values learned by epsilon-greedy play on `rewards[state, action]` (NaN: no reward, the step is skipped).

    States are visited uniformly at random, one step per episode, as the paper's environments drew proposals.
    """
    # Optimistic start (the largest reward): every action is tried before the greedy choice settles, as the
    # paper's DQN explored for half of its steps.
    top = np.nanmax(rewards) if np.isfinite(rewards).any() else 0.0
    values = np.full(rewards.shape, float(top))
    states, actions = rewards.shape
    for _ in range(steps):
        state = int(rng.integers(states))
        if rng.uniform() < epsilon:
            action = int(rng.integers(actions))
        else:
            action = int(rng.choice(np.flatnonzero(values[state] == values[state].max())))
        reward = rewards[state, action]
        if np.isnan(reward):  # an unparsed verdict gives no reward (the paper skipped the episode)
            continue
        values[state, action] += learning_rate * (reward - values[state, action])
    return values


def greedy(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The greedy action per state, ties broken at random (an untrained state is a coin flip, not action 0)."""
    return np.array([int(rng.choice(np.flatnonzero(row == row.max()))) for row in values])


def agent_accuracy(rewards: np.ndarray, correct: np.ndarray, rng: np.random.Generator, *, steps: int = 2000) -> float:
    """Train on `rewards` and score the greedy policy on `correct[state, action]` (True where the truth approves).

    >>> truth = np.array([[False, True], [True, False]])
    >>> agent_accuracy(truth.astype(float), truth, np.random.default_rng(0), steps=400)
    1.0
    """
    values = train_bandit(rewards, rng, steps=steps)
    chosen = greedy(values, rng)
    return float(np.mean([correct[state, action] for state, action in enumerate(chosen)]))
