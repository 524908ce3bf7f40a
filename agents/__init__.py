"""The actors: norm-following users (the assistant and its MetaLM join with SCAI)."""

from agents.contracts import UltimatumPlayer
from agents.user import NormFollowingUser

__all__ = ["NormFollowingUser", "UltimatumPlayer"]
