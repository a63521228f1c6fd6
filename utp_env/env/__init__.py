"""The gymnasium environment `UTPEnv` (`utp_env/env/core.py`), registered here as `utp_env/UTP-v0`.

`import utp_env` calls `register_envs()`, so `gym.make("utp_env/UTP-v0", profile="mini")` works
in any process, including `AsyncVectorEnv` workers (they import the entry point by name).
Registering loads no database and imports only gymnasium: the env module itself is imported
when an env is made.

Where the rest lives: `config.py` (the env's knobs and data sources), `episode.py` (episode
state, termination reasons, reward and the shared `finish` step), `spaces.py` (the action
grammar and the gymnasium spaces), `itinerary_tools.py` (the tools that edit the plan),
`adapters.py` (LangChain, OpenAI and TRL adapters).
"""

from __future__ import annotations

import gymnasium as gym

ENV_ID = "utp_env/UTP-v0"
ENTRY_POINT = "utp_env.env.core:UTPEnv"

__all__ = ["ENTRY_POINT", "ENV_ID", "register_envs"]


def register_envs() -> None:
    """Register the env ids once; calling it again is a no-op."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point=ENTRY_POINT)
