"""Shared test doubles and small scenarios: the society kind's scripted models live with its conformance case
(`sandbox.scai.conformance`) and are imported here under their names. No test touches the network."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.core.scenario_files import parse_scenario
from sandbox.llm.scripted import ScriptedChatModel
from sandbox.scai.conformance import POLICY_FOR_SHARE as POLICY_FOR_SHARE
from sandbox.scai.conformance import SHARES as SHARES
from sandbox.scai.conformance import norm_of as norm_of
from sandbox.scai.conformance import proposal_offering as proposal_offering
from sandbox.scai.conformance import scai_models as scai_models
from sandbox.scai.conformance import scripted_assistant_propose as scripted_assistant_propose
from sandbox.scai.conformance import scripted_meta as scripted_meta
from sandbox.scai.conformance import scripted_propose as scripted_propose
from sandbox.scai.conformance import scripted_reading as scripted_reading
from sandbox.scai.conformance import scripted_respond as scripted_respond
from sandbox.scai.conformance import ultimatum_model as ultimatum_model
from sandbox.scai.scenario import Scenario


def small_scenario(**changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "small",
        "seed": 3,
        "runs": 2,
        "epochs": 2,
        "concurrency": 8,
        "society": {
            "size": 12,
            "norms": [
                {"norm": "selfish", "proportion": 0.5},
                {"norm": "altruistic", "proportion": 0.25},
                {"norm": "fair", "proportion": 0.25},
            ],
        },
    }
    data.update(changes)
    return parse_scenario(data, "<test>")


@pytest.fixture
def model() -> ScriptedChatModel:
    return ultimatum_model()


def scai_scenario(**changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "scai",
        "seed": 5,
        "runs": 3,
        "epochs": 3,
        "concurrency": 8,
        "society": {"size": 16, "norms": [{"norm": "selfish", "proportion": 1.0}]},
        "assistant": {"initial_policy": "Put others first and give them nearly all."},
    }
    data.update(changes)
    return parse_scenario(data, "<test>")


def pytest_configure(config: pytest.Config) -> None:
    """`make test` runs the suite on pytest-xdist, a worker per core: each worker runs on a core of its own
    (`sandbox.sweep.executors.core_slices` and `pin`, as the sweep's workers are pinned), with one thread for the
    math libraries, so two workers' OpenMP and BLAS pools never spin against each other (two PPO runs sizing their
    pools to every core ran 20 times slower in bursts). The controller sets the thread counts before it starts the
    workers, since numpy's BLAS reads them on import; a count the user set is kept."""
    import os

    from sandbox.sweep.executors import THREAD_VARIABLES, core_slices, pin, usable_core_list

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        if getattr(config.option, "numprocesses", None):
            for name in THREAD_VARIABLES:
                os.environ.setdefault(name, "1")
        return
    cores = usable_core_list()
    if cores:  # not on Linux: the workers share the cores
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        pin(core_slices(cores, workers)[int(worker.removeprefix("gw")) % workers])


def _slow_seconds(item: pytest.Item) -> float:
    """About how long a test marked `slow` takes (the closest `slow` mark that says), 30 s for one that does not
    say, 0 for a test not marked slow."""
    marks = list(item.iter_markers("slow"))
    if not marks:
        return 0.0
    return float(next((m.kwargs["seconds"] for m in marks if "seconds" in m.kwargs), 30))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `paid` call a paid endpoint: they run only when asked to (SANDBOX_PAID_TESTS=1) with a key.
    Tests marked `install` build the distributions and install them into new environments: `make check-install`
    (SANDBOX_INSTALL_TESTS=1, called by .ci/run) runs them, `make test` leaves them to it. The slow tests (the
    embedded model, training) go first, the longest first (`@pytest.mark.slow(seconds=S)`: about how long the test
    takes on a quiet 2-core machine; 30 for a bare `slow`), so that under pytest-xdist the workers share them and the
    suite ends on short tests, not with one worker alone on a long one."""
    import os

    items.sort(key=lambda item: -_slow_seconds(item))  # stable: each group keeps its order

    paid = os.environ.get("SANDBOX_PAID_TESTS") == "1" and os.environ.get("OPENAI_API_KEY")
    install = os.environ.get("SANDBOX_INSTALL_TESTS") == "1"
    skip_paid = pytest.mark.skip(reason="a paid endpoint: set SANDBOX_PAID_TESTS=1 and OPENAI_API_KEY to run it")
    skip_install = pytest.mark.skip(reason="installs into new environments: make check-install runs it (as CI does)")
    for item in items:
        if "paid" in item.keywords and not paid:
            item.add_marker(skip_paid)
        if "install" in item.keywords and not install:
            item.add_marker(skip_install)


@pytest.fixture(scope="session")
def viewer_root(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A folder holding one small run of every kind and the awkward directories (`tests.viewer_runs`), made once a
    session: under pytest-xdist the first worker that asks makes it in the session's shared temporary folder while
    the others wait on a lock, then every worker reads it (the viewer's tests only read it)."""
    import os

    from filelock import FileLock

    from sandbox.core import kinds
    from tests.toy_kind import TOY
    from tests.viewer_runs import build

    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        folder = tmp_path_factory.mktemp("viewer")
    else:  # the workers' temporary folders are popen-gwN in one folder of this session's
        folder = tmp_path_factory.getbasetemp().parent / "viewer"
        folder.mkdir(exist_ok=True)
    root, made = folder / "runs", folder / "made"
    with FileLock(folder / "lock"):
        if made.is_file():
            return root
        with pytest.MonkeyPatch.context() as patch:  # the environment as it was afterwards
            patch.setenv(kinds.ENVIRONMENT, "tests.toy_kind:TOY")  # the sweep's spawned workers register it too
            try:
                build(root)
            finally:
                kinds.unregister(TOY.name)
        made.touch()
    return root
