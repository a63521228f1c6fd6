"""`utp-env serve`: an OpenEnv environment server, and its Python client (docs/SERVE.md).

Built on the `openenv` package's server (`HTTPEnvServer` through `create_fastapi_app`): the
WebSocket endpoint `/ws` gives each connection its own session (here: an `EpisodeSession`, one env
over the database the server loaded once), with `reset`, `step` and `state` messages; sessions
idle longer than the timeout are reclaimed, and a connection that drops ends only its own session.
(OpenEnv's plain HTTP `/reset` and `/step` are stateless, one throwaway env per request: fine for a
look, useless for an episode; clients use the WebSocket, as `UTPEnvClient` does.)

Actions are OpenEnv's MCP-shaped ones: `CallToolAction(tool_name=..., arguments={...})` runs one
tool of the env (exactly one `env.step`, so the same answers, errors and rewards as in-process) and
`ListToolsAction()` lists the tools with their JSON schemas. `reset(seed=..., query_id=..., split=...,
stochastic=...)` (the closed loop: `plan=...` instead of `stochastic`) starts an episode; its
observation's text is the task, its metadata the query id, seed and episode id (not the tools'
schemas: 40 KB of JSON per episode would cost more than the episode's steps; `ListToolsAction` gives
them once). A step's observation: `text` (the env's answer), `ok`, `done`, `reward`, and at the end the
evaluation in `metadata` (`termination_reason`, `final_pass`, `metrics`, `report`, ...).

Every session's `reset` and `step` run on the server's event loop (`reset_async`, `step_async`), one
at a time; building and closing a session's env run on one shared thread
(`REQUIRES_SINGLE_THREAD_EXECUTOR`). The env is pure Python under the GIL, so threads would add no
throughput, only hand-offs (a step is about a millisecond; a long one, e.g. `check_plan` on a big
plan or an evaluation with Monte Carlo robustness, holds the others that long); run more server
processes for more cores.
"""

from __future__ import annotations

import functools
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    ListToolsAction,
    ListToolsObservation,
    Tool,
)
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata, Observation, State
from pydantic import Field

from utp_env.serve.session import EpisodeSession, SessionFactory, ToolAnswer, json_safe

__all__ = ["END_EPISODE", "UTPEnvClient", "UTPObservation", "UTPOpenEnv", "UTPState", "openenv_app"]

END_EPISODE = "end_episode"
"""A `CallToolAction` name for the harness, not the model (never listed): ends the running episode as at
the step limit (`arguments`: optional `message`), scoring the plan so far, as `get_reward` does for a
rollout the trainer cut (docs/RL.md)."""


class UTPObservation(Observation):
    """The env's answer: `text` (the task after reset, a tool's answer after a step), whether the call
    succeeded, and (inherited) `done`, `reward` and `metadata` (the evaluation at the end)."""

    text: str = Field(default="", description="The env's observation text")
    ok: bool = Field(default=True, description="Whether the tool call succeeded")


class UTPState(State):
    """The session's episode: its id and step count (OpenEnv's), the query, seed and how it ended."""

    query_id: str | None = Field(default=None, description="The episode's query")
    seed: int | None = Field(default=None, description="The episode's seed")
    done: bool = Field(default=False, description="Whether the episode has ended")
    termination_reason: str | None = Field(default=None, description="Why it ended (docs/ENV.md)")


class UTPOpenEnv(Environment[Any, Any, UTPState]):
    """One OpenEnv session: an `EpisodeSession` of the server's `SessionFactory`."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    REQUIRES_SINGLE_THREAD_EXECUTOR = True

    def __init__(self, factory: SessionFactory) -> None:
        super().__init__()
        self.factory = factory
        self.session: EpisodeSession = factory.new()
        self._last: ToolAnswer | None = None

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> UTPObservation:
        """Start an episode (the env's `reset`; `episode_id` is ignored: the env derives its own from the
        seed and the query). A bad argument raises the env's one-line `ValueError` ('reset: ...')."""
        text, info = self.session.start(seed=seed, **kwargs)
        self._last = None
        return UTPObservation(text=text, metadata=json_safe({
            "query_id": info["query"]["query_id"], "seed": info["seed"], "episode_id": info["episode_id"],
            "step_limit": info["step_limit"], "db_hash": info["db_hash"]}))

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """One tool call (`CallToolAction`) as one env step, or the tool list (`ListToolsAction`)."""
        if isinstance(action, ListToolsAction):
            return ListToolsObservation(tools=self.tools())
        if not isinstance(action, CallToolAction):
            return UTPObservation(text=f"Error: unsupported action {type(action).__name__}; send a call_tool "
                                  "action (tool_name, arguments) or list_tools", ok=False)
        if action.tool_name == END_EPISODE:
            ep = self.session.env.episode
            if ep is None or ep.done:
                answer = self.session.last or ToolAnswer("Error: no running episode to end; call reset", ok=False)
            else:
                answer = self.session.end("step_limit", str(action.arguments.get("message") or "ended by the client"))
        else:
            answer = self.session.call(action.tool_name, action.arguments)
        self._last = answer
        meta = {k: v for k, v in answer.structured().items() if k not in ("done", "reward")}
        return UTPObservation(text=answer.text, ok=answer.ok, done=answer.done, reward=answer.reward, metadata=meta)

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> UTPObservation:
        """`reset` on the server's event loop (no hop to a thread: module docstring)."""
        return self.reset(seed=seed, episode_id=episode_id, **kwargs)

    async def step_async(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """`step` on the server's event loop (no hop to a thread: module docstring)."""
        return self.step(action, timeout_s=timeout_s, **kwargs)

    def tools(self) -> list[Tool]:
        """The env's tools as OpenEnv `Tool`s (name, description, input schema: the in-process schemas)."""
        import copy

        return [Tool(name=s["function"]["name"], description=s["function"]["description"],
                     input_schema=copy.deepcopy(s["function"]["parameters"])) for s in self.session.env.openai_tools()]

    @property
    def state(self) -> UTPState:
        """The episode as OpenEnv's `state` reports it."""
        env, ep = self.session.env, self.session.env.episode
        if ep is None:
            return UTPState()
        status = ep.status
        return UTPState(episode_id=ep.episode_id, step_count=ep.steps, query_id=ep.query.query_id,
                        seed=env.seed_value, done=ep.done, termination_reason=None if status is None else str(status))

    def get_metadata(self) -> EnvironmentMetadata:
        """Name and description as OpenEnv's `/metadata` shows them."""
        return EnvironmentMetadata(name=self.factory.env_id, version="1",
                                   description="Uncertainty-aware travel planning in India (utp-env): plan a trip "
                                   "with lookup and itinerary tools, submit it, get it scored.")

    def close(self) -> None:
        """Drop the episode (the database stays open for the other sessions)."""
        self.session.close()


def openenv_app(factory: SessionFactory, session_timeout: float | None = 1800.0, max_sessions: int = 1000) -> Any:
    """The OpenEnv FastAPI app: `/ws` sessions of `factory`'s env (plus OpenEnv's `/health`, `/schema`, ...)."""
    env_factory = functools.partial(UTPOpenEnv, factory)
    concurrency = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout)
    return create_fastapi_app(env_factory, CallToolAction, UTPObservation, concurrency_config=concurrency,
                              state_cls=UTPState)


class UTPEnvClient(EnvClient[Any, Any, UTPState]):
    """The Python client of `utp-env serve`: one instance is one session (one WebSocket).

    ```python
    from openenv.core.env_server.mcp_types import CallToolAction
    from utp_env.serve.openenv_server import UTPEnvClient

    with UTPEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=0, query_id="utp-q-0001")
        result = env.step(CallToolAction(tool_name="search_flights", arguments={...}))
        print(result.observation.text, result.reward, result.done)
    ```
    """

    def _step_payload(self, action: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = action.model_dump()
        return dumped

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Any]:
        obs = dict(payload.get("observation", {}))
        done, reward = bool(payload.get("done", False)), payload.get("reward")
        observation: Observation
        if "tools" in obs:
            observation = ListToolsObservation(tools=obs["tools"], done=done, reward=reward,
                                               metadata=obs.get("metadata", {}))
        else:
            observation = UTPObservation(text=obs.get("text", ""), ok=obs.get("ok", True), done=done,
                                         reward=reward, metadata=obs.get("metadata", {}))
        return StepResult(observation=observation, reward=reward, done=done, metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> UTPState:
        return UTPState.model_validate(payload)
