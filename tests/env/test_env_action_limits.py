"""An agent can never crash the env or blame the environment: deep nesting,
huge sizes and odd unicode are measured before parsing and answered with `Error:`; a morning stay
item does not book another night and a tool that changes the cost says so; the task text states
the commonsense rules; a plan for another query is named as such by `plan_reward`."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp_env.env.actions import MAX_ACTION_DEPTH, ActionError, action_size, parse_action
from utp_env.env.adapters import PlanReward
from utp_env.env.config import query_pool
from utp_env.env.core import UTPEnv
from utp_env.env.episode import commonsense_rules, plan_mismatch
from utp_env.env.inputs import preview
from utp_env.evaluation.report import COMMONSENSE_CHECKS
from utp_env.plan_format import format_plan

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def nested(depth: int, leaf: Any = None, key: str | None = None) -> Any:
    """`depth` levels of lists (or of objects under `key`) built without recursion."""
    value = leaf
    for _ in range(depth):
        value = {key: value} if key is not None else [value]
    return value


@pytest.fixture(scope="module")
def env(mini_db_path: Path) -> UTPEnv:
    e = UTPEnv(db_path=mini_db_path, config={"step_limit": 100_000})
    e.reset(seed=0)
    return e


def _step_is_an_error(env: UTPEnv, action: Any) -> str:
    before = env.episode.snapshot()
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs.startswith("Error"), obs[:300]
    assert env.episode.status is None, "a bad action must not end the episode"
    assert not terminated and not truncated and reward == 0.0
    assert env.episode.snapshot() == before
    assert not any("traceback" in c for c in info["calls"])
    return obs


# ---------------------------------------------------------------- the cases of the issue


def test_a_list_nested_100000_deep_is_an_error_not_a_recursion_error(env: UTPEnv) -> None:
    obs = _step_is_an_error(env, nested(100_000))
    assert f"more than {MAX_ACTION_DEPTH} levels" in obs
    assert preview(nested(100_000)).startswith("[[[")  # the trace's preview does not recurse


def test_deep_nesting_inside_args_is_the_agents_error_not_infrastructure(env: UTPEnv) -> None:
    for tool, args in (("view_plan", {"padding": nested(100_000)}),
                       ("view_plan", json.dumps({"padding": nested(200)})),
                       ("submit_plan", {"plan": nested(5_000, key="days")})):
        _step_is_an_error(env, {"tool": tool, "args": args})
    text = '{"tool": "view_plan", "args": ' + "[" * 900 + "]" * 900 + "}"
    _step_is_an_error(env, text)


def test_a_huge_submit_plan_under_a_deeply_nested_key_is_refused_by_size(env: UTPEnv) -> None:
    days = [{"days": i, "current_city": "x" * 1000} for i in range(20_000)]
    action = {"tool": "submit_plan", "args": {"plan": days}, "id": nested(20, key="k")}
    assert action_size(action) > 65_536
    obs = _step_is_an_error(env, action)
    assert "limit is 65536" in obs


def test_an_integer_too_long_to_print_is_an_error(env: UTPEnv) -> None:
    _step_is_an_error(env, {"tool": "view_plan", "args": {"format": 10**5000}})
    _step_is_an_error(env, '{"tool": "view_plan", "args": {"format": ' + "9" * 5000 + "}}")


# ---------------------------------------------------------------- hypothesis

odd_text = (st.text(alphabet=st.characters(exclude_categories=()), max_size=40)  # surrogates, controls, emoji
            | st.sampled_from(["\ud800", "\udfff\x00", "é😀\u202e", "\ufeff" * 50]))
scalars = (st.none() | st.booleans() | st.integers(min_value=-(10**6000), max_value=10**6000)
           | st.floats() | odd_text)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(odd_text, inner, max_size=3), max_leaves=10)


@SETTINGS
@given(tool=st.sampled_from(["view_plan", "add_item", "set_stay", "search_stays", "add_leg", "submit_plan",
                             "move_item", "distance", "no_such_tool"]),
       args=st.dictionaries(st.sampled_from(["day", "name", "city", "plan", "start", "end", "activity",
                                             "origin", "format", "x"]), values, max_size=5),
       depth=st.integers(min_value=0, max_value=3 * MAX_ACTION_DEPTH),
       as_text=st.booleans())
def test_hostile_arguments_never_crash_or_blame_the_env(env: UTPEnv, tool: str, args: dict[str, Any], depth: int,
                                                        as_text: bool) -> None:
    if env.episode.done:
        env.reset(seed=0)
    payload: Any = {"tool": tool, "args": {**args, "deep": nested(depth)} if depth else args}
    if as_text:
        try:
            payload = json.dumps(payload, ensure_ascii=False)
        except ValueError:
            return  # an integer json cannot print: not an action anyone can send as text
    obs, _, _, _, info = env.step(payload)
    assert isinstance(obs, str) and env.observation_space.contains(obs)
    assert env.episode.status != "infrastructure_error", obs[:500]
    assert not any("traceback" in c for c in info["calls"]), obs[:500]


@SETTINGS
@given(depth=st.integers(min_value=1, max_value=5000), size=st.integers(min_value=0, max_value=300_000),
       char=st.sampled_from(["a", "é", "😀", "\ud800", "\x00"]))
def test_parse_action_measures_before_parsing(depth: int, size: int, char: str) -> None:
    limit = sys.getrecursionlimit()
    action = nested(depth, char * size, key="args")
    try:
        calls = parse_action(action, 65_536)
    except ActionError as exc:
        assert "levels" in str(exc) or "limit is 65536" in str(exc) or "tool" in str(exc)
    else:
        assert len(calls) == 1
    assert sys.getrecursionlimit() == limit


# ---------------------------------------------------------------- the extra-night trap


def _three_day_episode(mini_db_path: Path) -> tuple[UTPEnv, str, str]:
    e = UTPEnv(db_path=mini_db_path)
    query = next(q for q in query_pool(e.db) if q.days == 3)
    e.reset(seed=0, options={"query_id": query.query_id})
    rows = e.db.city_rows("accommodations", query.dest)
    name = str(e.db.tables["accommodations"].columns["name"][int(rows[0])])
    return e, name, query.dest


def _cost(e: UTPEnv) -> str:
    text = e.step({"tool": "check_plan", "args": {}})[0]
    return next(line for line in text.splitlines() if line.startswith("cost:"))


def test_a_morning_stay_item_ends_the_previous_night_and_books_nothing(mini_db_path: Path) -> None:
    e, name, city = _three_day_episode(mini_db_path)
    e.step({"tool": "set_stay", "args": {"name": name, "city": city, "from_day": 1, "to_day": 2}})
    before = _cost(e)
    obs = e.step({"tool": "add_item", "args": {"day": 3, "name": name, "activity": "stay",
                                               "start": "07:00", "end": "07:30"}})[0]
    assert "ends the night of day 2" in obs and "Cost changed" not in obs
    assert e.episode.plan.days[2].accommodation is None
    assert _cost(e) == before


def test_a_tool_that_books_a_night_says_so(mini_db_path: Path) -> None:
    e, name, city = _three_day_episode(mini_db_path)
    e.step({"tool": "set_stay", "args": {"name": name, "city": city, "from_day": 1, "to_day": 1}})
    obs = e.step({"tool": "add_item", "args": {"day": 2, "name": name, "activity": "stay",
                                               "start": "21:00", "end": "07:00"}})[0]
    assert "Cost changed: the night of day 2 is now booked at" in obs and "INR per night" in obs
    obs = e.step({"tool": "set_stay", "args": {"name": name, "city": city, "from_day": 1, "to_day": 3}})[0]
    assert "last day" in obs


# ---------------------------------------------------------------- task text and mismatched plans


def test_the_task_text_states_every_commonsense_rule_from_the_check_list(env: UTPEnv) -> None:
    text, _ = env.reset(seed=1)
    rules = commonsense_rules()
    assert list(rules) == list(COMMONSENSE_CHECKS)
    for name, rule in rules.items():
        assert f"- {name}: {rule}" in text
        assert rule != name.replace("_", " "), f"{name}: no check function's docstring was found for its rule"
    assert "240 minutes" in rules["meal_gaps"]  # the configured gap, not a placeholder


def test_plan_reward_names_a_plan_made_for_another_query(mini_db_path: Path) -> None:
    reward = PlanReward(db_path=mini_db_path)
    env = reward._env
    pool = [q for q in query_pool(env.db) if q.query_id in _references(mini_db_path)]
    first = pool[0]
    other = next(q for q in pool if q.org != first.org)
    plan = _references(mini_db_path)[first.query_id]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reward([json.dumps(plan)], query_id=[other.query_id])
    messages = [str(w.message) for w in caught]
    assert any(f"query {other.query_id} does not match it" in m and f"starts in {first.org}" in m for m in messages)
    assert not plan_mismatch(env.episode.plan.model_copy(update={"days": []}), other)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reward([json.dumps(plan)], query_id=[first.query_id])  # the right query: no warning


def _references(db: Path) -> dict[str, Any]:
    out = {}
    for line in (db / "reference_plans.jsonl").read_text().splitlines():
        record = json.loads(line)
        out[record["query_id"]] = record["plan"]
    return out


def test_format_plan_round_trip_is_not_a_mismatch(env: UTPEnv, mini_db_path: Path) -> None:
    from utp_env.dataset import dataset_of

    dataset = dataset_of(env.db)
    query_id, plan = next(iter(dataset.references.items()))
    assert plan_mismatch(plan, dataset.query(query_id), env.db) == []
    assert format_plan(plan)
