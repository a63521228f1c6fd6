"""Adapters: LangChain tools drive the live episode, OpenAI schemas match, the TRL class exposes
exactly the tools with typed, documented methods, and the single-turn plan reward scores plans."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from env_episodes import plan_actions, three_day_query

from utp_env.env.adapters import PlanReward, UTPToolEnv, tool_env_class, tool_method_names
from utp_env.env.core import UTPEnv
from utp_env.plan_format import format_plan
from utp_env.tools.tool_schemas import google_docstring


@pytest.fixture(scope="module")
def env(mini_db_path: Path) -> UTPEnv:
    return UTPEnv(db_path=mini_db_path)


def test_langchain_tools_step_the_live_episode(env: UTPEnv) -> None:
    env.reset(seed=0)
    tools = {t.name: t for t in env.langchain_tools()}
    assert list(tools) == list(env.tools)
    assert "db" not in json.dumps(tools["search_flights"].args) and "ep" not in tools["add_item"].args
    assert tools["view_plan"].invoke({}).startswith("The plan is empty")
    city = env.episode.query.org
    answer = tools["search_attractions"].invoke({"city": city, "limit": 2})
    assert answer == env.call_tool("search_attractions", {"city": city, "limit": 2}).text
    bad = tools["add_item"].invoke({"day": "soon", "name": "x", "activity": "visit", "start": "1", "end": "2"})
    assert bad.startswith("Error: add_item") and "argument 'day'" in bad
    assert env.episode.steps == 2  # the validation error never reached the env
    assert tools["submit"].invoke({}).startswith("Plan submitted") and env.episode.status == "submitted"
    assert "call reset()" in tools["view_plan"].invoke({})


def test_openai_tools_are_the_reset_schemas(env: UTPEnv) -> None:
    _, info = env.reset(seed=0)
    assert env.openai_tools() == info["tools"]
    names = [t["function"]["name"] for t in info["tools"]]
    assert names == list(env.tools) and {"add_leg", "submit_plan", "search_flights"} <= set(names)
    for schema in info["tools"]:
        assert schema["type"] == "function" and schema["function"]["parameters"]["type"] == "object"


def test_trl_class_methods_are_exactly_the_tools(mini_db_path: Path, env: UTPEnv) -> None:
    cls = tool_env_class(db_path=str(mini_db_path))
    assert sorted(tool_method_names(cls)) == sorted(env.tools)
    assert issubclass(cls, UTPToolEnv) and cls.env_kwargs == {"db_path": str(mini_db_path)}
    method = cls.add_item
    params = inspect.signature(method).parameters
    assert list(params)[:6] == ["self", "day", "name", "activity", "start", "end"]
    assert params["meal"].default is None and params["day"].annotation is int
    doc = inspect.getdoc(method)
    spec = env.tools["add_item"]
    assert doc == google_docstring(spec.description, spec.args_model) and "\nArgs:\n" in doc and "Returns:" in doc
    for name in env.tools:
        fields = env.tools[name].args_model.model_fields
        doc = inspect.getdoc(getattr(cls, name))
        assert all(f"    {f}: " in doc for f in fields), name


def test_trl_class_runs_an_episode_and_exposes_the_reward(mini_db_path: Path) -> None:
    tool_env = tool_env_class(db_path=str(mini_db_path))()
    query = three_day_query(tool_env._env.db)
    text = tool_env.reset(query_id=query.query_id, prompt="ignored dataset column")
    assert text is not None and query.query_id in text and tool_env.reward == 0.0
    for action in plan_actions(tool_env._env.db, query):
        answer = getattr(tool_env, action["tool"])(**action["args"])
        assert not answer.startswith("Error"), answer
    assert tool_env.view_plan().startswith("Day 1")
    assert tool_env.add_item(day=2, name="Nowhere", activity="visit", start="10:00", end="11:00").startswith("Error")
    assert tool_env.reward == 0.0 and not tool_env.done
    tool_env.submit()
    assert tool_env.done and 0.0 < tool_env.reward <= 1.0
    assert tool_env.final_info["termination_reason"] == "submitted"
    assert tool_env.view_plan().startswith("Error: the episode has ended")


def test_trl_schemas_build_with_transformers_when_installed() -> None:
    utils = pytest.importorskip("transformers.utils")
    for name in tool_method_names(UTPToolEnv):
        schema = utils.get_json_schema(getattr(UTPToolEnv, name))
        assert schema["function"]["name"] == name


def test_plan_reward_scores_a_good_and_a_garbage_completion(mini_db_path: Path, env: UTPEnv) -> None:
    query = three_day_query(env.db)
    env.reset(seed=0, options={"query_id": query.query_id})
    for action in plan_actions(env.db, query):
        env.step(action)
    plan_json = json.dumps(format_plan(env.episode.plan))
    expected = env.step({"tool": "submit_plan", "args": {"plan": plan_json}})[1]
    reward = PlanReward(db_path=mini_db_path)
    good = f"Here is the plan:\n```json\n{plan_json}\n```"
    chat = [{"role": "assistant", "content": good}]
    scores = reward([good, "I cannot plan this trip, sorry.", chat, ""], query_id=[query.query_id] * 4)
    assert scores == [pytest.approx(expected), 0.0, pytest.approx(expected), 0.0]
    assert expected > 0
    with pytest.raises(ValueError, match="query_id"):
        reward([good])


def test_the_docs_agent_loop_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The custom-agent example of docs/ENV.md is run verbatim (our own file, not model output)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "ENV.md").read_text(encoding="utf-8")
    section = text.split("## Example: a custom agent loop", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert 15 <= len(code.strip().splitlines()) <= 30
    exec(compile(code, "docs/ENV.md", "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.startswith("submitted 0.0 {")


def test_a_plan_column_starts_the_closed_loop_trip_and_is_refused_by_utp_v0(mini_db_path: Path) -> None:
    """TRL passes every dataset column to `reset`: `plan` starts the replan env's trip from that plan
    (it was silently dropped before, the episode starting in planning); UTP-v0 refuses it in one line;
    other unknown columns stay ignored."""
    from utp_env.env.config import reference_plan, split_pool

    replan = tool_env_class(replan=True, db_path=mini_db_path)()
    qid = split_pool(replan._env.db, "validation")[0].query_id
    plan = reference_plan(replan._env.db, qid)
    assert plan is not None
    text = replan.reset(query_id=qid, seed=5, plan=plan, prompt="ignored dataset column")
    assert replan._env.phase == "execution" and "EXECUTION PHASE" in (text or "")
    replan.reset(query_id=qid, seed=5, plan=None)
    assert replan._env.phase == "planning"
    plain = tool_env_class(db_path=mini_db_path)()
    with pytest.raises(ValueError, match=r"^reset: plan= .*tool_env_class\(replan=True\)"):
        plain.reset(query_id=qid, seed=5, plan=plan)
