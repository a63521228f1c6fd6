"""Generic tool-calling agent: any LangChain chat model with `bind_tools` drives `UTPEnv` step by step.

Messages are a system prompt plus the env's first observation. Each model reply's `tool_calls`
become ONE env step (sent as OpenAI-style `tool_calls` entries), and each call is answered with a
ToolMessage carrying its part of the observation. Calls whose arguments are not valid JSON
(LangChain's `invalid_tool_calls`) go to the env with their raw arguments too: the env answers
each with what was wrong, so every call id gets its tool message and the trace records the call;
the history sends them back with `{}` as arguments (`history_reply`), which a strict server accepts.
A reply without tool calls gets a reminder and counts toward `max_steps`. The episode ends when
the model submits, when the env's step limit truncates it (the accumulated plan is still scored),
when a `TimeLimit` wrapper cuts it (the agent then ends the episode with `step_limit` through
`env.unwrapped.end_episode`, so the plan built so far is scored too), or when the model call fails
for good: the env ends the episode with the reason `agent_error` (or `infrastructure_error` when the model
server could not answer, `models.failure_reason`) and the error is recorded.

`run_env(env, options)` drives an env you already have, wrapped or not (`gym.make`), and returns
the env's final info (termination reason, evaluation, reward); it never raises for a model error.
`run(query, toolkit)` (the agent protocol) builds a UTPEnv over the toolkit's database; when the
model call failed after a plan was begun it returns that partial plan with the reason `agent_error`
and the error (the run scores it as it scores a step-limit cut), and when no plan was built it
returns no plan with the reason `agent_error`, the error and the trace so far.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from pydantic import Field

from utp_env.agents.base import AgentResult, Toolkit, Trace, TraceStep
from utp_env.agents.llm import prompts
from utp_env.agents.llm.models import (
    ChatAgent,
    LLMSettings,
    ModelSession,
    describe_failure,
    failure_reason,
    history_reply,
    invalid_call_id,
    message_text,
    truncation,
)
from utp_env.env.core import split_answers
from utp_env.itinerary import Plan
from utp_env.query import Query

SYSTEM = """You plan trips within India by calling tools of a travel-planning environment. Look up transport,
stays, restaurants, attractions, events, crowd profiles and delays with the lookup tools; build the itinerary
with the itinerary tools (add_leg, set_stay, add_item, move_item, remove_item, view_plan, check_plan), then
call submit. You may instead send a whole plan in the paper's JSON day format with submit_plan. Use only
names the tools return. Every reply must call at least one tool.

{rules}

{uncertainty}"""
NUDGE = ("Your reply called no tool{why}. Reply with a tool call (function calling, or the text action "
         '{{"tool": "<tool name>", "args": {{...}}}}): continue planning with the tools, or call submit when the plan '
         "is complete. Steps left: {left}.")
NO_ACTION = " and held no JSON action"
CUT = " (it was cut off at the token limit{limit}: write shorter replies)"
TEXT_ACTION = "Result of your action (sent as text):\n{observation}"


def text_action(text: str) -> list[Any] | None:
    """The tool calls of a reply that writes the env's JSON action as text (`{"tool": ..., "args": ...}`, a list
    of them, or either inside a ``` fence), as the task text describes actions; None when the text is not one."""
    from utp_env.env.actions import ActionError, parse_action

    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return parse_action(stripped)
    except ActionError:
        return None


class ToolCallingSettings(LLMSettings):
    """Settings of ToolCallingAgent (configs/agents/tool_calling.yaml)."""

    max_steps: int = Field(default=60, ge=1, le=1000, description="Model turns (and env step limit)")
    uncertainty: bool = Field(default=True, description="System prompt includes the uncertainty instructions")
    check_plan: bool = Field(default=True, description="Expose the env's check_plan tool")


@dataclass
class EnvOutcome:
    """What driving one env episode produced: the agent result and the env's final info."""

    result: AgentResult
    info: dict[str, Any] = field(default_factory=dict)
    reward: float = 0.0


def openai_entries(tool_calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """LangChain tool calls as OpenAI `tool_calls` entries (ids kept, arguments as JSON text).

    An entry of `invalid_tool_calls` (its `args` the raw text the model sent) keeps that text, so
    the env reports what is wrong with it."""
    return [{"id": call.get("id") or f"call_{i}", "type": "function",
             "function": {"name": call.get("name") or "", "arguments": _arguments(call.get("args"))}}
            for i, call in enumerate(tool_calls)]


def _arguments(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args or {})


def reply_calls(reply: Any) -> list[dict[str, Any]]:
    """Every tool call of a reply: the parsed `tool_calls`, then the `invalid_tool_calls` (arguments
    that are not JSON), each with an id so that it can be answered."""
    calls = list(getattr(reply, "tool_calls", None) or [])
    for i, bad in enumerate(getattr(reply, "invalid_tool_calls", None) or []):
        calls.append({"name": bad.get("name") or "", "args": bad.get("args") or "", "invalid": True,
                      "id": invalid_call_id(bad, i), "error": bad.get("error")})
    return calls


class ToolCallingAgent(ChatAgent[ToolCallingSettings]):
    """A chat model with bound tools stepping `UTPEnv` (see the module docstring)."""

    name = "tool_calling"
    Settings = ToolCallingSettings

    def make_env(self, toolkit: Toolkit) -> Any:
        """A UTPEnv over the toolkit's database, with this agent's step limit."""
        from utp_env.env.core import UTPEnv

        return UTPEnv(db_path=toolkit.db.path, config={"step_limit": self.settings.max_steps,
                                                       "check_plan": self.settings.check_plan})

    def system_prompt(self, query: Query) -> str:
        return SYSTEM.format(rules=prompts.rules_text(self.config),
                             uncertainty=prompts.uncertainty_text(query, self.config)
                             if self.settings.uncertainty else prompts.NO_UNCERTAINTY)

    def run(self, query: Query, toolkit: Toolkit, seed: int | None = None) -> AgentResult:
        """Plan `query` on a UTPEnv over the toolkit's database (the agent protocol).

        When a model call fails for good mid-episode and the env holds a plan, the result carries that
        partial plan with `termination_reason="agent_error"` and the error: the run scores it the way a
        step-limit cut is scored and records the reason and the error. With no plan built the result
        has no plan, the reason `agent_error`, the error and the trace (the run records all three)."""
        self.start_episode(toolkit)
        env = self.make_env(toolkit)
        outcome = self.run_env(env, {"query": query}, trace=toolkit.trace, seed=seed)
        return outcome.result

    def run_env(self, env: Any, options: dict[str, Any], trace: Trace | None = None,
                seed: int | None = None) -> EnvOutcome:
        """Drive one episode of `env` (reset with `options`) to its end."""
        trace = trace if trace is not None else Trace()
        base = env.unwrapped  # end_episode and openai_tools live on UTPEnv, under any wrappers
        observation, info = env.reset(seed=seed, options=options)
        query = Query.model_validate(info["query"])
        session = ModelSession(self.model, trace, self.settings.billed_price)
        messages: list[Any] = [SystemMessage(self.system_prompt(query)), HumanMessage(observation)]
        final: dict[str, Any] | None = None
        reward, error = 0.0, None
        bound: Any = None  # set below, or the episode has already ended
        try:
            bound = self.model.bind_tools(base.openai_tools())
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            reward, final = base.end_episode("agent_error", message=error)
        for turn in range(self.settings.max_steps if final is None else 0):
            try:
                reply = session.invoke("agent", messages, model=bound)
            except Exception as exc:
                error = f"model call failed at turn {turn + 1}: {describe_failure(exc)}"
                reward, final = base.end_episode(failure_reason(exc), message=error)
                break
            messages.append(history_reply(reply))
            calls = reply_calls(reply)
            if not calls:
                text = message_text(reply)
                parsed = text_action(text)
                left = self.settings.max_steps - turn - 1
                if parsed is None:  # say why nothing happened: no action at all, or a reply cut short
                    cut = truncation(reply, self.settings.max_tokens)
                    why = NO_ACTION if cut is None else CUT.format(limit=cut)
                    messages.append(HumanMessage(NUDGE.format(why=why, left=left)))
                    continue
                observation, reward, terminated, truncated, step_info = env.step(text.strip().strip("`")
                                                                                 .removeprefix("json").strip())
                self._record(trace, [{"name": c.tool, "args": c.args} for c in parsed], step_info)
                messages.append(HumanMessage(TEXT_ACTION.format(observation=observation)))
                if terminated or truncated:
                    final = step_info
                    if "termination_reason" not in final:
                        reward, final = base.end_episode("step_limit", message=f"cut by a wrapper after {turn + 1} "
                                                         "model turns (truncated)")
                    break
                continue
            observation, reward, terminated, truncated, step_info = env.step(openai_entries(calls))
            self._record(trace, calls, step_info)
            for call, answer in zip(calls, split_answers(observation, len(calls)), strict=True):
                messages.append(ToolMessage(content=answer, tool_call_id=call.get("id") or "call"))
            if terminated or truncated:
                final = step_info
                if "termination_reason" not in final:  # a TimeLimit wrapper cut it; the env has not ended
                    reward, final = base.end_episode("step_limit", message=f"cut by a wrapper after {turn + 1} "
                                                     "model turns (truncated)")
                break
        if final is None:  # turns spent without the env ending (e.g. replies without tool calls)
            reward, final = base.end_episode("step_limit",
                                             message=f"no submit within {self.settings.max_steps} turns")
        reason = final.get("termination_reason")
        trace.note(f"episode ended: {reason}; reward {reward:.4f}")
        plan = Plan.model_validate(final["plan"]) if final.get("plan") else None
        if plan is not None and not plan.days:
            plan = None
            error = error or f"no plan was built (episode ended: {reason})"
        if plan is not None:
            plan = plan.model_copy(update={"query_id": query.query_id})
        if reason == "infrastructure_error" and error is None:
            error = final.get("error") or "the environment failed"
        raw = messages[-1].content if messages and isinstance(messages[-1].content, str) else None
        result = AgentResult(plan=plan, raw_output=raw, trace=trace, error=error,
                             termination_reason=str(reason) if reason else None)
        return EnvOutcome(result, final, reward)

    @staticmethod
    def _record(trace: Trace, calls: list[dict[str, Any]], step_info: dict[str, Any]) -> None:
        """One trace step per executed tool call, with the env's ok/error for it."""
        done = step_info.get("calls", [])
        for i, call in enumerate(calls):
            got = done[i] if i < len(done) else {}
            args = call.get("args") or {}
            trace.add(TraceStep(kind="tool_call", name=str(call.get("name")),
                                args={"invalid_arguments": args} if isinstance(args, str) else args,
                                result=(got.get("error") or "ok")[:200], ok=bool(got.get("ok", False))))
