"""`utp-env serve --workers N` behind one address, and the remote env's pool of servers (on 127.0.0.1).

Two workers share the port (SO_REUSEPORT): both answer, sessions on both play their in-process twins,
and when one worker is killed its sessions' clients get `EpisodeLostError` (the others play on) and the
worker is started again. `remote_env_class` with several URLs gives its instances to them in turn,
skipping a server that does not answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from openenv.core.env_server.mcp_types import CallToolAction
from serve_process import openenv_server, server_process
from serve_script import in_process, query_ids, scripted_calls

from utp_env.rl.env import rl_env_class
from utp_env.rl.remote import remote_env_class
from utp_env.serve.openenv_client import EpisodeLostError, UTPEnvClient


def health(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/health", timeout=30) as response:  # a new connection each time
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_two_workers_serve_one_address_and_a_lost_worker_is_a_clear_error(mini_db_path: Path) -> None:
    qids = query_ids(mini_db_path, 4)
    n = 20
    episodes = [(qids[i % len(qids)], 50 + i) for i in range(n)]
    scripts = {q: scripted_calls(mini_db_path, q) for q in qids}
    local = [in_process(mini_db_path, q, s, scripts[q]) for q, s in episodes]

    async def play_all(url: str) -> list[float]:
        async def one(q: str, seed: int) -> float:
            async with UTPEnvClient(base_url=url) as env:
                await env.reset(seed=seed, query_id=q)
                for name, args in scripts[q]:
                    result = await env.step(CallToolAction(tool_name=name, arguments=args))
                    if result.done:
                        return float(result.reward)
            raise AssertionError("the served episode did not end")

        return list(await asyncio.gather(*(one(q, s) for q, s in episodes)))

    async def hold_then_lose(url: str, victim: int) -> tuple[int, int]:
        clients = [UTPEnvClient(base_url=url) for _ in range(n)]
        for client, (q, s) in zip(clients, episodes, strict=True):
            await client.connect()
            await client.reset(seed=s, query_id=q)
        os.kill(victim, signal.SIGKILL)
        await asyncio.sleep(1.0)  # the dead worker's sockets are closed by the kernel
        lost = kept = 0
        for client in clients:
            try:
                assert (await client.step(CallToolAction(tool_name="view_plan", arguments={}))).observation.ok
                kept += 1
            except EpisodeLostError as exc:
                assert "is gone" in str(exc)
                lost += 1
            await client.close()
        return lost, kept

    with server_process("--db", str(mini_db_path), "--workers", "2", banner="(2 workers)") as server:
        assert {health(server.url)["worker"] for _ in range(40)} == {0, 1}
        assert asyncio.run(play_all(server.url)) == [r for _, r, _ in local]
        workers = children(server.proc.pid)
        assert len(workers) == 2
        lost, kept = asyncio.run(hold_then_lose(server.url, workers[0]))
        assert lost > 0 and kept > 0 and lost + kept == n
        for _ in range(600):  # the supervisor starts the worker again
            if len(children(server.proc.pid)) == 2 and {health(server.url)["worker"] for _ in range(20)} == {0, 1}:
                break
            time.sleep(0.1)
        assert len(children(server.proc.pid)) == 2 and workers[0] not in children(server.proc.pid)
    assert server.proc.returncode is not None


def test_the_remote_env_takes_several_servers_in_turn(mini_db_path: Path) -> None:
    qids = query_ids(mini_db_path, 2)
    local_class = rl_env_class(db_path=mini_db_path)
    with openenv_server("--db", str(mini_db_path)) as a, openenv_server("--db", str(mini_db_path)) as b:
        remote_class = remote_env_class([a, "http://127.0.0.1:9", b])  # nothing listens on port 9
        envs = [remote_class() for _ in range(4)]
        assert health(a)["sessions"] > 0 and health(b)["sessions"] > 0
        assert health(a)["sessions"] + health(b)["sessions"] == 4
        for k, env in enumerate(envs):
            twin = local_class()
            row = {"query_id": qids[k % 2], "seed": k}
            assert env.reset(**row) == twin.reset(**row)
            assert env.submit() == twin.submit()  # type: ignore[attr-defined]
            assert env.get_reward() == twin.get_reward()
            env._close()
    with pytest.raises(ConnectionError, match="no server answered"):
        remote_env_class(["http://127.0.0.1:9"])()


@pytest.mark.parametrize(("urls", "message"), [
    ([], "no server URL given"),
    (["http://127.0.0.1:8000", "localhost:8001"], "'localhost:8001' is not a URL"),
])
def test_a_bad_server_list_is_one_line(urls: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        remote_env_class(urls)
