"""The commons' conformance case (`sandbox.population.conformance.GameCase`): five LLM fishers who ask for 10 tons
and agree a limit (a scripted model's rule, for the test only)."""

from __future__ import annotations

import re

from sandbox.population.conformance import GameCase

__all__ = ["CASE"]


def _fisher(system: str, prompt: str) -> str:
    """Asks for 10 tons; in the chat the first speaker proposes 10 each and the next agrees and concludes."""
    if "how many tons of fish would you catch" in prompt:
        return "Answer: 10 tons"
    if "What would you say next" in prompt:
        conversation = (
            prompt.split("Conversation so far:")[1].split("Task:")[0] if "Conversation so far:" in prompt else ""
        )
        if conversation.count("\n-") <= 1:  # only the Mayor spoke
            return "Response: Let us each catch 10 tons.\nConversation conclusion by me: no\nNext speaker: Emma"
        return "Response: Agreed.\nConversation conclusion by me: yes\nNext speaker: John"
    if "Summarize" in prompt:
        return "The fishers agreed to catch 10 tons each."
    if "fishing limit" in prompt:
        proposed = re.search(r"Let us each catch (\d+) tons", prompt)
        return f"Answer: {proposed.group(1)}" if proposed else "Answer: N/A"
    return "I should remember the limit."


CASE = GameCase(
    block={
        "agents": 5,
        "generations": 3,
        "members": [{"strategy": "llm", "share": 1.0}],
        "game": {"kind": "commons"},
        "revision": {"rule": "memory"},
    },
    answer=_fisher,
    bad=(({"game": {"kind": "commons", "names": ["John", "Kate", "Mayor", "Emma", "Luke"]}}, "Mayor"),),
    summary=("months", "survival_months", "total_gain", "efficiency", "equality", "over_usage"),
    series=("stock", "left"),
    tables=("population.csv", "generations.csv", "talk.csv", "notes.csv"),
)
