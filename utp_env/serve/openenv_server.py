"""`utp-env serve`: an OpenEnv environment server (docs/SERVE.md); its client is `openenv_client.py`.

The server speaks OpenEnv's WebSocket protocol at `/ws` (the messages of
`openenv.core.env_server.types`: `reset`, `step`, `state`, `close`; answers `observation`, `state`,
`error`; the shapes in `wire.py`), so OpenEnv's own `EnvClient` (here `UTPEnvClient`) drives it, and
serves `/health`, `/schema` and `/metadata`. It is this project's own app, not `openenv`'s
`HTTPEnvServer` (and imports no `openenv`), because each of these has to hold and there they did not:

- **A session is its connection.** One WebSocket holds one session (an `EpisodeEngine`,
  utp_env/env/engine.py) and counts against `--max-sessions` and `--max-client-sessions` until its
  socket is closed. An idle session (`--session-timeout`) is closed with code 4000 and a reason that
  says so; its episode is dropped with it. No HTTP route creates or steps a session: OpenEnv's
  `/reset`, `/step`, `/state` and `/mcp` routes are not served (they answer 404 saying what to use).
- **No step without its episode.** A step on a session with no episode is refused (`NO_EPISODE`),
  never started behind the client's back; a step may name its episode (the token `reset` answers, in
  the action's `metadata["episode"]`, as `UTPEnvClient` does) and is refused when it is not the
  session's (`WRONG_EPISODE`). Nothing is applied by a refused step.
- **Every malformed frame is answered, and the session kept**: a binary frame, text that is not JSON
  (an integer of more digits than Python reads, nesting deeper than the parser goes), JSON that is
  not an object (an array, a number, null), an unknown type, a message over `--max-message-bytes`.
- **Nothing heavy runs on the event loop**: every call that evaluates a plan (and a start that does,
  the closed loop's with a `plan`) runs on the factory's threads (utp_env/serve/session.py), so a
  long step holds neither `/health` nor another session; a lookup, an edit or a start (each well
  under a millisecond) is answered on the loop.

Actions are OpenEnv's MCP-shaped ones: `CallToolAction(tool_name=..., arguments={...})` runs one tool
of the env (exactly one `env.step`, so the same answers, errors and rewards as in-process) and
`ListToolsAction()` lists the tools with their JSON schemas. `reset(seed=..., query_id=..., split=...,
stochastic=...)` (the closed loop: `plan=...` instead of `stochastic`) starts an episode; its
observation's text is the task, its metadata the query id, seed, the env's episode id and the
episode token. A step's observation: `text` (the env's answer), `ok`, `done`, `reward`, and in
`metadata` the episode token, steps and, at the end, the evaluation (`termination_reason`,
`final_pass`, `metrics`, `report`, ...). A step after the end answers the kept final reward again.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from utp_env.env.engine import EpisodeEngine, Refusal, ToolAnswer
from utp_env.serve.guard import AccessPolicy, Guard
from utp_env.serve.session import SessionFactory, SessionLimits
from utp_env.serve.wire import UTPState, schemas

__all__ = ["CAPACITY_CLOSE_CODE", "END_EPISODE", "IDLE_CLOSE_CODE", "NOT_SERVED", "OpenEnvServer", "openenv_app"]

END_EPISODE = "end_episode"
"""A `CallToolAction` name for the harness, not the model (never listed): ends the running episode as at
the step limit (`arguments`: optional `message`), scoring the plan so far, as `get_reward` does for a
rollout the trainer cut (docs/RL.md)."""

IDLE_CLOSE_CODE = 4000
"""The WebSocket close code of a session closed for being idle longer than `--session-timeout`."""
CAPACITY_CLOSE_CODE = 1013
"""The close code of a connection refused a session (RFC 6455 "Try Again Later")."""

NOT_SERVED = ("not served: a session lives on the WebSocket /ws of this server (OpenEnv's reset, step and "
              "state messages; utp_env.serve.openenv_server.UTPEnvClient), and no HTTP route creates or steps "
              "one; for MCP start `utp-env serve --mcp http`")


class _BadMessage(Exception):
    """A message the server cannot act on: answered with an error frame, the session kept."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def __getattr__(name: str) -> Any:
    """The client's names, as this module gave them before the client had a module of its own."""
    if name in ("UTPEnvClient", "EpisodeLostError", "UTPObservation", "UTPState"):
        from utp_env.serve import openenv_client

        return getattr(openenv_client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _error(message: str, code: str) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code}})


def _observation(text: str, ok: bool, done: bool, reward: float | None, metadata: str) -> str:
    """An `observation` answer shaped as `openenv`'s `serialize_observation`: the metadata (JSON text of
    an object, encoded once) inside the observation and beside it."""
    return (f'{{"type": "observation", "data": {{"observation": {{"text": {json.dumps(text)}, "ok": {_JSON_BOOL[ok]}, '
            f'"metadata": {metadata}}}, "reward": {json.dumps(reward)}, "done": {_JSON_BOOL[done]}, '
            f'"metadata": {metadata}}}}}')


_JSON_BOOL = {True: "true", False: "false"}


def parse_message(text: str | None, limit: int) -> dict[str, Any]:
    """A client frame as a JSON object with a `type`; `_BadMessage` saying what is wrong otherwise."""
    if text is None:
        raise _BadMessage("binary frames are not read: send each message as a JSON text frame", "INVALID_JSON")
    if len(text) > limit:
        raise _BadMessage(f"a message of {len(text):,} characters is over the {limit:,} this server reads "
                          "(--max-message-bytes); nothing was done", "MESSAGE_TOO_LARGE")
    try:
        message = json.loads(text)
    except RecursionError:
        raise _BadMessage("the message is nested too deeply to read; nothing was done", "INVALID_JSON") from None
    except ValueError as exc:  # json.JSONDecodeError, or an integer of more digits than Python converts
        raise _BadMessage(f"the message is not JSON that can be read ({str(exc)[:200]}); nothing was done",
                          "INVALID_JSON") from None
    if not isinstance(message, dict):
        kind = "null" if message is None else type(message).__name__
        raise _BadMessage(f"a message is a JSON object with a 'type' (reset, step, state or close), not a JSON "
                          f"{kind}; nothing was done", "INVALID_MESSAGE")
    return message


def _object(message: dict[str, Any], key: str, what: str) -> dict[str, Any]:
    value = message.get(key, {})
    if not isinstance(value, dict):
        raise _BadMessage(f"{what} must be a JSON object, not {type(value).__name__}; nothing was done",
                          "VALIDATION_ERROR")
    return value


class _Session:
    """One WebSocket's session: its engine, its client's address, when it was last used, whether a call runs."""

    def __init__(self, websocket: Any, engine: EpisodeEngine, client: str) -> None:
        self.websocket, self.engine, self.client = websocket, engine, client
        self.last_used = time.monotonic()
        self.busy = False
        self.reaped = False


class OpenEnvServer:
    """The app's state: the factory, the session limits, the live sessions and the idle reaper."""

    def __init__(self, factory: SessionFactory, limits: SessionLimits, session_timeout: float | None,
                 max_message_bytes: int, worker: int = 0) -> None:
        self.factory, self.limits, self.session_timeout = factory, limits, session_timeout
        self.max_message_bytes = max_message_bytes
        self.worker = worker
        self.sessions: set[_Session] = set()
        self._tools: list[dict[str, Any]] | None = None

    # ------------------------------------------------------------ the WebSocket

    async def session(self, websocket: Any) -> None:
        """Hold one session for the life of `websocket` (module docstring)."""
        from starlette.websockets import WebSocketDisconnect

        client = websocket.client.host if websocket.client else "?"
        await websocket.accept()
        refused = self.limits.refusal(client)
        if refused is not None:
            await websocket.send_text(_error(refused, "CAPACITY_REACHED"))
            await websocket.close(code=CAPACITY_CLOSE_CODE, reason="server at capacity")
            return
        self.limits.hold(client)
        session: _Session | None = None
        try:
            engine = self.factory.new()
            session = _Session(websocket, engine, client)
            self.sessions.add(session)
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect" or session.reaped:
                    break
                session.busy, session.last_used = True, time.monotonic()
                try:
                    reply = await self.answer(session, message.get("text"))
                finally:
                    session.busy, session.last_used = False, time.monotonic()
                if reply is None:
                    break
                await websocket.send_text(reply)
        except (WebSocketDisconnect, ConnectionError, RuntimeError):
            pass  # the client went away (or the reaper closed the socket) mid-answer
        finally:
            self.limits.release(client)
            if session is not None:
                self.sessions.discard(session)
                session.engine.close()
            with contextlib.suppress(RuntimeError, ConnectionError):
                await websocket.close()

    async def answer(self, session: _Session, text: str | None) -> str | None:
        """The answer to one frame (None: the client closed the session)."""
        try:
            message = parse_message(text, self.max_message_bytes)
            kind = message.get("type")
            if kind == "reset":
                return await self.reset(session.engine, _object(message, "data", "reset's data"))
            if kind == "step":
                return await self.step(session.engine, _object(message, "data", "step's data"))
            if kind == "state":
                return json.dumps({"type": "state", "data": self.state(session.engine).model_dump()})
            if kind == "close":
                return None
            if kind == "mcp":
                raise _BadMessage("MCP messages are not served on this WebSocket; nothing was done; send step "
                                  "messages with a call_tool action (or use `utp-env serve --mcp http`)",
                                  "UNKNOWN_TYPE")
            raise _BadMessage(f"unknown message type {str(kind)[:40]!r}; send reset, step, state or close",
                              "UNKNOWN_TYPE")
        except _BadMessage as exc:
            return _error(str(exc), exc.code)

    async def reset(self, engine: EpisodeEngine, data: dict[str, Any]) -> str:
        options = {k: v for k, v in data.items() if k not in ("seed", "episode_id")}
        try:
            text, _ = await self.factory.start(engine, data.get("seed"), **options)
        except (ValueError, TypeError) as exc:
            raise _BadMessage(str(exc), "VALIDATION_ERROR") from None
        return _observation(text, True, False, None, json.dumps(engine.started()))

    async def step(self, engine: EpisodeEngine, data: dict[str, Any]) -> str:
        kind = data.get("type")
        if kind == "list_tools":
            return json.dumps({"type": "observation", "data": {
                "observation": {"tools": self.tools(engine), "metadata": {}}, "reward": None, "done": False}})
        if kind != "call_tool":
            raise _BadMessage(f"unsupported action type {str(kind)[:40]!r}: send call_tool (tool_name, arguments) "
                              "or list_tools; nothing was done", "VALIDATION_ERROR")
        name, args = data.get("tool_name"), data.get("arguments", {})
        named = _object(data, "metadata", "the action's metadata").get("episode")
        if not isinstance(name, str):
            raise _BadMessage("a call_tool action needs a tool_name (text); nothing was done", "VALIDATION_ERROR")
        if named is not None and not isinstance(named, str):
            raise _BadMessage("metadata['episode'] must be the episode token (text) reset answered; nothing was "
                              "done", "VALIDATION_ERROR")
        if name == END_EPISODE:
            answer = await self.factory.run(self._end, engine, named, args)
        else:
            answer = await self.factory.call(engine, name, args, named)
        if answer.refused in (Refusal.NO_EPISODE, Refusal.WRONG_EPISODE):
            raise _BadMessage(answer.text.removeprefix("Error: "), str(answer.refused))
        meta = answer.structured_json(leave_out=("done", "reward"))
        return _observation(answer.text, answer.ok, answer.done, answer.reward, meta)

    @staticmethod
    def _end(engine: EpisodeEngine, named: str | None, args: Any) -> ToolAnswer:
        if engine.token is None or engine.env.episode is None:
            return engine.refusal(Refusal.NO_EPISODE)
        if named is not None and named != engine.token:
            return engine.refusal(Refusal.WRONG_EPISODE, named)
        message = args.get("message") if isinstance(args, dict) else None
        return engine.end("step_limit", str(message or "ended by the client"))

    def tools(self, engine: EpisodeEngine) -> list[dict[str, Any]]:
        """The env's tools as OpenEnv `Tool`s (name, description, input schema: the in-process schemas)."""
        if self._tools is None:
            self._tools = [{"name": s["function"]["name"], "description": s["function"]["description"],
                            "input_schema": copy.deepcopy(s["function"]["parameters"])}
                           for s in engine.env.openai_tools()]
        return self._tools

    @staticmethod
    def state(engine: EpisodeEngine) -> UTPState:
        """The session's episode as OpenEnv's `state` reports it."""
        state = engine.state()
        if not state["started"]:
            return UTPState()
        return UTPState(episode_id=state["episode_id"], step_count=state["steps"], episode=state.get("episode"),
                        query_id=state["query_id"], seed=state["seed"], done=bool(state["done"]),
                        termination_reason=state.get("termination_reason"))

    # ------------------------------------------------------------ idle sessions

    async def reap(self) -> None:
        """Close every session idle longer than the timeout (close code `IDLE_CLOSE_CODE`), for ever."""
        if self.session_timeout is None:
            return
        timeout = self.session_timeout
        while True:
            await asyncio.sleep(min(max(timeout / 4, 0.05), 5.0))
            now = time.monotonic()
            for session in [s for s in self.sessions if not s.busy and now - s.last_used > timeout]:
                session.reaped = True
                session.engine.close()
                with contextlib.suppress(RuntimeError, ConnectionError):
                    await session.websocket.close(code=IDLE_CLOSE_CODE,
                                                  reason=f"idle for more than {timeout:g} s: session closed, its "
                                                         "episode dropped")

    # ------------------------------------------------------------ the HTTP routes

    def health(self) -> dict[str, Any]:
        return {"status": "healthy", "sessions": self.limits.held, "max_sessions": self.limits.max_sessions,
                "worker": self.worker}

    def metadata(self) -> dict[str, Any]:
        """What OpenEnv's `/metadata` answers (its `EnvironmentMetadata` keys)."""
        return {"name": self.factory.env_id, "version": "1", "readme_content": None, "author": None,
                "documentation_url": None,
                "description": "Uncertainty-aware travel planning in India (utp-env): plan a trip with lookup and "
                               "itinerary tools, submit it, get it scored."}


def openenv_app(factory: SessionFactory, policy: AccessPolicy | None = None, limits: SessionLimits | None = None,
                session_timeout: float | None = 1800.0, worker: int = 0) -> Any:
    """The OpenEnv app: `/ws` sessions of `factory`'s env, `/health`, `/schema`, `/metadata`, behind the
    policy's checks (utp_env/serve/guard.py)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route, WebSocketRoute

    policy = policy or AccessPolicy()
    server = OpenEnvServer(factory, limits or SessionLimits(), session_timeout, policy.max_message_bytes, worker)

    async def health(_request: Request) -> Response:
        return JSONResponse(server.health())

    async def metadata(_request: Request) -> Response:
        return JSONResponse(server.metadata())

    async def schema(_request: Request) -> Response:
        return JSONResponse(schemas())

    async def not_served(request: Request) -> Response:
        if request.url.path == "/mcp":
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": NOT_SERVED}},
                                status_code=404)
        return PlainTextResponse(NOT_SERVED + "\n", status_code=404)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        reaper = asyncio.create_task(server.reap())
        try:
            yield
        finally:
            reaper.cancel()
            factory.shutdown()

    app = Starlette(routes=[
        Route("/health", health), Route("/metadata", metadata), Route("/schema", schema),
        WebSocketRoute("/ws", server.session),
        *(Route(p, not_served, methods=["GET", "POST"]) for p in ("/mcp", "/reset", "/step", "/state")),
    ], lifespan=lifespan)
    app.state.server = server
    return Guard(app, policy)
