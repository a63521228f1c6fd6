"""Potential-based reward shaping: dense progress credit that cannot change which plan wins.

The env's reward is 0 until the episode ends, then the plan's reward. With `shaping: true` (env config,
or the `PotentialShaping` wrapper of utp_env/env/shaping.py) every step also pays

    F(s, s') = γ·Φ(s') − Φ(s),   Φ(s) = `plan_potential`: the reward of the plan built so far,

scored as the episode's end would score it (the same reward, at the env's level: utp_env/env/reward/),
with Φ = 0 once the episode has ended (Ng, Harada & Russell 1999, "Policy invariance under reward
transformations", ICML). A step that adds what counts (a bookable leg, a visit at an open venue) is paid
at once; one that breaks a check costs at once.

Why the winner cannot change. Along an episode s_0 … s_T the terms telescope:
Σ_t γ^t F(s_t, s_{t+1}) = γ^T Φ(s_T) − Φ(s_0) = 0 − Φ(s_0), and Φ(s_0) = 0: the empty plan (and the part a
level gives, which counts for nothing) scores 0. So with γ = 1 the return of every complete episode is
exactly the reward of its plan, and with γ < 1 it is exactly the unshaped discounted return: the ranking of
plans and of policies is the reward's (tests/env/reward/test_reward_shaping.py checks it on random pairs of
complete plans at every level). A policy that adds and removes content to collect credit gets back what it
took. γ must be the learner's own discount.

Cost: Φ is one evaluation of the plan, computed only when a step changed the plan (its JSON is compared),
so lookups cost nothing extra.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from utp_env.env.config import EnvConfig
from utp_env.env.episode import Episode


class ShapedEnv(Protocol):
    """What shaping reads of an env (`utp_env.env.core.UTPEnv` is one): its running episode and its config."""

    @property
    def episode(self) -> Episode | None: ...

    @property
    def config(self) -> EnvConfig: ...


Potential = Callable[[ShapedEnv], float]


def plan_potential(env: ShapedEnv) -> float:
    """Φ: the reward of the env's plan so far, as the end of the episode would score it (at the env's level,
    with its weights); 0 without a running episode."""
    from utp_env.env.reward import score_plan

    episode = env.episode
    if episode is None:
        return 0.0
    return score_plan(episode.plan, episode.query, episode.db, weights=env.config.reward_weights,
                      reference=episode.reference, task=episode.task).reward


class Shaper:
    """The shaping term of one env (module docstring): `start` at reset, `step` after every step."""

    def __init__(self, gamma: float = 1.0, potential: Potential = plan_potential) -> None:
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1] (the learner's discount), not {gamma!r}")
        self.gamma = float(gamma)
        self.potential = potential
        self.phi = 0.0
        self._cached = 0.0
        self._plan_key: str | None = None

    def _current(self, env: ShapedEnv) -> float:
        episode = env.episode
        key = None if episode is None else episode.snapshot()
        if key is None or key != self._plan_key:
            self._cached = float(self.potential(env))
            self._plan_key = key
        return self._cached

    def start(self, env: ShapedEnv) -> dict[str, Any]:
        """Φ of the episode's start (what `reset`'s info reports as `potential`)."""
        self._plan_key = None
        self.phi = self._current(env)
        return {"potential": self.phi}

    def step(self, env: ShapedEnv, reward: float, ended: bool) -> tuple[float, dict[str, Any]]:
        """The shaped step: (`reward` (the env's) plus F, with Φ(s') = 0 when the episode `ended`; the step's
        info: `unshaped_reward`, `shaping` (F) and `potential` (Φ(s')))."""
        phi_next = 0.0 if ended else self._current(env)
        shaping = self.gamma * phi_next - self.phi
        self.phi = phi_next
        return float(reward) + shaping, {"unshaped_reward": float(reward), "shaping": shaping, "potential": phi_next}
