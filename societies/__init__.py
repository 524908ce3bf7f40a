"""Populations: norm and manner libraries, composition by proportions, networks, matching."""

from societies.contracts import Manner, Norm, Pair, UserProfile
from societies.manners import MANNERS, resolve_manner
from societies.network import NETWORKS, InteractionNetwork, build_network, match
from societies.norms import NORMS, resolve_norm
from societies.population import build_population, largest_remainder_counts

__all__ = [
    "MANNERS",
    "NETWORKS",
    "NORMS",
    "InteractionNetwork",
    "Manner",
    "Norm",
    "Pair",
    "UserProfile",
    "build_network",
    "build_population",
    "largest_remainder_counts",
    "match",
    "resolve_manner",
    "resolve_norm",
]
