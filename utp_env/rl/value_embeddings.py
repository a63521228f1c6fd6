"""The tiny model's value embeddings kept as pretraining left them while SFT and GRPO train the rest.

The tiny model ties its input embeddings to its output layer, so a value's embedding is also the direction its
logit is read along. Pretraining (utp_env/rl/tiny_pretrain.py) fills chats with values drawn uniformly from the
world's words, so every city, date, service number and venue leaves it on an equal footing. A few
demonstrations then show a few of those values, and training their embeddings raises exactly those logits: the
model writes the number it saw in training instead of the one the search just answered (docs/RL.md "Learning
curves by level" measures it). Keeping the rows of the value tokens fixed (`freeze_value_rows`: their gradient
is zeroed, so Adam leaves them where they are) leaves that footing alone; the format tokens, the attention and
the MLPs still train, and copying is all that can raise a value's logit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from utp_env.rl.augment import SWAPPED_KINDS


def value_token_ids(tokenizer: Any, kinds: Mapping[str, Sequence[str]]) -> list[int]:
    """The ids of `tokenizer`'s single-token values of the kinds a call copies (`SWAPPED_KINDS`), ascending."""
    words = [w for kind in SWAPPED_KINDS for w in kinds.get(kind, ())]
    unknown = getattr(tokenizer, "unk_token_id", None)
    ids = {i for i in tokenizer.convert_tokens_to_ids(words) if isinstance(i, int) and i >= 0 and i != unknown}
    return sorted(ids)


def freeze_value_rows(model: Any, ids: Sequence[int]) -> Any:
    """Zero the gradient of the input-embedding rows `ids` of `model` from now on (a tensor hook, so any
    optimiser built later leaves those rows as they are, with weight decay 0); the hook's handle. A ValueError
    when `ids` is empty or names a row the embedding lacks."""
    import torch

    weight = model.get_input_embeddings().weight
    if not ids:
        raise ValueError("no value tokens to keep: the tokenizer holds none of the world's values as one token")
    if min(ids) < 0 or max(ids) >= weight.shape[0]:
        raise ValueError(f"value token ids must be rows of the {weight.shape[0]}-row embedding, not {min(ids)} to "
                         f"{max(ids)}")
    keep = torch.ones(weight.shape[0], 1, dtype=weight.dtype)
    keep[torch.tensor(list(ids))] = 0
    return weight.register_hook(lambda grad: grad * keep.to(grad.device, grad.dtype))
