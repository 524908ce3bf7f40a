"""Norm maps: where the norms of an LLM population lie, how many kinds there are, and how they move.

Each norm version of `norms.csv` is embedded with all-MiniLM-L6-v2
(`sandbox.llm.embeddings`; the shared opening "My strategy will be" is
dropped first, as every text has it) and the versions are clustered by
average-linkage agglomerative clustering (SciPy) on cosine distance, cut at
`threshold`; where the game records what the holders of a norm did (offers,
acceptances, cooperation, donations: `PLAY`), a pair's distance is the larger
of its texts' and its play's (`combined_distances`), so that opposite norms
the embedding reads alike are told apart by their play (`features="play"`:
play alone where played, so paraphrases played alike join too;
`features="text"`: the text alone, as before issue 63). A cluster is named by its most central text (the member with
the highest mean similarity to the others); texts as central as each other
but for rounding (the two of a two-text cluster always are) are told apart
by the agents holding them over the run, the most first, then by the first
seen (`sandbox.base.rounding`), so that another machine's last digits never
rename a cluster. Per generation, from each
agent's norm in `population.csv`:

* the share of agents in each cluster (`cluster_shares.csv`);
* diversity: the number of clusters held, their entropy (bits), and the
  mean pairwise cosine distance between the agents' norms;
* drift: the cosine distance of the generation's mean norm from the first
  generation's (0 at the start; it grows as the population's norms move);
  spread: the mean distance of the agents' norms from their own
  generation's mean (it falls as the population converges).

Files: `clusters.csv` (cluster, name, versions, agents in the last
generation), `norm_clusters.csv` (norm id, cluster), `cluster_shares.csv`,
`norm_diversity.csv`, `norm_map.png`. Shares and diversity are written at
six decimals: the embeddings are float32, and their seventh digit follows
the machine's kernels (`sandbox.engine.table_check` compares them within
that). A sentence embedding reads topic and
wording better than numbers and negation, so read the clusters with their
names. Measured (the texts after "My strategy will be"): three paraphrases
of "give half to every recipient" lie 0.22 to 0.33 apart, and "never give
anything" and "give everything I have" 0.26 apart.
"""

from __future__ import annotations

import functools
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from sandbox.base.files import read_csv
from sandbox.base.rounding import best
from sandbox.base.words import word_diff
from sandbox.llm.embeddings import Embedder

__all__ = [
    "DEFAULT_THRESHOLD",
    "PLAY",
    "NormMap",
    "combined_distances",
    "entropy_bits",
    "norm_history",
    "norm_map",
    "norm_map_summary",
    "play_distances",
    "play_first_distances",
    "play_of_norms",
    "write_norm_map",
]

DEFAULT_THRESHOLD = 0.35
PREFIX = "my strategy will be"
# what the agents holding a norm did, each a share in [0, 1] (population.csv's, where the game records it)
PLAY = ("offered_share", "acceptance", "cooperation", "mean_donated_share")
Features = Literal["text+play", "text", "play"]


@dataclass(frozen=True)
class NormMap:
    """A run's norm map (each table as written to the run directory)."""

    clusters: pd.DataFrame  # cluster, name, versions, agents_last
    norms: pd.DataFrame  # norm, cluster
    shares: pd.DataFrame  # generation x cluster: share of the agents
    diversity: pd.DataFrame  # generation, clusters, entropy_bits, mean_pairwise_distance, drift, spread


def _core(text: str) -> str:
    text = str(text).strip()
    return text[len(PREFIX) :].strip() if text.lower().startswith(PREFIX) else text


def _labels(tree: np.ndarray, threshold: float) -> np.ndarray:
    """A linkage tree cut at `threshold` as cluster labels 0..k-1, the largest cluster first (ties: the one holding
    the lowest row first)."""
    from scipy.cluster.hierarchy import fcluster

    raw = fcluster(tree, t=threshold, criterion="distance")
    order = sorted(set(raw), key=lambda c: (-int((raw == c).sum()), int(np.argmax(raw == c))))
    return np.array([order.index(c) for c in raw], dtype=np.int64)


def _clusters(vectors: np.ndarray, threshold: float) -> np.ndarray:
    """Cluster labels of unit vectors by average linkage on cosine distance (`_labels`)."""
    if len(vectors) == 1:
        return np.zeros(1, dtype=np.int64)
    from scipy.cluster.hierarchy import linkage

    return _labels(linkage(vectors, method="average", metric="cosine"), threshold)


def _clusters_of_distances(distances: np.ndarray, threshold: float) -> np.ndarray:
    """`_clusters` from a square matrix of distances (average linkage, cut at `threshold`)."""
    if len(distances) == 1:
        return np.zeros(1, dtype=np.int64)
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    square = np.clip((distances + distances.T) / 2, 0.0, None)
    np.fill_diagonal(square, 0.0)
    return _labels(linkage(squareform(square, checks=False), method="average"), threshold)


def play_of_norms(population: pd.DataFrame, ids: list[int]) -> np.ndarray:
    """What the agents holding each norm (`ids`, in order) did: the mean of each `PLAY` column over the
    agent-generations that held it (NaN where none did, or the game records no such column): (norms, len(PLAY))."""
    found = np.full((len(ids), len(PLAY)), np.nan)
    columns = [c for c in PLAY if c in population.columns]
    if not columns or "norm" not in population.columns:
        return found
    rows = population.dropna(subset=["norm"]).assign(norm=lambda f: f["norm"].astype(int))
    values = rows[["norm", *columns]].apply(pd.to_numeric, errors="coerce").groupby("norm").mean()
    index = {n: i for i, n in enumerate(ids)}
    for norm, row in values.iterrows():
        if int(norm) in index:
            for column in columns:
                found[index[int(norm)], PLAY.index(column)] = row[column]
    return found


def play_distances(play: np.ndarray) -> np.ndarray:
    """Between every two norms, the mean absolute difference of what they did over the measures both have (NaN
    where they share none): 0 for the same play, 1 for opposite shares.

    >>> play_distances(np.array([[0.1, np.nan], [0.9, 1.0], [0.2, 0.0]])).round(2).tolist()
    [[0.0, 0.8, 0.1], [0.8, 0.0, 0.85], [0.1, 0.85, 0.0]]
    """
    gaps = np.abs(play[:, None, :] - play[None, :, :])
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a pair that shares no measure: NaN, said so
        return np.nanmean(gaps, axis=2)


def combined_distances(vectors: np.ndarray, play: np.ndarray) -> np.ndarray:
    """Each pair of norms' distance: the larger of their texts' cosine distance and their play's distance, where
    both were played (the text's alone elsewhere). So play only tells norms apart: two texts a sentence embedding
    puts close ("be selfish ...", "be altruistic ...": 0.14 apart) are apart when their holders offered 0.1 and 0.9;
    two texts apart stay apart whatever their play (a few episodes may play alike by chance)."""
    text = 1.0 - vectors @ vectors.T
    played = play_distances(play)
    return np.where(np.isfinite(played), np.maximum(text, np.nan_to_num(played)), text)


def play_first_distances(vectors: np.ndarray, play: np.ndarray) -> np.ndarray:
    """Each pair of norms' distance by their play where both were played, by their texts' cosine distance elsewhere
    (`features="play"`): two norms are one kind when their holders act alike, whatever their words. So paraphrases
    that a sentence embedding puts apart (two wordings of "be selfish": 0.42) join when played alike, and opposites
    join too when played alike: use it where the players follow their norms (an endpoint model), not where they
    ignore them (the embedded 1.5B model, `sandbox bench norm-map`)."""
    text = 1.0 - vectors @ vectors.T
    played = play_distances(play)
    return np.where(np.isfinite(played), played, text)


def _unit(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum()) + 0.0


def _mean_pairwise(vectors: np.ndarray) -> float:
    """The mean cosine distance over the pairs of rows (unit vectors), from their sum: the pairs' similarities sum
    to (|s|^2 - n) / 2, so no n x n matrix is made (at 10,000 agents that matrix and its indices took 3 GB).

    >>> v = _unit(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    >>> round(_mean_pairwise(v), 6) == round(float(np.mean([1 - v[i] @ v[j] for i, j in ((0, 1), (0, 2), (1, 2))])), 6)
    True
    """
    n = len(vectors)
    if n < 2:
        return 0.0
    total = vectors.sum(axis=0)
    return float(1.0 - (total @ total - n) / (n * (n - 1)))


def norm_map(
    run: str | Path,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    embed: Embedder | None = None,
    features: Features = "text+play",
) -> NormMap:
    """The norm map of an LLM population run (`embed`: texts to unit vectors; MiniLM by default). `features`:
    cluster by what a norm says and what its holders did (`text+play`, the default: a sentence embedding reads the
    topic, not the stance, and puts "be selfish" and "be altruistic" 0.14 apart; play only splits), by what its
    holders did where they played it (`play`: play joins paraphrases too, so it suits players that follow their
    norms; `play_first_distances`), or by its text alone (`text`, the map before issue 63)."""
    if not 0 < threshold < 2:
        raise ValueError(f"threshold is a cosine distance in (0, 2), not {threshold}")
    run = Path(run)
    norms = read_csv(run / "norms.csv")
    # the columns read (not the texts, which norms.csv holds once): a million agents' table in a fraction of the time
    population = read_csv(run / "population.csv", usecols=lambda c: c in ("generation", "norm", *PLAY))
    ids = norms["norm"].astype(int).tolist()
    texts = [_core(t) for t in norms["strategy"]]
    unique = list(dict.fromkeys(texts))  # each text embedded once: agents often write the same one
    if len(unique) == 1:  # one text is one cluster at distance 0 from itself: no model to load
        vectors, labels = np.ones((len(ids), 1)), np.zeros(len(ids), dtype=np.int64)
    else:
        embed = _cached_minilm() if embed is None else embed
        embedded = _unit(np.asarray(embed(unique), dtype=float))
        where = {text: i for i, text in enumerate(unique)}
        vectors = embedded[[where[t] for t in texts]]
        play = play_of_norms(population, ids) if features != "text" else np.full((len(ids), 1), np.nan)
        if np.isfinite(play).any():
            distances = (play_first_distances if features == "play" else combined_distances)(vectors, play)
            labels = _clusters_of_distances(distances, threshold)
        else:  # no play measured (or asked for): the text alone, as before
            labels = _clusters(vectors, threshold)
    by_id = dict(zip(ids, range(len(ids))))
    held = population.dropna(subset=["norm"]).assign(norm=lambda f: f["norm"].astype(int))
    holders: Counter[str] = Counter()  # agent-generations holding each text
    for n, count in held["norm"].value_counts().items():
        holders[texts[by_id[int(n)]]] += int(count)
    names = []
    for c in range(labels.max() + 1):
        members = np.flatnonzero(labels == c)
        centrality = vectors[members] @ vectors[members].sum(axis=0)  # the highest mean similarity
        centre = members[best(centrality, key=lambda k: (-holders[texts[members[k]]], members[k]))]
        names.append(str(norms["strategy"].iloc[centre]))
    held = held.assign(cluster=labels[held["norm"].map(by_id).to_numpy()].astype(np.int64))
    last = held[held["generation"] == held["generation"].max()]
    clusters = pd.DataFrame(
        {
            "cluster": range(len(names)),
            "name": names,
            "versions": np.bincount(labels, minlength=len(names)),
            "agents_last": np.bincount(last["cluster"], minlength=len(names)),
        }
    )
    shares = (
        held.groupby(["generation", "cluster"])
        .size()
        .unstack(fill_value=0)
        .reindex(columns=range(len(names)), fill_value=0)
    )
    shares = shares.div(shares.sum(axis=1), axis=0)
    first = None
    rows = []
    for g, group in held.groupby("generation"):
        v = vectors[[by_id[n] for n in group["norm"]]]
        centre = _unit(v.mean(axis=0))
        first = centre if first is None else first
        counts = np.bincount(group["cluster"], minlength=len(names))
        rows.append(
            {
                "generation": int(g),
                "clusters": int((counts > 0).sum()),
                "entropy_bits": _entropy(counts),
                "mean_pairwise_distance": _mean_pairwise(v),
                "drift": float(1.0 - centre @ first),
                "spread": float((1.0 - v @ centre).mean()),
            }
        )
    diversity = pd.DataFrame(rows).round(6)
    measured = ["entropy_bits", "mean_pairwise_distance", "drift", "spread"]
    diversity[measured] += 0.0  # -0.0, a rounding error of -1e-17 rounded, is written as 0.0
    shares.columns = [f"cluster {c}" for c in shares.columns]
    return NormMap(clusters, pd.DataFrame({"norm": ids, "cluster": labels}), shares.round(6).reset_index(), diversity)


@functools.cache
def _cached_minilm() -> Embedder:
    """One MiniLM per process (loading it takes seconds)."""
    from sandbox.llm.embeddings import minilm_embedder

    return minilm_embedder()


def write_norm_map(
    run: str | Path,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    embed: Embedder | None = None,
    features: Features = "text+play",
) -> NormMap:
    """Compute the norm map and write its tables and `norm_map.png` into the run directory."""
    from sandbox.population.report.plots import plot_norm_map

    run = Path(run)
    result = norm_map(run, threshold=threshold, embed=embed, features=features)
    result.clusters.to_csv(run / "clusters.csv", index=False)
    result.norms.to_csv(run / "norm_clusters.csv", index=False)
    result.shares.to_csv(run / "cluster_shares.csv", index=False)
    result.diversity.to_csv(run / "norm_diversity.csv", index=False)
    plot_norm_map(result).savefig(run / "norm_map.png", dpi=120)
    return result


def entropy_bits(counts: list[int]) -> float:
    """The entropy in bits of a distribution given by counts (0 for one kind).

    >>> entropy_bits([2, 2])
    1.0
    >>> entropy_bits([4])
    0.0
    """
    return _entropy(np.asarray(counts, dtype=float))


def norm_history(run: str | Path, agent: int) -> pd.DataFrame:
    """One agent slot's norm over the generations: generation, name, norm id, text, and the word diff against the
    text it held before (empty where the norm did not change)."""
    population = read_csv(Path(run) / "population.csv")
    rows = population[population["agent"] == agent].sort_values("generation")
    if rows.empty:
        raise ValueError(f"agent {agent} is not in {run}")
    out, before = [], None
    for r in rows.itertuples():
        text = str(r.strategy)
        out.append(
            {
                "generation": int(r.generation),
                "name": r.name,
                "norm": r.norm,
                "strategy": text,
                "diff": "" if before is None else word_diff(before, text),
            }
        )
        before = text
    return pd.DataFrame(out)


def norm_map_summary(path: Path) -> dict[str, object]:
    """Write the run's norm map (`write_norm_map`); its headline figures for the summary."""
    from sandbox.base.errors import ModelUnavailableError

    try:
        result = write_norm_map(path)
    except ModelUnavailableError as error:  # MiniLM not installed: the run stands, without its map
        return {"norm_map": f"not made: {error}"}
    d = result.diversity
    return {
        "norm_clusters": len(result.clusters),
        "norm_clusters_by_generation": d["clusters"].tolist(),
        "norm_entropy_bits_by_generation": d["entropy_bits"].round(4).tolist(),
        "norm_drift_by_generation": d["drift"].round(4).tolist(),
        "dominant_norm": str(result.clusters.sort_values("agents_last", ascending=False)["name"].iloc[0]),
    }
