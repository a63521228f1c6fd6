"""The MCP client examples of docs/SERVE.md, run against `utp-env serve --mcp stdio` and the scripted
OpenAI-wire server (tests/support/fault_server.py), both on this machine: a LangChain agent through
`langchain-mcp-adapters` and an openai-agents agent through the SDK's MCP support. Each plays a
query to a submitted plan; its reward is the in-process env's for the same calls.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fault_server import FaultServer, Reply
from sdk_import import openai_agents_sdk
from serve_script import query_ids

from utp_env.env.config import open_database, reference_plan
from utp_env.env.core import UTPEnv
from utp_env.plan_format.write import format_plan


class Brain:
    """view_plan, then submit_plan with the reference plan, then a closing text."""

    def __init__(self, plan: str) -> None:
        self.plan = plan

    def __call__(self, body: dict[str, Any], fault: str | None) -> Reply:
        answered = sum(m.get("role") == "tool" for m in body["messages"])
        if answered == 0:
            return Reply(tool_calls=[("view_plan", "{}")])
        if answered == 1:
            return Reply(tool_calls=[("submit_plan", json.dumps({"plan": self.plan}))])
        return Reply(content="The plan is submitted.")


@pytest.fixture(scope="module")
def case(mini_db_path: Path) -> tuple[str, str, float]:
    qid = query_ids(mini_db_path, 1)[0]
    plan = reference_plan(open_database(mini_db_path), qid)
    assert plan is not None
    text = json.dumps(format_plan(plan))
    env = UTPEnv(db_path=mini_db_path)
    env.reset(seed=0, options={"query_id": qid})
    env.step({"tool": "view_plan"})
    reward = env.step({"tool": "submit_plan", "args": {"plan": text}})[1]
    assert reward > 0
    return qid, text, reward


def test_langchain_agent_over_mcp(mini_db_path: Path, case: tuple[str, str, float]) -> None:
    from langchain.agents import create_agent
    from langchain_mcp_adapters.tools import load_mcp_tools
    from langchain_openai import ChatOpenAI
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    qid, plan, reward = case

    async def go(base_url: str) -> list[Any]:
        # --- as docs/SERVE.md "LangChain" ---
        server = StdioServerParameters(command=sys.executable, args=[
            "-m", "utp_env", "serve", "--mcp", "stdio", "--db", str(mini_db_path)])
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            task = (await session.call_tool("new_episode", {"seed": 0, "query_id": qid})).content[0].text
            tools = [t for t in await load_mcp_tools(session) if t.name != "new_episode"]
            model = ChatOpenAI(model="scripted", base_url=base_url, api_key="test", max_retries=0)
            agent = create_agent(model, tools)
            result = await agent.ainvoke({"messages": [{"role": "user", "content": task}]})
            episode = json.loads((await session.read_resource("utp://episode")).contents[0].text)
        # ---
        assert episode["done"] and episode["reward"] == reward and episode["report"] is not None
        messages: list[Any] = result["messages"]
        return messages

    with FaultServer(Brain(plan)) as llm:
        messages = asyncio.run(go(llm.base_url))
        assert not llm.refused
    tool_messages = [m for m in messages if m.type == "tool"]
    assert [m.name for m in tool_messages] == ["view_plan", "submit_plan"]
    final = tool_messages[-1].artifact["structured_content"]
    assert final["done"] and final["termination_reason"] == "submitted" and final["reward"] == reward


def test_openai_agents_agent_over_mcp(mini_db_path: Path, case: tuple[str, str, float]) -> None:
    agents = openai_agents_sdk()
    qid, plan, reward = case
    ends: list[dict[str, Any]] = []

    class Hooks(agents.RunHooks):  # type: ignore[misc,name-defined]
        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
            ends.append({"tool": tool.name, "result": result})

    async def go(base_url: str) -> Any:
        # --- as docs/SERVE.md "openai-agents" ---
        from agents.mcp import MCPServerStdio

        from agents import Agent, AsyncOpenAI, OpenAIChatCompletionsModel, RunConfig, Runner

        params = {"command": sys.executable, "args": ["-m", "utp_env", "serve", "--mcp", "stdio",
                                                       "--db", str(mini_db_path)]}
        async with MCPServerStdio(params=params, client_session_timeout_seconds=120) as server:
            task = (await server.call_tool("new_episode", {"seed": 0, "query_id": qid})).content[0].text
            model = OpenAIChatCompletionsModel(model="scripted", openai_client=AsyncOpenAI(
                base_url=base_url, api_key="test", max_retries=0))
            agent = Agent(name="planner", instructions="Plan the trip with the tools.", model=model,
                          mcp_servers=[server], mcp_config={"convert_schemas_to_strict": True})
            result = await Runner.run(agent, task, max_turns=6, hooks=Hooks(),
                                      run_config=RunConfig(tracing_disabled=True))
            episode = json.loads((await server.read_resource("utp://episode")).contents[0].text)
        # ---
        return result, episode

    with FaultServer(Brain(plan)) as llm:
        result, final = asyncio.run(go(llm.base_url))
        assert not llm.refused
    assert result.final_output == "The plan is submitted."
    assert [e["tool"] for e in ends] == ["view_plan", "submit_plan"]
    assert final["done"] and final["termination_reason"] == "submitted" and final["reward"] == reward
