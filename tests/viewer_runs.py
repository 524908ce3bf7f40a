"""A folder of runs for the viewer's tests: one small run of every registered kind (the conformance cases, on
scripted models), plus the awkward ones: a corrupt run, a half-written one, a transcript holding HTML, a symlink
leading out of the folder, and a run in progress."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import sandbox
from sandbox.core import kinds

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def build(root: Path) -> Path:
    """Every kind's run under `root`, and the awkward directories; returns `root`."""
    from tests.toy_kind import TOY

    kinds.register(TOY)
    root.mkdir(parents=True, exist_ok=True)
    for name, kind in kinds.kinds().items():  # each kind's own conformance case (`RunKind.conformance`)
        assert kind.conformance is not None, f"the {name} kind carries no conformance case"
        case = kinds.resolve(kind.conformance)
        sandbox.run(case.scenario(root), out=root / name, models=case.models())
    # a run whose summary is not JSON, and one with only a scenario (killed before anything else)
    shutil.copytree(root / "society", root / "corrupt", ignore=shutil.ignore_patterns("*.sqlite"))
    (root / "corrupt" / "summary.json").write_text("{not json")
    (root / "half").mkdir()
    (root / "half" / "scenario.yaml").write_text((root / "toy" / "scenario.yaml").read_text())
    # a transcript whose model wrote HTML, and a line cut short
    hostile = root / "hostile"
    shutil.copytree(root / "society", hostile, ignore=shutil.ignore_patterns("*.sqlite"))
    lines = (hostile / "transcripts.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["answer"] = HOSTILE
    record["messages"][-1]["content"] = HOSTILE
    (hostile / "transcripts.jsonl").write_text("\n".join([json.dumps(record), *lines[1:], '{"cut": '[:8]]) + "\n")
    policies = [json.loads(line) for line in (hostile / "policies.jsonl").read_text().splitlines()]
    policies[-1]["policy"] = HOSTILE
    policies[-1]["answer"] = HOSTILE
    (hostile / "policies.jsonl").write_text("".join(json.dumps(p) + "\n" for p in policies))
    # a secret beside the folder, and a symlink inside leading to it
    secret = root.parent / f"{root.name}-secret.txt"
    secret.write_text("secret")
    os.symlink(secret, root / "society" / "leak.txt")
    os.symlink(root.parent, root / "society" / "up")
    return root


def build_family(root: Path) -> Path:
    """A population run (`parent`, the conformance case: a scripted matrix game, no model) and its forks: `fork`
    at generation 3 with a new revision, and `grandchild`, a fork of `fork` at generation 4; returns `root`."""
    case = kinds.resolve(kinds.get("population").conformance)
    root.mkdir(parents=True, exist_ok=True)
    sandbox.run(case.scenario(root), out=root / "parent")
    sandbox.fork(root / "parent", at=3, changes={"population.revision.beta": 5.0}, out=root / "fork")
    sandbox.fork(root / "fork", at=4, changes={"population.revision.beta": 0.5}, out=root / "grandchild")
    return root
