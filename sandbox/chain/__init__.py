"""The chain as one experiment: a society's norm learned in words, judged, distilled, and back in the society.

Stages, each a run directory of its own kind inside the chain's (`sandbox.chain.run`):
(a) a SCAI society run learns a policy; (b) the judge labels every move under it (kind judge,
`sandbox.distill.label`); (c) students train on the judged reward, one per seed (kind distill);
(d) each student, with no policy and no MetaLM, is the society's assistant again, beside the learned
policy held fixed and the untrained base model; (e) a comparison table and plot (`sandbox.chain.compare`).

    from sandbox.chain import run_chain
    from sandbox.core.scenario_files import load_scenario

    path = run_chain(load_scenario("scenarios/chain/selfish_tiny.yaml", kind="chain"), "runs/chain-selfish")

Public modules: `sandbox.chain.scenario` (the `chain:` block), `sandbox.chain.run` (run, resume, `--from`),
`sandbox.chain.compare` (the comparison).
"""

from __future__ import annotations

from typing import Any

from sandbox.base.lazy import lazy_attribute

__all__ = ["ChainScenario", "resume_chain", "run_chain"]

_LAZY = {
    "ChainScenario": "sandbox.chain.scenario",
    "run_chain": "sandbox.chain.run",
    "resume_chain": "sandbox.chain.run",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
