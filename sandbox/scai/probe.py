"""Can the assistant follow a principle? `python -m sandbox.scai.probe [SPEC]`.

A fresh assistant proposes on one stake under each principle (the library of
first policies and the three library norms' texts), with the game's rules
stated and without them, and answers a 10% and a 40% offer. It separates
"the assistant cannot follow this principle" from "the MetaLM did not write
a principle it follows". Temperature 0, the embedded model unless SPEC says.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

import pandas as pd
from langchain_core.language_models import BaseChatModel

from agents.assistant import PolicyFollowingAssistant, library_policies
from sandbox.games.ultimatum import Stake, decision_constraint, parse_decision, parse_proposal, proposal_constraint
from sandbox.llm.contracts import CallInfo
from societies.norms import NORMS

STAKE = Stake(50, "apples")


def principles() -> list[str]:
    """The library of first policies, then the selfish, fair and altruistic norms' texts."""
    return library_policies() + [NORMS.get(name).text for name in ("selfish", "fair", "altruistic")]


async def probe(model: BaseChatModel, texts: Sequence[str], stake: Stake = STAKE) -> pd.DataFrame:
    """One row per principle and rules setting: the offered share, and the answers to a 10% and a 40% offer."""
    call = CallInfo(role="assistant", agent="assistant", step="probe")
    rows = []
    for rules in (False, True):
        for text in texts:
            assistant = PolicyFollowingAssistant(policy=text, model=model, rules=rules)
            proposal = await assistant.propose(stake, seed=1, call=call, constraint=proposal_constraint(stake, remark=False))
            row = {"rules": rules, "principle": text, "offered_share": parse_proposal(proposal, stake).offered_share()}
            for give in (round(0.1 * stake.amount), round(0.4 * stake.amount)):
                offer = f"For the {stake.amount} {stake.currency}, the proposer will get {stake.amount - give}, and the responder will get {give}."
                answer = await assistant.respond(stake, offer, parse_proposal(offer, stake), seed=1, call=call,
                                                 constraint=decision_constraint(remark=False))  # fmt: skip
                row[f"answers {give / stake.amount:.0%}"] = parse_decision(answer)
            rows.append(row)
    return pd.DataFrame(rows)


def main(argv: Sequence[str] = sys.argv[1:]) -> None:
    from sandbox.llm.resolve import ModelStack

    spec = argv[0] if argv else "embedded"
    model = ModelStack(cache=None, sinks=[], concurrency=1).for_role("assistant", spec, {"temperature": 0.0, "max_tokens": 64})
    with pd.option_context("display.max_colwidth", 70, "display.width", 200):
        print(asyncio.run(probe(model, principles())).to_string(index=False))


if __name__ == "__main__":
    main()
