"""The naming game (Ashery et al.; Baronchelli's minimal model): its rules and convergence (`rules`), the scripted
agents' dynamics (`dynamics`), settings (`spec`), the LLM plug-in (`llm`; its typed state and table rows in
`records`, its LLM players in `players`), the scripted plug-in (`scripted`) and its report (`report`: tables,
figures, the phase diagram)."""

from sandbox.population.registry import GameEntry

__all__ = ["GAME"]

GAME = GameEntry(
    kind="naming",
    title=(
        "The naming game: Ashery, Aiello & Baronchelli's among LLM agents, or the theory's scripted agents (the "
        "minimal naming game, the binary agreement model) with a committed minority"
    ),
    spec="sandbox.population.games.naming.spec:NamingSpec",
    plugins={
        "llm": "sandbox.population.games.naming.llm:LLMNamingGame",
        "scripted": "sandbox.population.games.naming.scripted:ScriptedNamingGame",
    },
    edits="state.agents.3.committed=B",
    conformance={
        "llm": "sandbox.population.games.naming.conformance:LLM",
        "scripted": "sandbox.population.games.naming.conformance:SCRIPTED",
    },
    headline="dominant_share",
    tables={
        "interactions": "interactions.csv",
    },
    fixed=("play", "prepared", "words"),
    scale={
        "members": [{"strategy": "llm", "share": 1.0}],
        "network": {"kind": "complete"},
        "game": {"kind": "naming", "stop_at_consensus": False, "update": "pairs"},
        "revision": {"rule": "memory"},
    },
    scale_on_actors=True,
)
