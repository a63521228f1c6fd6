"""utp-env: a gymnasium environment and benchmark for uncertainty-aware travel planning in India.

`import utp_env` registers the gymnasium env `utp_env/UTP-v0` (without loading any data);
`utp_env.evaluate` and `utp_env.simulate` are the evaluation and Monte Carlo entry points;
`utp_env.load_environment` is the `verifiers` environment (`vf-eval utp-env`, utp_env/verifiers_env.py).
"""

from typing import Any

from utp_env.env import register_envs as _register_envs

__version__ = "0.1.0"
__all__ = ["evaluate", "load_environment", "simulate"]

_register_envs()


def __getattr__(name: str) -> Any:
    # Imported on first use so that `import utp_env` (done by every gym worker) stays light.
    if name == "evaluate":
        from utp_env.evaluation import evaluate

        return evaluate
    if name == "simulate":
        from utp_env.simulation import simulate

        return simulate
    if name == "load_environment":  # verifiers finds an environment by its module's `load_environment`
        from utp_env.verifiers_env import load_environment

        return load_environment
    raise AttributeError(f"module 'utp_env' has no attribute {name!r}")
