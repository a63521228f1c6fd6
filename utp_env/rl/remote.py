"""The TRL environment class whose episodes run on `utp-env serve` (OpenEnv) servers (docs/SERVE.md).

`remote_env_class(urls, tools=...)` is `rl_env_class` with the env elsewhere: the same public tool
methods (names, type hints, docstrings: what TRL turns into tools), `reset(**row)` and `get_reward`,
but each instance holds one WebSocket session (`UTPEnvClient`) of one of the servers and each tool call
is one `CallToolAction` there. The episode engine (utp_env/env/engine.py) runs on the server;
`RemoteEpisode` is its interface on this side, so `RLToolEnv`'s code is the same for both. A rollout the
trainer cut is ended on the server as at the step limit (`END_EPISODE`), so `get_reward` means what it
means in-process (docs/RL.md).

Given several URLs (`utp-env serve` processes on several machines, or several ports), the instances
take them in turn, one session each, skipping a server that does not answer. When a session's episode
is lost (its server restarted or closed the session), the next tool call and `get_reward` raise
`EpisodeLostError`: a rollout is never scored on an episode it did not play.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

from utp_env.env.engine import Refusal, ToolAnswer
from utp_env.env.episode import TerminationReason
from utp_env.rl.env import RLToolEnv, shadowed_tools

URL_PREFIXES = ("http://", "https://", "ws://", "wss://")


class RemoteEpisode:
    """The episode engine's interface (`start`, `call`, `end`, `final`, `query_id`, `steps`) over one
    server session; the server's engine does the work and keeps the reward, this side keeps its answers."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.final: ToolAnswer | None = None
        self.query_id: str | None = None
        self.token: str | None = None
        self.lost: Exception | None = None
        self._steps: list[str] = []

    @property
    def reward(self) -> float:
        return 0.0 if self.final is None else self.final.reward

    @property
    def done(self) -> bool:
        return self.final is not None

    @property
    def steps(self) -> tuple[str, ...]:
        """The tools of the calls the server applied in this episode, in order."""
        return tuple(self._steps)

    def start(self, seed: int | None = None, **options: Any) -> tuple[str, dict[str, Any]]:
        """`reset` on the server; (task text, the start's metadata: query id, seed, episode token, ...)."""
        self.final, self.query_id, self.token, self.lost, self._steps = None, None, None, None, []
        result = self.client.reset(seed=seed, **options)
        meta = dict(result.observation.metadata)
        self.query_id, self.token = meta.get("query_id"), meta.get("episode")
        text: str = result.observation.text
        return text, meta

    def call(self, name: str, args: Any = None) -> ToolAnswer:
        """One tool call on the server (its answer, or its refusal); `EpisodeLostError` when the episode is gone."""
        from openenv.core.env_server.mcp_types import CallToolAction

        from utp_env.serve.openenv_client import EpisodeLostError

        if self.lost is not None:
            raise EpisodeLostError(str(self.lost))
        try:
            result = self.client.step(CallToolAction(tool_name=name, arguments={} if args is None else args))
        except EpisodeLostError as exc:
            self.lost = exc
            raise
        obs = result.observation
        meta = dict(obs.metadata)
        refused = meta.get("refused")
        answer = ToolAnswer(obs.text, ok=bool(obs.ok), done=bool(result.done), reward=float(result.reward or 0.0),
                            info=meta, episode=meta.get("episode"),
                            refused=None if refused is None else Refusal(refused))
        if refused is None and name != _end_name():
            self._steps.append(name)
        if answer.done and self.final is None:
            self.final = answer
        return answer

    def end(self, reason: TerminationReason | str = TerminationReason.STEP_LIMIT,
            message: str | None = None) -> ToolAnswer:
        """End the episode on the server as at the step limit (the plan so far scored); an ended one
        answers its kept final answer."""
        from utp_env.serve.openenv_server import END_EPISODE

        if self.final is not None:
            return self.final
        if self.query_id is None:
            raise RuntimeError("no episode was started on the server; call reset first")
        if TerminationReason(reason) != TerminationReason.STEP_LIMIT:
            raise ValueError(f"a served episode is ended from outside as at the step limit, not as {reason!r}")
        answer = self.call(END_EPISODE, {"message": message or ""})
        self.final = answer
        return answer


def _end_name() -> str:
    from utp_env.serve.openenv_server import END_EPISODE

    return END_EPISODE


class RemoteRLToolEnv(RLToolEnv):
    """`RLToolEnv` whose episodes are sessions of the servers at `base_urls` (module docstring)."""

    base_urls: ClassVar[tuple[str, ...]] = ()  # set per class by `remote_env_class`
    token: ClassVar[str | None] = None
    _turns: ClassVar[Any] = itertools.count()

    def __init__(self) -> None:
        self._client = self._connect()
        self._engine = RemoteEpisode(self._client)

    @classmethod
    def _connect(cls) -> Any:
        """A connected client of the next server in turn; the ones after it when it does not answer."""
        from utp_env.serve.openenv_client import UTPEnvClient

        first = next(cls._turns)
        failures = []
        for k in range(len(cls.base_urls)):
            url = cls.base_urls[(first + k) % len(cls.base_urls)]
            client = UTPEnvClient(base_url=url, token=cls.token, message_timeout_s=600).sync()
            try:
                client.connect()
            except ConnectionError as exc:
                failures.append(f"{url}: {exc}")
                continue
            return client
        raise ConnectionError(f"no server answered: {'; '.join(failures)}")

    def _close(self) -> None:
        """End the session (the server drops its episode). Private: TRL takes every public method for a tool."""
        self._client.close()


def remote_env_class(base_url: str | Sequence[str], tools: Sequence[str] | None = None,
                     token: str | None = None) -> type[RemoteRLToolEnv]:
    """A `RemoteRLToolEnv` subclass on the server at `base_url` (or the servers of a list of URLs, taken in
    turn) with its own `episodes` log; `tools` as `rl_env_class` (the tools TRL offers the model; default
    all); `token` for servers that ask for one."""
    urls = (base_url,) if isinstance(base_url, str) else tuple(base_url)
    if not urls:
        raise ValueError("--server: no server URL given; give the one `utp-env serve` prints, e.g. http://127.0.0.1:8000")
    for url in urls:
        if not isinstance(url, str) or not url.startswith(URL_PREFIXES):
            raise ValueError(f"--server: {url!r} is not a URL; give the one `utp-env serve` prints, "
                             "e.g. http://127.0.0.1:8000")
    attributes: dict[str, Any] = {"base_urls": urls, "token": token, "episodes": [], "_turns": itertools.count()}
    return type("RemoteRLToolEnv", (RemoteRLToolEnv,), attributes | shadowed_tools(tools))
