"""The MetaLM: reads the meta-principle, observed interactions and the previous policy; writes the next policy.

This is the verbal-reinforcement step of Social Contract AI (Fränken et al.,
Appendix C): one draw from the MetaLM is the assistant's policy for the next
epoch. An answer that is not a usable policy is asked again with the reason;
if it still is not, the revision is recorded as illegal and the previous
policy stays (the record says so; nothing is guessed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

import prompts
from agents.assistant import KEEP_WORDS
from agents.turns import ask
from sandbox.llm.contracts import CallInfo, Constraint

_PREFIX = "Revised principle:"
_LABEL = re.compile(r"^\s*(?:\*\*)?\s*(?:revised|new|updated|flex-policy agents?'?s?)?\s*principle\s*(?:\*\*)?\s*:\s*", re.I)
_MARKER = re.compile(r"\n\s*(?:\*\*)?\s*revised principle\s*(?:\*\*)?\s*:", re.I)
MIN_CHARS, MAX_CHARS = 12, 600

# The prefill names the answer; the grammar keeps it to one line of text.
POLICY_CONSTRAINT = Constraint(prefix=_PREFIX, grammar='root ::= " " [A-Za-z"\'] [^\\n]*', regex=r"Revised principle: [^\n]+")

# With the digest, the answer starts from what each side keeps, in the assistant's own words
# (`KEEP_WORDS`), read off the digest's numbers; the model writes the principle from there.
_OBSERVATION = "Observation: of what they have, the fixed-policy agents keep {fixed} and the flex-policy agents keep {flex}."


def keep_word(kept: float) -> str:
    """The assistant's word for keeping share `kept` of the amount.

    >>> keep_word(0.96), keep_word(0.5), keep_word(0.0)
    ('everything', 'half', 'nothing')
    """
    return next(word for word, low, high in KEEP_WORDS if low <= kept <= high)


def observed_constraint(numbers: dict[str, Any]) -> Constraint:
    """The policy constraint behind a prefilled observation of what each side keeps (digest mode)."""
    fixed, flex = numbers["fixed"].gave, numbers["flex"].gave
    if fixed is None or flex is None:
        return POLICY_CONSTRAINT
    observation = _OBSERVATION.format(fixed=keep_word(1 - fixed), flex=keep_word(1 - flex))
    return replace(POLICY_CONSTRAINT, prefix=f"{observation}\n{_PREFIX}", regex=f"{re.escape(observation)}\n{POLICY_CONSTRAINT.regex}")


class PolicyError(ValueError):
    """An answer that is not a usable policy; the message says why, for the re-ask."""


def parse_policy(text: str) -> str:
    """The policy in a MetaLM answer: its label and quotes removed, whitespace collapsed.

    >>> parse_policy('Revised principle: "Always put others first."')
    'Always put others first.'

    Raises:
        PolicyError: the answer is empty, too short, too long, or holds no words.
    """
    marker = _MARKER.search(text)  # an answer that reasons first (the digest's observation)
    policy = _LABEL.sub("", text[marker.start() :] if marker else text.strip(), count=1)
    policy = " ".join(policy.split()).strip().strip('"').strip("'").strip()
    if len(policy) < MIN_CHARS or not re.search(r"[A-Za-z]{3}", policy):
        raise PolicyError("the principle is empty or too short")
    if len(policy) > MAX_CHARS:
        raise PolicyError(f"the principle is longer than {MAX_CHARS} characters; keep it short")
    return policy


@dataclass(frozen=True)
class Interaction:
    """One observed interaction, as the MetaLM reads it."""

    episode: str
    proposer_is_assistant: bool
    responder_is_assistant: bool
    proposal: str
    response: str | None
    offered_share: float | None = None  # of the amount, to the responder; None for an illegal proposal
    decision: str | None = None  # accept, reject, or None (no legal answer)

    @property
    def with_assistant(self) -> bool:
        return self.proposer_is_assistant or self.responder_is_assistant


@dataclass(frozen=True)
class Side:
    """What one side (the fixed-policy agents, or the flex-policy agent) did in the shown interactions."""

    gave: float | None  # mean share of the amount given away when splitting
    splits: int
    accepted: float | None  # fraction of received splits accepted
    received: int


def _side(interactions: Sequence[Interaction], assistant: bool) -> Side:
    gave = [i.offered_share for i in interactions if i.proposer_is_assistant == assistant and i.offered_share is not None]
    decided = [i.decision for i in interactions if i.responder_is_assistant == assistant and i.decision is not None]
    return Side(
        gave=sum(gave) / len(gave) if gave else None,
        splits=len(gave),
        accepted=decided.count("accept") / len(decided) if decided else None,
        received=len(decided),
    )


def compare(flex: float, fixed: float) -> str:
    """How much the flex agent gave away, in words, against the fixed agents (shares of the amount).

    >>> compare(0.5, 0.05), compare(0.48, 0.5), compare(0.3, 0.5)
    ('much more than', 'about as much as', 'less than')
    """
    gap = flex - fixed
    if abs(gap) < 0.05:
        return "about as much as"
    size = "much " if abs(gap) >= 0.25 else ""
    return size + ("more" if gap > 0 else "less") + " than"


def digest(interactions: Sequence[Interaction]) -> dict[str, Any]:
    """The numbers behind the shown interactions, for the optional digest (`assistant.digest`)."""
    fixed, flex = _side(interactions, assistant=False), _side(interactions, assistant=True)
    both = fixed.gave is not None and flex.gave is not None
    return {"fixed": fixed, "flex": flex, "comparison": compare(flex.gave, fixed.gave) if both else None}


@dataclass(frozen=True)
class Revision:
    """What one meta step produced.

    Attributes:
        policy: The new policy, or None when every answer was illegal.
        answer: The MetaLM's last answer, as written.
        illegal_answers: Answers that were not usable policies.
    """

    policy: str | None
    answer: str
    illegal_answers: int = 0
    errors: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class MetaLM:
    """The policy writer.

    Attributes:
        model: The meta role's chat model.
        meta_principle: The MetaLM's objective (default: the paper's).
        revision_instruction: What it is asked to write (default: the paper's).
        max_reasks: Re-asks after an unusable answer.
        digest: Add the numbers behind the interactions (mean share given away and
            acceptance, fixed against flex agents) before the previous policy. A
            scaffold for small models; the paper shows the interactions only.
    """

    model: BaseChatModel
    meta_principle: str | None = None
    revision_instruction: str | None = None
    max_reasks: int = 1
    digest: bool = False

    def messages(self, previous_policy: str, interactions: Sequence[Interaction]) -> list[BaseMessage]:
        """The MetaLM's prompt: users' interactions first, then the assistant's, then the previous policy."""
        human = prompts.render(
            "scai/meta.j2",
            meta_principle=self.meta_principle or prompts.render("scai/meta_principle.j2"),
            revision_instruction=self.revision_instruction or prompts.render("scai/revision.j2"),
            user_interactions=[i for i in interactions if not i.with_assistant],
            assistant_interactions=[i for i in interactions if i.with_assistant],
            previous_policy=previous_policy,
            digest=digest(interactions) if self.digest else None,
        )
        return [SystemMessage(prompts.render("scai/meta_system.j2")), HumanMessage(human)]

    async def revise(
        self,
        previous_policy: str,
        interactions: Sequence[Interaction],
        *,
        seeds: Sequence[int],
        call: CallInfo,
    ) -> Revision:
        """Write the next policy; `seeds` holds one seed per attempt (at least `max_reasks + 1`)."""
        messages = self.messages(previous_policy, interactions)
        constraint = observed_constraint(digest(interactions)) if self.digest else POLICY_CONSTRAINT
        errors: list[str] = []
        answer = ""
        for attempt in range(self.max_reasks + 1):
            answer = await ask(
                self.model,
                messages,
                seed=seeds[attempt],
                call=replace(call, attempt=attempt),
                constraint=constraint,
            )
            try:
                return Revision(parse_policy(answer), answer, len(errors), tuple(errors))
            except PolicyError as error:
                errors.append(str(error))
                messages = [
                    *messages,
                    AIMessage(answer),
                    HumanMessage(prompts.render("scai/meta_reask.j2", error=str(error))),
                ]
        return Revision(None, answer, len(errors), tuple(errors))

