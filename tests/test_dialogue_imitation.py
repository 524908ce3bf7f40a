"""Imitation of the solver: a network on embedded information states, measured on held-out games."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandbox.base.errors import UsageError
from sandbox.dialogue.imitation import imitate, minilm_embedder


def _bag_of_words(texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), 64))
    for i, text in enumerate(texts):
        for word in text.lower().split():
            out[i, zlib.crc32(word.encode()) % 64] += 1.0
    return out


def _solved_run(path: Path, games: int) -> Path:
    """A policy.csv as `sandbox solve` writes it: CFR bets with the king and checks with the jack."""
    rows = []
    for setup in range(games):
        for state, card in enumerate(("jack", "king")):
            text = f"player 0 setup {setup} card {card} dialogue:"
            bet = 1.0 if card == "king" else 0.0
            for instruction, p in (("check", 1 - bet), ("bet", bet)):
                rows.append(
                    {
                        "infostate": 2 * setup + state,
                        "player": 0,
                        "setup": setup,
                        "depth": 0,
                        "own_instructions": "",
                        "last_message": "",
                        "instruction": instruction,
                        "probability": p,
                        "infostate_text": text,
                    }
                )
    path.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(path / "policy.csv", index=False)
    return path


def test_the_network_imitates_cfr_on_held_out_games(tmp_path: Path) -> None:
    run = _solved_run(tmp_path / "run", games=8)
    summary = imitate([run], tmp_path / "imitation", holdout=0.25, seed=1, steps=300, embed=_bag_of_words)
    assert summary["test_games"] == 2 and summary["train_games"] == 6
    assert summary["agreement"] == 1.0 and summary["agreement_mean_policy"] == 0.5
    assert summary["tv_network"] < 0.1 < summary["tv_mean_policy"]
    saved = json.loads((tmp_path / "imitation" / "imitation.json").read_text())
    assert saved["agreement"] == 1.0 and len(pd.read_csv(tmp_path / "imitation" / "imitation.csv")) == 4


def test_imitation_needs_two_games(tmp_path: Path) -> None:
    run = _solved_run(tmp_path / "run", games=1)
    with pytest.raises(UsageError, match="at least two games"):
        imitate([run], tmp_path / "out", embed=_bag_of_words)
    assert not (tmp_path / "out").exists()


def test_minilm_embeds_similar_states_closer() -> None:
    embed = minilm_embedder()
    vectors = embed(["I propose we meet on Monday.", "How about a meeting on Monday?", "Bananas are yellow fruit."])
    assert vectors.shape == (3, 384)
    assert np.allclose((vectors**2).sum(axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def _meeting_run(path: Path, games: int) -> Path:
    """A solved meeting run's scenario.yaml and a policy.csv where CFR insists on whichever of Monday and Friday
    Alice values more: a choice the private values decide and the (constant) embedding cannot see."""
    from sandbox.core.scenario_files import load_scenario, parse_kind
    from sandbox.dialogue.run import build_game

    base = load_scenario(Path(__file__).parent.parent / "scenarios/dialogue/meeting.yaml", kind="dialogue")
    data = base.model_dump(mode="json")
    data["dialogue"]["scenarios"] = games
    scenario = parse_kind("dialogue", data, "meeting.yaml")
    game = build_game(scenario)
    rows = []
    for setup in range(games):
        values = game.setups[setup].data["values"][0]
        best = "Monday" if values.get("Monday", 0) >= values.get("Friday", 0) else "Friday"
        for instruction in ("Monday", "Friday", "any"):
            rows.append(
                {
                    "infostate": setup,
                    "player": 0,
                    "setup": setup,
                    "depth": 0,
                    "own_instructions": "",
                    "last_message": "",
                    "instruction": instruction,
                    "probability": float(instruction == best),
                    "infostate_text": f"player 0 (Alice) setup {setup}",
                }
            )
    path.mkdir(parents=True)
    (path / "scenario.yaml").write_text(
        Path(__file__)
        .parent.parent.joinpath("scenarios/dialogue/meeting.yaml")
        .read_text()
        .replace("scenarios: 1", f"scenarios: {games}")
    )
    pd.DataFrame(rows).to_csv(path / "policy.csv", index=False)
    return path


def test_parameter_features_see_what_the_embedding_does_not(tmp_path: Path) -> None:
    run = _meeting_run(tmp_path / "run", games=40)
    constant = lambda texts: np.ones((len(texts), 8))
    blind = imitate([run], tmp_path / "embedding", holdout=0.25, seed=0, steps=400, embed=constant)
    seeing = imitate(
        [run], tmp_path / "parameters", holdout=0.25, seed=0, steps=400, embed=constant, features="parameters"
    )
    both = imitate([run], tmp_path / "both", holdout=0.25, seed=0, steps=400, embed=constant, features="both")
    assert blind["agreement"] == blind["agreement_mean_policy"] < 0.9  # the embedding alone is the mean policy
    assert seeing["agreement"] >= 0.9 > seeing["agreement_mean_policy"]
    assert both["agreement"] >= 0.9 and seeing["features"] == "parameters"


def test_parameter_features_need_a_domain_with_parameters(tmp_path: Path) -> None:
    run = _solved_run(tmp_path / "run", games=4)  # no scenario.yaml
    with pytest.raises(UsageError, match="parameters"):
        imitate([run], tmp_path / "out", embed=_bag_of_words, features="parameters")
    with pytest.raises(UsageError, match="--features"):
        imitate([run], tmp_path / "out", embed=_bag_of_words, features="words")  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()
