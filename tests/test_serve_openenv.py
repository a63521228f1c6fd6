"""`utp-env serve` (OpenEnv): sessions over WebSocket driven by the OpenEnv client, on 127.0.0.1.

Each served episode is compared with its in-process twin (tests/serve_script.py): same task text, same
answers (errors included), same reward; 20 concurrent sessions each finish with their twin's reward
while another client drops its connection mid-episode.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import websockets
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction
from serve_process import openenv_server
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
