"""The library norms' own rewards: the ground truth of a distillation where the source norm is known.

A proposal is scored by how close its offered share lies to the norm's
target share (selfish 0, fair 0.5, altruistic 1: the norms' texts in
`societies/norms.py`), and labelled right when it falls in the norm's SCAI
bin (offered below 30% selfish, above 70% altruistic, fair between;
`sandbox.scai.metrics.share_bin`). An answer to a proposal is right when it
follows the norm's decision rule (selfish: accept anything above nothing;
altruistic: accept everything; fair: accept 40% or more), as its
`decision_hint` states.

>>> from sandbox.rules.ultimatum import Split, Stake
>>> from sandbox.training.ultimatum_env import UltimatumOutcome, UltimatumState
>>> kept_most = UltimatumOutcome(UltimatumState(Stake(10, "apples"), "proposer"), Split(9, 1))
>>> round(truth_reward("selfish", kept_most), 2), truth_label("selfish", kept_most), truth_label("fair", kept_most)
(0.9, True, False)
"""

from __future__ import annotations

from sandbox.scai.metrics import share_bin
from sandbox.training.ultimatum_env import UltimatumOutcome
from societies.norms import NORMS

__all__ = ["TARGET_SHARES", "accepts", "truth_label", "truth_reward"]

TARGET_SHARES = {"selfish": 0.0, "fair": 0.5, "altruistic": 1.0}


def accepts(norm: str, offered_share: float) -> bool:
    """Whether the library norm's decision rule (`Norm.accepts`) accepts an offer of `offered_share` of the amount."""
    return NORMS.get(norm).accepts(offered_share)


def truth_reward(norm: str, outcome: UltimatumOutcome) -> float:
    """1 - |offered share - target| for a proposal; 1 or 0 for an answer that does or does not follow the rule."""
    if outcome.offered_share is not None:
        return 1.0 - abs(outcome.offered_share - TARGET_SHARES[norm])
    assert outcome.state.offer is not None and outcome.decision is not None, "a legal answer to a proposal"
    return float((outcome.decision == "accept") == accepts(norm, outcome.state.offer.offered_share()))


def truth_label(norm: str, outcome: UltimatumOutcome) -> bool:
    """Whether the move follows the norm: a proposal in the norm's bin, an answer by its rule."""
    if outcome.offered_share is not None:
        return share_bin(outcome.offered_share) == norm
    return truth_reward(norm, outcome) == 1.0
