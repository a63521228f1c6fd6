"""Hostile actions at `step` (hypothesis): arbitrary text, malformed JSON, unknown tools, wrongly
typed or unknown arguments, oversized and unicode input. The env never raises, answers with an
error observation inside the observation space, counts the step, and leaves the plan unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp_env.env.actions import ActionError, ToolCall, parse_action
from utp_env.env.core import UTPEnv

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)


@pytest.fixture(scope="module")
def env(mini_db_path: Path) -> UTPEnv:
    e = UTPEnv(db_path=mini_db_path, config={"step_limit": 10_000, "max_action_bytes": 4096})
    e.reset(seed=0)
    # a non-empty plan, so that "unchanged" is a real claim
    city = e.episode.query.org
    stay_rows = e.db.city_rows("accommodations", city)
    if stay_rows.size:
        name = e.db.tables["accommodations"].columns["name"][int(stay_rows[0])]
        obs = e.step({"tool": "set_stay", "args": {"name": name, "city": city, "from_day": 1, "to_day": 1}})[0]
        assert obs.startswith("Stay set"), obs
    return e


def assert_refused(env: UTPEnv, action: Any) -> str:
    before, steps = env.episode.snapshot(), env.episode.steps
    obs, reward, terminated, truncated, info = env.step(action)
    assert isinstance(obs, str) and env.observation_space.contains(obs)
    assert obs.startswith("Error"), obs
    assert reward == 0.0 and not terminated and not truncated
    assert env.episode.steps == steps + 1
    assert env.episode.snapshot() == before
    assert all(not c["ok"] for c in info["calls"])
    return obs


@SETTINGS
@given(text=st.text(max_size=300))
def test_arbitrary_text(env: UTPEnv, text: str) -> None:
    try:
        parsed = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        parsed = None
    if isinstance(parsed, dict | list):
        return  # valid JSON structures are covered by the structured strategies below
    assert_refused(env, text)


@SETTINGS
@given(value=json_values)
def test_arbitrary_json_values(env: UTPEnv, value: Any) -> None:
    if isinstance(value, dict) and isinstance(value.get("tool") or value.get("name"), str):
        return  # may name a real tool; covered below
    obs = assert_refused(env, json.dumps(value))
    assert "Error" in obs


@SETTINGS
@given(name=st.text(min_size=1, max_size=40), args=st.dictionaries(st.text(max_size=8), json_scalars, max_size=3))
def test_unknown_tools(env: UTPEnv, name: str, args: dict[str, Any]) -> None:
    if name.strip() in env.tools:
        return
    obs = assert_refused(env, {"tool": name, "args": args})
    assert "unknown tool" in obs or "invalid action" in obs


def wrong_value(annotation: Any) -> st.SearchStrategy[Any]:
    """Values no field type accepts: nested lists and objects for scalars, objects for lists."""
    return st.one_of(st.just([[1], {"a": None}]), st.just({"nested": {"x": [1, 2]}}), st.just([{"k": 1}]))


@SETTINGS
@given(data=st.data())
def test_wrong_argument_types_and_unknown_arguments(env: UTPEnv, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(n for n, s in env.tools.items()
                                            if any(f.is_required() for f in s.args_model.model_fields.values()))))
    fields = env.tools[name].args_model.model_fields
    required = [f for f, info in fields.items() if info.is_required()]
    bad_field = data.draw(st.sampled_from(required))
    if name == "submit_plan":
        args = {bad_field: data.draw(st.just([{"k": 1}]) | st.just({"nested": 1}))}
    else:
        args = {bad_field: data.draw(wrong_value(fields[bad_field].annotation))}
    if data.draw(st.booleans()):
        args[data.draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in fields))] = 1
    style = data.draw(st.sampled_from(["dict", "json", "openai"]))
    action: Any = {"tool": name, "args": args}
    if style == "json":
        action = json.dumps(action)
    elif style == "openai":
        action = [{"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]
    obs = assert_refused(env, action)
    assert name in obs


@SETTINGS
@given(size=st.integers(min_value=4097, max_value=200_000), char=st.sampled_from(["a", "é", "₹", "😀", "{"]))
def test_oversized_actions_are_refused(env: UTPEnv, size: int, char: str) -> None:
    obs = assert_refused(env, char * size)
    assert "limit is 4096" in obs
    obs = assert_refused(env, {"tool": "view_plan", "args": {"padding": "x" * size}})
    assert "limit is 4096" in obs


@SETTINGS
@given(city=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=60))
def test_unicode_and_unknown_cities(env: UTPEnv, city: str) -> None:
    if env.db.has_city(city):
        return
    obs = assert_refused(env, {"tool": "add_leg", "args": {"day": 1, "mode": "cab", "origin": city,
                                                           "destination": env.episode.query.org,
                                                           "departure": "08:00"}})
    assert "add_leg" in obs


def test_a_list_answers_every_call_in_order(env: UTPEnv) -> None:
    obs, *_ , info = env.step([{"tool": "view_plan"}, {"tool": "nope"}, {"tool": "list_cities", "args": "{}"}])
    parts = obs.split("\n\n")
    assert parts[0].startswith("[1/3] view_plan: ") and "[2/3] nope: Error: unknown tool" in obs
    assert "[3/3] list_cities: Error" in obs and "missing required argument 'state'" in obs
    assert [c["ok"] for c in info["calls"]] == [True, False, False]


def test_calls_after_submit_are_answered_not_run(mini_db_path: Path) -> None:
    e = UTPEnv(db_path=mini_db_path)
    e.reset(seed=0)
    obs, _, terminated, *_ = e.step([{"tool": "submit"}, {"tool": "view_plan"}])
    assert terminated and "[2/2] view_plan: Error: not executed" in obs


def test_parse_action_forms() -> None:
    call = ToolCall("search_flights", {"origin": "Pune"})
    assert parse_action({"tool": "search_flights", "args": {"origin": "Pune"}}) == [call]
    assert parse_action('{"name": "search_flights", "arguments": {"origin": "Pune"}}') == [call]
    openai = {"id": "call_1", "type": "function",
              "function": {"name": "search_flights", "arguments": '{"origin": "Pune"}'}}
    assert parse_action([openai]) == [ToolCall("search_flights", '{"origin": "Pune"}', "call_1")]
    assert parse_action({"role": "assistant", "tool_calls": [openai, openai]})[1].call_id == "call_1"
    for bad, message in [("", "empty"), ("[]", "no tool call"), ('{"tool": 3}', "non-empty string"),
                         ('{"tool": "x", "origin": "Pune"}', "inside 'args'"), ("[1]", "JSON object"),
                         ('{"tool": "x", "args": [1]}', "JSON object"), ("[" * 5000 + "]" * 5000, "nests too deeply")]:
        with pytest.raises(ActionError, match=message):
            parse_action(bad, max_bytes=100_000)
    with pytest.raises(ActionError, match="limit is 2 per step"):
        parse_action([{"tool": "a"}] * 3, max_calls=2)
