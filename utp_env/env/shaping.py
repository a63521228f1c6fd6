"""Optional potential-based reward shaping (off unless you wrap the env): dense partial credit for RL.

The env's reward is 0 on every step until the episode ends, then the plan's evaluation
(docs/ENV.md "Reward"). A learner that assigns credit per step (PPO, Q-learning, ...) therefore
sees nothing until the end. `PotentialShaping` adds, at every step,

    F(s, s') = γ·Φ(s') − Φ(s)

where Φ(s) = `plan_potential`: the fraction of the applicable commonsense and hard checks the plan
built so far passes (`utp_env.evaluation.evaluate`, `utp_env.env.episode.pass_rate`). A step
that makes more checks pass earns a positive F at once; one that breaks a check a negative F.

Ng, Harada & Russell (1999, "Policy invariance under reward transformations: theory and
application to reward shaping", ICML) show that shaping of exactly this form leaves the optimal
policy unchanged: along any episode s_0 … s_T the shaping terms telescope,

    Σ_t γ^t F(s_t, s_{t+1}) = γ^T Φ(s_T) − Φ(s_0),

and with Φ = 0 at the end of the episode (this wrapper sets Φ(s_T) = 0 whenever a step returns
`terminated` or `truncated`) every episode's shaped return is its true return minus Φ(s_0),
which does not depend on what the agent does. Q-values shift by −Φ(s), so the ranking of actions
in each state is the same. The env's own reward (the evaluation at the end) is untouched and
stays in `info["unshaped_reward"]`; `info["shaping"]` is F and `info["potential"]` is Φ(s').

A consequence worth knowing (docs/RL.md): a learner that uses only the whole episode's return,
such as GRPO with one reward per rollout, sees Σ F = −Φ(s_0), the same for every rollout of a
query, so shaping changes nothing for it. It is meant for per-step learners.

Cost: Φ needs an evaluation of the plan; it is computed only when a step changed the plan (the
plan's JSON is compared), so lookups cost nothing extra.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, SupportsFloat

import gymnasium as gym

from utp_env.env.adapters import unwrap
from utp_env.env.core import UTPEnv
from utp_env.env.episode import evaluate_plan, pass_rate

Potential = Callable[[UTPEnv], float]


def plan_potential(env: UTPEnv) -> float:
    """Φ: the share of applicable commonsense and hard checks the current plan passes (0 without an episode
    or when no check applies)."""
    episode = env.episode
    if episode is None:
        return 0.0
    report = evaluate_plan(episode.plan, episode)
    checks = {**{f"commonsense:{k}": v for k, v in report.commonsense.items()},
              **{f"hard:{k}": v for k, v in report.hard.items()}}
    rate = pass_rate(checks)
    return 0.0 if rate is None else float(rate)


class PotentialShaping(gym.Wrapper[str, Any, str, Any]):
    """Adds F = γ·Φ(s') − Φ(s) to every step's reward, with Φ(s') = 0 when the episode ends (module docstring).

    Args:
        env: a `UTPEnv` or a wrapper of one.
        gamma: the discount of the learner (the one its returns use), in [0, 1]; 1 for undiscounted returns.
        potential: Φ, a function of the unwrapped env; default `plan_potential`.
    """

    def __init__(self, env: gym.Env[str, Any], gamma: float = 1.0, potential: Potential = plan_potential) -> None:
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1] (the learner's discount), not {gamma!r}")
        super().__init__(env)
        self.base = unwrap(env)  # TypeError for an env that is not a UTPEnv
        self.gamma = float(gamma)
        self.potential = potential
        self._phi = 0.0
        self._phi_cache = 0.0
        self._plan_key: str | None = None

    def _current_potential(self) -> float:
        episode = self.base.episode
        key = None if episode is None else episode.snapshot()
        if key is None or key != self._plan_key:
            self._phi_cache = self.potential(self.base)
            self._plan_key = key
        return self._phi_cache

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        self._plan_key = None
        self._phi = self._current_potential()
        info["potential"] = self._phi
        return observation, info

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        ended = terminated or truncated
        phi_next = 0.0 if ended else self._current_potential()
        shaping = self.gamma * phi_next - self._phi
        self._phi = phi_next
        info["unshaped_reward"] = float(reward)
        info["shaping"] = shaping
        info["potential"] = phi_next
        return observation, float(reward) + shaping, terminated, truncated, info
