"""Potential-based reward shaping (utp_env/env/shaping.py): dense per step, the same returns up to a constant.

Ng, Harada & Russell (1999): with F = γΦ(s') − Φ(s) and Φ = 0 at the end, every episode's shaped
return is its true return minus Φ(s_0), so the ordering of policies (and the optimal one) is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from utp_env.env.config import reference_plan, split_pool
from utp_env.env.core import UTPEnv
from utp_env.env.shaping import PotentialShaping, plan_potential
from utp_env.rl.scripted import add_leg_args
from utp_env.tools.database import Database


@pytest.fixture
def query_and_legs(mini_db: Database) -> tuple[str, list[dict[str, Any]]]:
    """A query and `add_leg` actions for its reference plan's legs."""
    for query in split_pool(mini_db, "validation"):
        plan = reference_plan(mini_db, query.query_id)
        if plan is not None and sum(len(d.transport) for d in plan.days) >= 2:
            return query.query_id, [{"tool": "add_leg", "args": add_leg_args(day.day, leg)}
                                    for day in plan.days for leg in day.transport]
    pytest.fail("no validation query with two reference legs in the mini sandbox")


def rollout(env: gym.Env, query_id: str, actions: list[Any]) -> tuple[float, list[dict[str, Any]], float]:
    """(sum of γ^t r_t, the step infos, Φ(s_0)) of one episode that ends with `submit` after `actions`."""
    gamma = getattr(env, "gamma", 1.0)
    _, info = env.reset(seed=0, options={"query_id": query_id})
    phi0 = info.get("potential", 0.0)
    total, infos = 0.0, []
    for t, action in enumerate([*actions, {"tool": "submit"}]):
        _, reward, terminated, truncated, step_info = env.step(action)
        total += gamma ** t * float(reward)
        infos.append(step_info)
        if terminated or truncated:
            break
    return total, infos, phi0


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_shaped_return_is_the_true_return_minus_the_start_potential(mini_db_path: Path, query_and_legs,
                                                                    gamma: float) -> None:
    query_id, legs = query_and_legs
    looks = [{"tool": "view_plan"}] * len(legs)
    for actions in (legs, looks, legs[:1] + looks[1:]):
        true_return, _, _ = rollout(UTPEnv(db_path=mini_db_path), query_id, actions)
        true_return *= gamma ** len(actions)  # the env pays only at the final step t = len(actions)
        shaped, infos, phi0 = rollout(PotentialShaping(UTPEnv(db_path=mini_db_path), gamma=gamma),
                                      query_id, actions)
        assert shaped == pytest.approx(true_return - phi0, abs=1e-9)
        assert infos[-1]["potential"] == 0.0  # Φ = 0 at the end of the episode


def test_shaping_is_dense_and_leaves_the_env_reward_alone(mini_db_path: Path, query_and_legs) -> None:
    query_id, legs = query_and_legs
    env = PotentialShaping(UTPEnv(db_path=mini_db_path))
    _, infos, phi0 = rollout(env, query_id, [legs[0], {"tool": "view_plan"}])
    added, looked, submitted = infos
    assert added["unshaped_reward"] == 0.0 and added["shaping"] != 0.0  # credit at the step that changed the plan
    assert added["shaping"] == pytest.approx(added["potential"] - phi0)
    assert looked["shaping"] == 0.0  # a lookup changes nothing
    assert submitted["unshaped_reward"] == submitted["reward"] > 0  # the env's own reward, kept in info
    assert submitted["shaping"] == pytest.approx(-looked["potential"])  # γ·0 − Φ(s_T−1)


def test_potential_is_the_share_of_checks_passed(mini_db_path: Path, query_and_legs) -> None:
    query_id, legs = query_and_legs
    env = UTPEnv(db_path=mini_db_path)
    assert plan_potential(env) == 0.0  # no episode yet
    env.reset(seed=0, options={"query_id": query_id})
    empty = plan_potential(env)
    env.step(legs[0])
    assert 0.0 <= empty <= 1.0 and 0.0 <= plan_potential(env) <= 1.0 and plan_potential(env) != empty


def test_shaping_works_under_gym_make_and_a_time_limit(mini_db_path: Path, query_and_legs) -> None:
    query_id, legs = query_and_legs
    env = PotentialShaping(gym.make("utp_env/UTP-v0", db_path=str(mini_db_path), max_episode_steps=2))
    _, info = env.reset(seed=0, options={"query_id": query_id})
    total = -info["potential"]
    for action in [legs[0], {"tool": "view_plan"}]:
        _, reward, _, truncated, step_info = env.step(action)
        total -= float(reward) - step_info["unshaped_reward"]
    assert truncated and step_info["potential"] == 0.0 and total == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("gamma", [-0.1, 1.5, float("nan")])
def test_shaping_refuses_a_discount_outside_0_1(mini_db_path: Path, gamma: float) -> None:
    with pytest.raises(ValueError, match=r"gamma must be in \[0, 1\]"):
        PotentialShaping(UTPEnv(db_path=mini_db_path), gamma=gamma)


def test_shaping_refuses_another_env() -> None:
    with pytest.raises(TypeError, match="expected a UTPEnv"):
        PotentialShaping(gym.make("CartPole-v1"))
