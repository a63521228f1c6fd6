"""The registered env ids (registered by `utp_env.env.register_envs`, with their entry points). A module
of their own that imports nothing, so that the env itself (`core.py`, which checks the id it was made
under against its level) reads them without importing the package that registers it."""

from __future__ import annotations

ENV_ID = "utp_env/UTP-v0"
REPLAN_ENV_ID = "utp_env/UTP-Replan-v0"
LEVEL_ENV_IDS: dict[int, str] = {n: f"utp_env/UTP-L{n}-v0" for n in (1, 2, 3, 4)}
"""The id of each level of the task (utp_env/env/levels.py): `UTPEnv` with `level=n`; level 4 is UTP-v0."""
ENV_IDS = (ENV_ID, REPLAN_ENV_ID, *LEVEL_ENV_IDS.values())
"""Every registered id: planning only (UTP-v0), plan then live through the trip (UTP-Replan-v0), and the
task's levels (UTP-L1-v0 ... UTP-L4-v0)."""
