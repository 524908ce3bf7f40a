"""A text against another, word by word (`difflib`'s matching of the two texts' words): how a written norm or policy
changed. One algorithm for every place that shows it: SCAI's policy records and the fork's edit of a policy
(`word_diff`), the population's norm histories (`word_diff`), the viewer's policy versions (`word_pieces`)."""

from __future__ import annotations

import difflib
from typing import Literal

__all__ = ["word_diff", "word_pieces"]

Op = Literal["=", "-", "+"]


def word_pieces(before: str, after: str) -> list[tuple[Op, str]]:
    """`after` against `before`, word by word: `(op, words)` pieces in order, op `=` (kept), `-` (removed) or `+`
    (added); a replaced run of words is its removal, then its addition. Spaces between words become one.

    >>> word_pieces("give them nearly all", "give them half")
    [('=', 'give them'), ('-', 'nearly all'), ('+', 'half')]
    >>> word_pieces("a  b", "a b")
    [('=', 'a b')]
    """
    old, new = before.split(), after.split()
    pieces: list[tuple[Op, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            pieces.append(("=", " ".join(old[i1:i2])))
        if op in ("delete", "replace"):
            pieces.append(("-", " ".join(old[i1:i2])))
        if op in ("insert", "replace"):
            pieces.append(("+", " ".join(new[j1:j2])))
    return pieces


def word_diff(before: str, after: str) -> str:
    """`after` against `before` in git's word-diff style: removed words as `[-...-]`, added ones as `{+...+}`; empty
    when the texts are equal.

    >>> word_diff("Always help others.", "Always help yourself.")
    'Always help [-others.-] {+yourself.+}'
    >>> word_diff("give half to all", "give all to all")
    'give [-half-] {+all+} to all'
    >>> word_diff("same", "same")
    ''
    """
    if before == after:
        return ""
    marks = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return " ".join(marks[op].format(words) for op, words in word_pieces(before, after))
