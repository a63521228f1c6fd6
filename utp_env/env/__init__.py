"""The gymnasium environment (DESIGN section 7): `UTPEnv`, registered as `utp_env/UTP-v0`.

Import `utp_env.env.core` (or use `gym.make`) for the env itself; this package module stays light
so that `import utp_env` only registers the id.
"""

from utp_env.env.registration import ENV_ID, register_envs

__all__ = ["ENV_ID", "register_envs"]
