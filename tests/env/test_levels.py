"""The task's levels (utp_env/env/levels.py): views of the benchmark's queries, scored by the same reward on
the part they ask, solved by the reference planner, locked where they give, refused where they do not fit.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import utp_env  # noqa: F401  (registers the ids)
from utp_env.env import LEVEL_ENV_IDS
from utp_env.env.config import DEFAULT_REWARD_WEIGHTS, EnvConfig, level_pool, reference_plan, split_pool
from utp_env.env.core import UTPEnv
from utp_env.env.levels import LEVELS, LevelUnavailable, level_of, level_task
from utp_env.env.reward import score_plan
from utp_env.rl.scripted import level_calls
from utp_env.tools.database import Database

LEVEL_NUMBERS = sorted(LEVELS)


def play(env: UTPEnv, query_id: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The final info of an episode of `env` on `query_id` that makes `calls` (each must be accepted)."""
    env.reset(seed=0, options={"query_id": query_id})
    info: dict[str, Any] = {}
    for name, args in calls:
        _, _, terminated, truncated, info = env.step({"tool": name, "args": args})
        assert all(c["ok"] for c in info["calls"]), (name, args, info["calls"])
        if terminated or truncated:
            break
    return info


def test_every_level_is_a_registered_id_and_level_4_is_the_papers_task(mini_db_path: Path) -> None:
    assert list(LEVEL_ENV_IDS) == LEVEL_NUMBERS == [1, 2, 3, 4]
    for number, env_id in LEVEL_ENV_IDS.items():
        assert LEVELS[number].env_id == env_id
        env = gym.make(env_id, db_path=str(mini_db_path))
        _, info = env.reset(seed=0)
        assert info["level"] == number == env.unwrapped.level.number
    plain = UTPEnv(db_path=mini_db_path)
    four = gym.make(LEVEL_ENV_IDS[4], db_path=str(mini_db_path)).unwrapped
    assert plain.config == four.config and plain.tools.keys() == four.tools.keys()
    assert plain.reset(seed=3) == four.reset(seed=3)  # the same text and info: UTP-v0 is unchanged


@pytest.mark.parametrize("split", ["validation", "test", "train"])
@pytest.mark.parametrize("number", LEVEL_NUMBERS)
def test_a_levels_queries_are_views_of_the_splits_own_queries(mini_db: Database, mini_db_path: Path, split: str,
                                                             number: int, tmp_path: Path) -> None:
    level = LEVELS[number]
    if split == "train":  # the train prefix is built next to the query set: on a copy, not the shared fixture
        import shutil

        from utp_env.env.config import open_database

        mini_db_path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
        mini_db = open_database(mini_db_path)
    benchmark = {q.query_id: q for q in split_pool(mini_db, split, 40 if split == "train" else None)}
    if split == "train" and level.horizons is not None:  # its pool reads the whole 5,000-query split: the prefix
        pool = [q for q in benchmark.values() if q.days in level.horizons]
    else:
        pool = level_pool(mini_db, split, level, 40 if split == "train" else None)
    assert pool and {q.query_id for q in pool} <= set(benchmark)
    for query in pool:
        task = level_task(level, query, reference_plan(mini_db, query.query_id))
        assert task.query is benchmark[query.query_id] or task.query == benchmark[query.query_id]
        assert set(task.days) <= set(range(1, query.days + 1))
    if split == "train":  # an env on train draws from the whole split: 5,000 queries built, minutes of CPU
        return
    env = UTPEnv(db_path=mini_db_path, split=split, level=number)
    drawn = {env.reset(seed=s)[1]["query"]["query_id"] for s in range(12)}
    assert drawn <= {q.query_id for q in level_pool(mini_db, split, level)}


def test_level_3_views_only_the_3_day_queries_and_says_why_not_another(mini_db_path: Path, mini_db: Database) -> None:
    five = next(q for q in split_pool(mini_db, "validation") if q.days == 5)
    env = UTPEnv(db_path=mini_db_path, level=3)
    with pytest.raises(ValueError, match=r"level 3 \(a short trip.*views 3-day queries; .* is a 5-day trip"):
        env.reset(seed=0, options={"query_id": five.query_id})
    with pytest.raises(LevelUnavailable):
        level_task(LEVELS[3], five, reference_plan(mini_db, five.query_id))
    assert {q.days for q in level_pool(mini_db, "validation", LEVELS[3])} == {3}


@pytest.mark.parametrize("number", LEVEL_NUMBERS)
def test_the_reference_planner_solves_every_level_through_the_env(mini_db_path: Path, number: int) -> None:
    from utp_env.plan_format import format_plan

    env = UTPEnv(db_path=mini_db_path, level=number)
    for query in level_pool(env.db, "validation", env.level)[:8]:
        reference = reference_plan(env.db, query.query_id)
        assert reference is not None
        task = level_task(env.level, query, reference)
        calls = (level_calls(task, reference) if number < 3
                 else [("submit_plan", {"plan": format_plan(reference)})])
        info = play(env, query.query_id, calls)
        direct = score_plan(task.view(reference), query, env.db, weights=DEFAULT_REWARD_WEIGHTS,
                            reference=reference, task=task)
        assert info["success"] and direct.success, info["report"]
        assert info["reward"] == pytest.approx(direct.reward) and 0.5 < info["reward"] <= 1.0
        assert info["level"] == number


def test_level_1_scores_the_first_leg_only_and_a_wrong_city_fails_its_route(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, level=1)
    query = next(q for q in level_pool(env.db, "validation", env.level) if q.days > 3)
    reference = reference_plan(env.db, query.query_id)
    assert reference is not None
    task = level_task(env.level, query, reference)
    honest = score_plan(task.view(reference), query, env.db, weights=DEFAULT_REWARD_WEIGHTS, reference=reference,
                        task=task)
    assert set(honest.terms) == {"commonsense_pass_rate", "hard_pass_rate", "tdas"}
    assert set(honest.checks) == set(LEVELS[1].checks or ())
    # the same leg without its buffer passes every check but earns no TDAS
    bare = task.view(reference).model_copy(deep=True)
    bare.days[0].transport[0].planned_arr = None
    plain = score_plan(bare, query, env.db, weights=DEFAULT_REWARD_WEIGHTS, reference=reference, task=task)
    assert plain.success and plain.reward == pytest.approx(2 / 3) and plain.reward < honest.reward
    # nothing booked: nothing counts
    empty = score_plan(task.given, query, env.db, weights=DEFAULT_REWARD_WEIGHTS, reference=reference, task=task)
    assert empty.reward == 0.0 and not empty.success


def test_level_2_gives_the_days_before_and_the_stay_and_scores_the_days_visits_and_meals(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, level=2)
    text, _ = env.reset(seed=0)
    ep = env.episode
    assert ep is not None and ep.task is not None
    task = ep.task
    assert task.days == (2,) and len(ep.plan.days) == 2 and ep.plan.days[1].accommodation == task.stay
    assert all(i.venue_type == "accommodation" for i in ep.plan.days[1].items)
    assert f'Plan this day: {{"day": 2, "city": "{task.city}", "date": "{ep.query.dates[1]}"}}' in text
    _, reward, terminated, _, info = env.step({"tool": "submit"})
    assert terminated and reward == 0.0 and not info["success"]  # the given part earns nothing


def lock_cases(env: UTPEnv) -> list[tuple[dict[str, Any], str]]:
    """(action, what its refusal says) for every change a level-2 episode must refuse."""
    ep = env.episode
    assert ep is not None and ep.task is not None
    restaurant = ep.db.tables["restaurants"]
    row = next(i for i in range(restaurant.n) if restaurant.value("city", i) == ep.task.city)
    name = restaurant.value("name", row)
    return [
        ({"tool": "add_item", "args": {"day": 1, "name": name, "activity": "visit", "kind": "restaurant",
                                       "meal": "lunch", "start": "13:00", "end": "14:00"}}, "asks day 2 only"),
        ({"tool": "remove_item", "args": {"day": 2, "index": 1}}, "is given by level 2"),
        ({"tool": "move_item", "args": {"day": 2, "index": 1, "start": "06:00"}}, "is given by level 2"),
        ({"tool": "add_item", "args": {"day": 2, "name": ep.task.stay, "activity": "rest", "start": "14:00",
                                       "end": "15:00"}}, "asks meals and visits, not stays"),
        ({"tool": "set_stay", "args": {"name": ep.task.stay.split(", ")[0], "city": ep.task.city, "from_day": 2,
                                       "to_day": 2}}, "does not ask for stays"),
        ({"tool": "remove_leg", "args": {"day": 1, "index": 1}}, "asks day 2 only"),
    ]


def test_level_2_refuses_every_change_to_what_it_gives_or_does_not_ask(mini_db_path: Path) -> None:
    every_tool = [t for t in UTPEnv(db_path=mini_db_path).tools if t != "submit_plan"]
    env = UTPEnv(db_path=mini_db_path, level=2, config={"tools": every_tool})
    env.reset(seed=1)
    ep = env.episode
    assert ep is not None
    before = ep.plan.model_dump_json()
    for action, why in lock_cases(env):
        observation, *_ , info = env.step(action)
        assert info["calls"][0]["ok"] is False and why in observation, (action, observation)
    assert ep.plan.model_dump_json() == before


def test_level_1_refuses_another_day_and_stays(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, level=1, config={"tools": ["add_leg", "set_stay", "add_item", "submit"]})
    env.reset(seed=0)
    ep = env.episode
    assert ep is not None
    reference = reference_plan(env.db, ep.query.query_id)
    assert reference is not None
    back = reference.days[-1].transport[-1]
    from utp_env.rl.scripted import add_leg_args

    observation, *_ = env.step({"tool": "add_leg", "args": add_leg_args(ep.query.days, back)})
    assert f"asks day 1 only; a {back.mode} leg on day {ep.query.days} is not part of it" in observation
    assert ep.plan.days == []


@pytest.mark.parametrize(("config", "level", "why"), [
    ({"tools": ["add_leg", "submit_plan"]}, 1, "submit_plan replaces the whole plan, and level 1 asks a part"),
    ({"tools": ["add_item", "submit_plan", "submit"]}, 2, "offer submit instead"),
    (None, 5, "level must be one of the levels 1 (first_leg), 2 (one_day), 3 (short_trip), 4 (full_trip), not 5"),
    (None, "2", "not '2'"),
    (None, True, "not True"),
])
def test_a_level_that_does_not_fit_is_refused_in_one_line(mini_db_path: Path, config: Any, level: Any,
                                                           why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)) as caught:
        UTPEnv(db_path=mini_db_path, config=config, level=level)
    assert "\n" not in str(caught.value)


def test_a_config_level_out_of_range_names_the_field() -> None:
    with pytest.raises(ValueError, match="level"):
        EnvConfig(level=0)
    assert level_of(2).name == "one_day"
