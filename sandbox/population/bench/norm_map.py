"""`sandbox bench norm-map`: does the norm map tell opposite norms apart and keep a norm's paraphrases together?

The held-out set (`norm_pairs.json`): six norms in three wordings each (selfish and altruistic, cooperate and defect,
give all and keep all), worded so that the opposites share their words. Its pairs: 27 opposite pairs (each wording
of a norm against each of its opposite's), which should land in different clusters, and 18 paraphrase pairs (the
wordings of one norm two by two), which should land in one. Both rates are measured three ways, in the same run:

* by the text alone (all-MiniLM-L6-v2, the map before issue 63: the baseline);
* by text and play (the default): the 18 texts are the fixed members of an ultimatum population on the embedded model
  (a ring of 18, one generation: each proposes twice and answers twice), and the map reads what each text's holder
  offered and accepted (`sandbox.population.norm_map.combined_distances`);
* by play where played (`features="play"`, `play_first_distances`), from the same run.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from sandbox.population.norm_map import Features

__all__ = ["bench_norm_map", "held_out", "map_clusters", "pair_rates", "played_clusters", "text_clusters"]


def held_out() -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """The held-out texts, each text's norm, and the opposite norms."""
    data = json.loads(resources.files("sandbox.population.bench").joinpath("norm_pairs.json").read_text())
    texts, norms = [], []
    for norm, wordings in data["norms"].items():
        texts += wordings
        norms += [norm] * len(wordings)
    return texts, norms, [tuple(pair) for pair in data["opposites"]]


def pair_rates(clusters: list[int], norms: list[str], opposites: list[tuple[str, str]]) -> dict[str, float]:
    """The share of opposite pairs in different clusters, and of paraphrase pairs in one, with their counts.

    >>> pair_rates([0, 0, 1, 1], ["a", "a", "b", "b"], [("a", "b")])
    {'opposites_apart': 1.0, 'opposite_pairs': 4, 'paraphrases_together': 1.0, 'paraphrase_pairs': 2}
    >>> pair_rates([0, 0, 0, 1], ["a", "a", "b", "b"], [("a", "b")])
    {'opposites_apart': 0.5, 'opposite_pairs': 4, 'paraphrases_together': 0.5, 'paraphrase_pairs': 2}
    """
    index = range(len(norms))
    opposite = [(i, j) for a, b in opposites for i in index for j in index if norms[i] == a and norms[j] == b]
    same = [(i, j) for i, j in itertools.combinations(index, 2) if norms[i] == norms[j]]
    return {
        "opposites_apart": float(np.mean([clusters[i] != clusters[j] for i, j in opposite])),
        "opposite_pairs": len(opposite),
        "paraphrases_together": float(np.mean([clusters[i] == clusters[j] for i, j in same])),
        "paraphrase_pairs": len(same),
    }


def text_clusters(texts: list[str]) -> list[int]:
    """Each text's cluster by its text alone (MiniLM, the map's threshold)."""
    from sandbox.population.norm_map import DEFAULT_THRESHOLD, _cached_minilm, _clusters, _unit

    vectors = _unit(np.asarray(_cached_minilm()(texts), dtype=float))
    return _clusters(vectors, DEFAULT_THRESHOLD).tolist()


def played_clusters(
    texts: list[str], out: Path, model: str = "embedded", models: dict[str, Any] | None = None
) -> tuple[list[int], Path]:
    """Each text's cluster by text and play, the texts played as the fixed members of an ultimatum population on
    `model` (or the model objects `models`, by role) in the run directory `out` (`map_clusters` reads the run
    again by other features)."""
    from sandbox.core.scenario_files import parse_kind
    from sandbox.population.run import run_population

    sampling = {"temperature": 0.0, "max_tokens": 64}
    scenario = parse_kind(
        "population",
        {
            "name": "norm-map-held-out",
            "seed": 0,
            "concurrency": 6,
            "models": {"user": {"spec": model, "sampling": sampling}, "meta": {"spec": model, "sampling": sampling}},
            "population": {
                "agents": len(texts),
                "generations": 1,
                "members": [{"strategy": t, "share": 1 / len(texts), "fixed": True} for t in texts],
                "network": {"kind": "ring"},
                "game": {"kind": "ultimatum", "currencies": ["dollars"], "amount": {"min": 10, "max": 20}},
                "revision": {"rule": "reflect"},
            },
        },
    )
    run = run_population(scenario, out, models=models)
    return map_clusters(run, texts), run


def map_clusters(run: Path, texts: list[str], features: Features = "text+play") -> list[int]:
    """Each text's cluster in the norm map of the held-out run `run` (`played_clusters`), by `features`."""
    from sandbox.base.files import read_csv
    from sandbox.population.norm_map import norm_map

    norms = read_csv(run / "norms.csv")
    mapped = norm_map(run, features=features).norms
    cluster_of = dict(zip(mapped["norm"], mapped["cluster"]))
    by_text = {str(t): int(cluster_of[n]) for n, t in zip(norms["norm"], norms["strategy"])}
    return [by_text[t] for t in texts]


def bench_norm_map(model: str = "embedded") -> dict[str, Any]:
    """The held-out set's rates by text alone and by text and play (`model` plays the texts)."""
    from sandbox.base.files import read_csv

    texts, norms, opposites = held_out()
    text_only = pair_rates(text_clusters(texts), norms, opposites)
    with tempfile.TemporaryDirectory() as tmp:
        clusters, run = played_clusters(texts, Path(tmp) / "run", model)
        played = pair_rates(clusters, norms, opposites)
        by_play = pair_rates(map_clusters(run, texts, "play"), norms, opposites)
        population = read_csv(run / "population.csv")
        offers = population.groupby("strategy")["offered_share"].mean()
    table = Table(title=f"Norm map on the held-out set ({len(texts)} texts; play: an ultimatum ring on {model})")
    for column in ("", "opposite pairs apart", "paraphrase pairs together"):
        table.add_column(column, justify="right")
    rows = (
        ("text alone (MiniLM; the baseline)", text_only),
        ("text and play (the default)", played),
        ("play where played (features='play')", by_play),
    )
    for name, rates in rows:
        table.add_row(
            name,
            f"{rates['opposites_apart']:.0%} of {rates['opposite_pairs']}",
            f"{rates['paraphrases_together']:.0%} of {rates['paraphrase_pairs']}",
        )
    Console().print(table)
    mean_offer = {
        norm: float(np.mean([offers.get(t, np.nan) for t, n in zip(texts, norms) if n == norm]))
        for norm in dict.fromkeys(norms)
    }
    Console().print("mean offered share by norm: " + ", ".join(f"{k} {v:.2f}" for k, v in mean_offer.items()))
    return {"text": text_only, "text_and_play": played, "play": by_play, "mean_offer": mean_offer, "clusters": clusters}
