"""A tiny randomly initialised causal LM with a word-level tokenizer trained in-process (no hub)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<assistant> {% endif %}"
)


def build_tiny_lm(
    path: Path, corpus: Sequence[str], *, n_embd: int = 32, n_layer: int = 1, init: float = 0.02, seed: int = 0
) -> Path:
    """Save a GPT-2 of `n_layer` layers and a word-level tokenizer of `corpus`'s words under `path`.

    `init` is the weights' initial standard deviation. The output layer is the (tied) token
    embedding behind a LayerNorm, so at GPT-2's 0.02 every logit stays within about +-1.3:
    no adapter below it can make one token likely. Learning tests use a wider `init`.
    """
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(list(corpus) * 2, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[EOS]"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", eos_token="[EOS]")
    fast.chat_template = CHAT_TEMPLATE
    config = GPT2Config(vocab_size=fast.vocab_size, n_positions=512, n_embd=n_embd, n_layer=n_layer, n_head=2,
                        eos_token_id=fast.eos_token_id, bos_token_id=fast.eos_token_id, initializer_range=init)  # fmt: skip
    torch.manual_seed(seed)
    GPT2LMHeadModel(config).save_pretrained(path)
    fast.save_pretrained(path)
    return path
