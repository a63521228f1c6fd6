"""The openai-agents adapter (utp_env/env/openai_agents.py): strict tools and an end that scores the episode.

Agents run against the scripted OpenAI-wire server (tests/support/fault_server.py) on 127.0.0.1 with tracing
off: nothing leaves the machine. The SDK installs as top-level `agents`, which the repository's own
agents/ folder shadows when the tests run from the repository root; `_sdk()` imports the installed SDK.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fault_server import FaultServer, Reply
from hypothesis import given
from hypothesis import strategies as st
from sdk_import import openai_agents_sdk
from serve_script import query_ids

from utp_env.env.config import open_database, reference_plan
from utp_env.env.core import UTPEnv
from utp_env.env.openai_agents import AgentsEpisode, strict_arguments
from utp_env.env.replan import UTPReplanEnv
from utp_env.plan_format.write import format_plan
from utp_env.tools.tool_schemas import strict_schema

agents = openai_agents_sdk()


@pytest.mark.parametrize("env_cls", [UTPEnv, UTPReplanEnv])
def test_every_tool_passes_the_sdks_strict_mode(mini_db_path: Path, env_cls: type[UTPEnv]) -> None:
    env = env_cls(db_path=mini_db_path)
    for schema in env.openai_tools():
        fn = schema["function"]
        with pytest.raises(agents.UserError) if fn["name"] == "submit_plan" else _no_error():
            agents.FunctionTool(name=fn["name"], description=fn["description"], params_json_schema=json.loads(
                json.dumps(fn["parameters"])), on_invoke_tool=_never, strict_json_schema=True)  # today: rejected
        strict = strict_schema(fn["parameters"], fn["name"])
        tool = agents.FunctionTool(name=fn["name"], description=fn["description"], params_json_schema=strict,
                                   on_invoke_tool=_never, strict_json_schema=True)
        assert tool.params_json_schema == strict  # already strict: the SDK has nothing to change
        assert set(strict.get("required", [])) == set(strict.get("properties", {}))
    tools = AgentsEpisode(env).tools
    assert [t.name for t in tools] == [s["function"]["name"] for s in env.openai_tools()]
    assert all(t.strict_json_schema for t in tools)


class _no_error:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


async def _never(_ctx: Any, _raw: str) -> str:
    raise AssertionError("not called")


def test_strict_arguments_drop_nulls_of_optional_arguments_only() -> None:
    params = {"type": "object", "properties": {"day": {"type": "integer"}, "format": {"type": "string"}},
              "required": ["day"]}
    assert strict_arguments('{"day": 1, "format": null}', params) == {"day": 1}
    assert strict_arguments('{"day": null, "format": "json"}', params) == {"day": None, "format": "json"}
    assert strict_arguments('{"day": 1,', params) == '{"day": 1,'  # the env answers bad JSON itself
    assert strict_arguments("[1]", params) == "[1]"
    assert strict_arguments("", params) == {}


@given(st.dictionaries(st.sampled_from(["day", "format", "x"]), st.one_of(st.none(), st.integers(), st.text())))
def test_strict_arguments_keep_every_non_null_value(args: dict[str, Any]) -> None:
    params = {"type": "object", "properties": {"day": {}, "format": {}}, "required": ["day"]}
    out = strict_arguments(json.dumps(args), params)
    assert isinstance(out, dict)
    assert out == {k: v for k, v in args.items() if v is not None or k == "day"}


def test_a_schema_with_nothing_strict_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^bad\.x: no alternative of .* can be written in strict mode$"):
        strict_schema({"type": "object", "properties": {"x": {"anyOf": [{"type": "object"}, {"type": "array"}]}},
                       "required": ["x"]}, "bad")


class Brain:
    """Scripted replies: view_plan with a null optional argument, then `then` (a plan as text or a call)."""

    def __init__(self, then: Reply, forever: bool = False) -> None:
        self.then, self.forever = then, forever

    def __call__(self, body: dict[str, Any], fault: str | None) -> Reply:
        tools = {t["function"]["name"]: t["function"] for t in body.get("tools") or []}
        assert tools["view_plan"].get("strict") is True
        answered = [m for m in body["messages"] if m.get("role") == "tool"]
        if not answered:
            return Reply(tool_calls=[("view_plan", '{"format": null}')])
        if len(answered) == 1 or self.forever:
            return self.then
        return Reply(content="Done.")


def _play(mini_db_path: Path, query_id: str, then: Reply, forever: bool = False) -> tuple[Any, FaultServer]:
    episode = AgentsEpisode(UTPEnv(db_path=mini_db_path))
    episode.reset(seed=2, query_id=query_id)
    with FaultServer(Brain(then, forever)) as server:
        client = agents.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        model = agents.OpenAIChatCompletionsModel(model="scripted", openai_client=client)
        agent = agents.Agent(name="planner", instructions="Plan the trip.", tools=episode.tools, model=model)
        result = asyncio.run(episode.run(agent, max_turns=6, run_config=agents.RunConfig(tracing_disabled=True)))
    return result, server


def _in_process(mini_db_path: Path, query_id: str, calls: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    env = UTPEnv(db_path=mini_db_path)
    env.reset(seed=2, options={"query_id": query_id})
    reward, info = 0.0, {}
    for call in calls:
        _, reward, terminated, truncated, info = env.step(call)
        if terminated or truncated:
            return reward, info
    return env.end_episode("step_limit")


@pytest.fixture(scope="module")
def case(mini_db_path: Path) -> tuple[str, str]:
    qid = query_ids(mini_db_path, 1)[0]
    plan = reference_plan(open_database(mini_db_path), qid)
    assert plan is not None
    return qid, json.dumps(format_plan(plan))


def test_a_submitted_plan_gets_the_envs_reward(mini_db_path: Path, case: tuple[str, str]) -> None:
    qid, plan = case
    result, server = _play(mini_db_path, qid, Reply(tool_calls=[("submit_plan", json.dumps({"plan": plan}))]))
    reward, info = _in_process(mini_db_path, qid, [{"tool": "view_plan"}, {"tool": "submit_plan",
                                                                          "args": {"plan": plan}}])
    assert result.termination_reason == "submitted" and result.reward == reward > 0
    assert result.final_output == "Done." and result.info["metrics"] == info["metrics"]
    assert not server.refused


def test_a_plan_written_as_the_final_reply_is_submitted(mini_db_path: Path, case: tuple[str, str]) -> None:
    """The Runner stops at the first plain-text reply: the episode is ended with that plan, not dropped."""
    qid, plan = case
    result, _ = _play(mini_db_path, qid, Reply(content=f"Here is the plan:\n```json\n{plan}\n```"))
    reward, _ = _in_process(mini_db_path, qid, [{"tool": "view_plan"}, {"tool": "submit_plan",
                                                                       "args": {"plan": result.final_output}}])
    assert result.termination_reason == "submitted" and result.reward == reward > 0


def test_a_reply_without_a_plan_scores_the_plan_so_far(mini_db_path: Path, case: tuple[str, str]) -> None:
    qid, _ = case
    result, _ = _play(mini_db_path, qid, Reply(content="I could not find a good trip, sorry."))
    reward, info = _in_process(mini_db_path, qid, [{"tool": "view_plan"}])
    assert result.termination_reason == "step_limit" and result.reward == reward
    assert result.info["message"].startswith("the agent stopped without submit")
    assert result.info["steps"] == info["steps"] == 1


def test_too_many_turns_end_at_the_step_limit(mini_db_path: Path, case: tuple[str, str]) -> None:
    qid, _ = case
    result, _ = _play(mini_db_path, qid, Reply(tool_calls=[("view_plan", "{}")]), forever=True)
    assert result.termination_reason == "step_limit" and "MaxTurnsExceeded" in result.info["message"]


def test_run_before_reset_and_a_wrong_env_are_one_line(mini_db_path: Path) -> None:
    import gymnasium as gym

    with pytest.raises(RuntimeError, match="call reset first"):
        asyncio.run(AgentsEpisode(UTPEnv(db_path=mini_db_path)).run(object()))
    with pytest.raises(TypeError, match="expected a UTPEnv"):
        AgentsEpisode(gym.make("CartPole-v1"))
