"""The policy of solver-guided members: a solved instructed ultimatum game, read from a `sandbox solve` run.

A `sandbox solve` run of the instructed ultimatum game (`dialogue.domain.kind:
ultimatum`) writes `policy.csv`: per information state of the expanded game,
the solver's probability of each instruction. The proposer (player 0) has one
state per setup, at the root; the responder (player 1) one per proposal the
tree holds. A society's proposals are not the tree's (other stakes, other
seeds), so a responder's state is found by what it answers: the tree's
states whose proposal offered the share nearest the one answered (`nearest`),
or all of them (`mean`, what `sandbox play` falls back to). Only files are
read here (`policy.csv` and the run's `scenario.yaml`); nothing of the
dialogue method is imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from sandbox.base.files import read_yaml
from sandbox.rules.ultimatum import ParseError, Stake, parse_proposal

__all__ = ["GuidedPolicy", "draw"]

POLICY = "policy.csv"  # the file `sandbox solve` writes (sandbox.dialogue.run.POLICY)
SCENARIO = "scenario.yaml"


def _mean(policies: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of several distributions over instructions (each state counts once), in first-seen order.

    >>> _mean([{"a": 1.0, "b": 0.0}, {"a": 0.5, "b": 0.5}])
    {'a': 0.75, 'b': 0.25}
    """
    out: dict[str, float] = {}
    for policy in policies:
        for instruction, p in policy.items():
            out[instruction] = out.get(instruction, 0.0) + p / len(policies)
    return out


def draw(policy: Mapping[str, float], rng: np.random.Generator) -> str:
    """One instruction drawn from `policy` (instruction -> probability, renormalised)."""
    names = list(policy)
    weights = np.array([max(policy[n], 0.0) for n in names], dtype=float)
    if weights.sum() <= 0:
        weights = np.ones(len(names))
    return names[int(rng.choice(len(names), p=weights / weights.sum()))]


@dataclass(frozen=True)
class GuidedPolicy:
    """A solved instructed ultimatum game's policy, by role.

    Attributes:
        proposer: The proposer's policy (instruction -> probability), the mean over its root states.
        responder: Per responder state of the tree: the offered share of the proposal it answers, and its policy.
        names: The solved game's players (proposer, responder), as its prompts name them.
        remark: Whether the solved game's messages carry a remark after the move.
        source: The run directory it was read from.
    """

    proposer: dict[str, float]
    responder: tuple[tuple[float, dict[str, float]], ...]
    names: tuple[str, str]
    remark: bool
    source: str

    def responder_policy(self, offered_share: float, how: Literal["nearest", "mean"] = "nearest") -> dict[str, float]:
        """The responder's policy for a proposal offering `offered_share` of the stake.

        >>> p = GuidedPolicy({"any": 1.0}, ((0.1, {"tough": 1.0}), (0.5, {"lenient": 1.0}), (0.5, {"tough": 1.0})),
        ...                  ("Alice", "Bob"), True, "run")
        >>> p.responder_policy(0.4)
        {'lenient': 0.5, 'tough': 0.5}
        >>> p.responder_policy(0.0)
        {'tough': 1.0}
        >>> p.responder_policy(0.0, "mean")
        {'tough': 0.6666666666666666, 'lenient': 0.3333333333333333}
        """
        if how == "mean":
            return _mean([policy for _, policy in self.responder])
        nearest = min(abs(share - offered_share) for share, _ in self.responder)
        return _mean([policy for share, policy in self.responder if abs(share - offered_share) - nearest <= 1e-9])

    def check_play(self, play: str) -> None:
        """`ValueError` where members are to play the baseline style ("any") and the solved game has none."""
        if play == "any" and not all("any" in policy for policy in (self.proposer, *(p for _, p in self.responder))):
            raise ValueError(
                f"play any plays the baseline style, and the game solved in {self.source} has no "
                f'instruction "any" for each role'
            )

    @classmethod
    def load(cls, path: str | Path) -> GuidedPolicy:
        """Read the policy of the `sandbox solve` run at `path` (its directory, or its `policy.csv`).

        Raises:
            ValueError: the run is not a solved instructed ultimatum game of two players; the message says why.
        """
        path = Path(path)
        run = path.parent if path.name == POLICY else path
        if not (run / POLICY).is_file() or not (run / SCENARIO).is_file():
            raise ValueError(f"{run} is not a finished `sandbox solve` run (no {POLICY} or {SCENARIO})")
        block = (read_yaml(run / SCENARIO) or {}).get("dialogue") or {}
        domain = block.get("domain") or {}
        if domain.get("kind") != "ultimatum":
            raise ValueError(
                f"{run} solved a {domain.get('kind', 'non-dialogue')!r} game; guided members play the "
                "instructed ultimatum game (dialogue.domain.kind: ultimatum)"
            )
        names = tuple(block.get("players") or ("Alice", "Bob"))
        if len(names) != 2:
            raise ValueError(f"{run} solved a game of {len(names)} players; the ultimatum game has two")
        stake = Stake(int(domain.get("amount", 10)), str(domain.get("currency", "dollars")))
        table = pd.read_csv(run / POLICY, keep_default_na=False)
        missing = {"player", "depth", "infostate", "instruction", "probability", "last_message"} - set(table.columns)
        if missing:
            raise ValueError(f"{run / POLICY} lacks the columns {', '.join(sorted(missing))}")
        states: dict[tuple[int, int], dict[str, float]] = {}
        answered: dict[int, str] = {}
        for row in table.itertuples():
            states.setdefault((int(row.player), int(row.infostate)), {})[str(row.instruction)] = float(row.probability)
            answered[int(row.infostate)] = str(row.last_message)
        proposer = [policy for (player, _), policy in states.items() if player == 0]
        responder = []
        for (player, state), policy in states.items():
            if player != 1:
                continue
            try:
                responder.append((parse_proposal(answered[state], stake).offered_share(), policy))
            except ParseError:
                continue  # the tree answers no illegal proposal; a state that does not parse is skipped
        if not proposer or not responder:
            raise ValueError(f"{run / POLICY} holds no {'proposer' if not proposer else 'responder'} state")
        return cls(
            _mean(proposer),
            tuple(responder),
            (str(names[0]), str(names[1])),
            bool(domain.get("remark", True)),
            str(run),
        )
