"""utp-env: a gymnasium environment and benchmark for uncertainty-aware travel planning in India."""

__version__ = "0.1.0"

from utp_env.env.registration import register_envs as _register_envs

_register_envs()
