"""The env's compact mode: the same env semantics with short tool schemas and task text,
so that a small model's first request (task text plus tool schemas) stays under 3,000 tokens; and
`tools`, the subset of tools offered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from utp_env.dataset import dataset_of
from utp_env.env.config import split_pool
from utp_env.env.core import UTPEnv
from utp_env.plan_format import format_plan
from utp_env.rl.demos import approx_tokens, demonstrations, replay
from utp_env.tools.tool_schemas import compact_schema

LIMIT = 3000


def test_the_first_request_fits_in_3000_tokens(mini_db_path: Path) -> None:
    compact, full = UTPEnv(db_path=mini_db_path, config={"compact": True}), UTPEnv(db_path=mini_db_path)
    for query in split_pool(compact.db, "validation") + split_pool(compact.db, "test"):
        task, _ = compact.reset(seed=0, options={"query_id": query.query_id})
        assert approx_tokens([{"content": task}], compact.openai_tools()) <= LIMIT, query.query_id
    task, _ = full.reset(seed=0)
    assert approx_tokens([{"content": task}], full.openai_tools()) > 2 * LIMIT  # what the compact mode saves


def test_compact_schemas_keep_names_types_enums_and_required(mini_db_path: Path) -> None:
    full = UTPEnv(db_path=mini_db_path).openai_tools()
    compact = UTPEnv(db_path=mini_db_path, config={"compact": True}).openai_tools()
    assert [s["function"]["name"] for s in compact] == [s["function"]["name"] for s in full]
    for short, long in zip(compact, full, strict=True):
        sp, lp = short["function"]["parameters"], long["function"]["parameters"]
        assert sp.get("required") == lp.get("required")
        assert set(sp.get("properties", {})) == set(lp.get("properties", {}))
        for name, prop in sp.get("properties", {}).items():
            assert "description" not in prop
            assert prop.get("enum") == lp["properties"][name].get("enum")
        assert "\n" not in short["function"]["description"]
        assert long["function"]["description"].startswith(short["function"]["description"].split(" ")[0])


def test_compact_schema_keeps_a_property_named_like_a_dropped_key() -> None:
    schema = {"type": "function", "function": {"name": "t", "description": "One.\n\nTwo.", "parameters": {
        "type": "object", "properties": {"description": {"type": "string", "description": "x"},
                                         "title": {"type": "string", "maxLength": 3}},
        "required": ["description"]}}}
    out = compact_schema(schema)
    assert out["function"]["description"] == "One."
    assert out["function"]["parameters"]["properties"] == {"description": {"type": "string"},
                                                           "title": {"type": "string"}}


def test_same_semantics_same_reward(mini_db_path: Path) -> None:
    dataset = dataset_of(UTPEnv(db_path=mini_db_path).db)
    query = dataset.split("test")[0]
    rewards = []
    for config in ({}, {"compact": True}):
        env = UTPEnv(db_path=mini_db_path, config=config)
        env.reset(seed=0, options={"query_id": query.query_id})
        plan = format_plan(dataset.reference(query.query_id))
        _, reward, terminated, _, _ = env.step({"tool": "submit_plan", "args": {"plan": plan}})
        assert terminated
        rewards.append(reward)
    assert rewards[0] == rewards[1] > 0


def test_tools_offers_a_subset_and_refuses_the_rest(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, config={"tools": ["search_flights", "submit"], "compact": True})
    assert [s["function"]["name"] for s in env.openai_tools()] == ["search_flights", "submit"]
    env.reset(seed=0)
    observation, *_ = env.step({"tool": "search_stays", "args": {"city": "Pune"}})
    assert observation.startswith("Error:") and "search_stays" in observation


@pytest.mark.parametrize(("tools", "message"), [
    (["search_flights", "submit", "fly_me"], r"unknown tool\(s\) \['fly_me'\]"),
    (["search_flights"], "no way to end the episode"),
])
def test_bad_tools_are_one_clear_error(tools: list[str], message: str, mini_db_path: Path) -> None:
    with pytest.raises(ValueError, match=message) as info:
        UTPEnv(db_path=mini_db_path, config={"tools": tools})
    assert "\n" not in str(info.value).strip() or "validation error" in str(info.value)


def test_the_trl_class_offers_what_the_env_offers(mini_db_path: Path) -> None:
    pytest.importorskip("transformers")
    from transformers.utils.chat_template_utils import get_json_schema

    from utp_env.env.adapters import tool_method_names
    from utp_env.rl.env import rl_env_class

    cls = rl_env_class(db_path=mini_db_path, config={"compact": True, "tools": ["search_flights", "add_leg", "submit"]})
    assert [n for n in tool_method_names(cls) if n != "get_reward"] == ["add_leg", "search_flights", "submit"]
    env = cls()
    schema = get_json_schema(env.search_flights)
    assert schema["function"]["description"] == "Find direct flights between two cities on a date."
    full = get_json_schema(rl_env_class(db_path=mini_db_path)().search_flights)
    assert len(json.dumps(schema)) < len(json.dumps(full)) / 2


def test_compact_demonstrations_replay(mini_db_path: Path) -> None:
    records = list(demonstrations("validation", db_path=mini_db_path, limit=4, compact=True))
    assert records and all(r["env_config"]["compact"] for r in records)
    for record in records:
        assert approx_tokens(record["messages"][:2], record["tools"]) <= LIMIT
        result = replay(record, db_path=mini_db_path)
        assert result.observations_match and result.reward == record["reward"] > 0
