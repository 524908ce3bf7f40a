"""A population run's page in `sandbox view` and `sandbox report`: the game's figures by generation (whichever
of cooperation, donations, catches or offers the game records), the network over generations
(`sandbox.population.report.network`), the norms and their revisions, the tables."""

from __future__ import annotations

from pathlib import Path

from sandbox.population.report.network import fork_differences, network_data
from sandbox.viewer.sections import Chart, Network, Section, Table

BY_GENERATION = (
    "cooperation",
    "mean_donated_share",
    "mean_offered_share",
    "acceptance_rate",
    "over_usage",
    "survivor_gap",
    "illegal_rate",
)


def view(path: Path) -> list[Section]:
    return [
        Network(network_data, title="Network over generations", fork=fork_differences),
        Chart("generations.csv", x="generation", y=BY_GENERATION, title="By generation"),
        Chart(
            "generations.csv",
            x="generation",
            y=("mean_payoff", "mean_final_resources", "mean_score", "stock"),
            title="Payoffs and resources by generation",
        ),
        Table("generations.csv", title="Generations"),
        Table("norms.csv", title="Norms (every version, with its lineage)"),
        Table("revisions.csv", title="Revisions"),
        Table("population.csv", title="Population"),
        Table("donations.csv", title="Donations"),
        Table("episodes.csv", title="Episodes"),
        Table("talk.csv", title="Talk"),
        Table("edges.csv", title="Network edges"),
    ]
