"""The MetaLM: reads the meta-principle, observed interactions and the previous policy; writes the next policy.

This is the verbal-reinforcement step of Social Contract AI (Fränken et al.,
Appendix C): one draw from the MetaLM is the assistant's policy for the next
epoch. An answer that is not a usable policy (empty, too long, or cut off at
the token limit) is asked again with the reason; if it still is not, the
revision is recorded as illegal and the previous policy stays (the record
says so; nothing is guessed). `sandbox.scai.revise` builds the search over
several draws on this.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

import prompts
from agents.assistant import KEEP_WORDS
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.llm.wrapper import acall

_PREFIX = "Revised principle:"
_LABEL = re.compile(
    r"^\s*(?:\*\*)?\s*(?:revised|new|updated|flex-policy agents?'?s?)?\s*principle\s*(?:\*\*)?\s*:\s*", re.I
)
_MARKER = re.compile(r"\n\s*(?:\*\*)?\s*(?:revised )?principle\s*(?:\*\*)?\s*:", re.I)
MIN_CHARS, MAX_CHARS = 12, 600

# The prefill names the answer; the grammar keeps it to one line of text.
POLICY_CONSTRAINT = Constraint(
    prefix=_PREFIX, grammar='root ::= " " [A-Za-z"\'] [^\\n]*', regex=r"Revised principle: [^\n]+"
)

# With the previous principle hidden there is nothing to revise: the answer is named "Principle:".
FRESH_CONSTRAINT = replace(POLICY_CONSTRAINT, prefix="Principle:", regex=r"Principle: [^\n]+")

# With a critique first (the SCAI authors' format): a line of critique, then the principle on its own line.
CRITIQUE_CONSTRAINT = Constraint(
    prefix="Critique:",
    grammar='root ::= " " [^\\n]+ "\\nPrinciple: " [A-Za-z"\'] [^\\n]*',
    regex=r"Critique: [^\n]+\nPrinciple: [^\n]+",
)

# With the digest, the answer starts from what each side keeps, in the assistant's own words
# (`KEEP_WORDS`), read off the digest's numbers; the model writes the principle from there.
_OBSERVATION = (
    "Observation: of what they have, the fixed-policy agents keep {fixed} and the flex-policy agents keep {flex}."
)


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
    return replace(
        POLICY_CONSTRAINT,
        prefix=f"{observation}\n{_PREFIX}",
        regex=f"{re.escape(observation)}\n{POLICY_CONSTRAINT.regex}",
    )


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

    @classmethod
    def from_episode(cls, episode: Mapping[str, Any], is_flex: Callable[[str], bool]) -> Interaction:
        """An ultimatum episode's record (`sandbox.rules.ultimatum_episode`) as the MetaLM reads it: the proposal
        as said and the decision, an illegal proposal or answer marked so; `is_flex(name)` tells whether a player
        is the flex-policy agent (SCAI's assistant, or the member whose MetaLM reads it).

        >>> episode = {"episode": "e0", "proposer": "assistant", "responder": "user_1", "proposal": "I give you 3",
        ...            "proposal_legal": True, "response": "hm", "decision": None, "offered_share": 0.3}
        >>> Interaction.from_episode(episode, lambda name: name == "assistant").response
        'hm (not a legal answer)'
        """
        if episode["decision"] is not None:
            response: str | None = episode["decision"]
        elif episode["proposal_legal"]:
            response = f"{episode['response']} (not a legal answer)"
        else:
            response = None
        proposal = episode["proposal"] if episode["proposal_legal"] else f"{episode['proposal']} (not a legal proposal)"
        return cls(
            episode=episode["episode"],
            proposer_is_assistant=is_flex(str(episode["proposer"])),
            responder_is_assistant=is_flex(str(episode["responder"])),
            proposal=proposal,
            response=response,
            offered_share=episode["offered_share"],
            decision=episode["decision"],
        )

    @property
    def with_assistant(self) -> bool:
        return self.proposer_is_assistant or self.responder_is_assistant

    @property
    def self_play(self) -> bool:
        """Two copies of the assistant met."""
        return self.proposer_is_assistant and self.responder_is_assistant


@dataclass(frozen=True)
class Side:
    """What one side (the fixed-policy agents, or the flex-policy agent) did in the shown interactions."""

    gave: float | None  # mean share of the amount given away when splitting
    splits: int
    accepted: float | None  # fraction of received splits accepted
    received: int


def _side(interactions: Sequence[Interaction], assistant: bool) -> Side:
    gave = [
        i.offered_share for i in interactions if i.proposer_is_assistant == assistant and i.offered_share is not None
    ]
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
        illegal_answers: Answers that were not usable policies (cut off at the token limit included).
        errors: Why each illegal answer was refused.
        copy_reasks: Times the answer repeated the previous principle while the gap was large, and was asked again.
    """

    policy: str | None
    answer: str
    illegal_answers: int = 0
    errors: tuple[str, ...] = field(default=())
    copy_reasks: int = 0


@dataclass(frozen=True)
class Block:
    """One heading of the MetaLM's prompt and the interactions under it."""

    heading: str
    interactions: tuple[Interaction, ...]


def blocks(interactions: Sequence[Interaction]) -> list[Block]:
    """The interactions by who met whom, each under a heading that says so.

    Users' games with each other come first (shown even when none were
    observed, unless the assistant played itself instead), then the
    assistant's games with users, then its games with itself (only when there
    are some: the assistant-assistant design of the paper's Fig. A-1).
    """
    users = tuple(i for i in interactions if not i.with_assistant)
    mixed = tuple(i for i in interactions if i.with_assistant and not i.self_play)
    self_play = tuple(i for i in interactions if i.self_play)
    out = []
    if users or not self_play:
        out.append(Block("fixed-policy agents' interactions with each other", users))
    out.append(Block("flex-policy agents' interactions with the fixed-policy agents", mixed))
    if self_play:
        out.append(Block("flex-policy agents' interactions with each other", self_play))
    return out


def _same(a: str, b: str) -> bool:
    """Whether two principles are the same text, up to case, spacing and end punctuation."""

    def norm(text: str) -> str:
        return " ".join(text.lower().split()).strip(" .")

    return norm(a) == norm(b)


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
        show_previous: Show the previous principle (the paper's Appendix C); False
            follows its Algorithm 2, which conditions on the meta-principle and the
            interactions only.
        critique: Ask for a critique before the principle (the SCAI authors' code).
        copy_gap: Ask once more when the answer repeats the previous principle while
            the assistant's offered share differs from the users' by at least this
            (a share of the amount); None never does.
    """

    model: BaseChatModel
    meta_principle: str | None = None
    revision_instruction: str | None = None
    max_reasks: int = 1
    digest: bool = False
    show_previous: bool = True
    critique: bool = False
    copy_gap: float | None = None

    def messages(self, previous_policy: str, interactions: Sequence[Interaction]) -> list[BaseMessage]:
        """The MetaLM's prompt: the interactions by who met whom, then the previous policy, then the request."""
        human = prompts.render(
            "scai/meta.j2",
            meta_principle=self.meta_principle or prompts.render("scai/meta_principle.j2"),
            revision_instruction=self.revision_instruction
            or prompts.render("scai/revision.j2", hidden=not self.show_previous),
            blocks=blocks(interactions),
            previous_policy=previous_policy if self.show_previous else None,
            digest=digest(interactions) if self.digest else None,
            critique=self.critique,
        )
        return [SystemMessage(prompts.render("scai/meta_system.j2")), HumanMessage(human)]

    def constraint(self, interactions: Sequence[Interaction]) -> Constraint:
        if self.digest:
            return observed_constraint(digest(interactions))
        if self.critique:
            return CRITIQUE_CONSTRAINT
        return POLICY_CONSTRAINT if self.show_previous else FRESH_CONSTRAINT

    def _copied(self, policy: str, previous_policy: str, interactions: Sequence[Interaction]) -> str | None:
        """The comparison to show when `policy` repeats the previous one while the gap is large; else None."""
        if self.copy_gap is None or not _same(policy, previous_policy):
            return None
        numbers = digest(interactions)
        fixed, flex = numbers["fixed"].gave, numbers["flex"].gave
        if fixed is None or flex is None or abs(flex - fixed) < self.copy_gap:
            return None
        return numbers["comparison"]

    async def revise(
        self,
        previous_policy: str,
        interactions: Sequence[Interaction],
        *,
        seeds: Sequence[int],
        call: CallInfo,
        temperature: float | None = None,
        check_copy: bool = True,
    ) -> Revision:
        """Write the next policy; `seeds` holds one seed per attempt (at least `max_reasks + 2`).

        `temperature` overrides the role's (a search samples its candidates warmer).
        """
        messages = self.messages(previous_policy, interactions)
        constraint = self.constraint(interactions)
        sampling = {} if temperature is None else {"temperature": temperature}
        errors: list[str] = []
        answer, copies, attempt = "", 0, 0
        while len(errors) <= self.max_reasks:
            reply = await acall(
                self.model,
                messages,
                seed=seeds[attempt],
                call=replace(call, attempt=attempt),
                constraint=constraint,
                **sampling,
            )
            attempt += 1
            answer = str(reply.content).strip()
            try:
                if reply.response_metadata.get("finish_reason") == "length":
                    raise PolicyError("the answer was cut off at the token limit; keep it short")
                policy = parse_policy(answer)
            except PolicyError as error:
                errors.append(str(error))
                reask = prompts.render("scai/meta_reask.j2", error=str(error))
            else:
                comparison = self._copied(policy, previous_policy, interactions) if check_copy and not copies else None
                if comparison is None:
                    return Revision(policy, answer, len(errors), tuple(errors), copies)
                copies += 1
                reask = prompts.render("scai/meta_copy.j2", comparison=comparison)
            messages = [*messages, AIMessage(answer), HumanMessage(reask)]
        return Revision(None, answer, len(errors), tuple(errors), copies)
