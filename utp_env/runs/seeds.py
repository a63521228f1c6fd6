"""Stable seeds: derived with SHA-256 from their inputs, so results never depend on worker count,
backend, process or Python's hash randomisation."""

from __future__ import annotations

from utp_env.tools.seeding import stable_int


def episode_seed(run_seed: int, query_id: str, trial: int) -> int:
    """The seed of one episode of a run: a function of (run seed, query id, trial) only."""
    return stable_int("episode", run_seed, query_id, trial)
