"""The actors: norm-following users, the SCAI assistant with its MetaLM, the speakers of dialogue games, and the
solver-guided society members."""

from agents.assistant import PolicyFollowingAssistant
from agents.dialogue import BaselineSpeaker, GuidedSpeaker, InstructedSpeaker
from agents.guided_member import GuidedMember
from agents.meta import MetaLM
from agents.user import NormFollowingUser
from sandbox.rules.ultimatum import UltimatumPlayer

__all__ = [
    "BaselineSpeaker",
    "GuidedMember",
    "GuidedSpeaker",
    "InstructedSpeaker",
    "MetaLM",
    "NormFollowingUser",
    "PolicyFollowingAssistant",
    "UltimatumPlayer",
]
