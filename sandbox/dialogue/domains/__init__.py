"""The dialogue domains: each a scenario block (`dialogue.domain`, tagged by `kind`) that builds a `Domain` and its
setups. The paper's three (meeting scheduling, fruit trading, debate) and a small instructed ultimatum game."""

from sandbox.dialogue.domains.debate import DebateConfig, DebateDomain
from sandbox.dialogue.domains.fruit import FruitConfig, FruitDomain
from sandbox.dialogue.domains.meeting import MeetingConfig, MeetingDomain
from sandbox.dialogue.domains.ultimatum import UltimatumConfig, UltimatumDomain

__all__ = [
    "DebateConfig",
    "DebateDomain",
    "FruitConfig",
    "FruitDomain",
    "MeetingConfig",
    "MeetingDomain",
    "UltimatumConfig",
    "UltimatumDomain",
]
