"""The `society:` block of a scenario: norms and manners in proportions, the interaction network and its
matching, and solver-guided members (strict pydantic; every error names its field, e.g. `society.norms[1].proportion`).

The society engine's scenario (`sandbox.society.scenario.SocietyScenario`) holds one; the populations and networks
of `societies` are built from it.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sandbox.base.scenario_model import StrictModel

__all__ = ["GuidedMembers", "MannerShare", "Matching", "Network", "NormShare", "Society"]


class NormShare(StrictModel):
    """A norm held by a share of the population: a library name, or any text with a label."""

    norm: str = Field(..., min_length=1, description="Library name (selfish, altruistic, fair) or a label.")
    text: str | None = Field(None, min_length=1, description="The norm's text, for a norm not in the library.")
    proportion: float = Field(..., ge=0.0, le=1.0, description="Share of the population holding it.")

    @model_validator(mode="after")
    def _resolvable(self) -> NormShare:
        from societies.norms import NORMS

        if self.text is None and self.norm not in NORMS:
            raise ValueError(
                f"unknown norm {self.norm!r} (library: {', '.join(NORMS.names())}); give `text:` to define a new one"
            )
        return self


class MannerShare(StrictModel):
    """A manner of speaking held by a share of the population."""

    manner: str = Field(..., min_length=1, description="Library name (neutral, rude, sycophantic) or a label.")
    text: str | None = Field(None, min_length=1, description="The manner's text, for one not in the library.")
    proportion: float = Field(..., ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _resolvable(self) -> MannerShare:
        from societies.manners import MANNERS

        if self.text is None and self.manner not in MANNERS:
            raise ValueError(
                f"unknown manner {self.manner!r} (library: {', '.join(MANNERS.names())}); "
                "give `text:` to define a new one"
            )
        return self


class Network(StrictModel):
    """The interaction network: who may meet whom."""

    kind: Literal["complete", "ring", "ring_lattice", "grid", "small_world", "barabasi_albert", "edges"] = Field(
        "complete",
        description="complete: everyone may meet everyone (well-mixed); ring: a cycle; ring_lattice: a ring where "
        "each node meets its k nearest; grid: a square lattice (`neighbourhood`, `periodic`); small_world: "
        "Watts-Strogatz (k, p); barabasi_albert: a scale-free graph (m edges per new node, mean degree 2m); "
        "edges: the `edges` list.",
    )
    k: int = Field(4, ge=2, description="small_world, ring_lattice: each node's nearest neighbours (even).")
    p: float = Field(0.1, ge=0.0, le=1.0, description="small_world: rewiring probability.")
    m: int = Field(2, ge=1, description="barabasi_albert: edges from each new node to existing ones.")
    neighbourhood: Literal["von_neumann", "moore"] = Field(
        "von_neumann", description="grid: 4 neighbours (von Neumann) or 8 (Moore, as Nowak & May 1992)."
    )
    periodic: bool = Field(
        True, description="grid: wrap the edges around (a torus), so every node has the same degree."
    )
    edges: list[tuple[int, int]] | None = Field(None, description="edges: the list of (agent, agent) pairs.")

    def size_problem(self, nodes: int) -> str | None:
        """What makes this network impossible for `nodes` agents (None when it fits), checked when a file is read:
        a square grid, k and m below the size, edges inside 0..nodes-1 and no edge from an agent to itself."""
        if self.kind == "grid" and (round(nodes**0.5) ** 2 != nodes or nodes < 9):
            return f"network.kind grid needs a square number of agents (side x side, at least 9), not {nodes}"
        if self.kind in ("ring_lattice", "small_world") and self.k >= nodes:
            return f"network.k ({self.k}) must be smaller than the {nodes} agents"
        if self.kind == "barabasi_albert" and self.m >= nodes:
            return f"network.m ({self.m}) must be smaller than the {nodes} agents"
        for a, b in self.edges or []:
            for node in (a, b):
                if not 0 <= node < nodes:
                    return f"network edge ({a}, {b}) names agent {node}, outside 0..{nodes - 1}"
            if a == b:
                return f"network edge ({a}, {b}) joins an agent to itself"
        return None

    @model_validator(mode="after")
    def _edges_only_for_edges(self) -> Network:
        if self.kind == "edges" and not self.edges:
            raise ValueError("kind 'edges' needs a non-empty `edges` list")
        if self.kind != "edges" and self.edges is not None:
            raise ValueError(f"`edges` is only read when kind is 'edges', not {self.kind!r}")
        if self.kind in ("ring_lattice", "small_world") and self.k % 2:
            raise ValueError(f"k must be even for {self.kind} (k/2 neighbours on each side), not {self.k}")
        return self


class Matching(StrictModel):
    """How pairs are drawn along the network's edges each epoch."""

    kind: Literal["maximal", "random"] = Field(
        "maximal",
        description="maximal: rounds of random maximal matchings (each agent plays at most once a round); "
        "random: each interaction picks an edge at random.",
    )


class GuidedMembers(StrictModel):
    """Solver-guided members (`society.guided`): agents whose instruction for each move is drawn from a solved
    dialogue policy, beside the users of fixed norms (and SCAI's assistant).

    The policy is that of the instructed ultimatum game (`dialogue.domain.kind: ultimatum`, `sandbox solve`): a
    proposer style (e.g. generous, greedy, any) and a responder style (tough, lenient, any). Each move, a member
    draws its style from the solver's policy at the state it is in, and the society's user model plays the solved
    game's prompt under that style with the society's stake. The network's nodes are the users (0..size-1), then the
    guided members (size..size+count-1); member `n` is agent `guided-<n>`.
    """

    count: int = Field(..., ge=1, le=1_000_000, description="Guided members beside the users.")
    policy: str | None = Field(
        None,
        min_length=1,
        description="A `sandbox solve` run directory of the instructed ultimatum game (or its policy.csv), relative "
        "to this file.",
    )
    solve: str | dict[str, Any] | None = Field(
        None,
        description="A dialogue scenario of the instructed ultimatum game (a file relative to this one, or its "
        "mapping), solved into the run's guided/ folder before the society plays (resumed with the run). Its players "
        "and judge are the society's user model unless it sets `models:`.",
    )
    play: Literal["solver", "any"] = Field(
        "solver",
        description="solver: each move's style drawn from the solved policy; any: every move under the baseline "
        "style \"any\" (the paper's unguided LLM), the control that tells what the solver's guidance changes.",
    )
    responder: Literal["nearest", "mean"] = Field(
        "nearest",
        description="How a responder's state is found in the solved tree, whose proposals are not the society's. "
        "nearest: the policy of the tree's responder states whose proposal offered the share nearest the one "
        "answered (averaged over ties); mean: the mean responder policy (what `sandbox play` falls back to).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> GuidedMembers:
        if (self.policy is None) == (self.solve is None):
            raise ValueError(
                "give the solved policy (policy: a `sandbox solve` run) or the game to solve (solve:), one of them"
            )
        return self


def _check_proportions(items: list[Any], field: str) -> None:
    total = math.fsum(item.proportion for item in items)
    if not math.isclose(total, 1.0, abs_tol=1e-6):
        raise ValueError(f"{field} proportions add up to {total:g}, not 1")
    labels = [getattr(item, field.rstrip("s")) for item in items]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise ValueError(f"{field} named twice: {', '.join(duplicates)}")


class Society(StrictModel):
    """The population, its norms and manners by proportion, its network and matching."""

    size: int = Field(..., ge=2, le=1_000_000, description="Number of users.")
    norms: list[NormShare] = Field(..., min_length=1)
    manners: list[MannerShare] = Field(default_factory=lambda: [MannerShare(manner="neutral", proportion=1.0)])
    network: Network = Field(default_factory=Network)
    matching: Matching = Field(default_factory=Matching)
    guided: GuidedMembers | None = Field(None, description="Solver-guided members beside the users; none: users only.")

    def members(self) -> int:
        """The network's nodes: the users, then the guided members."""
        return self.size + (self.guided.count if self.guided is not None else 0)

    @field_validator("norms", "manners")
    @classmethod
    def _proportions(cls, items: list[Any], info: Any) -> list[Any]:
        _check_proportions(items, info.field_name)
        return items

    @model_validator(mode="after")
    def _network_fits(self) -> Society:
        problem = self.network.size_problem(self.members())
        if problem:
            raise ValueError(problem)
        return self
