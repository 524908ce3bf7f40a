"""The assistant with no policy: an ultimatum player that asks its model exactly what a distilled student trained on.

A distilled student carries its norm in its weights, so it plays with no
policy and no system prompt: one user turn from `prompts/student/` (the
prompt of `sandbox.training.ultimatum_env`), read by the same parser as in
training. Where the student answers in the number form (the tiny model: the
amount it keeps, or yes/no) or the share form (the tenths it offers), a legal number is handed to the society as the
society's own proposal sentence and a yes/no as accept/reject, so that the
society's parser records the move; a number-form answer the strict parser
refuses is handed on as an empty answer, so that the society's more forgiving
parsers cannot read it either, and is recorded as an illegal move (the
transcript keeps what the model said). A sentence-form answer is passed on as
said.

It answers as it was trained, unconstrained: the society's grammar
constraint (for backends that support one) is not applied, and an illegal
answer is asked again only with the same prompt under the next seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from agents.turns import ask
from sandbox.llm.contracts import CallInfo, Constraint
from sandbox.rules.ultimatum import Split, Stake, proposal_sentence
from sandbox.training.ultimatum_env import AnswerForm, UltimatumState, parse_student, student_prompt

__all__ = ["PolicylessAssistant"]


@dataclass(frozen=True)
class PolicylessAssistant:
    """The assistant as a distilled student: no policy, no system prompt, the training prompt and answer form.

    Attributes:
        model: The student's chat model (for example `hf:BASE+adapter:DIR`).
        form: `sentence` (the society's sentence), `number` (the amount it keeps; the tiny model) or `share` (the
            tenths it offers).
        agent_id: `assistant`, as for the policy-following assistant.
    """

    model: BaseChatModel
    form: AnswerForm = "sentence"
    agent_id: str = "assistant"
    remarks: bool = False

    async def _answer(self, state: UltimatumState, seed: int, call: CallInfo) -> str:
        """The training prompt of `state` as the only turn, unconstrained."""
        return await ask(
            self.model, [HumanMessage(student_prompt(state, self.form))], seed=seed, call=call, constraint=None
        )

    async def propose(
        self,
        stake: Stake,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str:
        state = UltimatumState(stake, "proposer")
        answer = await self._answer(state, seed, call)
        if self.form != "sentence":  # strictly, as in training: a number the parser refuses is no move at all
            move = parse_student(answer, state, self.form)
            return proposal_sentence(stake, move) if isinstance(move, Split) else ""
        return answer

    async def respond(
        self,
        stake: Stake,
        proposal: str,
        split: Split,
        *,
        seed: int,
        call: CallInfo,
        constraint: Constraint | None,
        feedback: Sequence[tuple[str, str]] = (),
    ) -> str:
        state = UltimatumState(stake, "responder", split)
        answer = await self._answer(state, seed, call)
        if self.form != "sentence":
            move = parse_student(answer, state, self.form)
            return "" if move is None else str(move)
        return answer
