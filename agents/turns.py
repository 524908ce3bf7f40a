"""The turns every chat-model player takes: build the messages of a move, ask, re-ask.

Users and the assistant differ only in their system prompt and few-shot
examples; how a move is asked is shared here.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

import prompts
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.wrapper import acall
from sandbox.rules.ultimatum import Split, Stake


def with_feedback(messages: list[BaseMessage], feedback: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """Append each earlier illegal answer and the reason it was illegal."""
    for answer, error in feedback:
        messages.append(AIMessage(answer))
        messages.append(HumanMessage(prompts.render("ultimatum/reask.j2", error=error)))
    return messages


def propose_messages(
    system: SystemMessage,
    examples: Sequence[BaseMessage],
    stake: Stake,
    *,
    remark: bool,
    feedback: Sequence[tuple[str, str]] = (),
) -> list[BaseMessage]:
    """The conversation that asks for a proposal."""
    request = HumanMessage(prompts.render("ultimatum/propose.j2", stake=stake, remark=remark))
    return with_feedback([system, *examples, request], feedback)


def respond_messages(
    system: SystemMessage,
    examples: Sequence[BaseMessage],
    stake: Stake,
    proposal: str,
    split: Split,
    *,
    remark: bool,
    feedback: Sequence[tuple[str, str]] = (),
) -> list[BaseMessage]:
    """The conversation that asks whether to accept `proposal`."""
    prompt = prompts.render("ultimatum/respond.j2", proposal=proposal, split=split, stake=stake, remark=remark)
    return with_feedback([system, *examples, HumanMessage(prompt)], feedback)


async def ask(
    model: BaseChatModel, messages: list[BaseMessage], *, seed: int, call: CallInfo, constraint: Constraint | None
) -> str:
    """One call; the answer's text, stripped."""
    answer = await acall(model, messages, seed=seed, call=call, constraint=constraint)
    return str(answer.content).strip()
