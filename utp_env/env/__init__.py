"""The gymnasium environments: `UTPEnv` (`utp_env/env/core.py`), registered here as `utp_env/UTP-v0`,
and `UTPReplanEnv` (`utp_env/env/replan.py`, the closed loop), as `utp_env/UTP-Replan-v0`.

`import utp_env` calls `register_envs()`, so `gym.make("utp_env/UTP-v0", profile="mini")` works
in any process, including `AsyncVectorEnv` workers (they import the entry point by name).
Registering loads no database and imports only gymnasium: the env module itself is imported
when an env is made.

Where the rest lives: `config.py` (the env's knobs, the closed loop's `ReplanConfig`, the data
sources), `episode.py` (episode state, termination reasons and the shared `finish` step),
`reward/` (the reward: its terms, what counts, its checks, its measures), `actions.py` (the action
grammar), `spaces.py` (the gymnasium spaces) and `vector_spaces.py` (them in vector envs),
`itinerary_tools.py` (the tools that edit the plan), `trip.py` (the closed loop's lived trip),
`engine.py` (the episode engine the servers play through); for other frameworks: `lc_tools.py`
(LangChain tools), `UTPEnv.openai_tools` (OpenAI schemas), `adapters.py` (TRL's
`environment_factory` class and single-turn reward), `openai_agents.py` (the openai-agents SDK).
"""

from __future__ import annotations

import gymnasium as gym

from utp_env.env.ids import ENV_ID, ENV_IDS, LEVEL_ENV_IDS, REPLAN_ENV_ID

ENTRY_POINT = "utp_env.env.core:UTPEnv"
REPLAN_ENTRY_POINT = "utp_env.env.replan:UTPReplanEnv"

__all__ = ["ENTRY_POINT", "ENV_ID", "ENV_IDS", "LEVEL_ENV_IDS", "REPLAN_ENTRY_POINT", "REPLAN_ENV_ID",
           "register_envs"]


def register_envs() -> None:
    """Register the env ids once; calling it again is a no-op."""
    for env_id, entry_point in ((ENV_ID, ENTRY_POINT), (REPLAN_ENV_ID, REPLAN_ENTRY_POINT)):
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point)
    for level, env_id in LEVEL_ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"level": level})
