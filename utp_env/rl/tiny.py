"""A tiny causal LM built on this machine, so that the GRPO recipes run on a CPU with nothing downloaded.

What a chat model needs for TRL's tool-calling GRPO, and what this module provides for it:

- a tokenizer: byte-level BPE trained here with `tokenizers` on text of the env (task texts, tool
  schemas, plans), so every string round-trips exactly (tool-call JSON must decode to what was
  generated); the chat markup (`<|im_start|>`, `<|im_end|>`, `<|endoftext|>`) as special tokens
  and the tool markup (`<tool_call>`, `</tool_call>`, `<tool_response>`, ...) as added tokens
  that decoding keeps, as Qwen's tokenizers have them;
- TRL's own Qwen3 chat template (`trl.chat_template_utils.qwen3_chat_template`), which TRL
  recognises: it renders the tools, and TRL attaches the matching response parser
  (`add_response_schema`) that turns `<tool_call>{...}</tool_call>` in a completion into tool calls;
- `<|im_end|>` as end of sequence and `<|endoftext|>` as padding, padded on the left (TRL
  generates a batch of prompts of different lengths);
- a model: `Qwen3ForCausalLM` with random weights (seeded), a few hundred thousand parameters.

A model with random weights emits random tokens and never a tool call, so a smoke run would
never reach the env. `warm_up` gives it the format: a few hundred optimizer steps of supervised
training on scripted conversations (a tool call, the env's answer, the next call; or a plan as
JSON), with the loss on the assistant turns only (the chat template's generation markers). That
is a format prior, the job a real instruction-tuned model's post-training has already done; the
GRPO steps that follow are ordinary GRPO. A real run skips all of this (`--model <hub name>`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
MARKUP_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>",
                 "<tools>", "</tools>")
EOS_TOKEN, PAD_TOKEN = "<|im_end|>", "<|endoftext|>"


@dataclass(frozen=True)
class TinySpec:
    """Sizes of the tiny model and its tokenizer."""

    vocab_size: int = 4096
    hidden_size: int = 128
    intermediate_size: int = 256
    layers: int = 1
    heads: int = 4
    kv_heads: int = 2
    max_positions: int = 32768
    window: int | None = None
    """Sliding-window attention span (None: full attention, which is the faster on a CPU at these sizes)."""


def train_tokenizer(corpus: Iterable[str], vocab_size: int = TinySpec.vocab_size,
                    words: Sequence[str] = ()) -> Any:
    """A byte-level BPE tokenizer trained on `corpus`, wrapped as a `PreTrainedTokenizerFast` with TRL's
    Qwen3 chat template, `<|im_end|>` as EOS, `<|endoftext|>` as padding, padding on the left.

    `words` (e.g. the tool names) become single added tokens, so that choosing a tool is one token:
    a model of two layers then keeps the choice and its arguments consistent far more easily."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    if vocab_size < 512:
        raise ValueError(f"vocab_size must be at least 512 (256 bytes plus merges), not {vocab_size}")
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)  # merges may span words
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(corpus, trainer=trainer)
    core.add_tokens([AddedToken(t, special=False, normalized=False) for t in (*MARKUP_TOKENS, *words)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token=EOS_TOKEN, pad_token=PAD_TOKEN,
                                        padding_side="left")
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer


def build_model(tokenizer: Any, spec: TinySpec = TinySpec(), seed: int = 0,
                kinds: Sequence[Sequence[str]] = ()) -> Any:
    """A `Qwen3ForCausalLM` of `spec`'s sizes with random weights drawn from `seed`, for `tokenizer`.

    `kinds` groups words of the tokenizer (e.g. the cities, the dates, the service numbers): the
    embeddings of one group start from one shared random vector plus each word's own (half the
    variance each), so that from the first step an attention head can find "a city" or "a service
    number" in the context, including one never seen in training, and copy it. It is the prior a
    real model's pretrained embeddings carry (and what initialising new tokens from their pieces
    gives); the words' own parts still tell them apart."""
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    eos, pad = tokenizer.convert_tokens_to_ids(EOS_TOKEN), tokenizer.convert_tokens_to_ids(PAD_TOKEN)
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=spec.hidden_size,
                         intermediate_size=spec.intermediate_size, num_hidden_layers=spec.layers,
                         num_attention_heads=spec.heads, num_key_value_heads=spec.kv_heads,
                         head_dim=spec.hidden_size // spec.heads, max_position_embeddings=spec.max_positions,
                         use_sliding_window=spec.window is not None, sliding_window=spec.window,
                         max_window_layers=0, tie_word_embeddings=True, bos_token_id=eos, eos_token_id=eos,
                         pad_token_id=pad)
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    if kinds:
        embedding = model.get_input_embeddings().weight
        std = float(config.initializer_range)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for words in kinds:
                ids = [i for i in tokenizer.convert_tokens_to_ids(list(words)) if i is not None and i >= 0]
                if not ids:
                    continue
                shared = torch.randn(spec.hidden_size, generator=generator)
                own = torch.randn(len(ids), spec.hidden_size, generator=generator)
                embedding[torch.tensor(ids)] = std * (shared + own) / math.sqrt(2)
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=pad, bos_token_id=eos)
    return model


def training_chat_template(tokenizer: Any) -> str:
    """The template TRL trains with: the tokenizer's own when it is prefix-preserving and marks the assistant
    turns, else TRL's training variant of it (`get_training_chat_template`)."""
    from trl.chat_template_utils import get_training_chat_template

    return str(get_training_chat_template(tokenizer) or tokenizer.chat_template)


def warm_up(model: Any, tokenizer: Any, conversations: Sequence[tuple[list[dict[str, Any]], list[Any] | None]],
            steps: int = 40, learning_rate: float = 5e-3) -> list[float]:
    """Supervised steps on `conversations` ((messages, tools) pairs; loss on the assistant turns only).

    Every step's gradient is the mean over all target tokens of all conversations, so alternatives for
    the same prompt (a tool call or another, a plan or a refusal) are learned in balance and the model
    samples both. Returns the loss (mean per target token) of every step; the model is left in eval mode.
    """
    import torch

    if not conversations:
        raise ValueError("warm_up needs at least one conversation")
    template = training_chat_template(tokenizer)
    encoded = []
    for messages, tools in conversations:
        out = tokenizer.apply_chat_template(messages, tools=tools, chat_template=template, tokenize=True,
                                            return_dict=True, return_assistant_tokens_mask=True)
        ids = torch.tensor(out["input_ids"])
        mask = torch.tensor(out["assistant_masks"], dtype=torch.bool)
        if not bool(mask.any()):
            raise ValueError("a warm-up conversation has no assistant turn to learn (or the template marks none)")
        labels = torch.where(mask, ids, torch.full_like(ids, -100))
        encoded.append((ids.unsqueeze(0), labels.unsqueeze(0)))
    # Every target token weighs the same (a mean over all of them, not per conversation): the one token where
    # two replies to the same prompt part ways then gets even odds, whatever the replies' lengths.
    targets = sum(int((labels[:, 1:] != -100).sum()) for _, labels in encoded)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * min(step, steps) / max(steps, 1))))
    model.train()
    losses: list[float] = []
    for _ in range(steps):
        total = 0.0
        for ids, labels in encoded:
            loss = model(input_ids=ids, labels=labels).loss * int((labels[:, 1:] != -100).sum()) / targets
            loss.backward()
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(total)
    model.eval()
    return losses
