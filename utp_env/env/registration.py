"""Register `utp_env/UTP-v0` with gymnasium (idempotent; no database is loaded here).

`import utp_env` calls `register_envs()`, so `gym.make("utp_env/UTP-v0", profile="mini")` works
in any process, including `AsyncVectorEnv` workers (they import the entry point by name).
"""

from __future__ import annotations

import gymnasium as gym

ENV_ID = "utp_env/UTP-v0"
ENTRY_POINT = "utp_env.env.core:UTPEnv"


def register_envs() -> None:
    """Register the env ids once; calling it again is a no-op."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point=ENTRY_POINT)
