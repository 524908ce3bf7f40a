"""The LLM matrix game's agents as columns (`MatrixAgents`, `sandbox.population.games.matrix.llm_records`): the
first population (`start_agents`), an agent as the record its players and its revision read (`agent_at`,
`AgentView`; `columns_of` back), a population from a run whose checkpoints hold records (`as_columns`), and a fork's
edit of them (`edit_agents`), on the same paths as records: `agents.I.strategy`, `.kind`, `.fixed`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast, overload

from pydantic import TypeAdapter, ValidationError

from sandbox.core.steps import StateEdit
from sandbox.population.games.matrix.llm_records import MatrixAgents
from sandbox.population.revision.texts import NormRow, PrincipledAgent, derived_field, given_norm, principle_text
from sandbox.population.settings import PopulationScenarioSettings, place_members
from societies.norms import NORMS

__all__ = ["AgentView", "agent_at", "as_columns", "columns_of", "edit_agents", "start_agents", "texts_by_norm"]


def start_agents(scenario: PopulationScenarioSettings) -> tuple[MatrixAgents, list[NormRow]]:
    """The first population, as columns, and its norms' rows: each member's kind and text found once, not once an
    agent; the texts' ids in the order the agents first hold them."""
    rows: list[NormRow] = []
    ids: dict[str, int] = {}
    members = []
    for member in scenario.population.members:
        text = NORMS.get(member.strategy).text if member.strategy in NORMS.names() else member.strategy
        members.append(("fixed" if member.fixed else "member", member.fixed, text))
    placed = place_members(scenario).tolist()
    for m in dict.fromkeys(placed):  # the members in the order their first agents come
        text = members[m][2]
        if text not in ids:
            ids[text] = len(ids)
            rows.append(given_norm(0, ids[text], "scenario", "initial", text))
    kinds = [members[m][0] for m in placed]
    agents: MatrixAgents = {
        "kind": cast("list[Any]", kinds),
        "fixed": [members[m][1] for m in placed],
        "norm": [ids[members[m][2]] for m in placed],
        "texts": {str(norm): text for text, norm in ids.items()},
        "next_id": len(ids),
    }
    return agents, rows


def agent_at(agents: MatrixAgents, i: int) -> PrincipledAgent:
    """Agent i as a record (its name, kind, whether fixed, its norm's id and text), as the players read it."""
    norm = agents["norm"][i]
    return {
        "name": f"agent{i}",
        "kind": agents["kind"][i],
        "fixed": agents["fixed"][i],
        "norm": norm,
        "strategy": agents["texts"][str(norm)],
    }


class AgentView(Sequence[PrincipledAgent]):
    """The agents of `MatrixAgents` as records, each made when read (`view[i]`): what a match's players are given."""

    def __init__(self, agents: MatrixAgents) -> None:
        self.agents = agents

    def __len__(self) -> int:
        return len(self.agents["norm"])

    @overload
    def __getitem__(self, i: int) -> PrincipledAgent: ...

    @overload
    def __getitem__(self, i: slice) -> list[PrincipledAgent]: ...

    def __getitem__(self, i: int | slice) -> PrincipledAgent | list[PrincipledAgent]:
        if isinstance(i, slice):
            return [agent_at(self.agents, k) for k in range(len(self))[i]]
        if not 0 <= i < len(self):
            raise IndexError(i)
        return agent_at(self.agents, i)


def columns_of(records: Sequence[PrincipledAgent], next_id: int) -> MatrixAgents:
    """Records (a revision's agents) as columns; the texts of the norms they hold."""
    return {
        "kind": cast("list[Any]", [a["kind"] for a in records]),
        "fixed": [a["fixed"] for a in records],
        "norm": [a["norm"] for a in records],
        "texts": {str(a["norm"]): a["strategy"] for a in records},
        "next_id": next_id,
    }


def as_columns(population: Mapping[str, Any]) -> MatrixAgents:
    """The population as columns; a run made before they were (`{"agents": [records], "next_id": N}` in its
    checkpoints) is read as they are, so that it resumes and forks."""
    if "agents" in population:
        return columns_of(population["agents"], int(population["next_id"]))
    return cast(MatrixAgents, population)


def texts_by_norm(agents: MatrixAgents) -> dict[int, str]:
    """Each held norm's text, by its id."""
    return {int(norm): text for norm, text in agents["texts"].items()}


def edit_agents(population: MatrixAgents, name: str, value: object, generation: int) -> StateEdit:
    """A fork's state edit (`sandbox fork --set state.NAME=VALUE`), on the agents' paths: `agents.I.strategy=TEXT`
    gives agent I that text as a norm of its own (the next id, with its row in norms.csv written at the fork's
    generation under the rule `fork`); `agents.I.kind` (member or fixed) and `agents.I.fixed` are set as they
    are; an agent's norm id and the next id follow the texts, and its name its index: all three are refused."""
    refused = derived_field(name)
    if refused:
        raise ValueError(refused)
    columns, parts = as_columns(population), name.split(".")
    if len(parts) != 3 or parts[0] != "agents":
        raise ValueError(
            f"{name}: not a path of this population; set state.agents.I.strategy=TEXT (a norm of its own), "
            "state.agents.I.kind (member or fixed) or state.agents.I.fixed"
        )
    n, field = len(columns["norm"]), parts[2]
    if not parts[1].isdigit() or int(parts[1]) >= n:
        raise ValueError(f"{name}: {parts[1]} is not an agent's index (0 to {n - 1})")
    i = int(parts[1])
    if field == "strategy":
        text = principle_text(name, value)
        norm = columns["next_id"]
        norms = [*columns["norm"][:i], norm, *columns["norm"][i + 1 :]]
        held = set(norms)
        texts = {str(k): text for k, text in texts_by_norm(columns).items() if k in held}
        edited: MatrixAgents = {**columns, "norm": norms, "texts": {**texts, str(norm): text}, "next_id": norm + 1}
        return StateEdit({"agents": edited}, {"norms.csv": [given_norm(generation, norm, f"agent{i}", "fork", text)]})
    if field not in ("kind", "fixed"):
        said = "its name follows its index" if field == "name" else "no such field of an agent"
        raise ValueError(f"{name}: {said}; set agents.{i}.strategy, agents.{i}.kind or agents.{i}.fixed")
    try:  # the agent as a record, checked as the game's members are typed
        TypeAdapter(PrincipledAgent).validate_python({**agent_at(columns, i), field: value}, strict=True)
    except ValidationError as error:
        raise ValueError(f"state.{name}: agents.{i}.{field}: {error.errors()[0]['msg']}") from None
    column = list(columns[field])  # type: ignore[literal-required]
    column[i] = value
    return StateEdit({"agents": {**columns, field: column}})
