"""Installed as a user installs it: the sdist and the wheel built, checked, and installed into fresh virtual
environments (the core only, then `[all]`), and into an environment that already holds other versions of some
dependencies, which the install must leave as they are.

Marked `install`: minutes of pip and about 6 GB of disk, so `make test` skips them and `make check-install` (which
`.ci/run` calls) runs them. Each environment's install time, size and number of packages are printed, and written to
`dist/install-measurements.json`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
MEASURED: dict[str, dict[str, Any]] = {}
# In the supported ranges, and not the versions requirements.lock holds: a researcher's own environment.
THEIRS = {"pandas": "2.3.3", "transformers": "5.20.0", "networkx": "3.5"}


def run(
    *args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None, check: bool = True, timeout: int = 1800
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


class Env:
    """A fresh virtual environment (no system site-packages) and its commands."""

    def __init__(self, path: Path) -> None:
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        self.path = path
        self.bin = path / "bin"
        self.env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
        self.env.update(PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}", NO_COLOR="1", COLUMNS="200")

    def pip(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return run(self.bin / "python", "-m", "pip", "--disable-pip-version-check", *args, env=self.env)

    def sandbox(self, *args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(self.bin / "sandbox", *args, cwd=cwd, env=self.env, check=check)

    def versions(self) -> dict[str, str]:
        listed = json.loads(self.pip("list", "--format", "json").stdout)
        return {item["name"].lower(): item["version"] for item in listed}

    def site_packages(self) -> Path:
        return next(self.path.glob("lib/python*/site-packages"))

    def measure(self, name: str, seconds: float) -> None:
        packages = [p for p in self.versions() if p not in {"pip", "setuptools", "norm-sandbox"}]
        MEASURED[name] = {
            "seconds": round(seconds, 1),
            "site_packages_mb": round(size_mb(self.site_packages())),
            "packages": len(packages),
        }


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel (`python -m build`: the wheel is built from the sdist), checked by twine."""
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, ROOT)
    built = {"sdist": next(out.glob("*.tar.gz")), "wheel": next(out.glob("*.whl"))}
    checked = run(sys.executable, "-m", "twine", "check", "--strict", *built.values())
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    return built


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


def test_the_distributions_hold_the_examples_and_the_assets(dist: dict[str, Path]) -> None:
    import tarfile
    import zipfile

    names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    shipped = {
        f"sandbox/examples/{p.relative_to(ROOT / 'sandbox/examples').as_posix()}"
        for p in (ROOT / "sandbox/examples").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped <= names, sorted(shipped - names)[:5]
    assert {"sandbox/viewer/static/app.js", "sandbox/viewer/static/index.html"} <= names
    assert len([n for n in names if n.startswith("prompts/") and n.endswith(".j2")]) == len(
        list((ROOT / "prompts").rglob("*.j2"))
    )
    meta = zipfile.ZipFile(dist["wheel"]).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: all" in meta and 'Requires-Dist: torch<3,>=2.6; extra == "train"' in meta
    with tarfile.open(dist["sdist"]) as sdist:
        members = {m.name.partition("/")[2] for m in sdist.getmembers()}
    assert {
        "sandbox/examples/scenarios/default.yaml",
        "sandbox/examples/notebooks/chain.ipynb",
        "pyproject.toml",
    } <= members


def test_the_core_install(dist: dict[str, Path], work: Path) -> None:
    env = Env(work / "core")
    started = time.perf_counter()
    env.pip("install", "-c", LOCK, dist["wheel"])
    env.measure("core", time.perf_counter() - started)
    installed = env.versions()
    assert not {"torch", "transformers", "open-spiel", "ray", "axelrod", "starlette", "mlflow-skinny"} & set(installed)
    assert env.sandbox("--version", cwd=work).stdout.strip() == f"norm-sandbox {installed['norm-sandbox']}"
    listed = env.sandbox("examples", "list", cwd=work).stdout
    assert "default" in listed and "notebooks/explore_run" in listed
    assert "a dry run (1 runs x 2 epochs)" in env.sandbox("run", "default", "--dry-run", cwd=work).stdout
    before = sorted(work.rglob("*"))
    for args, extra in (
        (["train", "moral/tiny/utilitarian_vs_tft"], "train"),
        (["solve", "dialogue/ultimatum_small"], "solve"),
        (["run", "population/pd_grid_nowak_may"], "population"),
        (["view", "."], "viewer"),
    ):
        done = env.sandbox(*args, cwd=work, check=False)
        assert done.returncode == 2 and f"pip install 'norm-sandbox[{extra}]'" in " ".join(done.stderr.split()), (
            done.stderr
        )
    assert sorted(work.rglob("*")) == before  # nothing written
    env.sandbox("examples", "copy", "default", "chain/selfish_tiny", "mine", cwd=work)
    assert (work / "mine/scenarios/chain/society_selfish.yaml").is_file()
    # a real society on the embedded model, from the core install alone (one epoch)
    env.sandbox("run", "default", "--epochs", "1", "--out", work / "society", cwd=work)
    summary = json.loads((work / "society/summary.json").read_text())
    assert summary["kind"] == "society" and summary["epochs"] == 1 and summary["episodes"] > 0
    assert json.loads((work / "society/run.json").read_text())["status"] == "complete"


def test_the_all_install(dist: dict[str, Path], work: Path) -> None:
    env = Env(work / "all")
    started = time.perf_counter()
    env.pip("install", "-c", LOCK, f"{dist['wheel']}[all]")
    env.measure("all", time.perf_counter() - started)
    installed = env.versions()
    assert installed["torch"].startswith("2.13.0") and {"open-spiel", "ray", "axelrod", "mlflow-skinny"} <= set(
        installed
    )
    run(
        env.bin / "python",
        "-c",
        "import torch, transformers, peft, trl, pyspiel, ray, axelrod, mlflow, starlette, plotly, all_minilm_l6_v2",
        env=env.env,
    )
    assert env.sandbox("--version", cwd=work).returncode == 0
    assert "default" in env.sandbox("examples", "list", cwd=work).stdout
    assert "a dry run" in env.sandbox("run", "default", "--dry-run", cwd=work).stdout
    assert "dialogue" in env.sandbox("run", "dialogue/ultimatum_small", "--dry-run", cwd=work).stdout.lower()
    shutil.rmtree(env.path)


def test_an_environment_s_own_versions_stay(dist: dict[str, Path], work: Path) -> None:
    """A researcher's environment holds other versions (in range) of pandas, networkx and transformers, and torch:
    installing the sandbox (from the sdist, built there) with the train extra leaves every one of them as it was."""
    env = Env(work / "theirs")
    env.pip("install", "torch==2.13.0", *(f"{name}=={version}" for name, version in THEIRS.items()))
    before = env.versions()
    env.pip("install", f"norm-sandbox[train] @ {dist['sdist'].as_uri()}")
    after = env.versions()
    for name in [*THEIRS, "torch"]:
        assert after[name] == before[name], (name, before[name], after[name])
    changed = {name: (before[name], after[name]) for name in before if after.get(name) != before[name]}
    assert not changed, changed
    env.pip("check")
    assert env.sandbox("--version", cwd=work).returncode == 0
    shutil.rmtree(env.path)


def test_report_the_measurements(work: Path) -> None:
    """Printed and written to dist/: the core install against the full one (`[all]`, today's everything)."""
    if not {"core", "all"} <= set(MEASURED):
        pytest.skip("the core or the all install did not run")
    core, full = MEASURED["core"], MEASURED["all"]
    report = {**MEASURED, "core_over_all": {k: round(core[k] / full[k], 3) for k in core}}
    (ROOT / "dist").mkdir(exist_ok=True)
    (ROOT / "dist/install-measurements.json").write_text(json.dumps(report, indent=2) + "\n")
    print("\ninstall   seconds   site-packages MB   packages")
    for name, row in MEASURED.items():
        print(f"{name:8} {row['seconds']:8.1f} {row['site_packages_mb']:18} {row['packages']:10}")
    print("core/all " + "  ".join(f"{k} {v:.2f}" for k, v in report["core_over_all"].items()))
    assert core["packages"] < full["packages"] and core["site_packages_mb"] < full["site_packages_mb"]
