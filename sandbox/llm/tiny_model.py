"""A tiny randomly initialised GPT-2 with a word-level tokenizer trained in-process (no hub, no download).

It is a real transformer that learns, small enough that PPO on CPU shows in
minutes whether a reward shapes behaviour: the base model of the tiny
scenario files (`policy: tiny`) and of the learning tests. It knows only the
words of its vocabulary (the action tokens, digits and a few marks); every
other word of a prompt is `[UNK]`, so it cannot read the game, only learn
from reward which token to answer in which state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The words of the matrix-game prompt a tiny model can tell apart.
MATRIX_VOCABULARY = ("action1 action2 action3 action4 0 1 2 3 4 5 6 | , . :",)

CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<assistant> {% endif %}"
)


def tiny_lm(
    corpus: Sequence[str] = MATRIX_VOCABULARY,
    *,
    n_embd: int = 64,
    n_layer: int = 2,
    init: float = 0.1,
    seed: int = 0,
) -> tuple[Any, Any]:
    """A GPT-2 of `n_layer` layers and a word-level tokenizer of `corpus`'s words: `(model, tokenizer)`.

    `init` is the weights' initial standard deviation. The output layer is the
    (tied) token embedding behind a LayerNorm, so at GPT-2's usual 0.02 every
    logit stays within about +-1.3 and no adapter below it can make one token
    likely (learning stalls near 45%); 0.1 leaves room to learn. Even so, with
    the LayerNorm's gain fixed the largest logit gap is about 6, so no adapter
    makes one token surer than about 95%: `training.ppo.modules_to_save: auto`
    trains that LayerNorm too (the config's `sandbox_tiny` flag says which
    model is tiny; the distillation and chain files of the tiny student set it).
    """
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(list(corpus) * 2, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[EOS]"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", eos_token="[EOS]")
    fast.chat_template = CHAT_TEMPLATE
    config = GPT2Config(
        vocab_size=fast.vocab_size,
        n_positions=512,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=2,
        eos_token_id=fast.eos_token_id,
        bos_token_id=fast.eos_token_id,
        initializer_range=init,
        sandbox_tiny=True,
    )  # training: its output LayerNorm trains too (modules_to_save)
    torch.manual_seed(seed)
    return GPT2LMHeadModel(config), fast


def build_tiny_lm(path: Path, corpus: Sequence[str] = MATRIX_VOCABULARY, **options: Any) -> Path:
    """Save `tiny_lm(corpus, **options)` under `path` as a transformers model directory."""
    model, tokenizer = tiny_lm(corpus, **options)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
