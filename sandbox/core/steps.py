"""What a kind's steps are, for forking and replaying its runs: the contract a kind that checkpoints steps names
(`RunKind.steps`), the changes a fork takes, and a run's lineage (`fork.json`).

A kind whose runs step on the engine (a society's epochs, a population's generations) names a `Steps` value. The
engine (`sandbox.engine.fork`, `sandbox.engine.replay`) reads it to find the checkpoint at a step, to apply a
fork's changes there and to tell which it cannot apply; the viewer and `sandbox compare` read `series` to draw each
branch's headline figure over steps.

A change is `FIELD=VALUE`: a scenario field by its dotted path (`population.revision.beta=2`,
`society.norms.0.norm=fair`, `models.user.sampling.temperature=0.9`), or a state edit that the kind names, under
`state.` (`state.policy=...`, `state.agents.3.committed=B`, `state.stock=40`). VALUE is read as YAML (`2` is a
number, `[a, b]` a list, `null` nothing; other text stays text).
"""

from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sandbox.base.errors import UsageError

__all__ = [
    "FORK",
    "FORKS",
    "STATE",
    "StateEdit",
    "Steps",
    "forks_of",
    "lineage",
    "parse_changes",
    "read_fork",
    "set_path",
    "split_changes",
]

FORK = "fork.json"  # a fork's record: its parent, the step, the changes
FORKS = "forks.jsonl"  # a parent's list of its forks, one line each (appended when a fork is made)
STATE = "state."  # the prefix of a state edit in a change


@dataclass(frozen=True)
class StateEdit:
    """A state edit's effect: the update of the thread's state (LangGraph's `update_state` values), and the rows it
    adds to the run's tables (by file name), which a fork appends after the parent's rows of the steps before."""

    update: dict[str, Any]
    rows: dict[str, list[Sequence[Any] | Mapping[str, Any]]] = field(default_factory=dict)  # cells, or by column


@dataclass(frozen=True)
class Steps:
    """What a step of a kind's runs is, and which changes a fork may make at one."""

    unit: str
    """What a step is called ("epoch", "generation"): messages and tables say it."""
    key: str
    """The state key that counts the steps done (`epoch`, `generation`): a thread at step k has played k steps."""
    count: str
    """The scenario field that holds the number of steps (`epochs`, `population.generations`): a fork that changes
    it plays more (or fewer) steps; the state's own copy (`count_key`) is changed with it."""
    count_key: str
    """The state key that holds the number of steps (`epochs`, `generations`)."""
    threads: Callable[[Any], list[str]]
    """`threads(scenario) -> [thread id, ...]`: the store's threads of a run (a society's independent runs)."""
    graph: Callable[[Any, Any], Any]
    """`graph(checkpointer, scenario) -> compiled graph`: the run's graph, to read and edit its checkpoints."""
    first: str = "pair"
    """The node a step starts with: a fork within a run starts from the snapshot whose next node it is."""
    last: str = "record"
    """The node a step ends with, which writes the checkpoint the next step starts from (read as the writer of a
    boundary whose step's other checkpoints were pruned, `sandbox.engine.pruned_store`)."""
    redo: str | None = None
    """A node a run skips after its last step (a population's revision, which no generation follows): a fork that
    adds steps at the run's end starts one step back, before that node, so that it runs (and the step's rows are
    written again, the same)."""
    stopped_key: str | None = None
    """The state key that ends a run before its last step (a consensus reached, a fishery collapsed): a fork with
    changes at the step a run stopped at clears it, so the changed run goes on (a fork without change stays stopped,
    as its parent did)."""
    fixed: tuple[str, ...] = ()
    """Scenario fields (dotted paths; `*` matches any part) that are read when a run starts and are then held in its
    state (the population built, the network drawn): a fork at a step after the first cannot change them."""
    edit: Callable[[Mapping[str, Any], str, Any, Any], StateEdit] | None = None
    """`edit(values, name, value, scenario) -> StateEdit`: what applies the state edit `state.NAME=VALUE` to a
    thread's state `values` at the fork step (the fork's `scenario`): the state update, and any rows it adds to the
    run's tables (a new norm's row); `ValueError`, whose text names what is wrong, when it cannot."""
    edits: str = ""
    """The state edits the kind takes, in words (for messages and `sandbox fork --help`)."""
    closing: tuple[str, ...] = ()
    """The `step` names of the calls a run makes after its last step (SCAI's final proposals, recorded under the
    last epoch): a fork never keeps the parent's, since it makes its own when it ends."""
    later: tuple[str, ...] = ()
    """Tables a later command writes into a finished run (SCAI's `sandbox evaluate`: evaluation.csv): a replay does
    not compare them, and a fork does not copy them."""
    series: Callable[[Path], Any] | None = None
    """`series(path) -> DataFrame[step, run, figure, value]`: the run's headline figure at every step (one row per
    step and independent run), for `sandbox compare` and the viewer's divergence plot."""

    def is_fixed(self, field: str) -> bool:
        """Whether the scenario field `field` (a dotted path) is one a fork after the first step cannot change."""
        return any(fnmatch.fnmatchcase(field, p) or fnmatch.fnmatchcase(field, p + ".*") for p in self.fixed)


def parse_changes(items: Iterable[str]) -> dict[str, Any]:
    """`FIELD=VALUE` items (`sandbox fork --set`) as {field: value}, the values read as YAML; `UsageError` for an
    item with no `=` or no field.

    >>> parse_changes(["population.revision.beta=2", "state.policy=Share: equally.", "seed=null"])
    {'population.revision.beta': 2, 'state.policy': 'Share: equally.', 'seed': None}
    """
    changes: dict[str, Any] = {}
    for item in items:
        field, sep, text = item.partition("=")
        field = field.strip()
        if not sep or not field:
            raise UsageError(f"--set {item!r}: write FIELD=VALUE (e.g. population.revision.beta=2, state.policy=TEXT)")
        changes[field] = _value(text)
    return changes


def _value(text: str) -> Any:
    """A change's VALUE: YAML's number, boolean, null, list or mapping; any other text as written (a colon, a `#`
    or a date in it kept: "Share: equally. #1" is that text)."""
    stripped = text.strip()
    try:
        value = yaml.safe_load(text) if stripped else text
    except yaml.YAMLError:
        return text
    if isinstance(value, dict | list):
        return value if stripped[:1] in ("[", "{") and _plain(value) else text
    if isinstance(value, str):
        return value if stripped[:1] in ("'", '"') else text
    return value if isinstance(value, bool | int | float) or value is None else text


def _plain(value: Any) -> bool:
    """Whether `value` holds JSON's kinds of data only (no dates)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, str | bool | int | float)


def split_changes(changes: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scenario field changes, state edits by name without the `state.` prefix)."""
    fields = {k: v for k, v in changes.items() if not k.startswith(STATE)}
    edits = {k[len(STATE) :]: v for k, v in changes.items() if k.startswith(STATE)}
    return fields, edits


def _index(container: Any, part: str, path: str) -> Any:
    if isinstance(container, list):
        if not part.isdigit() or int(part) >= len(container):
            raise ValueError(f"{path}: {part} is not an index of its list (0 to {len(container) - 1})")
        return int(part)
    if isinstance(container, dict):
        if part not in container:
            known = ", ".join(map(str, list(container)[:12]))
            raise ValueError(f"{path}: no field {part!r} there (fields: {known})")
        return part
    raise ValueError(f"{path}: {part!r} is inside a value that has no fields")


def set_path(data: Any, path: str, value: Any, *, same_type: bool = False) -> Any:
    """A copy of `data` (plain mappings and lists) with the value at dotted `path` set to `value`; `ValueError`
    naming the path when it does not lead to an existing value (no field is added), or, with `same_type`, when
    `value` is not of the old value's type (a number for a number, text for text, a list for a list).

    >>> set_path({"a": [{"b": 1}]}, "a.0.b", 2.5)
    {'a': [{'b': 2.5}]}
    """
    parts = path.split(".")
    root = copy_plain(data)
    container = root
    for depth, part in enumerate(parts):
        at = _index(container, part, ".".join(parts[: depth + 1]))
        if depth == len(parts) - 1:
            old = container[at]
            if same_type and not _same_type(old, value):
                raise ValueError(
                    f"{path}: {value!r} is not a {type(old).__name__} like the value it replaces ({old!r})"
                )
            container[at] = value
        else:
            container = container[at]
    return root


def _same_type(old: Any, new: Any) -> bool:
    numbers = (int, float)
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool)
    if isinstance(old, numbers):
        return isinstance(new, numbers)
    return old is None or isinstance(new, type(old))


def copy_plain(data: Any) -> Any:
    """A deep copy of plain data (mappings and lists; other values shared)."""
    if isinstance(data, dict):
        return {k: copy_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [copy_plain(v) for v in data]
    return data


def read_fork(path: Path | str) -> dict[str, Any] | None:
    """The run directory `path`'s `fork.json` (None: the run is no fork)."""
    file = Path(path) / FORK
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def lineage(path: Path | str, limit: int = 64) -> list[dict[str, Any]]:
    """The run's ancestors, nearest first: each fork record (`parent`, `at`, `unit`, `changes`) up the chain."""
    found: list[dict[str, Any]] = []
    here = Path(path)
    seen = {here.resolve()}
    while len(found) < limit and (record := read_fork(here)) is not None:
        found.append(record)
        here = Path(record["parent"])
        if here.resolve() in seen:
            break
        seen.add(here.resolve())
    return found


def note_fork(parent: Path, fork: Path, record: Mapping[str, Any]) -> None:
    """Append the fork to the parent's `forks.jsonl` (one line: appended whole, so readers never see half)."""
    line = json.dumps(
        {"run": str(fork.resolve()), "at": record["at"], "changes": record["changes"], "made": time.time()}
    )
    with (parent / FORKS).open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def forks_of(path: Path | str) -> list[Path]:
    """The forks made of the run `path` that still exist (and still name it their parent), in the order made."""
    path = Path(path)
    found: list[Path] = []
    try:
        lines = (path / FORKS).read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for line in lines:
        try:
            fork = Path(json.loads(line)["run"])
        except (ValueError, KeyError, TypeError):
            continue
        record = read_fork(fork)
        if record is not None and Path(record["parent"]).resolve() == path.resolve() and fork not in found:
            found.append(fork)
    return found


def changed_fields(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted paths where two dumped scenarios differ (the deepest fields that do).

    >>> changed_fields({"a": {"b": 1, "c": [1, 2]}}, {"a": {"b": 2, "c": [1, 3]}})
    ['a.b', 'a.c.1']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in list(old) + [k for k in new if k not in old]:
            found += changed_fields(old.get(key), new.get(key), f"{prefix}{key}.")
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [f for i, (a, b) in enumerate(zip(old, new)) for f in changed_fields(a, b, f"{prefix}{i}.")]
    return [] if old == new else [prefix.rstrip(".")]


def first_differences(fields: Sequence[str]) -> str:
    return ", ".join(fields[:6]) + (f" and {len(fields) - 6} more" if len(fields) > 6 else "")
