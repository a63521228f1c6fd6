"""`PotentialShaping`: potential-based reward shaping as a gymnasium wrapper (utp_env/env/potential.py says
what it is and why it cannot change which plan wins).

The env shapes its own reward with `EnvConfig(shaping=True, shaping_gamma=γ)`; this wrapper does the same
from outside, and takes a potential of your own (a function of the unwrapped `UTPEnv`):

    env = PotentialShaping(gym.make("utp_env/UTP-L2-v0", profile="mini"), gamma=0.99)

The env's own reward stays in `info["unshaped_reward"]`; `info["shaping"]` is F and `info["potential"]`
Φ(s'). A learner that uses only the whole episode's return, such as GRPO with one reward per rollout,
sees with γ = 1 exactly the plan's reward: shaping changes nothing for it. It is for per-step learners.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym

from utp_env.env.adapters import unwrap
from utp_env.env.potential import Potential, Shaper, plan_potential

__all__ = ["PotentialShaping", "plan_potential"]


class PotentialShaping(gym.Wrapper[str, Any, str, Any]):
    """Adds F = γ·Φ(s') − Φ(s) to every step's reward, with Φ(s') = 0 when the episode ends (utp_env/env/potential.py).

    Args:
        env: a `UTPEnv` or a wrapper of one (not one that shapes its reward already: `shaping: true`).
        gamma: the discount of the learner (the one its returns use), in [0, 1]; 1 for undiscounted returns.
        potential: Φ, a function of the unwrapped env; default `plan_potential` (the reward of the plan so far).
    """

    def __init__(self, env: gym.Env[str, Any], gamma: float = 1.0, potential: Potential = plan_potential) -> None:
        super().__init__(env)
        self.base = unwrap(env)  # TypeError for an env that is not a UTPEnv
        if self.base.shaper is not None:
            raise ValueError("the env shapes its reward already (its config says shaping: true); wrap an env "
                             "without it, or drop the wrapper")
        self.shaper = Shaper(gamma, potential)
        self.gamma = self.shaper.gamma

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        info.update(self.shaper.start(self.base))
        return observation, info

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        shaped, terms = self.shaper.step(self.base, float(reward), ended=terminated or truncated)
        info.update(terms)
        return observation, shaped, terminated, truncated, info
