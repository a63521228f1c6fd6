"""Scripted LangChain chat models for the LLM agents' tests (no network): `scripted(...)` replies in order,
`good` (a fixture, loaded by tests/conftest.py) is a mini-sandbox query with its reference plan's JSON."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from utp_env.agents.base import Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.env.config import query_pool
from utp_env.evaluation import evaluate
from utp_env.plan_format import plan_to_json

MODEL = {"model": "openai:gpt-4o-mini"}

class ScriptedChat(FakeMessagesListChatModel):
    """A fake chat model that accepts `bind_tools`, records what it was sent, and can fail on a call.

    Replies cycle through `responses` (so one reply repeated forever models a model that never stops).
    """

    fail_at: int | None = None
    calls: int = 0
    received: list[Any] = []  # noqa: RUF012 (a pydantic field: copied per instance)
    bound_tools: list[Any] = []  # noqa: RUF012

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        self.bound_tools = list(tools)
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        index = self.calls
        self.calls += 1
        self.received.append(list(messages))
        if self.fail_at is not None and index == self.fail_at:
            raise RuntimeError(f"scripted failure on call {index + 1}")
        return super()._generate(messages, stop, run_manager, **kwargs)

def scripted(*replies: Any, fail_at: int | None = None) -> ScriptedChat:
    msgs = [r if isinstance(r, AIMessage) else AIMessage(content=r) for r in replies]
    return ScriptedChat(responses=msgs, fail_at=fail_at, received=[])

def call(name: str, args: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{name}_{i}", "type": "tool_call"}

@pytest.fixture(scope="module")
def good(mini_db):
    """(query, plan JSON text) of the first mini query whose reference plan passes every check."""
    planner = ReferencePlanner()
    for query in query_pool(mini_db)[:20]:
        result = planner.run(query, Toolkit(mini_db))
        if result.plan is not None and evaluate(result.plan, query, mini_db).final_pass:
            return query, plan_to_json(result.plan)
    pytest.fail("no mini query with a passing reference plan among the first 20")
