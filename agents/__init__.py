"""The actors: norm-following users, and the SCAI assistant with its MetaLM."""

from agents.assistant import PolicyFollowingAssistant
from agents.contracts import UltimatumPlayer
from agents.meta import MetaLM
from agents.user import NormFollowingUser

__all__ = ["MetaLM", "NormFollowingUser", "PolicyFollowingAssistant", "UltimatumPlayer"]
