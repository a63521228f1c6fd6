"""Stable seeds: derived with SHA-256 from their inputs, so results never depend on worker count,
backend, process or Python's hash randomisation."""

from __future__ import annotations

import hashlib


def stable_seed(*parts: object) -> int:
    """A 63-bit seed that depends only on the text of `parts`."""
    text = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


def episode_seed(run_seed: int, query_id: str, trial: int) -> int:
    """The seed of one episode of a run: a function of (run seed, query id, trial) only."""
    return stable_seed("episode", run_seed, query_id, trial)
