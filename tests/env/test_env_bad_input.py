"""The env's boundaries hold: every bad input to `reset`
is a one-line `ValueError` naming the option and leaves no half-reset episode; JSON nested deeper
than `MAX_JSON_DEPTH` is refused wherever actions, plans and options come in (in a vector env before
an action is pickled to a worker); a day holds at most `MAX_ITEMS_PER_DAY` items, stated in the task
text; and the closed loop's shortened look-ahead pauses exactly where the whole look-ahead did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import utp_env  # noqa: F401 - registers the ids
from utp_env.env.actions import RefusedAction, parse_action
from utp_env.env.config import reference_plan, split_pool
from utp_env.env.core import UTPEnv
from utp_env.env.replan import UTPReplanEnv
from utp_env.itinerary import MAX_ITEMS_PER_DAY, Plan
from utp_env.plan_format import PlanFormatError, format_plan, parse_plan
from utp_env.simulation.realise import Realiser
from utp_env.tools.json_depth import MAX_JSON_DEPTH, JSONDepthError, exceeds_depth, loads_bounded

ENV_IDS = ["utp_env/UTP-v0", "utp_env/UTP-Replan-v0"]
CONTINUE = {"tool": "continue_trip"}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def nested(depth: int, leaf: Any = None) -> Any:
    """`depth` levels of lists built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.fixture(scope="module", params=ENV_IDS)
def env(request: pytest.FixtureRequest, mini_db_path: Path) -> UTPEnv:
    made = gym.make(request.param, db_path=mini_db_path).unwrapped
    assert isinstance(made, UTPEnv)
    return made


@pytest.fixture(scope="module")
def replan(mini_db_path: Path) -> UTPReplanEnv:
    made = gym.make("utp_env/UTP-Replan-v0", db_path=mini_db_path).unwrapped
    assert isinstance(made, UTPReplanEnv)
    return made


def first_reference(env: UTPEnv, i: int = 0) -> tuple[str, Plan]:
    query = split_pool(env.db, "validation")[i]
    plan = reference_plan(env.db, query.query_id)
    assert plan is not None
    return query.query_id, plan


def busiest(plan: Plan) -> int:
    """The index of the plan's day of most visits (the one `overfull` pads)."""
    return max(range(len(plan.days)), key=lambda d: sum(1 for i in plan.days[d].items if i.activity == "visit"))


def overfull(plan: Plan, n: int = 3000) -> Plan:
    """`plan` with `n` one-minute visits added to its day of most visits (assigned, so not validated)."""
    out = plan.model_copy(deep=True)
    day = out.days[busiest(out)]
    base = next(i for i in day.items if i.activity == "visit")
    day.items = [*day.items, *(base.model_copy(update={"start": 600 + i % 600, "end": 601 + i % 600})
                               for i in range(n))]
    return out


def at_cap(plan: Plan) -> tuple[Plan, int]:
    """`plan` with its day of most visits filled to `MAX_ITEMS_PER_DAY` items; (plan, that day's number)."""
    d = busiest(plan)
    return overfull(plan, MAX_ITEMS_PER_DAY - len(plan.days[d].items)), d + 1


def refused_reset(env: UTPEnv, match: str, **kwargs: Any) -> str:
    """reset(**kwargs) after a good reset: a one-line ValueError matching `match`; no episode is left
    and step() says the reset failed."""
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match) as caught:
        env.reset(**kwargs)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("reset"), message
    assert env.episode is None
    with pytest.raises(gym.error.ResetNeeded, match=r"last reset\(\) failed"):
        env.step({"tool": "view_plan"})
    return message


# ---------------------------------------------------------------- reset: every bad input, one line


BAD_OPTIONS: list[tuple[Any, str]] = [
    ([("query_id", "x")], r"options must be a dict"),
    ("query_id=x", r"options must be a dict"),
    ({"querry_id": "x"}, r"unknown option"),
    ({1: "x"}, r"option names are strings"),
    ({"query_id": 5}, r"options\['query_id'\] must be a string"),
    ({"query_id": "utp-q-9999"}, r"options\['query_id'\]: no query with query_id 'utp-q-9999'"),
    ({"split": "training"}, r"options\['split'\]='training' is not a split: use one of train, validation, test"),
    ({"split": "tset"}, r"is not a split: .*\(did you mean 'test'\?\)"),
    ({"split": ["validation"]}, r"options\['split'\] must be a string"),
    ({"query": 7}, r"options\['query'\] must be a Query"),
    ({"query": {"query_id": "x"}}, r"options\['query'\] is not a valid query: \w+"),
    ({"query": nested(100_000)}, rf"options\['query'\] nests more than {MAX_JSON_DEPTH} levels"),
    ({"query_id": None, "split": {"a": nested(40)}}, rf"options\['split'\] nests more than {MAX_JSON_DEPTH}"),
]


@pytest.mark.parametrize(("options", "match"), BAD_OPTIONS)
def test_a_bad_reset_option_is_one_line_naming_it_and_leaves_no_episode(env: UTPEnv, options: Any,
                                                                        match: str) -> None:
    refused_reset(env, match, seed=0, options=options)


def test_a_query_id_of_another_split_than_the_one_named_is_refused(env: UTPEnv) -> None:
    """A test-split loop that names a validation query by id would otherwise run it silently."""
    query_id, _ = first_reference(env, 0)
    refused_reset(env, rf"options\['query_id'\] '{query_id}' is a query of split 'validation', not of "
                       r"options\['split'\] 'test': give one of the two", seed=0,
                  options={"split": "test", "query_id": query_id})
    env.reset(seed=0, options={"split": "validation", "query_id": query_id})  # the same split: as asked


def test_a_query_id_of_another_split_than_the_env_s_named_split_is_refused(mini_db_path: Path) -> None:
    """An env made for the test split (`split="test"`) does not run a validation query by id; an env made
    without a split runs a query of any split by id."""
    named = gym.make("utp_env/UTP-v0", db_path=mini_db_path, split="test").unwrapped
    query_id, _ = first_reference(named, 0)
    refused_reset(named, rf"options\['query_id'\] '{query_id}' is a query of split 'validation', not of the "
                         r"env's split 'test'", seed=0, options={"query_id": query_id})
    unnamed = gym.make("utp_env/UTP-v0", db_path=mini_db_path, config={"split": "test"}).unwrapped
    unnamed.reset(seed=0, options={"query_id": query_id})


@pytest.mark.parametrize("stochastic", ["yes", 1, [True]])
def test_a_stochastic_option_that_is_not_a_bool_is_refused(env: UTPEnv, stochastic: Any) -> None:
    refused_reset(env, r"options\['stochastic'\]", seed=0, options={"stochastic": stochastic})


@pytest.mark.parametrize("seed", [-1, "3", 1.5, True, [1]])
def test_a_bad_seed_is_one_line_naming_it(env: UTPEnv, seed: Any) -> None:
    refused_reset(env, r"reset: seed must be a non-negative int or None", seed=seed)


def test_a_numpy_integer_seed_is_an_int_seed(env: UTPEnv) -> None:
    _, a = env.reset(seed=np.int64(7))
    _, b = env.reset(seed=7)
    assert a["episode_id"] == b["episode_id"] and a["seed"] == 7


def test_a_failed_reset_leaves_the_generator_as_it_was(replan: UTPReplanEnv, mini_db_path: Path) -> None:
    """The closed loop's plan is read after the episode's generator was seeded: the failure puts it
    back, so the next unseeded reset draws what it would have drawn without the failed call."""
    fresh = gym.make("utp_env/UTP-Replan-v0", db_path=mini_db_path).unwrapped
    fresh.reset(seed=1)
    _, want = fresh.reset()
    _, plan = first_reference(replan, 0)
    other, _ = first_reference(replan, 1)
    replan.reset(seed=1)
    with pytest.raises(ValueError, match=r"options\['plan'\] is a plan for"):
        replan.reset(seed=5, options={"query_id": other, "plan": plan})
    assert replan.episode is None
    _, got = replan.reset()
    assert got["episode_id"] == want["episode_id"] and got["seed"] == want["seed"]


# ---------------------------------------------------------------- the closed loop's plan option


@pytest.mark.parametrize(("plan", "match"), [
    ('{"plan": ' + "[" * 100_000 + "]" * 100_000 + "}", rf"options\['plan'\] nests more than {MAX_JSON_DEPTH}"),
    ("[" * 100_000 + "]" * 100_000, rf"options\['plan'\] could not be read \(the plan nests more than "
                                    rf"{MAX_JSON_DEPTH}"),
    ({"days": nested(100_000)}, rf"options\['plan'\] nests more than {MAX_JSON_DEPTH}"),
    (nested(40, {"days": 1}), rf"options\['plan'\] nests more than {MAX_JSON_DEPTH}"),
    (5, r"options\['plan'\] could not be read"),
    ("not a plan", r"options\['plan'\] could not be read"),
    ({"days": [{"day": 1, "cities": "Pune"}]}, r"options\['plan'\] is not a valid Plan \(days\.0\.cities"),
])
def test_a_bad_plan_option_is_one_line_naming_it(replan: UTPReplanEnv, plan: Any, match: str) -> None:
    refused_reset(replan, match, seed=0, options={"plan": plan})


def test_a_plan_outcome_without_its_plan_is_refused(replan: UTPReplanEnv) -> None:
    refused_reset(replan, r"options\['plan_outcome'\]", seed=0, options={"plan_outcome": "x"})


def test_the_3000_item_plan_is_refused_by_the_cap_in_one_line(replan: UTPReplanEnv) -> None:
    """The plan that took continue_trip 47 s, in each form reset takes; refused up front."""
    query_id, plan = first_reference(replan, 0)
    big = overfull(plan)
    forms: list[Any] = [big, big.model_dump(mode="json"), big.model_dump_json(), format_plan(big),
                        json.dumps(format_plan(big))]
    for form in forms:
        message = refused_reset(replan, rf"at most {MAX_ITEMS_PER_DAY} point-of-interest items",
                                seed=0, options={"query_id": query_id, "plan": form})
        assert "options['plan']" in message and "3" in message


def test_a_plan_at_the_cap_is_lived_through(replan: UTPReplanEnv) -> None:
    query_id, plan = first_reference(replan, 0)
    full, n = at_cap(plan)
    assert len(full.days[n - 1].items) == MAX_ITEMS_PER_DAY
    _, info = replan.reset(seed=0, options={"query_id": query_id, "plan": Plan.model_validate(full.model_dump())})
    assert info["phase"] == "execution"
    while True:
        *_, terminated, truncated, info = replan.step(CONTINUE)
        if terminated or truncated:
            break
    assert info["termination_reason"] == "submitted"


# ---------------------------------------------------------------- the cap on items per day


def test_the_task_text_states_the_cap(env: UTPEnv) -> None:
    obs, _ = env.reset(seed=0)
    assert f"A day holds at most {MAX_ITEMS_PER_DAY} point-of-interest items" in obs


def test_reference_plans_stay_far_below_the_cap(env: UTPEnv) -> None:
    from utp_env.dataset import dataset_of

    busiest = max(len(d.items) for p in dataset_of(env.db).references.values() if p is not None for d in p.days)
    assert 0 < busiest <= MAX_ITEMS_PER_DAY // 4


def test_parse_plan_refuses_a_day_over_the_cap_naming_day_and_field(env: UTPEnv) -> None:
    _, plan = first_reference(env, 0)
    days = format_plan(overfull(plan, MAX_ITEMS_PER_DAY))
    with pytest.raises(PlanFormatError, match=rf"field 'point_of_interest_list': a day holds at most "
                                              rf"{MAX_ITEMS_PER_DAY}") as caught:
        parse_plan(days)
    assert "\n" not in str(caught.value)
    with pytest.raises(ValueError, match=rf"at most {MAX_ITEMS_PER_DAY}"):
        Plan.model_validate(overfull(plan, MAX_ITEMS_PER_DAY).model_dump())


def test_submit_plan_over_the_cap_is_an_error_observation(mini_db_path: Path) -> None:
    env = gym.make("utp_env/UTP-v0", db_path=mini_db_path).unwrapped
    query_id, plan = first_reference(env, 0)
    env.reset(seed=0, options={"query_id": query_id})
    days = format_plan(overfull(plan, MAX_ITEMS_PER_DAY))
    obs, reward, terminated, truncated, _ = env.step({"tool": "submit_plan", "args": {"plan": days}})
    assert obs.startswith("Error") and f"at most {MAX_ITEMS_PER_DAY}" in obs, obs[:400]
    assert not terminated and not truncated and reward == 0.0 and env.episode.plan.days == []


def test_add_item_and_move_item_refuse_to_overfill_a_day(mini_db_path: Path) -> None:
    env = gym.make("utp_env/UTP-v0", db_path=mini_db_path).unwrapped
    query_id, plan = first_reference(env, 0)
    env.reset(seed=0, options={"query_id": query_id})
    full, n = at_cap(plan)
    env.episode.plan = full
    venue = next(i for i in full.days[n - 1].items if i.activity == "visit")
    before = [len(d.items) for d in full.days]
    obs, *_ = env.step({"tool": "add_item", "args": {"day": n, "name": venue.name, "activity": "visit",
                                                     "start": "23:00", "end": "23:30",
                                                     **({"kind": venue.venue_type} if venue.venue_type else {}),
                                                     **({"meal": venue.meal} if venue.meal else {})}})
    assert obs.startswith("Error") and f"day {n} is full" in obs and f"at most {MAX_ITEMS_PER_DAY}" in obs, obs
    other = 1 if n != 1 else 2
    obs, *_ = env.step({"tool": "move_item", "args": {"day": other, "index": 1, "to_day": n}})
    assert obs.startswith("Error") and f"day {n} is full" in obs, obs
    assert [len(d.items) for d in env.episode.plan.days] == before


@pytest.mark.parametrize("tool, args", [
    ("add_leg", {"mode": "cab", "origin": "A", "destination": "B", "departure": "09:00"}),
    ("add_item", {"name": "X", "activity": "visit", "start": "10:00", "end": "11:00"}),
    ("remove_item", {"index": 1}), ("remove_leg", {"index": 1}), ("move_item", {"index": 1}),
])
@pytest.mark.parametrize("past", [1, 3, 10**6])
def test_a_day_past_the_trip_names_the_trip_s_length(mini_db_path: Path, tool: str, args: dict[str, Any],
                                                      past: int) -> None:
    """A day past the trip's end is refused naming this trip's length (not the longest trip's 7), and
    the schema still states the longest trip's last day for models that read bounds."""
    env = gym.make("utp_env/UTP-v0", db_path=mini_db_path).unwrapped
    query = next(q for q in split_pool(env.db, "validation") if q.days < 7)
    env.reset(seed=0, options={"query_id": query.query_id})
    day = query.days + past
    obs, *_ = env.step({"tool": tool, "args": {"day": day, **args}})
    assert obs.startswith("Error") and f"day {day} is past the end of this {query.days}-day trip" in obs, obs
    assert "less than or equal" not in obs and env.episode.plan.days == []
    schema = next(s for s in env.openai_tools() if s["function"]["name"] == tool)
    assert schema["function"]["parameters"]["properties"]["day"]["maximum"] == 7


def test_set_stay_past_the_trip_names_the_trip_s_length(mini_db_path: Path) -> None:
    env = gym.make("utp_env/UTP-v0", db_path=mini_db_path).unwrapped
    query = next(q for q in split_pool(env.db, "validation") if q.days == 3)
    env.reset(seed=0, options={"query_id": query.query_id})
    obs, *_ = env.step({"tool": "set_stay", "args": {"from_day": 1, "to_day": 6, "name": "X", "city": query.dest}})
    assert obs.startswith("Error") and "to_day" in obs and "day 6 is past the end of this 3-day trip" in obs, obs



@pytest.mark.parametrize(("kwargs", "match"), [
    ({"id": "utp_env/UTP-L1-v0", "level": 2}, r"utp_env/UTP-L1-v0 is level 1, and level=2 was given too: make "
                                                r"utp_env/UTP-L2-v0"),
    ({"id": "utp_env/UTP-L3-v0", "config": {"level": 1}}, r"level=3 and config level 1 contradict each other"),
    ({"id": "utp_env/UTP-v0", "level": 2, "config": {"level": 3}}, r"level=2 and config level 3 contradict"),
    ({"id": "utp_env/UTP-v0", "config": {"step_limt": 3}}, r"^config override step_limt: Extra inputs are not "
                                                            r"permitted \(did you mean step_limit"),
    ({"id": "utp_env/UTP-v0", "split": "validaton"}, r"^split='validaton' is not a split: .*did you mean 'validation'"),
])
def test_contradicting_or_mistyped_make_arguments_are_refused_at_make(kwargs: dict[str, Any], match: str,
                                                                       mini_db_path: Path) -> None:
    """Said by `gym.make`, naming what the caller gave: an env id of one level made at another (results
    logged by the id would be mislabelled), a level given twice, a typo in the config overrides (not
    blamed on configs/env.yaml), a split that is not one (not left for a reset that never named it)."""
    with pytest.raises(ValueError, match=match) as caught:
        gym.make(**kwargs, db_path=mini_db_path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("env_id", "kwargs", "level"), [
    ("utp_env/UTP-L2-v0", {}, 2), ("utp_env/UTP-L2-v0", {"level": 2}, 2), ("utp_env/UTP-v0", {"level": 2}, 2),
    ("utp_env/UTP-v0", {"config": {"level": 3}}, 3), ("utp_env/UTP-L3-v0", {"config": {"level": 3}}, 3),
])
def test_a_level_said_once_or_the_same_twice_is_that_level(env_id: str, kwargs: dict[str, Any], level: int,
                                                          mini_db_path: Path) -> None:
    env = gym.make(env_id, **kwargs, db_path=mini_db_path)
    assert env.unwrapped.level.number == level and env.spec is not None and env.spec.id == env_id



def _day_two_in_a_city(mini_db_path: Path) -> tuple[UTPEnv, str, Any]:
    """An episode of a reference plan's query with the plan's first leg added, so day 2 is in its city;
    (env, that city, a restaurant item of day 2)."""
    env = gym.make("utp_env/UTP-v0", db_path=mini_db_path).unwrapped
    query_id, plan = first_reference(env, 0)
    env.reset(seed=0, options={"query_id": query_id})
    env.episode.plan = plan.model_copy(deep=True)
    day = plan.days[1]
    meal = next(i for i in day.items if i.venue_type == "restaurant")
    return env, day.cities[-1], meal


def test_a_start_on_a_later_day_is_refused_naming_the_day_it_is_on(mini_db_path: Path) -> None:
    """The day format cannot carry a start past midnight ('09:00 +1' came back as 09:00 of the same day,
    while view_plan showed it as 09:00 to 10:00 +1 day); the item belongs to the next day."""
    env, _, meal = _day_two_in_a_city(mini_db_path)
    before = env.episode.plan.model_dump()
    obs, *_ = env.step({"tool": "add_item", "args": {"day": 2, "name": meal.name, "activity": "visit",
                                                     "meal": meal.meal, "start": "09:00 +1", "end": "10:00 +1"}})
    assert obs.startswith("Error") and "the start 09:00 +1 day is on a later day than day 2: add the item to day 3 " \
        "at 09:00" in obs, obs
    assert env.episode.plan.model_dump() == before


def test_a_venue_named_with_another_city_is_refused_not_swapped(mini_db_path: Path) -> None:
    """'Name, City' where City is not the day's: refused naming both, not silently the day city's venue."""
    from utp_env.resolve import VenueName

    env, city, meal = _day_two_in_a_city(mini_db_path)
    name = VenueName.of(meal.name).name  # (the reference plan's items are written 'Name, City')
    other = next(c for c in sorted(env.db.cities) if c != city)
    call = {"day": 2, "activity": "visit", "kind": "restaurant", "meal": meal.meal, "start": "13:00", "end": "14:00"}
    obs, *_ = env.step({"tool": "add_item", "args": {**call, "name": f"{name}, {other}"}})
    assert obs.startswith("Error") and f"names the city {other}, not {city}" in obs, obs
    obs, *_ = env.step({"tool": "add_item", "args": {**call, "name": f"{name}, {city}"}})
    assert not obs.startswith("Error"), obs  # the day's own city, stated: as asked


def test_level_2_s_task_text_names_every_check_it_scores(mini_db_path: Path) -> None:
    from utp_env.env.levels import LEVELS

    env = gym.make("utp_env/UTP-L2-v0", db_path=mini_db_path)
    obs, _ = env.reset(seed=0)
    scored = next(line for line in obs.splitlines() if line.startswith("SCORED at this level"))
    assert all(name in scored for name in LEVELS[2].checks or ()), scored
    assert "\n- open_hours: " in obs and "\n- transit_distances: " in obs


def test_an_invalid_action_s_call_entry_has_the_keys_of_every_call(mini_db_path: Path) -> None:
    env = gym.make("utp_env/UTP-v0", db_path=mini_db_path)
    env.reset(seed=0)
    _, _, _, _, info = env.step("{not json")
    assert info["calls"] and set(info["calls"][0]) == {"tool", "ok", "error", "id"}


# ---------------------------------------------------------------- vector envs: refused in the parent


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_deep_or_huge_action_in_a_vector_env_is_an_error_observation(mode: str, mini_db_path: Path) -> None:
    envs = gym.make_vec("utp_env/UTP-v0", num_envs=2, vectorization_mode=mode, db_path=str(mini_db_path))
    try:
        envs.reset(seed=0)
        obs, reward, terminated, truncated, _ = envs.step((nested(100_000), {"tool": "view_plan"}))
        assert obs[0].startswith("Error: invalid action") and f"more than {MAX_JSON_DEPTH} levels" in obs[0]
        assert obs[1].startswith("The plan is empty")
        assert list(reward) == [0.0, 0.0] and not terminated.any() and not truncated.any()
        obs, *_ = envs.step(({"tool": "view_plan"}, "x" * 200_000))
        assert obs[0].startswith("The plan is empty") and "200000 bytes; the limit is" in obs[1]
        obs, *_ = envs.step(({"tool": "view_plan"}, {"tool": "view_plan"}))  # both still step
        assert all(o.startswith("The plan is empty") for o in obs)
    finally:
        envs.close()


def test_a_refused_action_is_answered_with_its_reason() -> None:
    with pytest.raises(ValueError, match="too deep for the worker"):
        parse_action(RefusedAction("too deep for the worker"))


# ---------------------------------------------------------------- the depth bound itself


def _depth(value: Any) -> int:
    """Reference (recursive) nesting depth of lists and dicts; 0 for a scalar."""
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
                    max_leaves=30)


@SETTINGS
@given(value=JSON, limit=st.integers(min_value=1, max_value=8))
def test_exceeds_depth_agrees_with_the_recursive_depth(value: Any, limit: int) -> None:
    assert exceeds_depth(value, limit) == (_depth(value) > limit)
    text = json.dumps(value)
    if _depth(value) > limit:
        with pytest.raises(JSONDepthError, match=f"x nests more than {limit} levels"):
            loads_bounded(text, "x", limit)
    else:
        assert loads_bounded(text, "x", limit) == value


def test_a_self_containing_list_is_too_deep_not_an_endless_walk() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert exceeds_depth(loop)


@SETTINGS
@given(options=st.dictionaries(
    st.sampled_from(["query_id", "query", "split", "stochastic", "plan", "plan_outcome", "junk"]),
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    | st.lists(st.integers(), max_size=3) | st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
    max_size=3))
def test_reset_with_any_options_is_an_episode_or_one_line_value_error(replan: UTPReplanEnv,
                                                                      options: dict[str, Any]) -> None:
    try:
        replan.reset(seed=0, options=options)
    except ValueError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("reset"), str(exc)
        assert replan.episode is None
        with pytest.raises(gym.error.ResetNeeded):
            replan.step({"tool": "view_plan"})
    else:
        assert replan.episode is not None and not replan.episode.done


# ---------------------------------------------------------------- the closed loop's look-ahead


def test_looking_ahead_only_to_the_next_step_pauses_as_the_whole_look_ahead(replan: UTPReplanEnv,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`Realiser.run` looks ahead only up to the next step taken (linear in the plan); with the whole
    look-ahead each time (the quadratic walk it replaced) every trip pauses at the same steps with the
    same reports and ends with the same reward."""
    def play(query_id: str, plan: Plan, seed: int) -> list[Any]:
        _, info = replan.reset(seed=seed, options={"query_id": query_id, "plan": plan})
        seen = []
        while True:
            obs, reward, terminated, truncated, info = replan.step(CONTINUE)
            seen.append((obs, info.get("disruption")))
            if terminated or truncated:
                return [*seen, reward, info["realised"]["steps"]]

    whole = Realiser.look_ahead

    def whole_look_ahead(self: Realiser, *args: Any, first_taken: bool = False, **kwargs: Any) -> Any:
        return whole(self, *args, **kwargs)

    pauses = 0
    for i in range(6):
        query_id, plan = first_reference(replan, i)
        for seed in range(3):
            fast = play(query_id, plan, seed)
            with monkeypatch.context() as m:
                m.setattr(Realiser, "look_ahead", whole_look_ahead)
                slow = play(query_id, plan, seed)
            assert fast == slow
            pauses += len(fast) - 3
    assert pauses > 0  # the comparison covered trips that pause


@pytest.mark.parametrize("plan", [
    "[" * 100_000 + "]" * 100_000,
    "Here is the plan: " + "[" * 5_000,
    nested(100_000),
    {"plan": nested(40)},
    {"plan": json.dumps(nested(40, {"days": 1}))},
    [{"days": 1, "current_city": "Pune", "attraction": nested(40, "x")}],
])
def test_parse_plan_refuses_deep_plans_in_one_line(plan: Any) -> None:
    with pytest.raises(PlanFormatError) as caught:
        parse_plan(plan)
    message = str(caught.value)
    assert "\n" not in message and ("nests more than" in message or "no JSON object" in message), message


ACTIONS = st.recursive(st.none() | st.integers() | st.text(max_size=4) | st.just({"tool": "view_plan"}),
                       lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner,
                                                                                    max_size=2),
                       max_leaves=12)


@SETTINGS
@given(depth=st.integers(min_value=0, max_value=3 * MAX_JSON_DEPTH), leaf=ACTIONS,
       size=st.integers(min_value=0, max_value=1_000))
def test_a_vector_env_sends_an_action_as_is_or_refuses_it_as_parse_action_would(depth: int, leaf: Any,
                                                                              size: int) -> None:
    """What a vector env hands each sub-env: the action itself when `parse_action` would get past
    its size and depth checks, else a `RefusedAction` with the error `parse_action` gives."""
    from gymnasium.vector.utils import batch_space, iterate

    from utp_env.env.actions import ActionError, check_action_size
    from utp_env.env.spaces import ToolCallSpace

    space = ToolCallSpace({}, [], max_bytes=512)
    action = nested(depth, leaf) if size % 2 else ["x" * size, nested(depth, leaf)]
    sent = list(iterate(batch_space(space, 2), (action, {"tool": "view_plan"})))
    assert sent[1] == {"tool": "view_plan"}
    try:
        check_action_size(action, 512)
    except ActionError as exc:
        assert sent[0] == RefusedAction(str(exc))
        with pytest.raises(ActionError) as refused:
            parse_action(sent[0], 512)
        with pytest.raises(ActionError) as direct:
            parse_action(action, 512)
        assert str(refused.value) == str(direct.value)
    else:
        assert sent[0] is action
