"""Answer parsers (the paper's g): the judge's text to a label, and its log-probabilities to a graded score.

Every parser returns None for an answer it cannot read; the caller counts it
as unparsed and never guesses a label.

>>> yes_no("Yes."), yes_no("  **no**, because ..."), yes_no("To decide, ...")
(True, False, None)
>>> therefore_desirable("P2 gets $0.22 < $3 ... Therefore, the outcome is not desirable.")
False
>>> sorted(option_set("Options A and D."))
['A', 'D']
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "OPTION_LETTERS",
    "TwoWay",
    "decision_position",
    "option_set",
    "therefore_desirable",
    "two_way_probability",
    "yes_no",
]

OPTION_LETTERS = ("A", "B", "C", "D")
_WORD = re.compile(r"[A-Za-z]+")
_THEREFORE = re.compile(r"outcome\s+is\s+(not\s+|un)?desirable", re.I)
# The marker after which the decisive word of a "Therefore, the outcome is (not) desirable" answer comes
# (only where a verdict follows, so the graded reward is read where the label was).
THEREFORE_MARKER = re.compile(r"outcome\s+is(?=\s+(not\s+|un)?desirable)", re.I)


def yes_no(text: str) -> bool | None:
    """The first word of the answer, read as yes (True) or no (False); anything else is None.

    The whole word is compared, not a substring (the authors' `"no" in word` reads "not" and "none" as no).

    >>> yes_no("Yes, because she repeatedly ..."), yes_no("Nope"), yes_no("")
    (True, None, None)
    """
    match = _WORD.search(text)
    if match is None:
        return None
    return {"yes": True, "no": False}.get(match.group(0).lower())


def therefore_desirable(text: str) -> bool | None:
    """Kwon's 1-example answers: the last "the outcome is (not) desirable" decides.

    The authors' parser looked for "Therefore, the outcome is not desirable" first, then for the positive
    sentence. A chat model often restates the question before it concludes, and words its verdict its own way
    ("Thus, the outcome is desirable"), so the last verdict in any wording is read here.

    >>> therefore_desirable("... so P2 should reject this offer. Therefore, the outcome is desirable")
    True
    >>> therefore_desirable("I cannot tell.") is None
    True
    """
    matches = list(_THEREFORE.finditer(text))
    if not matches:
        return None
    return matches[-1].group(1) is None


def option_set(text: str) -> frozenset[str] | None:
    """The option letters an answer names ("A, D", "options B and C", "None"); None when it names none.

    Only standalone capital letters A-D count, and not the article "A" before a lower-case word.

    >>> sorted(option_set("B, C")), sorted(option_set("A good choice is D."))
    (['B', 'C'], ['D'])
    >>> option_set("none") == option_set("None of the options.") == frozenset()
    True
    >>> option_set("I do not know") is None
    True
    """
    letters = []
    for match in re.finditer(r"(?<![A-Za-z])([A-D])(?![A-Za-z])", text):
        before, after = text[: match.start()], text[match.end() :]
        sentence_start = not before.strip() or re.search(r"[.!?:\n]\s*$", before)
        if (
            match.group(1) == "A"
            and sentence_start
            and re.match(r" [a-z]", after)
            and not re.match(r" (and|or)\b", after)
        ):
            continue  # the article
        letters.append(match.group(1))
    if not letters and re.match(r"\s*(none|no option)", text, flags=re.I):
        return frozenset()
    if not letters:
        return None
    return frozenset(letters)


@dataclass(frozen=True)
class TwoWay:
    """A graded answer between a positive and a negative word at one generated position.

    Attributes:
        p_positive: P(positive) / (P(positive) + P(negative)).
        mass: P(positive) + P(negative): how much of the distribution the two answers hold.
    """

    p_positive: float
    mass: float


def _normal(token: str) -> str:
    return re.sub(r"[^a-z]", "", token.lower())


def two_way_probability(
    top: dict[str, float], positive: Sequence[str] = ("yes",), negative: Sequence[str] = ("no",)
) -> TwoWay | None:
    """Sum the probabilities of every token variant of each answer ("Yes", " yes", "YES"); None when neither shows.

    A token counts for a word when, lower-cased and stripped of all but letters, it is the word or its start
    (at least two letters), so a word split into tokens still counts.

    >>> result = two_way_probability({"Yes": math.log(0.6), " yes": math.log(0.1), "No": math.log(0.1), "To": -1.0})
    >>> round(result.p_positive, 3), round(result.mass, 3)
    (0.875, 0.8)
    """

    def matches(token: str, words: Sequence[str]) -> bool:
        word = _normal(token)
        return len(word) >= 2 and any(candidate == word or candidate.startswith(word) for candidate in words)

    p_pos = sum(math.exp(lp) for token, lp in top.items() if matches(token, positive))
    p_neg = sum(math.exp(lp) for token, lp in top.items() if matches(token, negative) and not matches(token, positive))
    if p_pos + p_neg <= 0.0:
        return None
    return TwoWay(p_pos / (p_pos + p_neg), p_pos + p_neg)


def decision_position(token_logprobs: Sequence[dict[str, Any]], marker: re.Pattern[str] | None = None) -> int | None:
    """The index of the generated token that carries the decision.

    Without a marker: the first token with a letter in it (the answer's first word). With one: the first
    token with a letter after the end of the marker's last match in the generated text. None when absent.

    >>> tokens = [{"token": t} for t in ["So", " the", " outcome", " is", " not", " desirable"]]
    >>> decision_position(tokens, THEREFORE_MARKER)
    4
    """
    start = 0
    if marker is not None:
        text = "".join(entry["token"] for entry in token_logprobs)
        found = list(marker.finditer(text))
        if not found:
            return None
        start = found[-1].end()
    offset = 0
    for index, entry in enumerate(token_logprobs):
        token = entry["token"]
        if offset + len(token) > start and re.search(r"[A-Za-z]", token[max(0, start - offset) :]):
            return index
        offset += len(token)
    return None
