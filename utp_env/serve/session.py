"""The sessions of a server: one `EpisodeEngine` per client session over a database loaded once (docs/SERVE.md).

A server holds one `SessionFactory` (the env id, the database and its query set opened once, the
config) and makes an engine (`utp_env/env/engine.py`) per client session. Every session has its own
env instance (its own generator, episode and plan) over the shared, read-only database
(`open_database` caches it per process), so sessions never see each other's state. A tool call is
exactly one `env.step` of that env, so observations, rewards and reports are those of the in-process
env for the same seed and the same calls (tests/serve/test_serve_mcp.py, tests/serve/test_serve_openenv.py
compare them).

The factory's `run` is where a server does the heavy work of a session: every call that evaluates the
plan (`EpisodeEngine.evaluates`: submit, `check_plan`, the closed loop's `continue_trip`, the call that
reaches the step limit, any call of an env that shapes its reward) and a start that does
(`EpisodeEngine.start_evaluates`: the closed loop's start from a plan) run on a small pool of threads
(`STEP_THREADS`), never on the event loop, so that a long step (an evaluation with Monte Carlo
robustness) delays neither `/health` nor another session's step. Building a session's env (about 0.03
ms), any other start (its query and reference plan looked up: about 0.3 ms) and a lookup or a plan
edit (well under a millisecond) run on the loop (`new`, `start`, `call`): handing them to a thread
would cost more than they take, and while a thread holds the GIL the loop waits for it (up to the
interpreter's switch interval, lowered to `SWITCH_INTERVAL` in a serving process). The pool is
bounded by construction: each session has at most one call in flight, and sessions are capped.
A served factory (`served=True`) never builds the train split while serving: `preload` loads it
(building it first if it is missing) when the server's default split is `train`, and otherwise a
start that needs it is refused at once with the command that builds it.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from utp_env.env import ENV_ID, REPLAN_ENV_ID
from utp_env.env.config import EnvConfig, open_database, query_pool, reference_plan, split_pool
from utp_env.env.core import UTPEnv
from utp_env.env.engine import EpisodeDefaults, EpisodeEngine, ToolAnswer, holds_plan, json_safe
from utp_env.queries.generate import TRAIN_SPLIT

__all__ = ["ENV_NAMES", "NEW_EPISODE", "STEP_THREADS", "TRAIN_REFUSAL", "EpisodeDefaults", "EpisodeSession",
           "SessionFactory", "SessionLimits", "ToolAnswer", "client_options", "env_class", "holds_plan", "json_safe"]

ENV_NAMES = {"UTP-v0": ENV_ID, "UTP-Replan-v0": REPLAN_ENV_ID, ENV_ID: ENV_ID, REPLAN_ENV_ID: REPLAN_ENV_ID}
"""The env names a server takes (`--env`): the short ids and the registered ids."""

NEW_EPISODE = "new_episode"
"""The MCP tool that starts an episode (OpenEnv's own `reset` does it on the OpenEnv server)."""

STEP_THREADS = 4
"""Threads a server process runs session work on: enough that one long step does not hold the
others; the env is pure Python under the GIL, so more would add hand-offs, not throughput."""

TRAIN_REFUSAL = ("this server was not started with the train split, and building it takes minutes "
                 "(planning 5,000 reference plans), so it is not built while serving; start the server with "
                 "`utp-env serve --split train ...` (it builds the split before it listens, once, if it is "
                 "missing), or build it ahead with `utp-env data build --out DIR --train` and serve DIR with "
                 "--split train")
"""What a served start that needs the train split is refused with when the server did not load it."""

EpisodeSession = EpisodeEngine
"""A served session is an `EpisodeEngine` (the name the serving modules and the Inspect task use)."""

SWITCH_INTERVAL = 0.001
"""Seconds a thread holding the GIL runs before another may take it (Python's default: 0.005): the
event loop waits at most this long while a thread evaluates a plan."""

T = TypeVar("T")


class SessionLimits:
    """How many sessions a server process holds: at most `max_sessions`, at most `max_client_sessions`
    per client address (`--max-sessions`, `--max-client-sessions`). A session counts from `hold` to
    `release`: on OpenEnv, for as long as its WebSocket is open; over MCP, for as long as the MCP
    session lives."""

    def __init__(self, max_sessions: int = 1000, max_client_sessions: int | None = None) -> None:
        self.max_sessions = max_sessions
        self.max_client_sessions = max_sessions if max_client_sessions is None else max_client_sessions
        self.per_client: dict[str, int] = {}
        self.held = 0

    def refusal(self, client: str) -> str | None:
        """Why a new session of `client` is refused now, or None."""
        if self.held >= self.max_sessions:
            return f"server at capacity: {self.held} sessions held, the most it holds (--max-sessions)"
        held = self.per_client.get(client, 0)
        if held >= self.max_client_sessions:
            return f"{client} holds {held} sessions, the most one client may (--max-client-sessions)"
        return None

    def hold(self, client: str) -> None:
        """Count a session of `client` in."""
        self.held += 1
        self.per_client[client] = self.per_client.get(client, 0) + 1

    def release(self, client: str) -> None:
        """Count a session of `client` out."""
        self.held -= 1
        left = self.per_client.get(client, 0) - 1
        if left > 0:
            self.per_client[client] = left
        else:
            self.per_client.pop(client, None)


def client_options(env_cls: type[UTPEnv]) -> list[str]:
    """The options a client's start takes besides the seed (JSON values only: no `query` object)."""
    return ["plan", "query_id", "split"] if env_cls.RESETS_FROM_PLAN else ["query_id", "split", "stochastic"]


def env_class(env: str) -> type[UTPEnv]:
    """The env class of `env` (a name of `ENV_NAMES`); a one-line `ValueError` for another name."""
    env_id = ENV_NAMES.get(env)
    if env_id is None:
        raise ValueError(f"--env: unknown env {env!r}; choose UTP-v0 or UTP-Replan-v0")
    if env_id == REPLAN_ENV_ID:
        from utp_env.env.replan import UTPReplanEnv

        return UTPReplanEnv
    return UTPEnv


class SessionFactory:
    """Makes the sessions (`EpisodeEngine`s) of one server: one env kind, one database, one config.

    Args:
        env: `UTP-v0` or `UTP-Replan-v0` (or the registered ids).
        db_path: A database directory; default the embedded sandbox of `profile`.
        profile: Sandbox profile when no `db_path` ('full' or 'mini').
        split: The split episodes draw their query from when none is named.
        config: An env config (an `EnvConfig`, dict of overrides or YAML path).
        defaults: Seed and query id of an episode started without them.
        served: The sessions are served from an event loop: no train split is built while serving
            (module docstring); False (in-process, e.g. the Inspect task) builds it on first use.
    """

    def __init__(self, env: str = "UTP-v0", db_path: str | Path | None = None, profile: str = "full",
                 split: str | None = None, config: EnvConfig | dict[str, Any] | str | Path | None = None,
                 defaults: EpisodeDefaults | None = None, served: bool = False) -> None:
        self.env_id = ENV_NAMES.get(env, env)
        self.env_cls = env_class(env)
        self.env_kwargs: dict[str, Any] = {"db_path": db_path, "profile": profile, "split": split, "config": config}
        self.defaults = defaults or EpisodeDefaults()
        self.served = served
        self.train_loaded = False
        self._pool: ThreadPoolExecutor | None = None

    def preload(self) -> UTPEnv:
        """Open the database and its query set now (not on the first client's call), load the train split
        when it is the default split (building it first if it is missing), and check the config and the
        defaults: every mistake is a one-line `ValueError` before anything is served. A served factory
        also reads the reference plan of every query of the query set (each episode's start reads its
        query's: about 0.7 ms of parsing the first time, which a server would otherwise pay on its
        event loop at the first start of every query; about 60 MB on the full sandbox, which forked
        workers share). Then one episode is played to its end, so that the indices and memos every
        first episode builds are built already."""
        db = open_database(self.env_kwargs["db_path"], self.env_kwargs["profile"])
        queries = query_pool(db)
        if self.served:
            for query in queries:
                reference_plan(db, query.query_id)
        if self.env_kwargs["split"] == TRAIN_SPLIT:
            split_pool(db, TRAIN_SPLIT)
            self.train_loaded = True
        env = self.env_cls(**self.env_kwargs)
        engine = self._engine(env)
        engine.start(seed=self.defaults.seed or 0)
        engine.end()
        engine.close()
        return env

    def new(self, start_call: str = "reset") -> EpisodeEngine:
        """A session with its own env over the shared database (no episode started yet); `start_call`
        names how its client starts an episode (`reset` on OpenEnv, `new_episode` over MCP)."""
        return self._engine(self.env_cls(**self.env_kwargs), start_call)

    def _engine(self, env: UTPEnv, start_call: str = "reset") -> EpisodeEngine:
        return EpisodeEngine(env, self.defaults, start_call=start_call, options=client_options(self.env_cls),
                             train_refusal=TRAIN_REFUSAL if self.served else None, train_loaded=self.train_loaded)

    async def run(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`work(*args, **kwargs)` on the factory's threads (module docstring), awaited from the event loop."""
        if self._pool is None:  # made on first use: after a fork, in the process that serves
            sys.setswitchinterval(SWITCH_INTERVAL)
            self._pool = ThreadPoolExecutor(max_workers=STEP_THREADS, thread_name_prefix="utp-session")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(work, *args, **kwargs))

    async def start(self, engine: EpisodeEngine, seed: int | None = None, **options: Any) -> tuple[str, dict[str, Any]]:
        """`engine.start(seed, **options)` (`EpisodeEngine.start`): on the threads when it may evaluate a plan
        (`EpisodeEngine.start_evaluates`), on the event loop otherwise (module docstring)."""
        if engine.start_evaluates(options):
            return await self.run(engine.start, seed, **options)
        return engine.start(seed, **options)

    async def call(self, engine: EpisodeEngine, name: str, args: Any = None, episode: str | None = None
                   ) -> ToolAnswer:
        """One tool call of `engine` (`EpisodeEngine.call`): on the threads when it may evaluate the plan, on
        the event loop otherwise (module docstring)."""
        if engine.evaluates(name):
            return await self.run(engine.call, name, args, episode)
        return engine.call(name, args, episode)

    def shutdown(self) -> None:
        """Stop the threads (after the server stopped serving)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
