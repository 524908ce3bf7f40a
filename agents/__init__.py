"""The actors: norm-following users, the SCAI assistant with its MetaLM, and the speakers of dialogue games."""

from agents.assistant import PolicyFollowingAssistant
from agents.contracts import UltimatumPlayer
from agents.dialogue import BaselineSpeaker, GuidedSpeaker, InstructedSpeaker
from agents.meta import MetaLM
from agents.user import NormFollowingUser

__all__ = ["BaselineSpeaker", "GuidedSpeaker", "InstructedSpeaker", "MetaLM", "NormFollowingUser",
           "PolicyFollowingAssistant", "UltimatumPlayer"]
