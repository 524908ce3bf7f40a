"""`sandbox bench training`: moral fine-tuning's episodes per second on this machine's device.

Trains a few episodes of the Utilitarian-against-TFT scenario (rollouts and a
PPO step each) with the tiny model at its own size, and with real pretrained
models at the paper's size (batch 5, LoRA rank 64, two new tokens) under the
authors' settings (`ppo_preset: authors`, one optimiser step per episode) and
under `multi_step` (five clipped PPO steps per episode), measured in the same
run: their ratio is what the authors' settings save. SmolLM2-135M runs
everywhere; the embedded 1.5B model runs where CUDA is present (on 2 CPU
cores one episode takes minutes). Peak memory is the GPU's allocated peak on
CUDA and the process's resident peak on a CPU (on Linux, each
configuration's own: the high-water mark is reset between them).
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

console = Console(emoji=False)  # a model spec or an error prints as written
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "moral"


def _reset_peak_memory(device: str) -> None:
    """Forget the previous configuration's peak: its trainer is collected, and the high-water mark reset (on
    CUDA the allocator's; on Linux the process's resident peak, through /proc/self/clear_refs)."""
    import gc

    import torch

    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:  # not Linux: the peak stays the process's lifetime peak
        pass


def _peak_memory_gb(device: str) -> float:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**30
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / (2**30 if sys.platform == "darwin" else 2**20)


def time_training(scenario: Any, episodes: int) -> dict[str, Any]:
    """Seconds per episode over `episodes` episodes of `scenario`, after one untimed warm-up episode."""
    import torch

    from sandbox.moral.run import load_trainer
    from sandbox.training.rollout import train

    _reset_peak_memory(scenario.models.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    started = time.perf_counter()
    trainer = load_trainer(scenario)
    loaded = time.perf_counter() - started
    device = str(trainer.device)
    setup = scenario.training.setup(seed=scenario.seed)
    train(trainer, setup, 1)  # warm-up: kernels, caches, allocator
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    started = time.perf_counter()
    rows = train(trainer, setup, 1 + episodes, start=1)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = (time.perf_counter() - started) / episodes
    return {
        "device": device,
        "dtype": str(next(trainer.model.parameters()).dtype).replace("torch.", ""),
        "load_s": loaded,
        "s_per_episode": seconds,
        "episodes_per_s": 1 / seconds,
        "peak_memory_gb": _peak_memory_gb(device),
        "illegal": sum(r["illegal"] for r in rows) / len(rows),
    }


def bench_training(
    policies: tuple[str, ...] | None = None, episodes: int | None = None, real_size: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Episodes per second of training for the tiny model and real models, on this machine's device.

    A tiny policy trains at the tiny scenario's size unless named in `real_size` (a test of the real-size path).
    """
    import torch

    from sandbox.base.errors import ModelUnavailableError
    from sandbox.core.scenario_files import load_scenario
    from sandbox.moral.scenario import apply_training_overrides

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    policies = policies or (("tiny", "smollm2", "embedded") if cuda else ("tiny", "smollm2"))
    table = Table(
        title=f"Moral fine-tuning: training episodes per second on {device} (Utilitarian vs TFT)", title_justify="left"
    )
    for column in (
        "policy",
        "settings",
        "batch",
        "device",
        "dtype",
        "s/episode",
        "episodes/s",
        "peak memory GB",
        "vs authors",
    ):
        table.add_column(column, justify="left" if column in ("policy", "settings") else "right")
    figures: dict[str, Any] = {}
    for spec in policies:
        tiny = spec.startswith("tiny") and spec not in real_size
        base = load_scenario(SCENARIOS / ("tiny" if tiny else "real") / "utilitarian_vs_tft.yaml", kind="training")
        presets = ("tiny file",) if tiny else ("authors", "multi_step")
        count = episodes or (20 if tiny else (10 if cuda else 3))
        for preset in presets:
            scenario = apply_training_overrides(base, policy=spec, device=device)
            if not tiny:
                data = scenario.model_dump(mode="json", exclude_none=True)
                data["training"]["ppo_preset"] = preset
                scenario = type(scenario).model_validate(data)
            try:
                result = time_training(scenario, count)
            except ModelUnavailableError as error:
                console.print(f"{spec}: skipped ({error})", markup=False)
                break
            figures[f"{spec}/{preset}"] = result
            ratio = result["s_per_episode"] / figures[f"{spec}/authors"]["s_per_episode"] if not tiny else None
            training = scenario.training
            table.add_row(
                spec,
                preset,
                f"{training.parallel * training.rounds}",
                result["device"],
                result["dtype"],
                f"{result['s_per_episode']:.3f}",
                f"{result['episodes_per_s']:.3f}",
                f"{result['peak_memory_gb']:.2f}",
                "-" if ratio is None else f"{ratio:.2f}x",
            )
    console.print(table)
    console.print(f"{episodes or 'default'} timed episodes each after one warm-up; loading is not counted.")
    return figures


def _episodes_per_s(trainer: Any, setup: Any, episodes: int, batched: bool) -> tuple[float, int]:
    """Timed episodes per second, and the generation calls they made (the warm-up episode left out of both)."""
    from sandbox.training.rollout import play_episode

    play_episode(trainer, setup, episodes, batched=batched)  # warm-up (an episode not timed)
    generate, calls = trainer.generate, [0]

    def counted(queries: Any) -> Any:
        calls[0] += 1
        return generate(queries)

    trainer.generate = counted  # counts what the rollout asks of the model, batched or one game at a time
    try:
        started = time.perf_counter()
        for episode in range(episodes):
            play_episode(trainer, setup, episode, batched=batched)
        return episodes / (time.perf_counter() - started), calls[0]
    finally:
        del trainer.generate


def bench_rollout(
    policies: tuple[str, ...] = ("tiny", "smollm2"), parallel: int = 16, rounds: int = 5, episodes: int = 3
) -> dict[str, dict[str, float]]:
    """Episodes per second of rollouts, one batched generation per round against one generation per game."""
    import torch

    from sandbox.base.errors import ModelUnavailableError
    from sandbox.llm.base_model import load_base_model
    from sandbox.moral.environment import MoralSetup
    from sandbox.training.ppo import PPOTrainer
    from sandbox.training.ppo_config import PPOConfig

    setup = MoralSetup(parallel=parallel, rounds=rounds, seed=0)
    table = Table(
        title=f"Rollout throughput: episodes of {parallel} games x {rounds} rounds, no learning", title_justify="left"
    )
    for column in ("policy", "device", "one at a time (episodes/s)", "batched (episodes/s)", "ratio"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    figures = {}
    for spec in policies:
        try:
            base = load_base_model(spec)
        except ModelUnavailableError as error:
            console.print(f"{spec}: skipped ({error})", markup=False)
            continue
        trainer = PPOTrainer(
            base.model,
            base.tokenizer,
            PPOConfig(batch_size=parallel * rounds, mini_batch_size=parallel * rounds, max_new_tokens=2),
        )
        torch.manual_seed(0)
        single, single_calls = _episodes_per_s(trainer, setup, episodes, batched=False)
        batched, batched_calls = _episodes_per_s(trainer, setup, episodes, batched=True)
        figures[spec] = {
            "one_at_a_time": single,
            "batched": batched,
            "ratio": batched / single,
            "one_at_a_time_calls": single_calls,
            "batched_calls": batched_calls,
        }
        table.add_row(spec, base.device, f"{single:.3f}", f"{batched:.3f}", f"{batched / single:.1f}x")
    console.print(table)
    return figures
