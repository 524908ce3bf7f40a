"""What made a population run, in a line: the caption of its network view and the title of its figures (scenario,
game, agents, network with its parameters, revision rule, seed, and the model where LLM agents play)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from sandbox.base.files import read_yaml

__all__ = ["caption", "figure_title"]


def caption(run: Path) -> str:
    """What made the run, in a line: scenario, game, agents, network, revision rule, seed, model."""
    scenario = read_yaml(run / "scenario.yaml")
    block = scenario.get("population", {})
    game = block.get("game", {})
    kind = game.get("kind", "matrix")
    played = game.get("name") if kind == "matrix" else None
    network = block.get("network", {}) or {}
    kind_of_net = str(network.get("kind", "complete"))
    shown = {"ring_lattice": ("k",), "small_world": ("k", "p"), "barabasi_albert": ("m",)}.get(kind_of_net, ())
    net = ", ".join([kind_of_net] + [f"{k}={network[k]}" for k in shown if k in network])
    rule = (block.get("revision") or {}).get("rule", "")
    model = (scenario.get("models") or {}).get("user")
    spec = model.get("spec") if isinstance(model, dict) else model
    llm = any(m.get("strategy") == "llm" or "norm" in m for m in block.get("members", []) if isinstance(m, dict))
    parts = [
        scenario.get("name", run.name),
        f"{kind} game" + (f" ({played})" if played else ""),
        f"{block.get('agents')} agents on a {net} network",
        f"revision {rule}" if rule else "",
        f"seed {scenario.get('seed', 0)}",
        f"model {spec or 'embedded'}" if llm or kind in ("donor", "ultimatum", "commons") else "",
    ]
    return " · ".join(p for p in parts if p)


def figure_title(run: Path, width: int = 100) -> str:
    """`caption(run)` wrapped for a figure's title (lines of at most `width` characters)."""
    return textwrap.fill(caption(run), width, break_on_hyphens=False)
