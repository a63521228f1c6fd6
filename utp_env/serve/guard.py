"""Who may talk to a server, and how much: the token, Host and Origin checks and the size limit (docs/SERVE.md).

One `AccessPolicy` per server, applied by `Guard` (ASGI middleware) in front of every route of both
apps (OpenEnv and MCP over HTTP) before a request reaches them:

- **Host.** A server bound to a loopback address answers only requests whose `Host` names a loopback
  host (`127.0.0.1`, `localhost`, `::1`) or one of `--allow-host`: a web page that rebinds its own
  DNS name to 127.0.0.1 (DNS rebinding) is refused with 421. A server bound to another address
  answers any Host unless `--allow-host` names some (it needs the token instead: below).
- **Origin.** Browsers send `Origin` on WebSocket handshakes and cross-site requests; scripts and
  trainers do not. A request with an `Origin` that is not in `--allow-origin` is refused with 403,
  so no web page can play, hold or flood sessions (a CORS "simple" POST included).
- **Token.** With a token (`--token`, `--token-file`; generated and printed when the server binds
  anything but loopback), every request but `GET /health` must carry `Authorization: Bearer TOKEN`;
  else 401. The comparison takes the same time whatever the guess (`hmac.compare_digest`).
- **Size.** A request body over `max_message_bytes` is refused with 413 before the app reads it (the
  body is read here, counted, and handed on whole). WebSocket messages have the same limit in the
  OpenEnv app (answered with an error, the session kept) and four times it at the protocol, where an
  even bigger frame closes the connection with 1009.

A WebSocket handshake that is refused gets a plain HTTP answer (401, 403, 421) with a one-line
reason, never an accepted socket. MCP's own transport security (`TransportSecuritySettings`) is set
from the same policy (`mcp_security`), so the MCP route checks Host and Origin twice, by the same lists.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: `utp-env --help` builds this module's flags without the serve extra
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
"""The Host names a loopback-bound server answers to by default."""

DEFAULT_MAX_MESSAGE_BYTES = 4 * 2**20
"""A request body or a WebSocket message at most (4 MiB, MCP's own default): a whole plan is a few KB."""

DRAIN_FACTOR = 4
"""A body over the limit is read and dropped up to this many times the limit (see `Guard._read_body`)."""

OPEN_PATHS = frozenset({"/health"})
"""Paths answered without the token (a load balancer's probe; it tells nothing about episodes)."""

BODILESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) is a loopback address."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe text)."""
    return secrets.token_urlsafe(32)


def read_token_file(path: Path) -> str:
    """The token in `path` (its first line, stripped); a one-line `ValueError` naming the file otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--token-file: cannot read {str(path)!r} ({exc.strerror or exc})") from None
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if len(token) < 16:
        raise ValueError(f"--token-file: {str(path)!r} holds no token of at least 16 characters on its first line")
    return token


def host_name(header: str) -> str:
    """The host of a `Host` header value, without the port, lower case (`[::1]:8000` -> `::1`)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@dataclass(frozen=True)
class AccessPolicy:
    """The checks of one server (module docstring).

    Args:
        token: The bearer token every request but `/health` must carry; None: no token asked.
        hosts: Host names (no port) the server answers to; None: any.
        origins: Origins (`scheme://host[:port]`) a browser request may come from.
        max_message_bytes: The largest request body and WebSocket message.
    """

    token: str | None = None
    hosts: frozenset[str] | None = frozenset(LOOPBACK_NAMES)
    origins: frozenset[str] = frozenset()
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES

    @classmethod
    def for_address(cls, host: str, token: str | None = None, allow_hosts: Iterable[str] = (),
                    allow_origins: Iterable[str] = (), max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                    ) -> AccessPolicy:
        """The policy of a server bound to `host`: loopback names plus `allow_hosts` on loopback; on
        another address `allow_hosts` if any are given, else any Host."""
        extra = frozenset(h.strip().lower() for h in allow_hosts)
        hosts = frozenset(LOOPBACK_NAMES) | extra if is_loopback(host) else (extra or None)
        origins = frozenset(o.strip().rstrip("/").lower() for o in allow_origins)
        return cls(token=token, hosts=hosts, origins=origins, max_message_bytes=max_message_bytes)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(HTTP status, one-line reason) when the request of `scope` is refused; None when it may go on."""
        headers = _headers(scope)
        if self.hosts is not None:
            host = headers.get("host", "")
            if host_name(host) not in self.hosts:
                return 421, (f"Host {host!r} is not a name this server answers to ({', '.join(sorted(self.hosts))}); "
                             "start it with --allow-host NAME to add one")
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.origins:
            return 403, (f"Origin {origin!r} is not allowed (a web page may not use this server); start it with "
                         "--allow-origin ORIGIN to allow one")
        if self.token is not None and scope.get("path") not in OPEN_PATHS:
            given = headers.get("authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self.token.encode()):
                return 401, ("a token is required: send the header 'Authorization: Bearer TOKEN' with the token the "
                             "server printed (or its --token / --token-file)")
        return None

    def mcp_security(self) -> Any:
        """MCP's `TransportSecuritySettings` with this policy's hosts and origins (DNS-rebinding
        protection on whenever the hosts are limited)."""
        from mcp.server.transport_security import TransportSecuritySettings

        if self.hosts is None:
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        hosts = [f"[{h}]" if ":" in h else h for h in sorted(self.hosts)]
        return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=[*hosts, *(f"{h}:*" for h in hosts)],
                                         allowed_origins=sorted(self.origins))


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


class Guard:
    """ASGI middleware applying an `AccessPolicy` to every HTTP request and WebSocket handshake."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.policy.refusal(scope)
        if refused is not None:
            await _refuse(scope, send, *refused)
            return
        if scope["type"] == "http" and scope.get("method") not in BODILESS_METHODS:
            try:
                body = await self._read_body(scope, receive)
            except _ClientGone:
                return  # nothing to answer, and nothing half-read reaches the app
            if body is None:
                await _refuse(scope, send, 413, f"the request body is over {self.policy.max_message_bytes:,} bytes, "
                              "the most this server reads (--max-message-bytes)")
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole request body, or None once it passes the limit (by `Content-Length` or by count).
        A body over the limit is read on and dropped up to `DRAIN_FACTOR` times the limit, so that the
        client, still sending, reads the 413 instead of a reset connection; a bigger one is not read."""
        limit = self.policy.max_message_bytes
        length = _headers(scope).get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > DRAIN_FACTOR * limit:
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size <= limit:
                chunks.append(chunk)
            elif size > DRAIN_FACTOR * limit or not message.get("more_body", False):
                return None
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


class _ClientGone(Exception):
    """The client disconnected (or was cut off by the request timeout) before its body was whole."""


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` as one message, then whatever the connection says next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _refuse(scope: Scope, send: Send, status: int, reason: str) -> None:
    """Answer `status` with `reason` as text: an HTTP response, or for a WebSocket handshake the HTTP
    answer the ASGI server sends instead of accepting (its `websocket.http.response` extension)."""
    body = (reason + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": [*headers, (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
        return
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
