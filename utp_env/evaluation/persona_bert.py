"""TripCraft's BERT embeddings for P_persona (`readings.persona: bert`; docs/METRICS.md, P_persona).

TripCraft (evaluation/qualitative_metrics.py, `get_bert_embedding`) embeds a text as the mean of
`bert-base-uncased`'s last hidden states over its tokens (special tokens included, truncated at
512). `BertEmbedder` does the same with `transformers` (the optional `persona` extra) from a model
id or a local model directory, and remembers each text's vector (a plan names the same venues and
a persona the same fields again and again). The formula is `tripcraft.embedding_persona_score`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from utp_env.tools.memo import remember

EMBEDDING_MEMO = 1 << 14  # texts whose vector is kept (768 float32 each: ~50 MB at the bound)
INSTALL_HINT = "pip install 'utp-env[persona]' (transformers and torch)"

_EMBEDDERS: dict[str, BertEmbedder] = {}
_LOCK = threading.Lock()


class BertEmbedder:
    """Mean-pooled last hidden states of a BERT model, one vector per text."""

    def __init__(self, model: str) -> None:
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise ImportError(f"the bert persona backend needs transformers and torch: {INSTALL_HINT}") from exc
        local = Path(model).expanduser()
        source = str(local) if local.exists() else model
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = AutoModel.from_pretrained(source)
        except OSError as exc:
            raise ValueError(f"persona_model {model!r}: cannot load a BERT model from it ({str(exc).splitlines()[0]}); "
                             "give a local model directory, or a Hugging Face id on a machine that can download "
                             "it") from None
        self.model.eval()
        self._torch = torch
        self._memo: dict[str, Any] = {}

    def embed(self, text: str) -> Any:
        """The text's vector (a numpy array), as TripCraft's `get_bert_embedding` computes it."""
        hit = self._memo.get(text)
        if hit is not None:
            return hit
        inputs = self.tokenizer(text, return_tensors="pt", truncation=True, padding=True, max_length=512)
        with self._torch.no_grad():
            outputs = self.model(**inputs)
        vector = outputs.last_hidden_state.mean(dim=1).squeeze(0).numpy()
        return remember(self._memo, text, vector, EMBEDDING_MEMO)


def embedder(model: str) -> BertEmbedder:
    """The process's embedder of `model` (loaded once)."""
    with _LOCK:
        found = _EMBEDDERS.get(model)
        if found is None:
            found = _EMBEDDERS[model] = BertEmbedder(model)
        return found
