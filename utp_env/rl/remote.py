"""The TRL environment class whose episodes run on a `utp-env serve` (OpenEnv) server (docs/SERVE.md).

`remote_env_class(base_url, tools=...)` is `rl_env_class` with the env elsewhere: the same public tool
methods (names, type hints, docstrings: what TRL turns into tools), `reset(**row)` and `get_reward`,
but each instance holds one WebSocket session of the server (`UTPEnvClient`) and each tool call is one
`CallToolAction` there. A rollout the trainer cut is ended on the server as at the step limit
(`END_EPISODE`), so `get_reward` means what it means in-process (docs/RL.md). The trainer keeps the
dataset (the prompts); the server plays the episodes, on as many CPU machines as there are servers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from utp_env.env.adapters import _jsonable
from utp_env.rl.env import UNFINISHED_MESSAGE, EpisodeRecord, RLToolEnv, shadowed_tools


class RemoteRLToolEnv(RLToolEnv):
    """`RLToolEnv` whose episodes are sessions of the server at `base_url` (module docstring)."""

    base_url: ClassVar[str] = ""  # set per class by `remote_env_class`

    def __init__(self) -> None:
        from utp_env.serve.openenv_server import UTPEnvClient

        self._client: Any = UTPEnvClient(base_url=self.base_url, message_timeout_s=600).sync()
        self._client.connect()
        self.reward, self.done, self.final_info = 0.0, False, {}
        self._query_id: str | None = None
        self._called: list[str] = []

    def reset(self, **kwargs: Any) -> str | None:
        """Start an episode on the server for a dataset row (`query_id`, else `split`; optional `seed`,
        `stochastic`); other columns are ignored, as in-process."""
        options = {k: kwargs[k] for k in ("query_id", "split", "stochastic") if kwargs.get(k) is not None}
        seed = kwargs.get("seed")
        result = self._client.reset(seed=None if seed is None else int(seed), **options)
        self.reward, self.done, self.final_info = 0.0, False, {}
        self._query_id = str(result.observation.metadata.get("query_id"))
        self._called = []
        text: str = result.observation.text
        return text

    def _call(self, name: str, args: dict[str, Any]) -> str:
        from openenv.core.env_server.mcp_types import CallToolAction

        if self.done:
            return "Error: the episode has ended; no further tool calls are executed."
        result = self._client.step(CallToolAction(tool_name=name, arguments=_jsonable(args)))
        self._called.append(name)
        if result.done:
            self.reward, self.done = float(result.reward or 0.0), True
            self.final_info = dict(result.observation.metadata)
        text: str = result.observation.text
        return text

    def get_reward(self) -> float:
        """The rollout's reward, ending the episode on the server as at the step limit when the model
        stopped before `submit` (as `RLToolEnv.get_reward` does in-process)."""
        from openenv.core.env_server.mcp_types import CallToolAction

        from utp_env.serve.openenv_server import END_EPISODE

        if self._query_id is None:
            return 0.0
        if not self.done:
            result = self._client.step(CallToolAction(tool_name=END_EPISODE, arguments={"message": UNFINISHED_MESSAGE}))
            self.reward, self.done = float(result.reward or 0.0), True
            self.final_info = dict(result.observation.metadata)
        reason = str(self.final_info.get("termination_reason") or "")
        self.episodes.append(EpisodeRecord(self._query_id, len(self._called), tuple(self._called), reason, self.reward))
        return self.reward

    def _close(self) -> None:
        """End the session (the server drops its episode). Private: TRL takes every public method for a tool."""
        self._client.close()


def remote_env_class(base_url: str, tools: Sequence[str] | None = None) -> type[RemoteRLToolEnv]:
    """A `RemoteRLToolEnv` subclass on the server at `base_url` with its own `episodes` log; `tools` as
    `rl_env_class` (the tools TRL offers the model; default all)."""
    if not base_url.startswith(("http://", "https://", "ws://", "wss://")):
        raise ValueError(f"--server: {base_url!r} is not a URL; give the one `utp-env serve` prints, "
                         "e.g. http://127.0.0.1:8000")
    attributes: dict[str, Any] = {"base_url": base_url, "episodes": []}
    return type("RemoteRLToolEnv", (RemoteRLToolEnv,), attributes | shadowed_tools(tools))
