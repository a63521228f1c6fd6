"""Who may talk to `utp-env serve`, and how much (utp_env/serve/guard.py, utp_env/serve/listen.py).

Each attack fed to a real server on 127.0.0.1: a token checked on the WebSocket, on HTTP
and on MCP; a foreign Origin and a foreign Host refused (OpenEnv and MCP); a big body refused with 413
before it is read; slow headers (and silence) timed out; connections capped in total and per client;
sessions capped per client (OpenEnv and MCP). Accepted sockets have TCP_NODELAY. The policy, the frame
parser and the token rules are also tested in-process (Hypothesis for the parser).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from serve_process import served
from serve_script import query_ids

from utp_env.serve.guard import AccessPolicy, host_name, read_token_file
from utp_env.serve.listen import ConnectionLedger, ConnectionLimits, http_server, listening_socket
from utp_env.serve.openenv_server import parse_message

TOKEN = "t0k3n-for-the-tests-0123456789"


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


def scope(host: str = "127.0.0.1:8000", origin: str | None = None, token: str | None = None,
          path: str = "/ws") -> dict[str, Any]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return {"type": "websocket", "path": path, "headers": headers}


# ---------------------------------------------------------------- the policy, in-process


def test_the_policy_checks_host_origin_and_token() -> None:
    loopback = AccessPolicy.for_address("127.0.0.1")
    assert loopback.refusal(scope()) is None and loopback.refusal(scope("localhost")) is None
    assert loopback.refusal(scope("[::1]:9")) is None
    status, reason = loopback.refusal(scope("evil.example:8000")) or (0, "")
    assert status == 421 and "'evil.example:8000'" in reason and "--allow-host" in reason
    status, reason = loopback.refusal(scope(origin="http://evil.example")) or (0, "")
    assert status == 403 and "--allow-origin" in reason
    allowed = AccessPolicy.for_address("127.0.0.1", allow_hosts=["planner.lan"], allow_origins=["http://ok.example/"])
    assert allowed.refusal(scope("planner.lan:80", origin="http://OK.example")) is None
    exposed = AccessPolicy.for_address("0.0.0.0", token=TOKEN)
    assert exposed.hosts is None and exposed.refusal(scope("anything.example", token=TOKEN)) is None
    assert (exposed.refusal(scope("anything.example")) or (0,))[0] == 401
    assert (exposed.refusal(scope(token=TOKEN + "x")) or (0,))[0] == 401
    assert exposed.refusal(scope(path="/health")) is None  # the probe needs no token
    settings_ = loopback.mcp_security()
    assert settings_.enable_dns_rebinding_protection and "127.0.0.1:*" in settings_.allowed_hosts
    assert "[::1]:*" in settings_.allowed_hosts and settings_.allowed_origins == []
    assert not exposed.mcp_security().enable_dns_rebinding_protection  # any Host: the token guards it


def test_host_names_and_token_files(tmp_path: Path) -> None:
    assert [host_name(h) for h in ("LocalHost:80", "[::1]:8000", "::1", "10.0.0.1")] == \
        ["localhost", "::1", "::1", "10.0.0.1"]
    good, short, empty = tmp_path / "good", tmp_path / "short", tmp_path / "empty"
    good.write_text(f"  {TOKEN}  \nsecond line\n")
    short.write_text("abc\n")
    empty.write_text("")
    assert read_token_file(good) == TOKEN
    for bad in (short, empty):
        with pytest.raises(ValueError, match=f"--token-file: '{bad}' holds no token"):
            read_token_file(bad)
    with pytest.raises(ValueError, match="--token-file: cannot read"):
        read_token_file(tmp_path / "missing")


def test_a_token_is_generated_when_the_server_binds_beyond_loopback(tmp_path: Path) -> None:
    from utp_env.cli.serve import server_token

    def args(**kw: Any) -> argparse.Namespace:
        return argparse.Namespace(**{"host": "127.0.0.1", "token": None, "token_file": None, "mcp": None, **kw})

    assert server_token(args()) == (None, False)
    token, generated = server_token(args(host="0.0.0.0"))
    assert generated and token is not None and len(token) >= 32
    assert server_token(args(host="0.0.0.0"))[0] != token  # a fresh one each start
    assert server_token(args(host="0.0.0.0", mcp="stdio")) == (None, False)  # no network, no token
    file = tmp_path / "token"
    file.write_text(TOKEN)
    assert server_token(args(host="10.1.2.3", token_file=file)) == (TOKEN, False)
    assert server_token(args(host="::", token=TOKEN)) == (TOKEN, False)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=300), st.from_regex(r"[\[\]{}\"0-9a-z:,. -]{0,300}", fullmatch=True),
                 st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                           max_size=3),
                              max_leaves=20).map(json.dumps)))
def test_any_frame_is_a_message_or_a_one_line_refusal(text: str) -> None:
    try:
        message = parse_message(text, 10_000)
    except Exception as exc:
        assert type(exc).__name__ == "_BadMessage" and "\n" not in str(exc) and getattr(exc, "code", "")
    else:
        assert isinstance(message, dict)


def test_the_guard_hands_on_whole_bodies_only() -> None:
    """A body that stops half way (the client left, or the request timeout cut it) never reaches the app;
    a whole one reaches it whole, in one message; one over the limit is answered 413."""
    from utp_env.serve.guard import Guard

    seen: list[bytes] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def call(messages: list[dict[str, Any]], limit: int = 100) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return messages.pop(0)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"host", b"127.0.0.1")]}
        await Guard(app, AccessPolicy(max_message_bytes=limit))(scope, receive, send)  # type: ignore[arg-type]
        return sent

    cut = asyncio.run(call([{"type": "http.request", "body": b'{"a": 1}', "more_body": True},
                            {"type": "http.disconnect"}]))
    assert cut == [] and seen == []
    whole = asyncio.run(call([{"type": "http.request", "body": b'{"a": ', "more_body": True},
                              {"type": "http.request", "body": b"1}", "more_body": False}]))
    assert whole[0]["status"] == 200 and seen == [b'{"a": 1}']
    big = asyncio.run(call([{"type": "http.request", "body": b"x" * 101, "more_body": False}]))
    assert big[0]["status"] == 413 and seen == [b'{"a": 1}']


def test_a_flooding_client_leaves_room_for_the_others() -> None:
    """Sessions and connections are capped per client address before the totals: a client that takes
    its share is refused with a message naming the per-client flag, and another still gets in."""
    from utp_env.serve.session import SessionLimits

    sessions = SessionLimits(max_sessions=10, max_client_sessions=5)
    for _ in range(5):
        assert sessions.refusal("10.0.0.1") is None
        sessions.hold("10.0.0.1")
    assert "--max-client-sessions" in (sessions.refusal("10.0.0.1") or "")
    assert sessions.refusal("10.0.0.2") is None
    sessions.release("10.0.0.1")
    assert sessions.refusal("10.0.0.1") is None and sessions.held == 4

    class Transport:
        def __init__(self, host: str) -> None:
            self.host = host

        def get_extra_info(self, name: str) -> Any:
            return (self.host, 40000) if name == "peername" else None

    ledger = ConnectionLedger(ConnectionLimits(max_connections=6, max_client_connections=4))
    flood = [Transport("10.0.0.1") for _ in range(5)]
    answers = [ledger.admit(t) for t in flood]
    assert answers[:4] == [None] * 4 and "--max-client-connections" in (answers[4] or "")
    others = [Transport("10.0.0.2") for _ in range(3)]
    assert [ledger.admit(t) for t in others][:2] == [None, None]
    assert "--max-connections" in (ledger.admit(Transport("10.0.0.3")) or "")
    ledger.release(flood[0])
    ledger.release(flood[0])  # twice: nothing more
    assert ledger.admit(Transport("10.0.0.3")) is None and ledger.per_client["10.0.0.1"] == 3


# ---------------------------------------------------------------- TCP_NODELAY


def test_accepted_sockets_have_tcp_nodelay() -> None:
    """asyncio sets TCP_NODELAY on what it accepts only from a socket made with IPPROTO_TCP: the
    server's `listening_socket` gives it; a socket made with protocol 0 (as before) does not."""

    async def accepted_nodelay(sock: socket.socket) -> int:
        seen: list[int] = []

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                seen.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        while not seen:
            await asyncio.sleep(0.01)
        writer.close()
        server.close()
        return seen[0]

    assert asyncio.run(accepted_nodelay(listening_socket("127.0.0.1", 0))) == 1
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # what `listening_socket` made before
    plain.bind(("127.0.0.1", 0))
    plain.listen()
    assert asyncio.run(accepted_nodelay(plain)) == 0


def test_the_server_s_accepted_connections_have_tcp_nodelay() -> None:
    """The real stack (uvicorn with the guarded protocols on `listening_socket`): every connection in the
    ledger has TCP_NODELAY, so a kept-alive request is not held by Nagle's algorithm."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

    limits = ConnectionLimits()
    ledger = ConnectionLedger(limits)
    server = http_server(app, limits, ledger)
    server.config.lifespan = "off"
    sock = listening_socket("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}") as client:
            for _ in range(3):  # one kept-alive connection
                assert client.get("/").text == "ok"
            options = [t.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                       for t in list(ledger.open)]
        assert options == [1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)


# ---------------------------------------------------------------- a served OpenEnv server


def test_token_origin_and_host_on_the_openenv_server(mini_db_path: Path) -> None:
    from openenv.core.env_server.mcp_types import CallToolAction

    from utp_env.serve.openenv_client import UTPEnvClient

    qid = query_ids(mini_db_path, 1)[0]

    async def go(url: str) -> None:
        for headers, status in (({}, 401), ({"Authorization": "Bearer wrong"}, 401),
                                ({"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"}, 403)):
            with pytest.raises(websockets.InvalidStatus) as refused:
                await websockets.connect(ws_url(url), additional_headers=headers)
            assert refused.value.response.status_code == status
        port = int(url.rsplit(":", 1)[1])
        rebound = socket.create_connection(("127.0.0.1", port))  # DNS rebinding: a page's own name, our address
        rebound.sendall(b"GET /ws HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                        b"Authorization: Bearer " + TOKEN.encode() + b"\r\n\r\n")
        assert _read_until_closed(rebound).startswith(b"HTTP/1.1 421")
        async with websockets.connect(ws_url(url), origin="http://ok.example",  # type: ignore[arg-type]
                                      additional_headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
            await ws.send(json.dumps({"type": "state"}))
            assert json.loads(await ws.recv())["type"] == "state"
        with pytest.raises(ConnectionError, match="401"):
            await UTPEnvClient(base_url=url).connect()
        async with UTPEnvClient(base_url=url, token=TOKEN) as env:
            await env.reset(seed=0, query_id=qid)
            assert (await env.step(CallToolAction(tool_name="view_plan", arguments={}))).observation.ok

    with served("--db", str(mini_db_path), "--token", TOKEN, "--allow-origin", "http://ok.example") as url:
        asyncio.run(go(url))
        with httpx.Client(base_url=url) as http:
            assert http.get("/health").status_code == 200
            assert http.get("/schema").status_code == 401
            assert http.get("/schema", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
            simple = http.post("/mcp", content=b"{}", headers={"Origin": "http://evil.example",
                                                               "Content-Type": "text/plain"})
            assert simple.status_code == 403  # a CORS "simple" request from a web page


def test_big_bodies_slow_headers_and_too_many_connections_are_refused(mini_db_path: Path) -> None:
    """A body over the limit is refused with 413 (by its length, and counted when it has none); one far
    over it is not even read (413 or a closed connection); a client that sends
    half its headers, or nothing, is cut off after --request-timeout; connections over --max-connections
    get 503 and are closed, and the server answers again once they are gone."""
    with served("--db", str(mini_db_path), "--request-timeout", "1", "--max-connections", "6",
                "--max-client-connections", "6", "--max-message-bytes", "100000") as url:
        port = int(url.rsplit(":", 1)[1])
        with httpx.Client(base_url=url) as http:
            big = http.post("/mcp", content=b"x" * 300_000)
            assert big.status_code == 413 and "--max-message-bytes" in big.text
            streamed = http.post("/mcp", content=iter([b"x" * 60_000] * 3))  # chunked, no length
            assert streamed.status_code == 413
            with contextlib.suppress(httpx.TransportError):  # refused before it is read: maybe closed under the sender
                assert http.post("/mcp", content=b"x" * 50_000_000).status_code == 413
        slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        slow[0].sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
        for sock in slow:
            assert _read_until_closed(sock).startswith((b"HTTP/1.1 408", b""))
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
        extra = socket.create_connection(("127.0.0.1", port))
        answer = _read_until_closed(extra)
        assert answer.startswith(b"HTTP/1.1 503") and b"--max-connections" in answer
        for sock in held:
            sock.close()
        for _ in range(300):
            try:
                if httpx.get(url + "/health", timeout=10).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert httpx.get(url + "/health", timeout=10).json()["status"] == "healthy"


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (it must, within a minute)."""
    sock.settimeout(60)
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    sock.close()
    return b"".join(chunks)


def test_one_client_holds_only_its_share_of_sessions(mini_db_path: Path) -> None:
    async def go(url: str) -> None:
        first = [await websockets.connect(ws_url(url)) for _ in range(2)]
        third = await websockets.connect(ws_url(url))
        refused = json.loads(await third.recv())
        assert refused["data"]["code"] == "CAPACITY_REACHED" and "--max-client-sessions" in refused["data"]["message"]
        await first[0].close()
        for _ in range(100):  # the slot comes back once the socket is closed
            fourth = await websockets.connect(ws_url(url))
            await fourth.send(json.dumps({"type": "state"}))
            if json.loads(await fourth.recv())["type"] == "state":
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the freed slot was not given again")
        await fourth.close()
        await first[1].close()

    with served("--db", str(mini_db_path), "--max-sessions", "10", "--max-client-sessions", "2") as url:
        asyncio.run(go(url))


# ---------------------------------------------------------------- MCP over HTTP


@asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    async with httpx.AsyncClient(headers=headers or {}, timeout=60) as http, \
            streamable_http_client(url, http_client=http) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_mcp_over_http_checks_the_token_host_origin_and_caps_a_client(mini_db_path: Path) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "0"}}}
    mcp_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    async def go(url: str) -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            assert (await http.post(url, json=initialize, headers=mcp_headers)).status_code == 401
            for extra, status in (({"Host": "evil.example"}, 421), ({"Origin": "http://evil.example"}, 403)):
                answer = await http.post(url, json=initialize, headers={**mcp_headers, **auth, **extra})
                assert answer.status_code == status
            big = await http.post(url, content=b"x" * 5_000_000, headers={**mcp_headers, **auth})
            assert big.status_code == 413
        async with mcp_session(url, auth) as one, mcp_session(url, auth) as two:
            refused = await one.call_tool("view_plan", {})
            assert refused.isError and "call new_episode" in refused.content[0].text  # type: ignore[union-attr]
            assert not (await two.call_tool("new_episode", {"seed": 0})).isError
            async with httpx.AsyncClient(timeout=60) as http:
                third = await http.post(url, json=initialize, headers={**mcp_headers, **auth})
                assert third.status_code == 503 and "--max-client-sessions" in third.text
        for _ in range(100):  # both sessions were closed (DELETE): the client may open sessions again
            try:
                async with mcp_session(url, auth) as again:
                    assert not (await again.call_tool("new_episode", {"seed": 1})).isError
                break
            except Exception:
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("the client's sessions were not given back")

    with served("--mcp", "http", "--db", str(mini_db_path), "--token", TOKEN, "--max-client-sessions", "2") as url:
        asyncio.run(go(url))


def test_the_generated_token_is_printed_and_asked_for(mini_db_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`--host 0.0.0.0` without a token: the command prints a generated one after the banner, and the app it
    would serve asks for it (nothing is bound here: tests listen on 127.0.0.1 only)."""
    import utp_env.serve.listen
    from utp_env.cli import main

    apps: list[Any] = []

    def fake_serve(make_app: Any, host: str, port: int, workers: int, limits: Any, announce: Any) -> int:
        apps.append(make_app(0))
        announce(host, 8123)
        return 0

    monkeypatch.setattr(utp_env.serve.listen, "serve", fake_serve)
    assert main(["serve", "--host", "0.0.0.0", "--db", str(mini_db_path)]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-2].startswith("utp-env serve: OpenEnv utp_env/UTP-v0 on http://0.0.0.0:8123")
    token = lines[-1].split("'Authorization: Bearer ", 1)[1].split("'", 1)[0]
    assert len(token) >= 32 and "not loopback" in lines[-1]
    refusal = apps[0].policy.refusal(scope("203.0.113.9:8123"))
    assert refusal is not None and refusal[0] == 401
    assert apps[0].policy.refusal(scope("203.0.113.9:8123", token=token)) is None
