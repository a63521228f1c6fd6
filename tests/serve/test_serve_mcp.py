"""`utp-env serve --mcp`: the env's tools over MCP, driven by the official `mcp` client library.

Every served episode is compared with the same seeded episode played in-process (tests/support/serve_script.py):
same task text, same answers (errors included), same reward. Servers run on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.memory import create_connected_server_and_client_session
from serve_process import served
from serve_script import in_process, query_ids, scripted_calls

from utp_env.cli import main
from utp_env.env.core import UTPEnv
from utp_env.serve.mcp_server import build_server
from utp_env.serve.session import NEW_EPISODE, SessionFactory


async def play(session: ClientSession, seed: int, query_id: str,
               calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], float, dict[str, Any]]:
    """Play `calls` through an MCP client session: (task text and answers, reward, final structured content)."""
    start = await session.call_tool(NEW_EPISODE, {"seed": seed, "query_id": query_id})
    assert not start.isError, start.content
    transcript = [_text(start)]
    for name, args in calls:
        result = await session.call_tool(name, args)
        transcript.append(_text(result))
        final = result.structuredContent or {}
        if final.get("done"):
            return transcript, float(final["reward"]), final
    raise AssertionError("the served episode did not end")


def _text(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


def assert_same_episode(served: tuple[list[str], float, dict[str, Any]],
                        local: tuple[list[str], float, dict[str, Any]]) -> None:
    transcript, reward, final = served
    local_transcript, local_reward, local_info = local
    assert transcript == local_transcript
    assert reward == local_reward
    assert final["termination_reason"] == local_info["termination_reason"]
    assert final["metrics"] == json.loads(json.dumps(local_info["metrics"]))


@pytest.fixture(scope="module")
def qids(mini_db_path: Path) -> list[str]:
    return query_ids(mini_db_path, 3)


def test_tools_are_the_envs_with_their_in_process_schemas(mini_db_path: Path) -> None:
    async def go() -> None:
        async with create_connected_server_and_client_session(build_server(SessionFactory(db_path=mini_db_path))) \
                as session:
            listed = (await session.list_tools()).tools
            env = UTPEnv(db_path=mini_db_path)
            expected = [s["function"] for s in env.openai_tools()]
            assert [t.name for t in listed] == [NEW_EPISODE] + [f["name"] for f in expected]
            for tool, fn in zip(listed[1:], expected, strict=True):
                assert tool.description == fn["description"]
                assert tool.inputSchema == json.loads(json.dumps(fn["parameters"]))

    asyncio.run(go())


@pytest.mark.parametrize("env", ["UTP-v0", "UTP-Replan-v0"])
def test_a_seeded_episode_matches_in_process(mini_db_path: Path, qids: list[str], env: str) -> None:
    calls = scripted_calls(mini_db_path, qids[0], replan=env == "UTP-Replan-v0")
    local = in_process(mini_db_path, qids[0], 7, calls, env=env)
    assert local[1] > 0  # the reference plan scores: the comparison is not between two zeros

    async def go() -> None:
        server = build_server(SessionFactory(env=env, db_path=mini_db_path))
        async with create_connected_server_and_client_session(server) as session:
            assert_same_episode(await play(session, 7, qids[0], calls), local)
            # the session goes on: a second episode in the same session is the same again
            assert_same_episode(await play(session, 7, qids[0], calls), local)

    asyncio.run(go())


def test_bad_calls_get_the_env_errors(mini_db_path: Path, qids: list[str]) -> None:
    env = UTPEnv(db_path=mini_db_path)
    with pytest.raises(ValueError) as bad_seed:
        env.reset(seed=-1)
    with pytest.raises(ValueError) as bad_query:
        env.reset(options={"query_id": "nope"})

    async def go() -> None:
        async with create_connected_server_and_client_session(build_server(SessionFactory(db_path=mini_db_path))) \
                as session:
            result = await session.call_tool(NEW_EPISODE, {"seed": -1})
            assert result.isError and _text(result) == f"Error: {bad_seed.value}"
            result = await session.call_tool(NEW_EPISODE, {"query_id": "nope"})
            assert result.isError and _text(result) == f"Error: {bad_query.value}"
            result = await session.call_tool(NEW_EPISODE, {"plan": "[]"})  # UTP-v0 has no trip to start
            assert result.isError and "unknown argument(s) ['plan']" in _text(result)
            await session.call_tool(NEW_EPISODE, {"seed": 1, "query_id": qids[0]})
            result = await session.call_tool("add_leg", {"day": "one"})
            assert result.isError and _text(result).startswith("Error: add_leg:")
            assert "\n" not in _text(result)
            result = await session.call_tool("submit", {})
            assert not result.isError and (result.structuredContent or {})["done"]
            result = await session.call_tool("view_plan", {})  # after the end: say so, and how to go on
            assert result.isError and _text(result).startswith("Error: the episode has ended")
            assert NEW_EPISODE in _text(result)

    asyncio.run(go())


def test_a_tool_before_new_episode_is_refused_and_the_defaults_start_the_episode(mini_db_path: Path,
                                                                                  qids: list[str]) -> None:
    """No episode is started behind the client's back: a tool called first is refused and changes
    nothing; `new_episode` without arguments then plays the server's default seed and query."""
    from utp_env.serve.session import EpisodeDefaults

    local = in_process(mini_db_path, qids[1], 3, [("view_plan", {}), ("submit", {})])

    async def go() -> None:
        factory = SessionFactory(db_path=mini_db_path, defaults=EpisodeDefaults(seed=3, query_id=qids[1]))
        async with create_connected_server_and_client_session(build_server(factory)) as session:
            refused = await session.call_tool("view_plan", {})
            assert refused.isError and _text(refused).startswith("Error: no episode is running in this session")
            assert NEW_EPISODE in _text(refused) and (refused.structuredContent or {})["refused"] == "NO_EPISODE"
            started = await session.call_tool(NEW_EPISODE, {})
            assert _text(started) == local[0][0]
            token = (started.structuredContent or {})["episode"]
            first = await session.call_tool("view_plan", {})
            last = await session.call_tool("submit", {})
            assert [_text(first), _text(last)] == local[0][1:]  # the refused call took no step
            assert (last.structuredContent or {})["reward"] == local[1]
            assert (first.structuredContent or {})["episode"] == (last.structuredContent or {})["episode"] == token

    asyncio.run(go())


def test_a_served_new_episode_on_a_missing_train_split_is_refused_at_once(mini_db_path: Path) -> None:
    from utp_env.serve.session import TRAIN_REFUSAL

    async def go() -> None:
        server = build_server(SessionFactory(db_path=mini_db_path, served=True))
        async with create_connected_server_and_client_session(server) as session:
            for arguments in ({"split": "train"}, {"query_id": "utp-train-00001"}):
                result = await session.call_tool(NEW_EPISODE, arguments)
                assert result.isError and _text(result) == f"Error: reset: {TRAIN_REFUSAL}"
            assert (await session.call_tool("view_plan", {})).isError  # and no episode was started

    asyncio.run(go())


def test_stdio_server_lists_and_plays(mini_db_path: Path, qids: list[str]) -> None:
    """The real command: `utp-env serve --mcp stdio` spawned as a subprocess by the mcp client."""
    calls = scripted_calls(mini_db_path, qids[2])
    local = in_process(mini_db_path, qids[2], 11, calls)

    async def go() -> None:
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "utp_env", "serve", "--mcp", "stdio", "--db", str(mini_db_path)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            assert NEW_EPISODE in names and "submit" in names and "search_flights" in names
            assert_same_episode(await play(session, 11, qids[2], calls), local)

    asyncio.run(go())


@asynccontextmanager
async def http_session(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_http_sessions_are_separate_episodes(mini_db_path: Path, qids: list[str]) -> None:
    """Streamable HTTP: two concurrent sessions play different episodes, each equal to its in-process
    twin, while a third client opens a session, changes its plan and drops the connection."""
    episodes = [(qids[0], 5), (qids[1], 6)]
    scripts = [scripted_calls(mini_db_path, q) for q, _ in episodes]
    local = [in_process(mini_db_path, q, s, c) for (q, s), c in zip(episodes, scripts, strict=True)]

    async def dropped(url: str) -> None:
        async with http_session(url) as session:
            await session.call_tool(NEW_EPISODE, {"seed": 0, "query_id": qids[0]})
            await session.call_tool("set_stay", {"name": "x", "city": "y", "from_day": 1, "to_day": 1})

    async def go(url: str) -> None:
        async def one(i: int) -> tuple[list[str], float, dict[str, Any]]:
            async with http_session(url) as session:
                (q, s), calls = episodes[i], scripts[i]
                return await play(session, s, q, calls)

        results = await asyncio.gather(one(0), dropped(url), one(1))
        assert_same_episode(results[0], local[0])
        assert_same_episode(results[2], local[1])

    with served("--mcp", "http", "--db", str(mini_db_path)) as url:
        assert url.endswith("/mcp")
        asyncio.run(go(url))


@pytest.mark.parametrize(("argv", "message"), [
    (["--port", "70000"], "--port must be 0..65535"),
    (["--seed", "-2"], "--seed must be a non-negative integer"),
    (["--session-timeout", "0"], "--session-timeout must be a positive number"),
    (["--max-sessions", "0"], "--max-sessions must be at least 1"),
    (["--workers", "2"], "--workers: --mcp stdio serves one session"),
    (["--token", "short"], "--token must be at least 16 characters"),
    (["--max-message-bytes", "10"], "--max-message-bytes must be at least 1024"),
    (["--request-timeout", "-1"], "--request-timeout must be a positive number of seconds"),
    (["--token", "0123456789abcdefgh", "--token-file", "/x"], "--token and --token-file: give one of them"),
    (["--config", "/nonexistent/env.yaml"], "--config: file '/nonexistent/env.yaml' does not exist"),
])
def test_bad_options_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--mcp", "stdio", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("utp-env serve: error: ") and message in err and "\n" not in err


def test_mcp_over_http_refuses_workers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--mcp", "http", "--workers", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("utp-env serve: error: --workers: an MCP session lives in one process") and "\n" not in err


def test_an_unknown_default_query_is_one_line_before_serving(mini_db_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--mcp", "stdio", "--db", str(mini_db_path), "--query-id", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("utp-env serve: error: reset: options['query_id']: no query with query_id 'nope' in this "
                   "database's query set")


def test_the_episode_resource_follows_the_episode(mini_db_path: Path, qids: list[str]) -> None:
    local = in_process(mini_db_path, qids[0], 2, [("view_plan", {}), ("submit", {})])

    async def go() -> None:
        async with create_connected_server_and_client_session(build_server(SessionFactory(db_path=mini_db_path))) \
                as session:
            async def episode() -> dict[str, Any]:
                return dict(json.loads((await session.read_resource("utp://episode")).contents[0].text))  # type: ignore[union-attr]

            assert [str(r.uri) for r in (await session.list_resources()).resources] == ["utp://episode"]
            assert await episode() == {"started": False, "done": False, "reward": 0.0}
            await session.call_tool(NEW_EPISODE, {"seed": 2, "query_id": qids[0]})
            await session.call_tool("view_plan", {})
            assert (await episode())["steps"] == 1 and not (await episode())["done"]
            await session.call_tool("submit", {})
            final = await episode()
            assert final["done"] and final["reward"] == local[1] and final["termination_reason"] == "submitted"
            assert final["report"] == json.loads(json.dumps(local[2]["report"]))
            with pytest.raises(Exception, match="unknown resource 'utp://nope'"):
                await session.read_resource("utp://nope")  # type: ignore[arg-type]

    asyncio.run(go())


def test_a_missing_serve_extra_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if the serve extra were not installed
    assert main(["serve", "--mcp", "stdio"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("utp-env serve: error: needs the serve extra (") and "pip install 'utp-env[serve]'" in err
    assert "\n" not in err
