"""`utp-env serve`: episodes for remote agents and trainers: OpenEnv (default) or MCP (docs/SERVE.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import socket
import sys
from pathlib import Path
from typing import Any

EXTRA_HINT = "pip install 'utp-env[serve]'"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `serve` command."""
    p = sub.add_parser("serve", help="serve episodes to remote agents: OpenEnv (HTTP/WebSocket) or MCP",
                       description="Serve episodes of UTP-v0 or UTP-Replan-v0 to agents in other processes or on "
                       "other machines: an OpenEnv server (reset/step/state over HTTP and WebSocket, many "
                       "concurrent sessions) by default, or the env's tools as an MCP server (--mcp stdio for "
                       "a local agent, --mcp http for streamable HTTP). One database, loaded once; each session "
                       "its own episode (docs/SERVE.md). Needs the serve extra: " + EXTRA_HINT + ".")
    p.add_argument("--mcp", choices=["stdio", "http"],
                   help="serve the tools over MCP instead of OpenEnv: stdio (one session, this process's "
                   "stdin/stdout) or http (streamable HTTP at /mcp, one episode per MCP session)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000,
                   help="port to listen on; 0 picks a free one (printed on stderr) (default: 8000)")
    p.add_argument("--env", default="UTP-v0", choices=["UTP-v0", "UTP-Replan-v0"],
                   help="the env each session plays (default: UTP-v0)")
    p.add_argument("--profile", choices=["full", "mini"], default="full",
                   help="embedded sandbox: full or mini (default: full)")
    p.add_argument("--db", metavar="DIR", help="a database directory instead of the embedded sandbox")
    p.add_argument("--split", choices=["validation", "test"],
                   help="split episodes draw their query from when none is named (default: the env config's)")
    p.add_argument("--config", type=Path, metavar="YAML", help="env config YAML (default: configs/env.yaml)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed of an episode started without one (default: drawn per episode)")
    p.add_argument("--query-id", dest="query_id", metavar="ID",
                   help="query of an episode started without one (default: drawn from the split)")
    p.add_argument("--session-timeout", dest="session_timeout", type=float, default=1800.0, metavar="SECONDS",
                   help="close a session idle this long and drop its episode (default: 1800)")
    p.add_argument("--max-sessions", dest="max_sessions", type=int, default=1000, metavar="N",
                   help="concurrent sessions held at most; more are refused until one ends (default: 1000)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Check the options, load the database once, then serve until interrupted."""
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, not {args.seed}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0..65535, not {args.port}")
    if not args.session_timeout > 0:
        raise ValueError(f"--session-timeout must be a positive number of seconds, not {args.session_timeout}")
    if args.max_sessions < 1:
        raise ValueError(f"--max-sessions must be at least 1, not {args.max_sessions}")
    if args.config is not None and not args.config.exists():
        raise FileNotFoundError(f"--config: file {str(args.config)!r} does not exist")
    try:
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401

        if args.mcp is None:
            import openenv  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"needs the serve extra ({exc}); install it with {EXTRA_HINT}") from None
    from utp_env.serve.session import EpisodeDefaults, SessionFactory

    factory = SessionFactory(env=args.env, db_path=args.db, profile=args.profile, split=args.split,
                             config=None if args.config is None else str(args.config),
                             defaults=EpisodeDefaults(seed=args.seed, query_id=args.query_id))
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the MCP channel under --mcp stdio
        factory.preload()
    # The database, queries and reference plans live as long as the server: out of the cyclic garbage
    # collector's sight, a full collection no longer walks them (about 100 ms on the full sandbox,
    # which every session waiting on the server would feel).
    gc.collect()
    gc.freeze()
    if args.mcp == "stdio":
        from utp_env.serve.mcp_server import serve_stdio

        asyncio.run(serve_stdio(factory))
        return 0
    sock = listening_socket(args.host, args.port)
    host, port = sock.getsockname()[:2]
    if args.mcp == "http":
        from utp_env.serve.mcp_server import http_app

        app = http_app(factory, session_timeout=args.session_timeout, max_sessions=args.max_sessions)
        url = f"http://{host}:{port}/mcp"
        what = "MCP (streamable HTTP)"
    else:
        from utp_env.serve.openenv_server import openenv_app

        app = openenv_app(factory, session_timeout=args.session_timeout, max_sessions=args.max_sessions)
        url = f"http://{host}:{port}"
        what = "OpenEnv"
    print(f"utp-env serve: {what} {factory.env_id} on {url}", file=sys.stderr, flush=True)
    serve_socket(app, sock)
    return 0


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port) and listening; a one-line `OSError` when the port is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port} ({exc.strerror}); choose another --port (0 picks a "
                      "free one) or --host") from None
    sock.listen(2048)
    return sock


def serve_socket(app: Any, sock: socket.socket) -> None:
    """Run `app` under uvicorn on the already listening `sock` until interrupted."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", ws_max_size=16 * 2**20,
                            ws_per_message_deflate=False)  # compressing every message cost ~1 ms of CPU each
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
