"""What travels on the OpenEnv WebSocket of `utp-env serve`: the observation, state and action models.

The server (`openenv_server.py`) writes these shapes and the client (`openenv_client.py`) reads them;
both take them from here. They follow OpenEnv's wire format (`openenv.core.env_server.types`:
an observation has `done`, `reward` and `metadata`; a state `episode_id` and `step_count`; an action
is `call_tool` or `list_tools`), so OpenEnv's own clients read them too, but they are plain pydantic
models: the server needs no `openenv` import (which imports gradio: seconds at every start).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class UTPObservation(BaseModel):
    """The env's answer: `text` (the task after reset, a tool's answer after a step), whether the call
    succeeded, `done`, `reward` and `metadata` (the episode token; the evaluation at the end)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(default="", description="The env's observation text")
    ok: bool = Field(default=True, description="Whether the tool call succeeded")
    done: bool = Field(default=False, description="Whether the episode has ended")
    reward: float | None = Field(default=None, description="The episode's reward once it has ended")
    metadata: dict[str, Any] = Field(default_factory=dict,
                                     description="The episode token and steps; the evaluation at the end")


class UTPState(BaseModel):
    """The session's episode: the env's episode id and step count (OpenEnv's), the episode token, the
    query, seed and how it ended."""

    model_config = ConfigDict(extra="allow")

    episode_id: str | None = Field(default=None, description="The env's episode id (from the seed and query)")
    step_count: int = Field(default=0, ge=0, description="Steps taken in the episode")
    episode: str | None = Field(default=None, description="The episode's token (what a step may name)")
    query_id: str | None = Field(default=None, description="The episode's query")
    seed: int | None = Field(default=None, description="The episode's seed")
    done: bool = Field(default=False, description="Whether the episode has ended")
    termination_reason: str | None = Field(default=None, description="Why it ended (docs/ENV.md)")


class CallTool(BaseModel):
    """A step's action: one tool call (OpenEnv's `CallToolAction`), naming its episode in `metadata`."""

    type: Literal["call_tool"] = "call_tool"
    tool_name: str = Field(description="The tool to call")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments")
    metadata: dict[str, Any] = Field(default_factory=dict,
                                     description="'episode': the token reset answered (the step is refused when "
                                     "it is not the session's)")


class ListTools(BaseModel):
    """A step's action: list the tools (OpenEnv's `ListToolsAction`)."""

    type: Literal["list_tools"] = "list_tools"


def schemas() -> dict[str, Any]:
    """The JSON schemas `/schema` answers (OpenEnv's keys: action, observation, reset_observation, state)."""
    return {"action": {"anyOf": [CallTool.model_json_schema(), ListTools.model_json_schema()]},
            "observation": UTPObservation.model_json_schema(),
            "reset_observation": UTPObservation.model_json_schema(), "state": UTPState.model_json_schema()}
