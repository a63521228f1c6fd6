"""Stable seeds: derived with SHA-256 from the text of their inputs, so they are the same in every
process, on every machine and under any `PYTHONHASHSEED` (unlike Python's `hash()`)."""

from __future__ import annotations

import hashlib


def stable_int(*parts: object) -> int:
    """A 63-bit integer that depends only on the text of `parts` (joined with a separator)."""
    text = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1
