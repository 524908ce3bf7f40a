"""Another machine, simulated in a second process whose numeric kernels differ from this one's (issue 61).

`narrowed()` is the environment of such a process: numpy's CPU dispatch narrowed to its baseline
(`NPY_DISABLE_CPU_FEATURES`, every feature it dispatches to), torch's kernels without AVX (`ATEN_CPU_CAPABILITY=
default`), OpenBLAS's generic kernels (`OPENBLAS_CORETYPE`) and other BLAS and OpenMP thread counts. Run as a
module in that process, this file says what the process's kernels are and replays a run:

    python -m tests.another_machine kernels            # numpy's dispatch, torch's capability, an embedding's bytes
    python -m tests.another_machine replay RUN NAME    # replay RUN (the shipped population NAME, small) offline
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

# Texts whose MiniLM embedding tells two machines' kernels apart (their last bits differ, measured 1e-7).
TEXTS = [
    "Be selfish: always keep as much as possible for yourself and give others as little as possible.",
    "Be altruistic: always put others first and give them as much as possible, keeping little or nothing.",
]


def narrowed() -> dict[str, str]:
    """This process's environment with the numeric kernels of another machine."""
    from numpy._core import _multiarray_umath as numpy_cpu
    from threadpoolctl import threadpool_info

    here = max((pool["num_threads"] for pool in threadpool_info()), default=1)
    threads = 2 if here == 1 else 1  # other thread counts than this process's (under pytest-xdist: 1)
    return os.environ | {
        "NPY_DISABLE_CPU_FEATURES": " ".join(numpy_cpu.__cpu_dispatch__),
        "ATEN_CPU_CAPABILITY": "default",
        "OPENBLAS_CORETYPE": "Prescott",
        "OPENBLAS_NUM_THREADS": str(threads),
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
    }


def kernels() -> dict[str, Any]:
    """What this process computes with: numpy's SIMD extensions found, torch's CPU capability, BLAS threads, and a
    digest of two MiniLM embeddings' bytes (equal digests: the same kernels, for these texts)."""
    import numpy as np
    import torch
    from numpy._core import _multiarray_umath as numpy_cpu
    from threadpoolctl import threadpool_info

    from sandbox.llm.embeddings import minilm_embedder

    vectors = np.asarray(minilm_embedder()(TEXTS), dtype=np.float32)
    return {
        "numpy_simd": [f for f in numpy_cpu.__cpu_dispatch__ if numpy_cpu.__cpu_features__.get(f)],
        "torch_capability": torch.backends.cpu.get_cpu_capability(),
        "blas": [(pool["internal_api"], pool.get("architecture"), pool["num_threads"]) for pool in threadpool_info()],
        "embedding_digest": hashlib.sha256(vectors.tobytes()).hexdigest(),
    }


def replay(run: Path, name: str) -> dict[str, Any]:
    """Replay `run`, a run of the shipped population `name` made small by `tests.golden_populations`, offline."""
    from sandbox.engine.replay import replay_run
    from tests.golden_populations import models_for, small

    report = replay_run(run, models=models_for(small(name)))
    return {"identical": report.identical, "close": report.close, "lines": report.lines()}


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["kernels"]:
            print(json.dumps(kernels()))
        case ["replay", run, name]:
            print(json.dumps(replay(Path(run), name)))
        case _:
            raise SystemExit(__doc__)
