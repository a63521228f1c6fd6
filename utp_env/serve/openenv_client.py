"""The Python client of `utp-env serve` (OpenEnv): `UTPEnvClient`, one session per instance (docs/SERVE.md).

An `openenv` `EnvClient` over the server's WebSocket (utp_env/serve/openenv_server.py), reading the
shapes of `wire.py`. What it adds to OpenEnv's client: every step names the episode `reset` started,
and an episode that is gone is an `EpisodeLostError`, never a quiet reconnect to a new, empty session.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.mcp_types import ListToolsObservation
from websockets.exceptions import ConnectionClosed

from utp_env.env.engine import Refusal
from utp_env.serve.wire import UTPObservation, UTPState

__all__ = ["EpisodeLostError", "UTPEnvClient", "UTPObservation", "UTPState"]


class EpisodeLostError(RuntimeError):
    """The client's episode is no longer on the server: the server restarted, closed the session (idle,
    stopped) or lost the connection. Nothing was sent; call `reset` to start a new episode."""


class UTPEnvClient(EnvClient[Any, Any, UTPState]):
    """The Python client of `utp-env serve`: one instance is one session (one WebSocket).

    ```python
    from openenv.core.env_server.mcp_types import CallToolAction
    from utp_env.serve.openenv_client import UTPEnvClient

    with UTPEnvClient(base_url="http://127.0.0.1:8000").sync() as env:   # token="..." for a server that asks
        result = env.reset(seed=0, query_id="utp-q-0001")
        result = env.step(CallToolAction(tool_name="search_flights", arguments={...}))
        print(result.observation.text, result.reward, result.done)
    ```

    Every step names the episode `reset` started (its token); when the session that held it is gone
    (the server restarted or closed it, the connection dropped) the next `step` or `state` raises
    `EpisodeLostError` instead of reconnecting to a new, empty session, and the server refuses a step
    that names another episode. `reset` always starts afresh (on a new connection if need be).
    """

    def __init__(self, base_url: str | None = None, token: str | None = None, **kwargs: Any) -> None:
        if token is not None:
            kwargs["headers"] = {**(kwargs.get("headers") or {}), "Authorization": f"Bearer {token}"}
        super().__init__(base_url=base_url, **kwargs)
        self._episode: str | None = None
        self._episode_query: str | None = None
        self._episode_socket: Any = None

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        held = self._episode if message.get("type") in ("step", "state") else None
        if held is not None and (self._ws is not self._episode_socket or _closed(self._episode_socket)):
            raise self._lost()
        try:
            response = await super()._send_and_receive(message)
        except ConnectionClosed:
            if held is None:
                raise
            raise self._lost() from None
        except RuntimeError as exc:
            if held is not None and any(f"(code: {r})" in str(exc) for r in (Refusal.NO_EPISODE,
                                                                              Refusal.WRONG_EPISODE)):
                self._episode = None
                raise EpisodeLostError(f"episode {held} of query {self._episode_query} is not this session's on the "
                                       f"server ({exc}); call reset to start a new episode") from None
            raise
        if message.get("type") == "reset":
            meta = response.get("data", {}).get("metadata") or {}
            self._episode, self._episode_query = meta.get("episode"), meta.get("query_id")
            self._episode_socket = self._ws
        return response

    def _lost(self) -> EpisodeLostError:
        ws, held, query = self._episode_socket, self._episode, self._episode_query
        self._episode = None
        code = getattr(ws, "close_code", None)
        reason = getattr(ws, "close_reason", None) or ""
        how = (f"the server closed the session (code {code}{': ' + reason if reason else ''})" if code is not None
               else "the connection to the server was lost")
        return EpisodeLostError(f"episode {held} of query {query} is gone: {how}; nothing was sent; call reset "
                                "to start a new episode")

    def _step_payload(self, action: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = action.model_dump()
        if self._episode is not None and dumped.get("type") == "call_tool":
            dumped["metadata"] = {**(dumped.get("metadata") or {}), "episode": self._episode}
        return dumped

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Any]:
        obs = dict(payload.get("observation", {}))
        done, reward = bool(payload.get("done", False)), payload.get("reward")
        observation: Any
        if "tools" in obs:
            observation = ListToolsObservation(tools=obs["tools"], done=done, reward=reward,
                                               metadata=obs.get("metadata", {}))
        else:
            observation = UTPObservation(text=obs.get("text", ""), ok=obs.get("ok", True), done=done,
                                         reward=reward, metadata=obs.get("metadata", {}))
        return StepResult(observation=observation, reward=reward, done=done, metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> UTPState:
        return UTPState.model_validate(payload)


def _closed(ws: Any) -> bool:
    from websockets.protocol import State as SocketState

    return ws is None or ws.state in (SocketState.CLOSING, SocketState.CLOSED)

