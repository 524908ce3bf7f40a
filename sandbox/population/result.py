"""`PopulationResult`: a finished population run read back (`RunResult.load(path)` or `sandbox.api.run`'s result),
with its game's figure (`plot`), its network at a few generations (`plot_network`) and what each agent held by
generation (`held`, a long table)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import pandas as pd
from matplotlib.figure import Figure

from sandbox.core.result import RunResult

if TYPE_CHECKING:
    from sandbox.viewer.report import NetworkView

__all__ = ["PopulationResult"]


class PopulationResult(RunResult):
    """A population run: its tables as any run's (`result.generations`, `result.population`), and its figures."""

    def plot(self) -> Figure:
        """The game's figure by generation (what the run wrote as its PNG: cooperation, names, donations ...)."""
        from sandbox.population.registry import plugin_for

        scenario = self.scenario
        return plugin_for(scenario.population.game)(scenario, None).figure(self.path)

    def plot_network(
        self, generations: list[int] | None = None, colour_by: Literal["cluster", "strategy"] = "cluster"
    ) -> Figure:
        """The network coloured by what each agent holds, at a few generations
        (`sandbox.population.report.plots.plot_network`)."""
        from sandbox.population.report.plots import plot_network

        return plot_network(self, generations, colour_by=colour_by)

    def network_view(self) -> NetworkView:
        """The network view of `sandbox view` (scrubber, play, legend, hover) for a notebook: shown inline, or saved
        with `.save("net.html")`; needs the viewer extra."""
        from sandbox.viewer.report import NetworkView, network_html

        page = network_html(self.path)
        if page is None:
            raise ValueError(f"{self.path}: no network view (no held.csv or population.csv with what agents hold)")
        return NetworkView(page)

    @property
    def held(self) -> pd.DataFrame:
        """What each agent held at the start (generation -1) and after each generation: generation, agent, label
        (`sandbox.population.held.held_frame`)."""
        from sandbox.population.held import held_frame

        return held_frame(self.path)
