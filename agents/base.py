"""The agent protocol (docs/AGENTS.md): what every agent receives, may call, and returns.

An agent gets a `Query` and a `Toolkit` (the lookup tools bound to a database, recording every
call in a `Trace`) and returns an `AgentResult`: the plan (or None), its raw text output, the
trace and an error message. Token counts and cost are None when unknown, never 0.
"""

from __future__ import annotations

import time
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.toolkit import Registry, ToolResult

SUMMARY_CHARS = 200


class TraceStep(BaseModel):
    """One thing the agent did: a tool call, a model call, or a note."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["tool_call", "model_call", "note"]
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: str | None = Field(default=None, description="Short summary of the result")
    ok: bool = True
    duration_s: float = Field(default=0.0, ge=0)


class Trace(BaseModel):
    """Everything an agent did for one query, with counters and (when known) tokens and cost."""

    model_config = ConfigDict(extra="forbid")

    steps: list[TraceStep] = Field(default_factory=list)
    tool_calls: int = 0
    model_calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None

    def add(self, step: TraceStep) -> None:
        self.steps.append(step)
        if step.kind == "tool_call":
            self.tool_calls += 1
        elif step.kind == "model_call":
            self.model_calls += 1

    def note(self, text: str) -> None:
        self.add(TraceStep(kind="note", name="note", result=text))


class AgentResult(BaseModel):
    """What an agent returns for one query."""

    model_config = ConfigDict(extra="forbid")

    plan: Plan | None = None
    raw_output: str | None = None
    trace: Trace = Field(default_factory=Trace)
    error: str | None = None
    termination_reason: str | None = Field(
        default=None, description="How the episode ended when the agent drove the env (a TerminationReason "
        "value of utp_env/env/episode.py, e.g. 'step_limit'); None: 'submitted' with a plan, else 'not_delivered'")
    repairs: list[str] = Field(default_factory=list, description="What the plan parser repaired to read the "
                               "agent's plan from its text (utp_env/plan_format/repairs.py); the run records it")


class Toolkit:
    """The tools an agent may call on one database; each call is recorded in `trace`.

    `db` is exposed for agents that need raw access (the reference planner prices and times with
    it); LLM agents should only use `call` and `schemas`.
    """

    def __init__(self, db: Database, registry: Registry[Database] | None = None, trace: Trace | None = None) -> None:
        if registry is None:
            from utp_env.tools.lookup import LOOKUP

            registry = LOOKUP
        self.db = db
        self.registry = registry
        self.trace = trace if trace is not None else Trace()

    @property
    def tool_names(self) -> list[str]:
        return list(self.registry.tools)

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas of the tools."""
        return self.registry.openai_schemas()

    def call(self, name: str, args: dict[str, Any] | str | None = None) -> ToolResult:
        """Run tool `name` with `args`; errors come back as results (never raised) and are traced."""
        started = time.perf_counter()
        result = self.registry.invoke(self.db, name, args)
        summary = result.text if len(result.text) <= SUMMARY_CHARS else result.text[:SUMMARY_CHARS] + "..."
        self.trace.add(TraceStep(kind="tool_call", name=name, args=args if isinstance(args, dict) else {"raw": args},
                                 result=summary, ok=result.ok, duration_s=time.perf_counter() - started))
        return result


@runtime_checkable
class Agent(Protocol):
    """An agent: a name and `run(query, toolkit) -> AgentResult`."""

    name: str

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult: ...
