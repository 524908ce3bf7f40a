"""The PPO trainer's unit behaviour on a tiny random model: ratio, clipping, KL, value loss, checkpoints."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from sandbox.training.ppo import PPOTrainer, ppo_losses
from sandbox.training.ppo_config import PPOConfig
from tests.tiny_lm import build_tiny_lm

CORPUS = [
    "you are playing a game with another agent A choose either action1 or action2 your answer",
    "action1 action2 action3 action4 points row column player last time you played they played",
]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-ppo"), CORPUS, n_embd=32, n_layer=1, init=0.02)


def trainer(tiny_dir: Path, **changes: object) -> PPOTrainer:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = PPOConfig(
        **{
            "batch_size": 4,
            "mini_batch_size": 2,
            "gradient_accumulation_steps": 1,
            "lora_r": 4,
            "lora_alpha": 8,
            "learning_rate": 1e-3,
            **changes,
        }
    )  # type: ignore[arg-type]
    return PPOTrainer(AutoModelForCausalLM.from_pretrained(tiny_dir), AutoTokenizer.from_pretrained(tiny_dir), config)


def batch(ppo: PPOTrainer) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    text = [
        "choose either action1 or action2 your answer",
        "last time you played action2 your answer",
        "last time they played action1 your answer",
        "you are the row player your answer",
    ]
    queries = [torch.tensor(ppo.tokenizer(t)["input_ids"]) for t in text]
    answers = [
        torch.tensor(ppo.tokenizer(a)["input_ids"]) for a in ("action1", "action2", "action2 action1", "action1")
    ]
    return queries, answers


def test_the_ratio_is_one_on_the_first_minibatch_and_the_kl_starts_at_zero(tiny_dir: Path) -> None:
    ppo = trainer(tiny_dir)
    queries, answers = batch(ppo)
    stats = ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
    assert stats["ratio_first"] == pytest.approx(1.0, abs=1e-6)  # the policy has not moved yet
    assert stats["kl"] == pytest.approx(0.0, abs=1e-6)  # a fresh LoRA adapter is the identity
    later = ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
    assert abs(later["kl"]) > 1e-6  # the adapter moved (a sampled estimate: any sign on fixed answers)


def test_the_reference_is_the_base_model_with_the_adapter_disabled(tiny_dir: Path) -> None:
    from transformers import AutoModelForCausalLM

    ppo = trainer(tiny_dir, learning_rate=1e-2)
    queries, answers = batch(ppo)
    for _ in range(3):
        ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
    base = AutoModelForCausalLM.from_pretrained(tiny_dir).eval()
    with torch.no_grad():
        reference, _, mask = ppo._forward(queries, answers, adapter=False)
        policy, _, _ = ppo._forward(queries, answers)
        ids = torch.cat([queries[0], answers[0]])[None]
        base_logprobs = torch.log_softmax(base(ids).logits[0, len(queries[0]) - 1 : -1], -1)
    expected = base_logprobs.gather(-1, answers[0][:, None]).squeeze(-1)
    assert torch.allclose(reference[0, : len(answers[0])], expected, atol=1e-5)  # KL to the base is 0
    assert not torch.allclose(policy * mask, reference * mask, atol=1e-4)


def test_clipping_bounds_the_update() -> None:
    mask = torch.ones(1, 4)
    old = torch.zeros(1, 4)
    # ratios 0.5, 1.1, 1.5, 0.9 with positive advantages, then with negative ones
    logprobs = torch.log(torch.tensor([[0.5, 1.1, 1.5, 0.9]])).requires_grad_()
    zeros = torch.zeros(1, 4)
    for sign, frozen in ((1.0, [False, False, True, False]), (-1.0, [True, False, False, False])):
        logprobs.grad = None
        losses = ppo_losses(
            logprobs, old, sign * torch.ones(1, 4), zeros, zeros, zeros, mask, cliprange=0.2, cliprange_value=0.2
        )
        losses["policy_loss"].backward()
        assert [bool(g == 0) for g in logprobs.grad[0]] == frozen  # no gradient past the clip, in A's direction
    # the value estimate may move at most cliprange_value from the old one
    vpreds = torch.tensor([[2.0]], requires_grad=True)
    value = ppo_losses(
        zeros[:, :1],
        zeros[:, :1],
        zeros[:, :1],
        vpreds,
        zeros[:, :1],
        torch.tensor([[1.0]]),
        mask[:, :1],
        cliprange=0.2,
        cliprange_value=0.2,
    )["value_loss"]
    assert value.item() == pytest.approx(0.5 * max((2.0 - 1.0) ** 2, (0.2 - 1.0) ** 2))


def test_a_mini_batch_whose_mean_ratio_passes_the_threshold_is_skipped(tiny_dir: Path) -> None:
    """TRL's `ratio_threshold`: such a mini-batch's loss counts zero, so it moves nothing; 0 turns it off."""
    moved = {}
    for threshold in (1e-9, 0.0, 10.0):  # 1e-9: every mini-batch (its ratio is about 1) passes it
        ppo = trainer(tiny_dir, ratio_threshold=threshold, learning_rate=1e-2)
        queries, answers = batch(ppo)
        before = [p.detach().clone() for p in ppo.model.parameters() if p.requires_grad]
        stats = ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
        after = [p.detach() for p in ppo.model.parameters() if p.requires_grad]
        moved[threshold] = (stats["skipped"], any(not torch.equal(a, b) for a, b in zip(after, before)))
    # 4 epochs x 2 mini-batches of 2, all skipped: no gradient, so Adam moves no weight
    assert moved == {1e-9: (8, False), 0.0: (0, True), 10.0: (0, True)}
    with pytest.raises(ValueError, match="ratio_threshold must not be negative"):
        PPOConfig(ratio_threshold=-1.0)


def test_an_entropy_bonus_spreads_the_answer_distribution(tiny_dir: Path) -> None:
    """`entropy_coef`: the same steps from the same start end with a flatter answer distribution with the bonus."""
    entropies = []
    for coef in (0.0, 1.0):
        ppo = trainer(tiny_dir, entropy_coef=coef, learning_rate=1e-2)
        queries, answers = batch(ppo)
        for _ in range(3):
            ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
        with torch.no_grad():
            _, _, mask, entropy = ppo._forward(queries, answers, entropy=True)
        entropies.append(float((entropy * mask).sum() / mask.sum()))
    assert entropies[1] > entropies[0] + 1e-4, entropies  # the same seeds: the bonus is the only difference
    assert max(entropies) <= math.log(len(ppo.tokenizer)) + 1e-4  # nats, at most the uniform distribution's


def test_the_value_loss_falls_on_a_fixed_batch(tiny_dir: Path) -> None:
    ppo = trainer(tiny_dir, learning_rate=1e-2, score_scaling=False, init_kl_coef=0.0)
    queries, answers = batch(ppo)
    # distinct prompts, so one value per state can fit every return (shared prefixes could not)
    losses = [ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])["value_loss"] for _ in range(10)]
    assert losses[-1] < 0.5 * losses[0]


def test_a_step_takes_exactly_one_batch(tiny_dir: Path) -> None:
    ppo = trainer(tiny_dir)
    queries, answers = batch(ppo)
    with pytest.raises(ValueError, match="takes 4 experiences"):
        ppo.step(queries[:3], answers[:3], [0.0] * 3)


def test_generation_is_short_and_seeded(tiny_dir: Path) -> None:
    ppo = trainer(tiny_dir, max_new_tokens=2)
    queries, _ = batch(ppo)
    first = ppo.generate(queries, generator_seed=5)
    assert all(1 <= len(a) <= 2 for a in first)
    assert [a.tolist() for a in ppo.generate(queries, generator_seed=5)] == [a.tolist() for a in first]


def test_a_checkpoint_restores_adapter_optimiser_and_controllers(tiny_dir: Path, tmp_path: Path) -> None:
    ppo = trainer(tiny_dir, learning_rate=1e-2)
    queries, answers = batch(ppo)
    ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
    ppo.save(tmp_path / "ckpt")
    saved = (ppo.steps, ppo.kl.value, dict(vars(ppo.scores)))
    after_save = ppo.step(queries, answers, [1.0, -1.0, 0.5, 2.0])
    fresh = trainer(tiny_dir, learning_rate=1e-2)
    fresh.load(tmp_path / "ckpt")
    assert (fresh.steps, fresh.kl.value, dict(vars(fresh.scores))) == saved
    assert fresh.step(queries, answers, [1.0, -1.0, 0.5, 2.0]) == pytest.approx(after_save)


def test_every_config_field_has_help_and_bad_values_are_refused() -> None:
    assert all(text for text in PPOConfig.help().values())
    with pytest.raises(ValueError, match="multiple of training.ppo.mini_batch_size"):
        PPOConfig(batch_size=5, mini_batch_size=2)
    with pytest.raises(ValueError, match=r"training.ppo.cliprange must lie in \[0, 1\]"):
        PPOConfig(cliprange=1.5)


def test_log_probabilities_are_those_of_the_sampling_temperature(tiny_dir: Path) -> None:
    """At T != 1 the trainer scores answers under the distribution it sampled them from (on-policy)."""
    from sandbox.training.sampling import language_model

    ppo = trainer(tiny_dir, temperature=2.0)
    queries, _ = batch(ppo)
    lm = language_model(ppo.model)
    torch.manual_seed(0)
    out = lm.generate(
        queries[0][None],
        do_sample=True,
        temperature=2.0,
        top_k=0,
        top_p=1.0,
        max_new_tokens=1,
        output_scores=True,
        return_dict_in_generate=True,
        pad_token_id=ppo.tokenizer.pad_token_id,
    )
    token = out.sequences[0, -1:]
    sampled = torch.log_softmax(out.scores[0][0].float(), -1)[token]  # what generate drew from
    logprobs, _, _ = ppo._forward([queries[0]], [token])
    assert logprobs[0, 0].item() == pytest.approx(sampled.item(), abs=1e-5)
    untempered, _, _ = trainer(tiny_dir)._forward([queries[0]], [token])
    assert abs(untempered[0, 0].item() - sampled.item()) > 1e-3  # the test tells the two apart


def test_the_model_s_own_generation_settings_never_reach_sampling(tiny_dir: Path) -> None:
    """A checkpoint's generation_config (here: every token but one suppressed) is set aside while sampling."""
    from sandbox.training.sampling import language_model

    ppo = trainer(tiny_dir, max_new_tokens=1)
    queries, _ = batch(ppo)
    lm = language_model(ppo.model)
    only = ppo.tokenizer.convert_tokens_to_ids("action1")
    lm.generation_config.suppress_tokens = [i for i in range(lm.config.vocab_size) if i != only]
    leaked = lm.generate(
        queries[0][None].repeat(16, 1),
        do_sample=True,
        max_new_tokens=1,
        top_k=0,
        pad_token_id=ppo.tokenizer.pad_token_id,
    )[:, -1]
    assert set(leaked.tolist()) == {only}  # the setting does act on a plain generate
    answers = ppo.generate([queries[0]] * 16, generator_seed=1)
    assert len({int(a[0]) for a in answers}) > 1
    assert len(lm.generation_config.suppress_tokens) == lm.config.vocab_size - 1  # restored afterwards


def test_the_lm_head_runs_only_where_answer_tokens_are_predicted(tiny_dir: Path) -> None:
    from sandbox.training.sampling import language_model

    ppo = trainer(tiny_dir, batch_size=4, mini_batch_size=1)
    queries, answers = batch(ppo)
    shapes: list[tuple[int, ...]] = []
    head = language_model(ppo.model).get_output_embeddings()
    handle = head.register_forward_pre_hook(lambda _, args: shapes.append(tuple(args[0].shape)))
    try:
        whole = ppo._forward(queries, answers)
        chunked = ppo._forward_chunked(queries, answers)  # one experience at a time (mini_batch_size 1)
    finally:
        handle.remove()
    tokens = max(len(a) for a in answers)
    assert shapes[0][:2] == (4, tokens)  # not (4, prompt + answer length)
    assert [s[0] for s in shapes[1:]] == [1, 1, 1, 1]
    for a, b in zip(whole, chunked):
        assert torch.allclose(a, b, atol=1e-5)


def test_a_checkpoint_loads_onto_the_trainer_s_device(
    tiny_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint written on a GPU resumes on a CPU: every tensor is mapped to the trainer's device."""
    ppo = trainer(tiny_dir)
    ppo.save(tmp_path / "ckpt")
    seen: list[object] = []
    real_load = torch.load

    def load(*args: object, **kwargs: object) -> object:
        seen.append(kwargs.get("map_location"))
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(torch, "load", load)
    ppo.load(tmp_path / "ckpt")
    assert seen == [ppo.device]
