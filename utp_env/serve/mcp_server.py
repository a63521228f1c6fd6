"""The env's tools over MCP: `utp-env serve --mcp stdio` and `utp-env serve --mcp http` (docs/SERVE.md).

Built on the official `mcp` library's low-level `Server`, so the tools keep the env's own JSON
schemas (the ones `info["tools"]` gives in-process) and a bad call gets the env's own one-line
error, not a schema validator's: arguments are not validated by the transport (`validate_input=False`)
but by the env, exactly as in-process.

Each MCP session is one `EpisodeEngine`: the server's lifespan runs once per session (stdio: the
process; streamable HTTP: each `Mcp-Session-Id`), so it builds the session's env on open and drops
it on close. The tools: every tool of the env (lookup, itinerary, submit; `continue_trip` in the
closed loop) and `new_episode` (seed, query id, split, ...: the env's `reset`). A tool's text answer
is the env's observation (what the model reads); its structured content says `done`, `reward` and,
at the end, the evaluation (`termination_reason`, `final_pass`, `metrics`, `report`, ...). The
resource `utp://episode` is the same for the harness, whatever its client hands the model: the
session's episode as JSON (`EpisodeEngine.state`).

Every tool call, like a start, goes through the session's `EpisodeEngine` (utp_env/env/engine.py),
the heavy ones (any call or start that evaluates a plan) on the factory's threads, never on the event
loop (utp_env/serve/session.py): a tool called before `new_episode` is refused (no
default episode is started behind the client's back), and a call after the end answers the kept final
reward again. Over streamable HTTP (`http_app`), sessions are capped in total (`--max-sessions`) and
per client address (`--max-client-sessions`), Host and Origin are checked by MCP's
`TransportSecuritySettings` and by the server's `Guard` (same lists, utp_env/serve/guard.py), and so
are the token and the body size.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
from collections.abc import AsyncIterator
from typing import Any

from utp_env.env.engine import EpisodeEngine, ToolAnswer
from utp_env.serve.guard import AccessPolicy, Guard
from utp_env.serve.session import NEW_EPISODE, SessionFactory, SessionLimits

CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("utp_mcp_client", default=None)
"""The address of the client whose request opens an MCP session: set by the HTTP endpoint, read by the
session's lifespan (the session's task is started from that request, so it sees the value)."""

SERVER_NAME = "utp-env"
EPISODE_RESOURCE = "utp://episode"
INSTRUCTIONS = (f"Travel planning in India (utp-env). Call {NEW_EPISODE} first (optional seed, query_id): it "
                "answers the task. Then plan with the lookup and itinerary tools and end with submit or "
                "submit_plan; the answer of the ending call carries the reward and the evaluation.")


def new_episode_schema(session: EpisodeEngine) -> dict[str, Any]:
    """The JSON schema of `new_episode`'s arguments for this session's env."""
    props: dict[str, Any] = {
        "seed": {"type": "integer", "minimum": 0,
                 "description": "Episode seed (same seed and same calls: same answers and reward)."},
        "query_id": {"type": "string", "description": "The query to plan for (else drawn from the split)."},
        "split": {"type": "string", "description": "Split to draw the query from: validation, test (or train, "
                  "when the server was started with it)."},
    }
    if session.replan:
        props["plan"] = {"description": "Start the trip from this plan (paper JSON day format, text or object)."}
    else:
        props["stochastic"] = {"type": "boolean", "description": "Draw one delay realisation at the end."}
    return {"type": "object", "properties": props}


def tool_list(session: EpisodeEngine) -> list[Any]:
    """The session's MCP tools: `new_episode`, then the env's tools with their in-process schemas."""
    from mcp import types

    tools = [types.Tool(name=NEW_EPISODE, description=f"Start a new episode and return its task text. "
                        f"{INSTRUCTIONS}", inputSchema=new_episode_schema(session))]
    for schema in session.env.openai_tools():
        fn = copy.deepcopy(schema["function"])  # deepcopy thaws the shared frozen schema
        tools.append(types.Tool(name=fn["name"], description=fn["description"], inputSchema=fn["parameters"]))
    return tools


def answer_result(answer: ToolAnswer) -> Any:
    """A tool answer as an MCP `CallToolResult`: the env's text, `isError` for a failed or refused call, and
    the structured part (done, reward, the episode token; the evaluation at the end)."""
    from mcp import types

    return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text)],
                                structuredContent=answer.structured(), isError=not answer.ok)


async def start_result(factory: SessionFactory, session: EpisodeEngine, arguments: dict[str, Any]) -> Any:
    """`new_episode`: the env's reset with the client's arguments; its one-line error when they are bad."""
    seed = arguments.get("seed")
    options = {k: v for k, v in arguments.items() if k != "seed"}
    try:
        text, _ = await factory.start(session, seed, **options)
    except (ValueError, TypeError) as exc:
        return answer_result(ToolAnswer(f"Error: {exc}", ok=False))
    return answer_result(ToolAnswer(text, ok=True, info=session.started(), episode=session.token))


def build_server(factory: SessionFactory, limits: SessionLimits | None = None) -> Any:
    """An `mcp` low-level `Server` whose every session is one episode engine of `factory`'s env; with
    `limits`, each session counts against them (its client's address from `CLIENT`) while it lives."""
    from mcp import types
    from mcp.server.lowlevel import Server

    @contextlib.asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[EpisodeEngine]:
        client = CLIENT.get() or "?"
        session = factory.new(NEW_EPISODE)
        if limits is not None:
            limits.hold(client)
        try:
            yield session
        finally:
            session.close()
            if limits is not None:
                limits.release(client)

    server: Any = Server(SERVER_NAME, instructions=INSTRUCTIONS, lifespan=lifespan)

    def current() -> EpisodeEngine:
        session: EpisodeEngine = server.request_context.lifespan_context
        return session

    @server.list_tools()  # type: ignore[untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return tool_list(current())

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        session = current()
        if name == NEW_EPISODE:
            result: types.CallToolResult = await start_result(factory, session, arguments)
            return result
        result = answer_result(await factory.call(session, name, arguments))
        return result

    @server.list_resources()  # type: ignore[untyped-decorator]
    async def list_resources() -> list[types.Resource]:
        return [types.Resource(uri=EPISODE_RESOURCE, name="episode", mimeType="application/json",  # type: ignore[arg-type]
                               description="This session's episode: query, steps, done, reward, evaluation")]

    @server.read_resource()  # type: ignore[untyped-decorator]
    async def read_resource(uri: Any) -> str:
        if str(uri) != EPISODE_RESOURCE:
            raise ValueError(f"unknown resource {str(uri)!r}; this server has {EPISODE_RESOURCE}")
        return json.dumps(current().state())

    return server


async def serve_stdio(factory: SessionFactory) -> None:
    """Serve one MCP session over this process's stdin/stdout (a local agent spawns the server)."""
    from mcp.server.stdio import stdio_server

    server = build_server(factory)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        factory.shutdown()


def http_app(factory: SessionFactory, policy: AccessPolicy | None = None, limits: SessionLimits | None = None,
             session_timeout: float | None = 1800.0) -> Any:
    """A Starlette app serving MCP's streamable HTTP transport at `/mcp`: one episode per MCP session,
    sessions idle for `session_timeout` seconds closed and their episodes dropped, behind the policy's
    checks; a client that holds its share of sessions (`limits`) is refused another with 503."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send

    policy = policy or AccessPolicy()
    caps = limits or SessionLimits()
    manager = StreamableHTTPSessionManager(app=build_server(factory, caps), session_idle_timeout=session_timeout,
                                           max_sessions=caps.max_sessions, security_settings=policy.mcp_security())

    class Endpoint:
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            client = scope["client"][0] if scope.get("client") else "?"
            opening = not any(k.lower() == b"mcp-session-id" for k, _ in scope.get("headers", []))
            refused = caps.refusal(client) if opening and scope.get("method") == "POST" else None
            if refused is not None:
                body = {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32000, "message": refused}}
                await JSONResponse(body, status_code=503)(scope, receive, send)
                return
            token = CLIENT.set(client)
            try:
                await manager.handle_request(scope, receive, send)
            finally:
                CLIENT.reset(token)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            async with manager.run():
                yield
        finally:
            factory.shutdown()

    return Guard(Starlette(routes=[Route("/mcp", endpoint=Endpoint())], lifespan=lifespan), policy)
