"""The run-kind contract and its registry: every kind of run is one `RunKind`, found by name, file or directory.

A kind of run (a society, a moral training, a labeling, a distillation, a
solve, a sweep, or a third-party package's) is one frozen `RunKind` value:
its scenario block and pydantic model, how it runs and resumes, its dry
run, evaluation, command-line tables, commands and benchmarks, its example
scenario and the tables a run directory of its kind holds. The core (the
CLI, the Python API, scenario files, run directories, sweeps, benchmarks)
finds kinds here and imports no method package.

The kinds register under the entry-point group `sandbox.kinds` of their
distribution (`pyproject.toml`), so another package adds a kind without
changing this one (in its `pyproject.toml`):

    [project.entry-points."sandbox.kinds"]
    mykind = "mypackage.kind:KIND"

or, in a test or a notebook, `register(KIND)`, or for a module that is not
packaged, the environment variable `SANDBOX_KINDS=pkg.module:KIND[,other:KIND]`
(read once, when the registry is first used). Every callable a kind names is
a `"module:attribute"` reference, imported on first use (as Gymnasium's
`register(entry_point=...)` does), so listing the kinds imports no method
and none of their heavy dependencies (torch, OpenSpiel).

The callables' shapes (each documented on its field):

* `run(scenario, out, *, models=None, hooks=None, ledgers=()) -> Path`
* `resume(path, *, models=None, hooks=None, ledgers=()) -> Path`
* `overrides(scenario, *, source, **options) -> scenario` (the `run_options` given on the command line)
* `cli_run(scenario, out, *, source) -> Path` and `cli_resume(path, **options) -> None`: the same under a progress bar,
  printing the result's tables; `cli_evaluate(path, **options) -> None`
* `dry_run(scenario) -> pandas.DataFrame`, `describe(scenario, *, source) -> str`, `dir_label(path) -> str`
  (`source`: the scenario file's path, which error messages name)
* `view(path) -> [sandbox.viewer.sections.Section, ...]`: the run page of `sandbox view` and `sandbox report`
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from sandbox.base.errors import UsageError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from sandbox.llm.budget import Ledger

__all__ = [
    "ENVIRONMENT",
    "GROUP",
    "STARTS",
    "GivenModels",
    "Ledgers",
    "RunKind",
    "by_option",
    "get",
    "kind_of_data",
    "kind_of_dir",
    "kind_of_scenario",
    "kinds",
    "register",
    "resolve",
    "unregister",
]

GivenModels: TypeAlias = "Mapping[str, BaseChatModel] | None"
"""A run's `models`: chat models by role, used in place of the scenario's specs (tests, notebooks); None: the specs."""
Ledgers: TypeAlias = "Sequence[Ledger]"
"""A run's `ledgers`: budget ledgers its calls are charged to as well (a sweep's whole budget), besides its own."""

GROUP = "sandbox.kinds"
ENVIRONMENT = "SANDBOX_KINDS"  # comma-separated "module:attribute" references of kinds outside any distribution


def resolve(reference: str) -> Any:
    """The object a `"module:attribute.path"` reference names, imported now."""
    module, _, attribute = reference.partition(":")
    target: Any = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        target = getattr(target, part)
    return target


@dataclass(frozen=True)
class RunKind:
    """One kind of run: what the core needs to recognise, run, resume and show it.

    Fields that name code hold `"module:attribute"` references, resolved on first use (`call`).
    """

    name: str
    """The kind's name: `sandbox run` and sweeps dispatch on it; it stands in sweep tables and messages."""
    model: str
    """The pydantic model of its scenario files (strict: unknown fields are errors)."""
    run: str
    """`run(scenario, out, *, models=None, hooks=None, ledgers=()) -> Path`: play a new run into `out` (None: a
    default directory) and return its directory."""
    resume: str
    """`resume(path, *, models=None, hooks=None, ledgers=()) -> Path`: finish an interrupted run, with the same
    results an uninterrupted one writes."""
    load: str | None = None
    """`load(path, data=None) -> scenario`: read a file of this kind, where more than validating its YAML is needed
    (a sweep reads its base scenario); default: the YAML validated as `model`. `data`: the scenario's fields written
    inside the file `path` (a sweep's `base:` mapping) instead of read from it; the files they name are relative to
    `path`'s folder all the same."""
    block: str | None = None
    """The top-level scenario block that marks a file of this kind (`training:`); None for the default kind (a
    file with none of the registered blocks)."""
    precedence: int = 100
    """Files are matched against the kinds' blocks in this order, lowest first (a distillation has a `training:`
    block too, so it comes first)."""
    title: str = ""
    """What a file of this kind is, in a sentence's words ("a training scenario")."""
    command: str = "run"
    """The command that starts a run of this kind (`sandbox COMMAND FILE`), named in messages."""
    description: str = ""
    overrides: str | None = None
    """`overrides(scenario, *, source, **options) -> scenario`: `sandbox run`'s options (those in `run_options`)
    applied and validated again (`seed`, `models` as ROLE=SPEC strings, and the kind's own)."""
    run_options: tuple[str, ...] = ("seed", "models")
    """The `sandbox run` options the kind's `overrides` takes; another one given is exit 2 naming it."""
    describe: str | None = None
    """`describe(scenario, *, source) -> str`: one line for `sandbox validate`."""
    dir_label: str | None = None
    """`dir_label(path) -> str`: what a run directory of this kind holds, when the kind has several (a group of
    seeds, a reward-model measurement); default: the kind's name."""
    owns_dir: str | None = None
    """`owns_dir(path) -> bool`: a run directory of this kind without a scenario file of its kind (a sweep's)."""
    dry_run: str | None = None
    """`dry_run(scenario) -> DataFrame`: the LLM calls and tokens per role a run would take, no model called."""
    dry_run_size: str | None = None
    """`dry_run_size(scenario) -> str`: the size of a run, as the dry-run table's title says it (" (3 runs x 5
    epochs)"); default: the number of runs `expand` gives, else nothing."""
    cli_run: str | None = None
    """`cli_run(scenario, out, *, source) -> Path`: `run` under a progress bar, then the result's tables on stdout
    (`source`, the file's path, is what error messages name)."""
    cli_resume: str | None = None
    """`cli_resume(path, **options) -> None`: `resume` under a progress bar, then the tables; `options` are the
    `sandbox resume` options given (device, max_calls, executor, ...): `UsageError` for one the kind lacks."""
    cli_evaluate: str | None = None
    """`cli_evaluate(path, **options) -> None`: `sandbox evaluate` on a run of this kind."""
    cli_compare: str | None = None
    """`cli_compare(paths, out) -> None`: `sandbox compare` of runs all of this kind, none a branch of another: the
    kind's own comparison, its figure at `out` (SCAI's runs in the paper's layout); without one, and with
    `--branches`, the runs' headline figures per step side by side (`sandbox.engine.branches`)."""
    expand: str | None = None
    """`expand(scenario, source) -> [(kind name, scenario), ...]`: the runs a scenario of this kind plays (a
    sweep's), for the dry run; default: the scenario itself."""
    result: str | None = None
    """A `sandbox.core.result.RunResult` subclass with the kind's own views (plots, tables); default the base."""
    tables: Mapping[str, str] = field(default_factory=dict)
    """Table name -> file in a run directory (CSV or JSONL), loaded as pandas by `RunResult.table(name)`."""
    commands: tuple[str, ...] = ()
    """Modules whose import registers the kind's own commands on `sandbox.core.commands.app`."""
    benchmarks: Mapping[str, str] = field(default_factory=dict)
    """Benchmark name -> `fn() -> dict`, run by `sandbox bench NAME`."""
    example: str | None = None
    """A small example scenario, relative to the repository root."""
    budget: bool = False
    """Whether the kind honours `budget:` caps (the run and resume `--max-*` options)."""
    view: str | None = None
    """`view(path) -> [section, ...]`: the run page of `sandbox view` and `sandbox report`, as sections of
    `sandbox.viewer.sections` (charts, tables, figures, policy diffs, a grid of cells); default: the kind's `tables`.
    The viewer adds the headline figures, the other figures, the runs inside and the transcripts."""
    extras: tuple[str, ...] = ()
    """The optional extras (`sandbox.base.extras`: train, solve, scale, ...) every run of this kind needs: a run, a
    resume or an evaluation exits 2 with the `pip install` line, before it starts, when one is missing."""
    requires: str | None = None
    """`requires(scenario) -> [extra, ...]`: the extras a given scenario needs beyond `extras` (a society's inline
    solve, a population's scripted members, a labeling task's negotiators); every kind's model specs are added
    (`needs`), and a sweep checks its executor and each cell's."""
    conformance: str | None = None
    """A `sandbox.core.conformance.ConformanceCase`: the kind's small run (its scenario, its scripted models, its
    progress hooks, the tables an interrupted and resumed run must write identically), played by the conformance
    test for every registered kind."""
    steps: str | None = None
    """A `sandbox.core.steps.Steps`: what a step of the kind's runs is (an epoch, a generation), which changes a fork
    may make at one, and the headline figure per step; a kind without one cannot be forked or replayed."""
    headline: tuple[str, ...] = ()
    """The `summary.json` fields that the viewer's list of runs shows (a dotted name reads into a mapping:
    `offered_share_by_norm.fair.mean`); those a run lacks are left out; default: the summary's first numbers."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", MappingProxyType(dict(self.tables)))
        object.__setattr__(self, "benchmarks", MappingProxyType(dict(self.benchmarks)))

    def call(self, what: str, *args: Any, **kwargs: Any) -> Any:
        """Call the kind's `what` (a field naming code) with these arguments; `UsageError` when it has none.

        Before a run, a resume or an evaluation (`STARTS`), the kind's extras are checked (`require`): the
        scenario's own too, the first argument of a run, a run directory's stored one for the others."""
        reference = getattr(self, what)
        if reference is None:
            raise UsageError(f"{self.name} runs have no {what.replace('_', ' ')}")
        if what in STARTS and args:
            self.require(args[0] if what in {"run", "cli_run"} else self._stored(args[0]))
        elif what in STARTS:
            self.require()
        return resolve(reference)(*args, **kwargs)

    def _stored(self, path: Any) -> Any:
        """The scenario of the run directory `path`, when it holds a valid one of this kind; else None."""
        from pydantic import ValidationError

        from sandbox.base.errors import SandboxError
        from sandbox.base.files import read_yaml
        from sandbox.core.run_dir import SCENARIO

        file = Path(path) / SCENARIO
        if not file.is_file():
            return None
        try:
            return self.scenario_model().model_validate(read_yaml(file))
        except (SandboxError, ValidationError, ValueError):
            return None

    def needs(self, scenario: Any = None) -> list[str]:
        """The extras a run of this kind needs: `extras`, and when `scenario` is given its own (`requires`) and
        its models' (`sandbox.llm.specs.spec_extras` of every `spec`, `policy` and `student` field)."""
        found = list(self.extras)
        if scenario is not None:
            if self.requires:
                found += resolve(self.requires)(scenario)
            found += _model_extras(scenario.model_dump() if hasattr(scenario, "model_dump") else {})
        return list(dict.fromkeys(found))

    def require(self, scenario: Any = None) -> None:
        """`MissingExtraError` (exit 2, with the `pip install` line) unless the extras of `needs` are installed."""
        from sandbox.base.extras import require

        what = self.title or f"a {self.name} run"
        require(*self.needs(scenario), what=what[:1].upper() + what[1:])

    def has(self, what: str) -> bool:
        """Whether the kind names code for `what`."""
        return getattr(self, what) is not None

    def scenario_model(self) -> Any:
        """The kind's pydantic scenario model (imported now)."""
        return resolve(self.model)

    def label(self, path: Path) -> str:
        """What the run directory `path` of this kind holds (`dir_label`, else the kind's name)."""
        return self.call("dir_label", path) if self.dir_label else self.name


def _model_extras(data: Any, specs: bool = False) -> list[str]:
    """The extras of the model specs in a scenario's dumped data: the fields named spec, policy or student, and
    every text directly under a `models` mapping (`models: {judge: hf:PATH}`)."""
    from sandbox.llm.specs import spec_extras

    if isinstance(data, str):
        return spec_extras(data) if specs else []
    if isinstance(data, dict):
        found: list[str] = []
        for key, value in data.items():
            found += _model_extras(value, (specs and isinstance(value, str)) or key in MODEL_FIELDS or key == "models")
        return found
    if isinstance(data, list):
        return [extra for item in data for extra in _model_extras(item)]
    return []


MODEL_FIELDS = frozenset({"spec", "policy", "student"})
"""The scenario fields that hold a model spec, whatever the kind (`models.<role>.spec`, a trainer's base model)."""

STARTS = frozenset({"run", "resume", "cli_run", "cli_resume", "cli_evaluate"})
"""The calls of a kind that start work: its extras are checked first."""

_REGISTERED: dict[str, RunKind] = {}
_LOADED = False


def _load_entry_points() -> None:
    global _LOADED
    if _LOADED:
        return
    found: list[tuple[str, Callable[[], Any]]] = [
        (f"entry point {e.name} = {e.value} of group {GROUP}", e.load) for e in metadata.entry_points(group=GROUP)
    ]
    found += [
        (f"{ENVIRONMENT} item {ref!r}", functools.partial(resolve, ref))
        for ref in filter(None, (r.strip() for r in os.environ.get(ENVIRONMENT, "").split(",")))
    ]
    for where, load in found:
        try:
            kind = load()
        except (ImportError, AttributeError) as error:
            raise UsageError(f"{where} cannot be loaded: {error}") from None
        if not isinstance(kind, RunKind):
            raise UsageError(f"{where} is not a RunKind")
        _REGISTERED.setdefault(kind.name, kind)
    _LOADED = True


def register(kind: RunKind, *, replace: bool = False) -> RunKind:
    """Add `kind` to the registry (what an entry point does, for a kind defined in a test or a notebook)."""
    _load_entry_points()
    if kind.name in _REGISTERED and not replace and _REGISTERED[kind.name] != kind:
        raise ValueError(f"a run kind named {kind.name!r} is already registered")
    _REGISTERED[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove the kind `name` (tests)."""
    _REGISTERED.pop(name, None)


def kinds() -> dict[str, RunKind]:
    """Every registered kind by name, in the order files are matched (`precedence`, the default kind last)."""
    _load_entry_points()
    ordered = sorted(_REGISTERED.values(), key=lambda k: (k.block is None, k.precedence, k.name))
    return {kind.name: kind for kind in ordered}


def get(name: str) -> RunKind:
    """The kind `name`; `UsageError` listing the known kinds."""
    found = kinds()
    if name not in found:
        raise UsageError(f"unknown run kind {name!r} (known: {', '.join(found) or 'none'})")
    return found[name]


def kind_of_data(data: Any) -> RunKind:
    """The kind of a parsed scenario file: the first kind (by precedence) whose block it has, else the default."""
    registered = kinds().values()
    if isinstance(data, dict):
        for kind in registered:
            if kind.block is not None and kind.block in data:
                return kind
    for kind in registered:
        if kind.block is None:
            return kind
    raise UsageError("no default run kind is registered (is the sandbox installed? run `make install`)")


def kind_of_scenario(scenario: Any) -> RunKind:
    """The kind whose scenario model `scenario` is: matched by the model's reference first (no other kind's model
    is imported), then by type; a base of a kind's model (a `SocietyScenario`) belongs to that kind."""
    cls = type(scenario)
    registered = kinds().values()
    for kind in registered:
        if kind.model == f"{cls.__module__}:{cls.__qualname__}":
            return kind
    for kind in registered:
        model = kind.scenario_model()
        if isinstance(scenario, model) or (isinstance(model, type) and issubclass(model, cls)):
            return kind
    raise UsageError(f"{cls.__name__} is no registered kind's scenario model")


def kind_of_dir(path: Path | str) -> RunKind:
    """The kind of the run directory `path`; `UsageError` when it is not one, `ScenarioError` when its scenario
    file cannot be read."""
    from sandbox.base.files import read_yaml
    from sandbox.core.run_dir import SCENARIO

    path = Path(path)
    for kind in kinds().values():
        if kind.owns_dir and kind.call("owns_dir", path):
            return kind
    if not (path / SCENARIO).is_file():
        raise UsageError(f"{path} is not a run directory (no {SCENARIO})")
    return kind_of_data(read_yaml(path / SCENARIO))


def by_option(options: Mapping[str, Any], allowed: tuple[str, ...], what: str) -> None:
    """`UsageError` when `options` give (not None, not False) one outside `allowed`, naming it and `what`."""
    extra = sorted(k for k, v in options.items() if v is not None and v is not False and k not in allowed)
    if extra:
        flags = ", ".join("--" + name.replace("_", "-") for name in extra)
        raise UsageError(f"{flags}: not an option for {what}")
