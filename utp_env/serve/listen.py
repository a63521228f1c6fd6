"""The sockets and the HTTP server under both apps: connection caps, request timeouts, workers (docs/SERVE.md).

- `listening_socket` makes the listening TCP socket with protocol `IPPROTO_TCP`: asyncio sets
  `TCP_NODELAY` on every connection it accepts only from such a socket (`base_events._set_nodelay`
  checks `sock.proto`). With protocol 0, Nagle's algorithm held the second small write of each
  HTTP response until the client's delayed ACK: about 42 ms per request on a kept-alive connection
  (MCP over HTTP is one request per call), against 1–4 ms on a new connection.
- `ConnectionLedger` counts the open TCP connections of a server process, in total and per client
  address; a connection over `--max-connections` or `--max-client-connections` is answered 503 and
  closed before anything is read. WebSocket sessions are connections too: the ledger releases one
  when its socket closes, not when its session ends.
- The HTTP protocol (`guarded_protocols`, uvicorn's h11 protocol with a deadline) closes a
  connection that has not sent a whole request (headers and body) within `--request-timeout`
  seconds of opening, or of its first byte after a kept-alive response: a client that sends its
  headers a byte at a time (or nothing) holds a socket that long, not forever. Between requests
  uvicorn's keep-alive timeout (5 s) applies; on a WebSocket, its ping (every 20 s, 20 s to answer)
  and the session reaper (utp_env/serve/openenv_server.py).
- `serve` runs an app on one process, or on `--workers N` processes behind one address: each worker
  binds its own socket to the same port with `SO_REUSEPORT`, so the kernel spreads new connections
  over the workers (by a hash of the client's address and port), and a session, which lives in one
  worker's memory, stays on its connection's worker. The workers are forked after the database is
  loaded (and frozen out of the garbage collector's sight), so its pages are shared until written;
  a worker that dies is started again, and its sessions' clients get a clear error (their episodes
  are gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from utp_env.serve.guard import DEFAULT_MAX_MESSAGE_BYTES

PROTOCOL_FRAME_FACTOR = 4
"""A WebSocket frame over this many times `--max-message-bytes` is closed at the protocol (1009); one
between the two limits is answered with an error by the app, and the session kept."""

WORKER_RESTART_PAUSE = 1.0
"""Seconds before a worker that died is started again (a worker that dies at once does not spin)."""

GC_THRESHOLDS = (10_000, 20, 20)
"""The cyclic garbage collector's thresholds in a serving process (Python's default: 700, 10, 10). An
episode allocates tens of thousands of objects (its plan, its evaluation), so at the default a server
ran a young collection every few calls and a full one (20-40 ms of CPU, every session waiting) every
few hundred: 0.1 ms of CPU per tool call in all (benchmarks/serve.py, 2,000 calls). At these
thresholds the collector costs about a quarter of that, its young collections take a few ms, and a
full one comes 60 times more rarely. Unreachable cycles wait at most 10,000 allocations longer."""


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits of one server process on its TCP connections and requests (module docstring)."""

    max_connections: int = 1064
    max_client_connections: int = 532
    request_timeout: float = 10.0
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES


class ConnectionLedger:
    """The open connections of one server process, by transport, in total and per client address."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open: dict[Any, str] = {}
        self.per_client: Counter[str] = Counter()

    def admit(self, transport: Any) -> str | None:
        """Count `transport` in; the reason it is refused instead (nothing counted) when over a cap."""
        peer = transport.get_extra_info("peername")
        client = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if len(self.open) >= self.limits.max_connections:
            return f"the server holds {len(self.open)} connections, its most (--max-connections)"
        if self.per_client[client] >= self.limits.max_client_connections:
            return (f"{client} holds {self.per_client[client]} connections, the most one client may "
                    "(--max-client-connections)")
        self.open[transport] = client
        self.per_client[client] += 1
        return None

    def release(self, transport: Any) -> None:
        """Count `transport` out (again: nothing)."""
        client = self.open.pop(transport, None)
        if client is not None:
            self.per_client[client] -= 1
            if self.per_client[client] <= 0:
                del self.per_client[client]


def _plain_response(status: str, text: str) -> bytes:
    body = (text + "\n").encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode() + body


def guarded_protocols(ledger: ConnectionLedger) -> tuple[type[asyncio.Protocol], type[asyncio.Protocol]]:
    """uvicorn's h11 HTTP protocol and sans-I/O WebSocket protocol, with the ledger's caps and the
    request deadline (module docstring)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    timeout = ledger.limits.request_timeout

    class GuardedWebSocketProtocol(WebSocketsSansIOProtocol):
        def connection_lost(self, exc: Exception | None) -> None:
            try:
                super().connection_lost(exc)
            finally:
                ledger.release(self.transport)

    class GuardedHTTPProtocol(H11Protocol):
        deadline: asyncio.TimerHandle | None = None
        admitted = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            refused = ledger.admit(transport)
            if refused is not None:
                transport.write(_plain_response("503 Service Unavailable", f"refused: {refused}"))
                transport.close()
                return
            self.admitted = True
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()  # a whole request is in (or the connection is going): no deadline
            else:
                self._arm()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._disarm()
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            try:
                super().connection_lost(exc)
            finally:
                ledger.release(self.transport)

        def _arm(self) -> None:
            if self.deadline is None:
                self.deadline = self.loop.call_later(timeout, self._expired)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _expired(self) -> None:
            self.deadline = None
            if self.transport.is_closing():
                return
            if self.conn.our_state is h11.IDLE:
                self.transport.write(_plain_response(
                    "408 Request Timeout", f"no whole request within {timeout:g} s (--request-timeout)"))
            self.transport.close()

    return GuardedHTTPProtocol, GuardedWebSocketProtocol


def listening_socket(host: str, port: int, reuse_port: bool = False) -> socket.socket:
    """A TCP socket (protocol `IPPROTO_TCP`, so that accepted connections get `TCP_NODELAY`) bound to
    (host, port) and listening; `reuse_port` lets the workers of one server share the port. A one-line
    `OSError` when the port is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port (0 picks a "
                      "free one) or --host") from None
    sock.listen(2048)
    return sock


def http_server(app: Any, limits: ConnectionLimits, ledger: ConnectionLedger | None = None) -> Any:
    """A uvicorn `Server` for `app` with the limits' connection caps (counted in `ledger`), request deadline
    and WebSocket message bound."""
    import uvicorn

    http, ws = guarded_protocols(ledger or ConnectionLedger(limits))
    config = uvicorn.Config(app, http=http, ws=ws, log_level="warning", lifespan="on",
                            ws_max_size=PROTOCOL_FRAME_FACTOR * limits.max_message_bytes,
                            ws_per_message_deflate=False)  # compressing every message cost ~1 ms of CPU each
    return uvicorn.Server(config)


def serve_socket(app: Any, sock: socket.socket, limits: ConnectionLimits) -> None:
    """Run `app` (`http_server`) on the already listening `sock` until interrupted, with the garbage
    collector's thresholds at `GC_THRESHOLDS`."""
    gc.set_threshold(*GC_THRESHOLDS)
    http_server(app, limits).run(sockets=[sock])


def serve(make_app: Callable[[int], Any], host: str, port: int, workers: int, limits: ConnectionLimits,
          announce: Callable[[str, int], None]) -> int:
    """Serve `make_app(worker)` on (host, port) with `workers` processes (module docstring); `announce(host,
    port)` is called once every worker listens. Returns when the server is stopped (SIGINT, SIGTERM)."""
    if workers == 1:
        sock = listening_socket(host, port)
        bound_host, bound_port = sock.getsockname()[:2]
        announce(bound_host, bound_port)
        serve_socket(make_app(0), sock, limits)
        return 0
    if not hasattr(socket, "SO_REUSEPORT"):
        raise ValueError("--workers needs SO_REUSEPORT (Linux, BSD); run one process per port instead")
    if threading.active_count() > 1:
        raise RuntimeError(f"--workers: {threading.active_count() - 1} thread(s) run before the fork; "
                           "the workers cannot be forked safely")
    first = listening_socket(host, port, reuse_port=True)
    bound_host, bound_port = first.getsockname()[:2]
    supervisor = _Supervisor(make_app, bound_host, bound_port, limits)
    supervisor.start(workers, first)
    announce(bound_host, bound_port)
    return supervisor.watch()


class _Supervisor:
    """The parent of `--workers N`: forks the workers, starts again one that dies, stops them all on
    SIGINT or SIGTERM."""

    def __init__(self, make_app: Callable[[int], Any], host: str, port: int, limits: ConnectionLimits) -> None:
        self.make_app, self.host, self.port, self.limits = make_app, host, port, limits
        self.children: dict[int, int] = {}  # pid -> worker number
        self.stopping = False
        self.first: socket.socket | None = None
        self.ready_read, self.ready_write = os.pipe()

    def start(self, workers: int, first: socket.socket) -> None:
        """Fork the workers (the first on `first`, the others on sockets of their own) and wait until all
        listen; a worker that ends before is a `RuntimeError` (the others are stopped)."""
        import select

        self.first = first
        for worker in range(workers):
            self._fork(worker, first if worker == 0 else None)
        first.close()
        self.first = None
        ready = 0
        while ready < workers:
            readable, _, _ = select.select([self.ready_read], [], [], 0.5)
            if readable:
                ready += len(os.read(self.ready_read, workers - ready))
                continue
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid:
                worker = self.children.pop(pid, -1)
                self.stop()
                raise RuntimeError(f"worker {worker} ended before it listened ({_status_text(status)})")

    def stop(self) -> None:
        """Ask every worker to stop (SIGTERM)."""
        self.stopping = True
        for pid in list(self.children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def _fork(self, worker: int, sock: socket.socket | None) -> None:
        pid = os.fork()
        if pid:
            self.children[pid] = worker
            return
        code = 0
        try:  # the worker: never returns into the caller's code
            os.close(self.ready_read)
            if sock is None and self.first is not None:
                self.first.close()  # the first worker's socket: only the first worker may hold it
            for s in (signal.SIGINT, signal.SIGTERM):
                signal.signal(s, signal.SIG_DFL)
            app = self.make_app(worker)  # before the socket: no connection waits on a worker still importing
            import uvicorn  # noqa: F401

            own = sock if sock is not None else listening_socket(self.host, self.port, reuse_port=True)
            os.write(self.ready_write, b"1")
            serve_socket(app, own, self.limits)
        except BaseException as exc:
            if not isinstance(exc, KeyboardInterrupt | SystemExit):
                print(f"utp-env serve: worker {worker}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                code = 1
        finally:
            sys.stderr.flush()
            os._exit(code)

    def watch(self) -> int:
        """Wait on the workers until the server is stopped; return its exit status."""
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, lambda _signum, _frame: self.stop())
        while self.children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            worker = self.children.pop(pid, None)
            if worker is None or self.stopping:
                continue
            print(f"utp-env serve: worker {worker} (pid {pid}) ended ({_status_text(status)}); its sessions are "
                  "lost; starting it again", file=sys.stderr, flush=True)
            time.sleep(WORKER_RESTART_PAUSE)
            if not self.stopping:
                self._fork(worker, None)
        return 0


def _status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"
