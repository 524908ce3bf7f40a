"""The chain's stages as scenarios of their own kinds, built from the chain scenario: (b) the judge's label
scenario of the learned policy, (c) a distillation per seed reading the judge's table, (d) the society again with
each subject (the assistant with its policy fixed, each student, the base model) as its assistant; and the runs a
dry run lists. `sandbox.chain.run` plays them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.base.files import read_json
from sandbox.chain.layout import stage_runs
from sandbox.chain.scenario import ChainScenario
from sandbox.core.run_dir import GUIDED, SCENARIO

if TYPE_CHECKING:
    from sandbox.distill.label import LabelScenario
    from sandbox.distill.scenario import DistillScenario
    from sandbox.scai.scenario import Scenario

__all__ = ["distill_scenario", "dry_run_stages", "evaluation_scenario", "judge_scenario"]


def judge_scenario(scenario: ChainScenario, path: Path) -> LabelScenario:
    """Stage (b): a label scenario of the learned policy (the society run's first final policy)."""
    from sandbox.core.scenario_files import parse_kind

    block = scenario.chain
    data = {
        "name": f"{scenario.name}-judge",
        "seed": scenario.seed,
        "concurrency": scenario.society().concurrency,
        "models": block.models.model_dump(mode="json"),
        "distill": {
            **block.distill.model_dump(mode="json", exclude={"source", "judge_table"}),
            "source": {"run": str((path / "society").resolve())},
        },
        "training": block.training.model_dump(mode="json"),
        "label": {},
    }
    return parse_kind("judge", data, f"{path / SCENARIO} (the judge stage)")


def distill_scenario(scenario: ChainScenario, path: Path, index: int) -> DistillScenario:
    """Stage (c): the distillation of the `index`th seed, reading the judge stage's table (it asks no judge)."""
    from sandbox.core.scenario_files import parse_kind

    data = judge_scenario(scenario, path).model_dump(mode="json", exclude={"label"})
    seed = scenario.stage_seed(index)
    data.update(name=f"{scenario.name}-seed-{seed}", seed=seed)
    data["distill"]["judge_table"] = str((path / "judge" / "judge_table.csv").resolve())
    return parse_kind("distill", data, f"{path / SCENARIO} (the distill stage, seed {seed})")


def evaluation_scenario(scenario: ChainScenario, path: Path, directory: str, *, dry: bool = False) -> Scenario:
    """Stage (d): the society with the subject of `directory` as its assistant, nothing learning (`dry`: before the
    earlier stages have run, for the dry run: the policy and the student's paths are placeholders)."""
    from sandbox.core.scenario_files import parse_kind

    society = scenario.society()
    block, evaluation = scenario.chain, scenario.chain.evaluation
    data = society.model_dump(mode="json")
    subject = directory.removeprefix("evaluate/")
    data.update(
        name=f"{scenario.name}-{subject}", runs=evaluation.runs or society.runs, epochs=evaluation.epochs, budget={}
    )
    guided = data["society"].get("guided")
    if guided is not None and guided.get("solve") is not None and not dry:  # the society stage's solve, not a new one
        data["society"]["guided"] = {**guided, "solve": None, "policy": str((path / "society" / GUIDED).resolve())}
    assistant = data["assistant"]
    interactions = evaluation.interactions.model_dump(mode="json")
    if subject == "assistant":
        policy = (
            "(the policy the society stage learns)"
            if dry
            else read_json(path / "judge" / "principles.json")["principles"][0]["text"]
        )
        data["assistant"] = {
            **assistant,
            "initial_policy": policy,
            "initial_policies": None,
            "revise": False,
            "revision": {},
            "interactions": interactions,
        }
    else:
        spec = _student_spec(scenario, path, subject, dry=dry)
        data["assistant"] = {
            "prompt": "none",
            "answer": scenario.form(),
            "interactions": interactions,
            "final_proposals": assistant["final_proposals"],
        }
        ppo = block.training.ppo_config(seed=0)
        data["models"]["assistant"] = {
            "spec": spec,
            "sampling": {"temperature": ppo.temperature, "max_tokens": ppo.max_new_tokens},
        }
    return parse_kind("society", data, f"{path / SCENARIO} (the evaluation of {subject})")


def _student_spec(scenario: ChainScenario, path: Path, subject: str, *, dry: bool = False) -> str:
    """The chat spec of a trained student (its summary's `assistant_spec`) or of the base model (adapter off)."""
    tiny = scenario.chain.models.student.partition(":")[0] == "tiny"
    if subject.startswith("student-seed-"):
        run = path / "distill" / f"seed-{subject.removeprefix('student-seed-')}"
        if not dry:
            return read_json(run / "summary.json")["assistant_spec"]
        return (f"hf:{run / 'student_base'}" if tiny else scenario.chain.models.student) + f"+adapter:{run / 'adapter'}"
    base = path / "distill" / f"seed-{scenario.stage_seed(0)}" / "student_base"
    return f"hf:{base.resolve()}" if tiny else f"base:{scenario.chain.models.student}"


def dry_run_stages(scenario: ChainScenario) -> list[tuple[str, Any]]:
    """The runs the chain plays, for the dry run: the society, the judge, and each evaluation society (the students'
    training asks no model: the judge's table is labelled first)."""
    path = Path("runs") / scenario.name
    return [("society", scenario.society()), ("judge", judge_scenario(scenario, path))] + [
        ("society", evaluation_scenario(scenario, path, d, dry=True)) for d in stage_runs(scenario)["evaluate"]
    ]
