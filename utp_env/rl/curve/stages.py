"""The first-leg stages of the level-4 curve: rewards composed from the env's outputs for a policy that has
only learnt to book the trip's first leg (`--level 4 --reward first_leg|first_leg_shaped`).

They predate the levels of the task (utp_env/env/levels.py): level 1 asks exactly the first leg and scores it
with the env's own reward, which is what the curve trains on by default now. They stay for the level-4 curve
of docs/RL.md ("The level-4 curve, before the levels"), which trained on them.
"""

from __future__ import annotations

from typing import Any

from utp_env.env.levels import TRANSPORT_SEARCHES
from utp_env.rl.env import RLToolEnv


def first_leg_reward(plan: dict[str, Any] | None, query_org: str, reward: float) -> float:
    """The curriculum's first stage: the env's reward of a plan whose first leg (day 1's first) leaves
    the query's own origin, else 0. Composed from the env's public outputs (the final plan, `info["plan"]`,
    and the reward); the env's reward itself is untouched."""
    days = (plan or {}).get("days") or []
    legs = (days[0].get("transport") or []) if days and days[0].get("day") == 1 else []
    return float(reward) if legs and legs[0].get("origin") == query_org else 0.0


LEAVES_ORIGIN_CREDIT = 0.02  # the shaped stage's partial credit: under a third of an honest first leg's reward
SEARCHED_ORIGIN_CREDIT = 0.005  # and, below it, for a transport search from the query's origin


def first_leg_shaped_reward(plan: dict[str, Any] | None, query_org: str, reward: float,
                            searched_origin: bool = False) -> float:
    """The curriculum's first stage with partial credit: `first_leg_reward` when it is above 0, else
    `LEAVES_ORIGIN_CREDIT` when day 1's first leg at least leaves the query's origin (to a city that is
    not the trip's, so the env's reward is 0), else 0. In the multi-turn env a leg is in the plan only
    when `add_leg` accepted it (a service that runs), so the credit is for a real service from the
    right city. Below that, `SEARCHED_ORIGIN_CREDIT` when `searched_origin` (the rollout looked a service
    up from the query's origin). Each level is paid once, so repeating a search or a leg earns no more."""
    staged = first_leg_reward(plan, query_org, reward)
    if staged > 0:
        return staged
    days = (plan or {}).get("days") or []
    legs = (days[0].get("transport") or []) if days and days[0].get("day") == 1 else []
    if legs and legs[0].get("origin") == query_org:
        return LEAVES_ORIGIN_CREDIT
    return SEARCHED_ORIGIN_CREDIT if searched_origin else 0.0


class FirstLegRewardEnv(RLToolEnv):
    """`RLToolEnv` whose reward is the curriculum's first stage (`first_leg_reward`)."""

    def get_reward(self) -> float:
        from utp_env.env.config import find_query

        reward = super().get_reward()
        final, query_id = self._engine.final, self._engine.query_id
        query = find_query(self._env.db, query_id) if query_id else None
        if final is None or query is None:
            return 0.0
        return self._staged(final.info.get("plan"), query.org, reward)

    def _staged(self, plan: dict[str, Any] | None, query_org: str, reward: float) -> float:
        """The stage's reward of the final plan (private: TRL offers every public method as a tool)."""
        return first_leg_reward(plan, query_org, reward)


class FirstLegShapedRewardEnv(FirstLegRewardEnv):
    """`RLToolEnv` whose reward is the shaped first stage (`first_leg_shaped_reward`); it notes the
    origins of the rollout's transport searches (the env's answer is unchanged)."""

    def reset(self, **kwargs: Any) -> str | None:
        self._searched_from: set[str] = set()
        return super().reset(**kwargs)

    def _call(self, name: str, args: dict[str, Any]) -> str:
        if name in TRANSPORT_SEARCHES and isinstance(args.get("origin"), str):
            self._searched_from.add(args["origin"])
        return super()._call(name, args)

    def _staged(self, plan: dict[str, Any] | None, query_org: str, reward: float) -> float:
        searched = query_org in getattr(self, "_searched_from", set())
        return first_leg_shaped_reward(plan, query_org, reward, searched)


REWARDS: dict[str, type[RLToolEnv]] = {"env": RLToolEnv, "first_leg": FirstLegRewardEnv,
                                       "first_leg_shaped": FirstLegShapedRewardEnv}
"""What GRPO may train on: the env's reward (at the run's level), or a first-leg stage of level 4."""
