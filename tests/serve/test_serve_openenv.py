"""`utp-env serve` (OpenEnv): sessions over WebSocket driven by the OpenEnv client, on 127.0.0.1.

Each served episode is compared with its in-process twin (tests/support/serve_script.py): same task text, same
answers (errors included), same reward; 20 concurrent sessions each finish with their twin's reward
while another client drops its connection mid-episode.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
import websockets
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction
from serve_process import openenv_server, server_process
from serve_script import in_process, query_ids, scripted_calls

from utp_env.env.core import UTPEnv
from utp_env.serve.openenv_client import UTPEnvClient


async def play(url: str, seed: int, query_id: str, calls: list[tuple[str, dict[str, Any]]],
               ) -> tuple[list[str], float, dict[str, Any]]:
    """Play `calls` in one OpenEnv session: (task text and answers, reward, final metadata)."""
    async with UTPEnvClient(base_url=url) as env:
        result = await env.reset(seed=seed, query_id=query_id)
        transcript = [result.observation.text]
        for name, args in calls:
            result = await env.step(CallToolAction(tool_name=name, arguments=args))
            transcript.append(result.observation.text)
            if result.done:
                state = await env.state()
                assert state.done and state.query_id == query_id and state.seed == seed
                return transcript, float(result.reward), result.observation.metadata
    raise AssertionError("the served episode did not end")


Episode = tuple[list[str], float, dict[str, Any]]


def assert_same(served: Episode, local: Episode) -> None:
    assert served[0] == local[0]
    assert served[1] == local[1]
    assert served[2]["termination_reason"] == local[2]["termination_reason"]
    assert served[2]["metrics"] == json.loads(json.dumps(local[2]["metrics"]))


@pytest.fixture(scope="module")
def qids(mini_db_path: Path) -> list[str]:
    return query_ids(mini_db_path, 20)


def test_concurrent_sessions_match_their_in_process_twins(mini_db_path: Path, qids: list[str]) -> None:
    """20 concurrent sessions, each its own query and seed, beside a client that drops its connection."""
    episodes = [(q, 100 + i) for i, q in enumerate(qids)]
    scripts = [scripted_calls(mini_db_path, q) for q, _ in episodes]
    local = [in_process(mini_db_path, q, s, c) for (q, s), c in zip(episodes, scripts, strict=True)]
    assert sum(r > 0 for _, r, _ in local) == len(local)

    async def dropped(url: str) -> None:
        ws = await websockets.connect(url.replace("http://", "ws://") + "/ws")
        await ws.send(json.dumps({"type": "reset", "data": {"seed": 0, "query_id": qids[0]}}))
        await ws.recv()
        await ws.send(json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "view_plan",
                                                           "arguments": {}}}))
        ws.transport.abort()  # gone without a close message

    async def go(url: str) -> list[Any]:
        return await asyncio.gather(dropped(url), *(play(url, s, q, c)
                                                     for (q, s), c in zip(episodes, scripts, strict=True)))

    with openenv_server("--db", str(mini_db_path)) as url:
        served = asyncio.run(go(url))[1:]
        for one, twin in zip(served, local, strict=True):
            assert_same(one, twin)
        # the server is still whole afterwards: one more session plays the first episode again
        assert_same(asyncio.run(play(url, episodes[0][1], episodes[0][0], scripts[0])), local[0])


def test_closed_loop_episode_matches_and_bad_input_is_one_line(mini_db_path: Path, qids: list[str]) -> None:
    calls = scripted_calls(mini_db_path, qids[0], replan=True)
    local = in_process(mini_db_path, qids[0], 9, calls, env="UTP-Replan-v0")
    env = UTPEnv(db_path=mini_db_path)
    with pytest.raises(ValueError) as bad_seed:
        env.reset(seed=-1)

    async def bad(url: str) -> None:
        async with UTPEnvClient(base_url=url) as client:
            with pytest.raises(RuntimeError) as error:
                await client.reset(seed=-1)
            assert str(bad_seed.value) in str(error.value) and "\n" not in str(error.value)
            with pytest.raises(RuntimeError, match=r"reset: unknown argument\(s\) \['stochastic'\]"):
                await client.reset(stochastic=True)  # the closed loop takes no stochastic
            result = await client.reset(seed=9, query_id=qids[0])
            assert result.observation.metadata["query_id"] == qids[0] and "tools" not in result.observation.metadata
            listed = await client.step(ListToolsAction())
            assert "continue_trip" in [t.name for t in listed.observation.tools]

    with openenv_server("--db", str(mini_db_path), "--env", "UTP-Replan-v0") as url:
        assert_same(asyncio.run(play(url, 9, qids[0], calls)), local)
        asyncio.run(bad(url))


def test_sessions_beyond_the_limit_are_refused(mini_db_path: Path, qids: list[str]) -> None:
    async def go(url: str) -> None:
        async with UTPEnvClient(base_url=url) as first:
            await first.reset(seed=0, query_id=qids[0])
            async with UTPEnvClient(base_url=url) as second:
                with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                    await second.reset(seed=0, query_id=qids[0])
            result = await first.step(CallToolAction(tool_name="view_plan", arguments={}))
            assert result.observation.ok  # the refused one took nothing from the held one

    with openenv_server("--db", str(mini_db_path), "--max-sessions", "1") as url:
        asyncio.run(go(url))


# ---------------------------------------------------------------- sessions that hold


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


async def send(ws: Any, message: Any) -> dict[str, Any]:
    """Send one frame (text as given, or JSON of anything else) and read the answer."""
    await ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
    answer: dict[str, Any] = json.loads(await ws.recv())
    return answer


def step_message(tool: str, args: dict[str, Any] | None = None, episode: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"type": "call_tool", "tool_name": tool, "arguments": args or {}}
    if episode is not None:
        data["metadata"] = {"episode": episode}
    return {"type": "step", "data": data}


def test_after_a_restart_the_client_raises_and_never_plays_another_episode(mini_db_path: Path,
                                                                           qids: list[str]) -> None:
    """Reset, kill the server, start it again on the same port: the client's next step raises
    `EpisodeLostError` (nothing sent), the TRL remote env raises on its next tool and on `get_reward` and
    records nothing; a step naming the old episode over a fresh session is refused and applies nothing."""
    from utp_env.rl.remote import remote_env_class
    from utp_env.serve.openenv_client import EpisodeLostError

    with server_process("--db", str(mini_db_path)) as first:
        port, url = first.port, first.url
        client = UTPEnvClient(base_url=url).sync()
        client.connect()
        started = client.reset(seed=0, query_id=qids[0])
        token = started.observation.metadata["episode"]
        assert client.step(CallToolAction(tool_name="view_plan", arguments={})).observation.ok
        remote_class = remote_env_class(url)
        remote = remote_class()
        remote.reset(query_id=qids[1], seed=1)
        assert remote.view_plan().startswith("The plan is empty")  # type: ignore[attr-defined]
        first.kill()
    with server_process("--db", str(mini_db_path), "--port", str(port)):
        with pytest.raises(EpisodeLostError, match=f"episode {token} of query {qids[0]} is gone"):
            client.step(CallToolAction(tool_name="submit", arguments={}))
        with pytest.raises(EpisodeLostError, match=f"of query {qids[1]} is gone"):
            remote.view_plan()  # type: ignore[attr-defined]
        with pytest.raises(EpisodeLostError):
            remote.get_reward()
        assert remote_class.episodes == []  # no rollout is scored on an episode it did not play

        async def stale() -> None:
            async with websockets.connect(ws_url(url)) as ws:
                for named in (token, None):
                    answer = await send(ws, step_message("submit", episode=named))
                    assert answer["type"] == "error" and answer["data"]["code"] == "NO_EPISODE"
                    assert "no episode is running in this session; call reset" in answer["data"]["message"]
                state = await send(ws, {"type": "state"})
                assert state["data"]["episode_id"] is None and state["data"]["step_count"] == 0

        asyncio.run(stale())
        again = client.reset(seed=0, query_id=qids[0])  # a new reset plays on, on a new session
        assert again.observation.text == started.observation.text and again.observation.metadata["episode"] != token
        assert client.step(CallToolAction(tool_name="view_plan", arguments={})).observation.ok
        client.close()
        remote._close()


def test_idle_sessions_are_closed_with_a_code_and_their_slots_freed(mini_db_path: Path, qids: list[str]) -> None:
    """`--max-sessions 3 --session-timeout 1`: an idle session's socket is closed (4000, a reason), its
    client's next step raises, and never more than three sessions are held."""
    from utp_env.rl.remote import remote_env_class
    from utp_env.serve.openenv_client import EpisodeLostError
    from utp_env.serve.openenv_server import IDLE_CLOSE_CODE

    async def idle(url: str) -> None:
        sockets = [await websockets.connect(ws_url(url)) for _ in range(3)]
        for k, ws in enumerate(sockets):
            started = await send(ws, {"type": "reset", "data": {"seed": k, "query_id": qids[0]}})
            assert started["type"] == "observation"
        for ws in sockets:  # the server closes each one itself
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 60)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == IDLE_CLOSE_CODE
            assert "idle for more than 1 s" in closed.value.rcvd.reason

    with server_process("--db", str(mini_db_path), "--max-sessions", "3", "--max-client-sessions", "3",
                        "--session-timeout", "1") as server:
        asyncio.run(idle(server.url))
        client = UTPEnvClient(base_url=server.url).sync()
        client.connect()
        client.reset(seed=0, query_id=qids[0])
        remote = remote_env_class(server.url)()
        remote.reset(query_id=qids[1], seed=0)
        for _ in range(600):
            if _health(server.url)["sessions"] == 0:
                break
            time.sleep(0.1)
        assert _health(server.url)["sessions"] == 0
        with pytest.raises(EpisodeLostError, match=f"code {IDLE_CLOSE_CODE}: idle for more than 1 s"):
            client.step(CallToolAction(tool_name="view_plan", arguments={}))
        with pytest.raises(EpisodeLostError):
            remote.get_reward()  # never a reward of 0.0 with no reason
        client.close()
        remote._close()


def _health(url: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(url + "/health", timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


MALFORMED = [
    ("a JSON array", json.dumps([{"type": "step"}]), "INVALID_MESSAGE"),
    ("a JSON number", "42", "INVALID_MESSAGE"),
    ("JSON null", "null", "INVALID_MESSAGE"),
    ("a binary frame", b'{"type": "state"}', "INVALID_JSON"),
    ("a 5,000-digit integer", '{"type": "step", "data": ' + "9" * 5000 + "}", "INVALID_JSON"),
    ("nesting 5,000 deep", '{"type": "step", "data": ' + "[" * 5000 + "]" * 5000 + "}", "INVALID_JSON"),
    ("not JSON", "{type: step", "INVALID_JSON"),
    ("an unknown type", json.dumps({"type": "dance"}), "UNKNOWN_TYPE"),
    ("data that is not an object", json.dumps({"type": "step", "data": [1]}), "VALIDATION_ERROR"),
    ("an action without a tool name", json.dumps({"type": "step", "data": {"type": "call_tool"}}), "VALIDATION_ERROR"),
    ("an unknown action", json.dumps({"type": "step", "data": {"type": "fly"}}), "VALIDATION_ERROR"),
    ("an MCP message", json.dumps({"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                           "params": {"name": "submit", "arguments": {}}}}),
     "UNKNOWN_TYPE"),
]


def test_every_malformed_frame_is_answered_and_the_episode_kept(mini_db_path: Path, qids: list[str]) -> None:
    """Each malformed frame gets an error naming what is wrong; the session, its episode and its step
    count are untouched (the MCP-shaped `submit` included: it ends nothing); a message over
    --max-message-bytes is refused the same way, and a frame over four times that closes with 1009."""
    local = in_process(mini_db_path, qids[0], 4, [("view_plan", {}), ("submit", {})])

    async def go(url: str) -> None:
        async with websockets.connect(ws_url(url), max_size=None) as ws:
            started = await send(ws, {"type": "reset", "data": {"seed": 4, "query_id": qids[0]}})
            token = started["data"]["metadata"]["episode"]
            for what, frame, code in MALFORMED:
                answer = await send(ws, frame)
                assert answer["type"] == "error" and answer["data"]["code"] == code, what
                assert "\n" not in answer["data"]["message"] and len(answer["data"]["message"]) < 400, what
            big = json.dumps(step_message("view_plan", {"pad": "x" * 12_001}))
            answer = await send(ws, big)
            assert answer["data"]["code"] == "MESSAGE_TOO_LARGE" and "--max-message-bytes" in answer["data"]["message"]
            state = await send(ws, {"type": "state"})
            assert state["data"]["episode"] == token and state["data"]["step_count"] == 0 and not state["data"]["done"]
            first = await send(ws, step_message("view_plan", episode=token))
            last = await send(ws, step_message("submit", episode=token))
            assert [first["data"]["observation"]["text"], last["data"]["observation"]["text"]] == local[0][1:]
            assert last["data"]["reward"] == local[1] and last["data"]["done"]
            retried = await send(ws, step_message("submit", episode=token))  # a lost answer, asked again
            assert retried["data"]["reward"] == local[1] and retried["data"]["observation"]["metadata"]["refused"]
        async with websockets.connect(ws_url(url), max_size=None) as ws:
            await ws.send("x" * (4 * 12_000 + 1))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009

    with openenv_server("--db", str(mini_db_path), "--max-message-bytes", "12000") as url:
        asyncio.run(go(url))


def test_no_http_route_makes_or_steps_a_session(mini_db_path: Path, qids: list[str]) -> None:
    """OpenEnv's HTTP session routes are not served: `openenv/session/create` over `POST /mcp`, `/reset`,
    `/step` and `/state` answer 404 and hold nothing; a `tools/call` over `POST /mcp` steps no session."""
    import urllib.error
    import urllib.request

    def post(url: str, body: dict[str, Any]) -> tuple[int, str]:
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    async def held_session(url: str) -> None:
        async with websockets.connect(ws_url(url)) as ws:
            await send(ws, {"type": "reset", "data": {"seed": 0, "query_id": qids[0]}})
            for _ in range(50):
                status, text = post(url + "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create",
                                                   "params": {}})
                assert status == 404 and "not served" in text
            status, _ = post(url + "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                            "params": {"name": "submit", "arguments": {}}})
            for route in ("/reset", "/step", "/state"):
                assert post(url + route, {})[0] == 404
            assert _health(url)["sessions"] == 1  # only the WebSocket's
            state = await send(ws, {"type": "state"})
            assert state["data"]["step_count"] == 0 and not state["data"]["done"]

    with openenv_server("--db", str(mini_db_path)) as url:
        asyncio.run(held_session(url))
        schema = json.loads(urllib.request.urlopen(url + "/schema", timeout=30).read())
        assert {"action", "observation", "state"} <= set(schema)


def test_a_missing_train_split_is_refused_at_once_and_a_long_step_holds_no_one(mini_db_path: Path,
                                                                                qids: list[str],
                                                                                tmp_path: Path) -> None:
    """On a database without a train split, `reset(split="train")` is refused at once with the command
    that builds it (nothing is built). A session whose submit runs a long Monte Carlo evaluation holds
    neither `/health` nor another session's steps: they are answered before it."""
    import shutil

    from utp_env.env.config import open_database, reference_plan
    from utp_env.plan_format import format_plan
    from utp_env.train_split import TRAIN_QUERIES_FILE

    db = tmp_path / "db"
    shutil.copytree(mini_db_path, db)
    config = tmp_path / "slow.yaml"
    config.write_text("robustness: true\nrobustness_rollouts: 3000000\n")
    plan = reference_plan(open_database(mini_db_path), qids[0])
    assert plan is not None
    finished: list[str] = []

    async def slow(url: str) -> None:
        async with UTPEnvClient(base_url=url, message_timeout_s=600) as env:
            await env.reset(seed=0, query_id=qids[0])
            result = await env.step(CallToolAction(tool_name="submit_plan",
                                                   arguments={"plan": json.dumps(format_plan(plan))}))
            assert result.done and result.observation.metadata["robustness"] is not None
            finished.append("slow submit")

    async def others(url: str) -> None:
        await asyncio.sleep(0.3)  # the slow submit is under way
        async with UTPEnvClient(base_url=url) as env:
            with pytest.raises(RuntimeError) as refused:
                await env.reset(split="train")
            assert "utp-env serve --split train" in str(refused.value)
            with pytest.raises(RuntimeError, match="utp-env data build"):
                await env.reset(query_id="utp-train-00001")
            await env.reset(seed=1, query_id=qids[1])
            for _ in range(3):
                assert (await env.step(CallToolAction(tool_name="view_plan", arguments={}))).observation.ok
            assert (await asyncio.to_thread(_health, url))["status"] == "healthy"
            finished.append("other session")

    async def go(url: str) -> None:
        await asyncio.gather(slow(url), others(url))

    with openenv_server("--db", str(db), "--config", str(config)) as url:
        asyncio.run(go(url))
    assert finished == ["other session", "slow submit"]
    assert not (db / TRAIN_QUERIES_FILE).exists()
