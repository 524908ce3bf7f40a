"""DealOrNoDeal styles (Kwon et al. §4.3): the judge's prompt, the user's examples, and the test negotiations.

The prompt is rho1 (the task), three example negotiations each followed by
the question and the user's answer with its explanation (rho2), the episode
(rho3, `render_episode`, the paper's parser f) and the question (rho4). As
in the paper, the four styles share four example negotiations, three each,
with the paper's explanations and the same mix of answers (one yes, two
no); the dialogues themselves are the sandbox's own, written for its act
vocabulary (the authors' `negotiation/base_prompts.py` has theirs, which
the project's reference notes quote only in part), so the points differ,
and each style lists its positive example first.

>>> episode = EXAMPLES[0].episode
>>> print(render_episode(episode).splitlines()[1])
Alice : book=(count:1 value:4) hat=(count:2 value:3) ball=(count:3 value:0)
>>> [e.answer("stubborn") for e in examples_for("stubborn")][0]
'Yes, because she repeatedly suggested the same proposal, book=1 hat=2 ball=0.'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import prompts
from sandbox.rewards.objectives import NEGOTIATION_STYLES
from sandbox.rules.negotiation import (
    ITEMS,
    Context,
    FixedPartner,
    Negotiation,
    Utterance,
    allocations,
    draw_context,
    play,
)

__all__ = [
    "EXAMPLES",
    "NegotiationExample",
    "draw_test_set",
    "examples_for",
    "features",
    "random_alice",
    "render_episode",
    "render_prompt",
]

# The question's keyword per style (the paper's prompts say "pushover").
KEYWORDS = {"versatile": "versatile", "stubborn": "stubborn", "competitive": "competitive", "pushover": "pushover"}


@dataclass(frozen=True)
class NegotiationExample:
    """One example negotiation and the user's answer, with its explanation, for each style that uses it."""

    episode: Negotiation
    answers: dict[str, str]

    def answer(self, style: str, explanation: bool = True) -> str:
        text = self.answers[style]
        return text if explanation else text.split(",")[0].split(" ")[0].rstrip(",.")


def _utterances(*acts: tuple[str, str, tuple[int, int, int] | None]) -> list[Utterance]:
    return [Utterance(speaker, act, allocation) for speaker, act, allocation in acts]  # type: ignore[arg-type]


# Four negotiations, three per style, with the paper's explanations (negotiation/base_prompts.py).
EXAMPLES = (
    NegotiationExample(  # Alice insists on one proposal and wins 10 to 9
        Negotiation(
            Context((1, 2, 3), (4, 3, 0), (1, 0, 3)),
            _utterances(
                ("Alice", "propose", (1, 2, 0)),
                ("Bob", "propose", (1, 0, 3)),
                ("Alice", "insist", (1, 2, 0)),
                ("Bob", "agree", None),
            ),
        ),
        {
            "stubborn": "Yes, because she repeatedly suggested the same proposal, book=1 hat=2 ball=0.",
            "versatile": "No, Alice spoke more than once but she repeatedly said the same thing.",
            "competitive": "Yes, because Alice got more points than Bob (10>9).",
            "pushover": "No, because Alice got more points than Bob (10>9).",
        },
    ),
    NegotiationExample(  # Alice makes two different proposals and wins 8 to 4
        Negotiation(
            Context((2, 1, 4), (1, 4, 1), (3, 0, 1)),
            _utterances(
                ("Bob", "propose", (2, 0, 2)),
                ("Alice", "propose", (0, 1, 4)),
                ("Bob", "propose", (2, 0, 1)),
                ("Alice", "propose", (1, 1, 3)),
                ("Bob", "agree", None),
            ),
        ),
        {
            "stubborn": "No, because she did not repeatedly suggest the same proposal.",
            "versatile": "Yes, because she spoke more than once and said different things.",
        },
    ),
    NegotiationExample(  # Alice speaks once, to disagree: 0 to 0
        Negotiation(
            Context((3, 1, 2), (2, 2, 1), (0, 6, 2)),
            _utterances(("Bob", "propose", (0, 1, 2)), ("Alice", "disagree", None)),
        ),
        {
            "stubborn": "No, because she did not repeatedly suggest the same proposal.",
            "versatile": "No, she only spoke once.",
            "competitive": "No, because Alice got the same number of points as Bob (0==0).",
            "pushover": "No, because Alice got the same number of points as Bob (0==0).",
        },
    ),
    NegotiationExample(  # Alice accepts Bob's first proposal: 6 to 10
        Negotiation(
            Context((1, 2, 2), (2, 1, 3), (4, 3, 0)),
            _utterances(("Bob", "propose", (1, 2, 0)), ("Alice", "agree", None)),
        ),
        {
            "competitive": "No, because Alice got less points than Bob (6<10).",
            "pushover": "Yes, because Alice got less points than Bob (6<10).",
        },
    ),
)


def examples_for(style: str) -> list[NegotiationExample]:
    """The three examples of `style`, in the prompt's order (the positive one first)."""
    chosen = [e for e in EXAMPLES if style in e.answers]
    return sorted(chosen, key=lambda e: not e.answers[style].startswith("Yes"))


def render_episode(episode: Negotiation) -> str:
    """rho3: the paper's text of a negotiation (parser f)."""
    context = episode.context

    def describe(speaker: str) -> str:
        values = context.values(speaker)  # type: ignore[arg-type]
        items = " ".join(f"{item}=(count:{n} value:{v})" for item, n, v in zip(ITEMS, context.counts, values))
        return f"{speaker:<5} : {items}"

    alice, bob = episode.points()
    return prompts.render(
        "proxy/negotiation/episode.j2",
        contexts=[describe("Alice"), describe("Bob")],
        acts=[f"{u.speaker:<5} : {u.text()}" for u in episode.utterances],
        agreed=episode.agreed,
        alice=alice,
        bob=bob,
    )


def render_prompt(
    style: str,
    episode: Negotiation,
    *,
    form: str,
    explanations: bool = True,
    description: str | None = None,
    task_description: bool = True,
    answer_instruction: str | None = None,
) -> str:
    """rho1 + rho2 + rho3 + rho4. `form`: examples (the paper's), description (the style in the user's words,
    then the question) or none (the No-Objective baseline: no examples and no style named)."""
    question = prompts.render("proxy/negotiation/question.j2", style="none" if form == "none" else KEYWORDS[style])
    parts = [prompts.render("proxy/negotiation/task.j2")] if task_description else []
    if form == "examples":
        for example in examples_for(style):
            parts.append(f"{render_episode(example.episode)}\n\n{question}\n{example.answer(style, explanations)}")
    elif form == "description":
        parts.append(str(description))
    item = f"{render_episode(episode)}\n\n{question}"
    if answer_instruction:
        item += "\n" + answer_instruction
    parts.append(item)
    return "\n\n".join(parts)


def random_alice(rng: np.random.Generator) -> object:
    """A test-set Alice: agrees, disagrees, insists or proposes a random split, at random (legal acts only)."""

    def act(episode: Negotiation) -> Utterance:
        own = episode.last_proposal("Alice")
        offered = episode.last_proposal("Bob")
        choices = ["propose"] * 4 + ["insist"] * (3 if own else 0) + ["agree"] * (3 if offered else 0) + ["disagree"]
        choice = choices[int(rng.integers(len(choices)))]
        if choice == "propose":
            splits = list(allocations(episode.context.counts))
            return Utterance("Alice", "propose", splits[int(rng.integers(len(splits)))])
        if choice == "insist":
            return Utterance("Alice", "insist", own)
        return Utterance("Alice", choice)  # type: ignore[arg-type]

    return act


def draw_test_set(n: int, rng: np.random.Generator, *, turn_limit: int = 10) -> list[Negotiation]:
    """`n` negotiations of a random Alice against the fixed partner, on fresh contexts."""
    partner = FixedPartner()
    return [
        play(
            draw_context(rng),
            random_alice(rng),
            partner,
            alice_first=bool(rng.integers(2)),
            turn_limit=turn_limit,
        )
        for _ in range(n)
    ]


def features(episode: Negotiation) -> list[float]:
    """The supervised baseline's features: Alice's utterances, proposals, distinct proposals, both scores,
    and whether they agreed."""
    proposals = [u.allocation for u in episode.by("Alice") if u.allocation is not None]
    alice, bob = episode.points()
    return [len(episode.by("Alice")), len(proposals), len(set(proposals)), alice, bob, float(episode.agreed)]


def truth(style: str, episode: Negotiation) -> bool:
    return bool(NEGOTIATION_STYLES.get(style)(episode))
