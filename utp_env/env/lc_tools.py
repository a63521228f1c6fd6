"""The env's tools as LangChain `StructuredTool`s, each call one step of the env's live episode.

A module of its own so that the env core (`core.py`, whose `UTPEnv.langchain_tools` returns these)
imports no adapter: this module needs the env only as "something with `tools` and `step`" (the
`Stepper` protocol), so it imports nothing of `core`, `adapters` or `replan`, and no import circle
runs through it. `utp_env.env.adapters` re-exports `langchain_tools`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Protocol

import gymnasium as gym
from pydantic import BaseModel, ValidationError

from utp_env.tools.toolkit import ToolResult, ToolSpec, format_validation_error

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool


class Stepper(Protocol):
    """What a tool call needs of the env: one step of its live episode (`UTPEnv.step`)."""

    def step(self, action: Any) -> tuple[Any, ...]: ...


def step_text(env: Stepper, name: str, args: dict[str, Any]) -> str:
    """Run one tool call as an env step and return its observation (or why it could not run)."""
    try:
        observation, *_ = env.step({"tool": name, "args": args})
    except gym.error.ResetNeeded as exc:
        return f"Error: {exc}"
    return observation


def jsonable(value: Any) -> Any:
    """`value` with pydantic models (as LangChain hands arguments over) turned into plain JSON values."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def langchain_tools(env: gym.Env[Any, Any]) -> list[StructuredTool]:
    """The env's tools as LangChain StructuredTools; each call is one step of `env`'s episode."""
    from langchain_core.tools import StructuredTool

    unwrapped: Any = env.unwrapped
    if not isinstance(getattr(unwrapped, "tools", None), dict) or not hasattr(unwrapped, "openai_tools"):
        raise TypeError(f"expected a UTPEnv (or a wrapper of one), got {type(unwrapped).__name__}")
    tools = []
    for name, spec in unwrapped.tools.items():
        def run(_name: str = name, **kwargs: Any) -> str:
            return step_text(unwrapped, _name, jsonable(kwargs))

        def on_invalid(exc: ValidationError, _spec: ToolSpec[Any] = spec) -> str:
            problem = format_validation_error(exc, _spec.args_model, _spec.peers)
            return ToolResult.failure(f"{_spec.name}: {problem}").text

        tools.append(StructuredTool.from_function(
            func=functools.partial(run, name), name=name, description=spec.description,
            args_schema=spec.args_model, infer_schema=False, handle_validation_error=on_invalid))
    return tools
