"""Instruction following (the paper's steering accuracy, Appendix B): does a message follow its instruction?

A constrained classifier (the judge's model) is shown one message and the
speaker's instructions other than "any", and must name the one the message
follows; the message follows its instruction when the classifier names it.
Each distinct message is classified once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from prompts import render
from sandbox.dialogue.expand import Tree
from sandbox.dialogue.llm_calls import call_key
from sandbox.dialogue.reward import choices
from sandbox.llm.contracts import CallInfo
from sandbox.llm.wrapper import acall
from sandbox.rules.dialogue import ANY


@dataclass(frozen=True)
class Steered:
    """One classified message."""

    player: int
    instruction: str
    text: str
    judged: str

    @property
    def follows(self) -> bool:
        return self.judged == self.instruction


async def classify(tree: Tree, judge: BaseChatModel, *, seed: int = 0) -> list[Steered]:
    """Classify every distinct message of the tree whose instruction is not "any" (players with two or more
    instructions besides "any"; with one there is nothing to tell apart)."""
    game = tree.game
    todo: dict[tuple[int, str, str], None] = {}
    for node in tree.nodes:
        if node.dialogue:
            last = node.dialogue[-1]
            options = tuple(i for i in game.instructions[last.speaker] if i != ANY)
            if last.instruction != ANY and len(options) >= 2:
                todo.setdefault((last.speaker, last.instruction, last.text), None)

    async def judge_one(player: int, text: str) -> str:
        options = tuple(i for i in game.instructions[player] if i != ANY)
        prompt = render("dialogue/steer.j2", message=text, options=options)
        answer = await acall(
            judge,
            [HumanMessage(prompt)],
            seed=seed,
            max_tokens=16,
            constraint=choices(list(options)),
            call=CallInfo(role="judge", episode=call_key(prompt), step="steering"),
        )
        said = str(answer.content).strip().strip(".")
        named = [o for o in options if o.lower() == said.lower()]
        return named[0] if named else f"illegal: {said[:40]}"

    texts = list(dict.fromkeys((player, text) for player, _, text in todo))  # one call per message text
    judged = dict(zip(texts, await asyncio.gather(*(judge_one(*key) for key in texts))))
    return [Steered(player, instruction, text, judged[(player, text)]) for player, instruction, text in todo]


def steering_table(tree: Tree, results: list[Steered]) -> list[dict[str, object]]:
    """Rows per player and instruction: messages, how many follow, the rate, and chance (one over the options)."""
    rows = []
    for player in sorted({r.player for r in results}):
        mine = [r for r in results if r.player == player]
        options = len([i for i in tree.game.instructions[player] if i != ANY])
        for instruction in sorted({r.instruction for r in mine}):
            these = [r for r in mine if r.instruction == instruction]
            follow = sum(r.follows for r in these)
            rows.append(
                {
                    "player": player,
                    "instruction": instruction,
                    "messages": len(these),
                    "follows": follow,
                    "rate": follow / len(these),
                    "chance": 1 / max(options, 1),
                    "illegal": sum(r.judged.startswith("illegal") for r in these),
                }
            )
    return rows
