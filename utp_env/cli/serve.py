"""`utp-env serve`: episodes for remote agents and trainers: OpenEnv (default) or MCP (docs/SERVE.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import sys
from pathlib import Path
from typing import Any

from utp_env.query import SPLITS

EXTRA_HINT = "pip install 'utp-env[serve]'"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `serve` command."""
    from utp_env.serve.guard import DEFAULT_MAX_MESSAGE_BYTES

    p = sub.add_parser("serve", help="serve episodes to remote agents: OpenEnv (WebSocket) or MCP",
                       description="Serve episodes of UTP-v0 or UTP-Replan-v0 to agents in other processes or on "
                       "other machines: an OpenEnv server (sessions over a WebSocket, many at once) by default, or "
                       "the env's tools as an MCP server (--mcp stdio for a local agent, --mcp http for streamable "
                       "HTTP). One database, loaded once; each session its own episode. Bound to anything but "
                       "loopback, the server asks every client for a token (docs/SERVE.md \"Exposing a server\"). "
                       "Needs the serve extra: " + EXTRA_HINT + ".")
    p.add_argument("--mcp", choices=["stdio", "http"],
                   help="serve the tools over MCP instead of OpenEnv: stdio (one session, this process's "
                   "stdin/stdout) or http (streamable HTTP at /mcp, one episode per MCP session)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000,
                   help="port to listen on; 0 picks a free one (printed on stderr) (default: 8000)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="server processes behind the one address (SO_REUSEPORT; one per core); the limits below "
                   "are per process (default: 1)")
    p.add_argument("--env", default="UTP-v0", choices=["UTP-v0", "UTP-Replan-v0"],
                   help="the env each session plays (default: UTP-v0)")
    p.add_argument("--profile", choices=["full", "mini"], default="full",
                   help="embedded sandbox: full or mini (default: full)")
    p.add_argument("--db", metavar="DIR", help="a database directory instead of the embedded sandbox")
    p.add_argument("--split", choices=SPLITS,
                   help="split episodes draw their query from when none is named (default: the env config's); "
                   "train is loaded (built first if missing) before the server listens, and only then served")
    p.add_argument("--config", type=Path, metavar="YAML", help="env config YAML (default: configs/env.yaml)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed of an episode started without one (default: drawn per episode)")
    p.add_argument("--query-id", dest="query_id", metavar="ID",
                   help="query of an episode started without one (default: drawn from the split)")
    access = p.add_argument_group("access (docs/SERVE.md \"Exposing a server\")")
    access.add_argument("--token", help="the token every request must carry as 'Authorization: Bearer TOKEN' "
                        "(default: none on loopback; generated and printed when --host is another address); "
                        "prefer --token-file, which keeps it out of the process list")
    access.add_argument("--token-file", dest="token_file", type=Path, metavar="FILE",
                        help="read the token from the first line of FILE")
    access.add_argument("--allow-host", dest="allow_hosts", action="append", default=[], metavar="NAME",
                        help="a Host name the server answers to besides the loopback names (repeatable); on "
                        "another address, only these when given")
    access.add_argument("--allow-origin", dest="allow_origins", action="append", default=[], metavar="ORIGIN",
                        help="a browser Origin (scheme://host[:port]) allowed to connect (repeatable; default: none)")
    limits = p.add_argument_group("limits, per server process (docs/SERVE.md \"Limits\")")
    limits.add_argument("--max-sessions", dest="max_sessions", type=int, default=1000, metavar="N",
                        help="sessions held at once; more are refused until one ends (default: 1000)")
    limits.add_argument("--max-client-sessions", dest="max_client_sessions", type=int, metavar="N",
                        help="sessions one client address may hold (default: half of --max-sessions)")
    limits.add_argument("--max-connections", dest="max_connections", type=int, metavar="N",
                        help="open TCP connections (a session's WebSocket is one) (default: --max-sessions + 64)")
    limits.add_argument("--max-client-connections", dest="max_client_connections", type=int, metavar="N",
                        help="open connections of one client address (default: --max-client-sessions + 32)")
    limits.add_argument("--session-timeout", dest="session_timeout", type=float, default=1800.0, metavar="SECONDS",
                        help="close a session idle this long and drop its episode (default: 1800)")
    limits.add_argument("--request-timeout", dest="request_timeout", type=float, default=10.0, metavar="SECONDS",
                        help="close a connection that has not sent a whole request (headers and body) this long "
                        "(default: 10)")
    limits.add_argument("--max-message-bytes", dest="max_message_bytes", type=int, default=DEFAULT_MAX_MESSAGE_BYTES,
                        metavar="N", help=f"the largest request body or WebSocket message (default: "
                        f"{DEFAULT_MAX_MESSAGE_BYTES})")
    p.set_defaults(handler=handle)


def check(args: argparse.Namespace) -> None:
    """Every option checked: a one-line `ValueError` (or `FileNotFoundError`) naming the first bad one."""
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, not {args.seed}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0..65535, not {args.port}")
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, not {args.workers}")
    if args.workers > 1 and args.mcp == "stdio":
        raise ValueError("--workers: --mcp stdio serves one session on this process's stdin/stdout; drop --workers")
    if args.workers > 1 and args.mcp == "http":
        raise ValueError("--workers: an MCP session lives in one process, and its HTTP requests may come on several "
                         "connections, which the kernel may hand to different workers; run one process per port")
    for name in ("session_timeout", "request_timeout"):
        if not getattr(args, name) > 0:
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"{flag} must be a positive number of seconds, not {getattr(args, name)}")
    for name in ("max_sessions", "max_client_sessions", "max_connections", "max_client_connections"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
    if args.max_message_bytes < 1024:
        raise ValueError(f"--max-message-bytes must be at least 1024, not {args.max_message_bytes}")
    if args.token is not None and args.token_file is not None:
        raise ValueError("--token and --token-file: give one of them")
    if args.token is not None and len(args.token) < 16:
        raise ValueError("--token must be at least 16 characters (a guessable token protects nothing)")
    if args.config is not None and not args.config.exists():
        raise FileNotFoundError(f"--config: file {str(args.config)!r} does not exist")


def handle(args: argparse.Namespace) -> int:
    """Check the options, load the database once, then serve until interrupted."""
    check(args)
    try:
        import mcp  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"needs the serve extra ({exc}); install it with {EXTRA_HINT}") from None
    from utp_env.serve.session import EpisodeDefaults, SessionFactory

    token, generated = server_token(args)
    factory = SessionFactory(env=args.env, db_path=args.db, profile=args.profile, split=args.split,
                             config=None if args.config is None else str(args.config),
                             defaults=EpisodeDefaults(seed=args.seed, query_id=args.query_id), served=True)
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the MCP channel under --mcp stdio
        factory.preload()
    # The database, queries and reference plans live as long as the server: out of the cyclic garbage
    # collector's sight, a full collection no longer walks them (about 100 ms on the full sandbox,
    # which every session waiting on the server would feel), and forked workers share their pages.
    gc.collect()
    gc.freeze()
    if args.mcp == "stdio":
        from utp_env.serve.mcp_server import serve_stdio

        asyncio.run(serve_stdio(factory))
        return 0
    from utp_env.serve.listen import ConnectionLimits, serve

    max_client_sessions = args.max_client_sessions or max(1, args.max_sessions // 2)
    limits = ConnectionLimits(max_connections=args.max_connections or args.max_sessions + 64,
                              max_client_connections=args.max_client_connections or max_client_sessions + 32,
                              request_timeout=args.request_timeout, max_message_bytes=args.max_message_bytes)
    what = "MCP (streamable HTTP)" if args.mcp == "http" else "OpenEnv"
    app_of(args, factory, token, max_client_sessions, 0)  # imports the app's modules once, before any fork
    workers = f" ({args.workers} workers)" if args.workers > 1 else ""

    def make_app(worker: int) -> Any:
        return app_of(args, factory, token, max_client_sessions, worker)

    def announce(host: str, port: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}" + ("/mcp" if args.mcp == "http" else "")
        print(f"utp-env serve: {what} {factory.env_id}{workers} on {url}", file=sys.stderr, flush=True)
        if generated:
            print(f"utp-env serve: {args.host} is not loopback, so every client must send the header "
                  f"'Authorization: Bearer {token}' (choose the token with --token-file)", file=sys.stderr, flush=True)

    return serve(make_app, args.host, args.port, args.workers, limits, announce)


def server_token(args: argparse.Namespace) -> tuple[str | None, bool]:
    """(the token clients must send or None, whether it was generated here): `--token`, the first line of
    `--token-file`, else a new one when the server listens on anything but loopback (never for stdio)."""
    from utp_env.serve.guard import is_loopback, new_token, read_token_file

    token = args.token if args.token_file is None else read_token_file(args.token_file)
    if token is None and args.mcp != "stdio" and not is_loopback(args.host):
        return new_token(), True
    return token, False


def app_of(args: argparse.Namespace, factory: Any, token: str | None, max_client_sessions: int, worker: int) -> Any:
    """The app one server process runs: OpenEnv or MCP over HTTP, behind the access policy, with its limits."""
    from utp_env.serve.guard import AccessPolicy
    from utp_env.serve.session import SessionLimits

    policy = AccessPolicy.for_address(args.host, token=token, allow_hosts=args.allow_hosts,
                                      allow_origins=args.allow_origins, max_message_bytes=args.max_message_bytes)
    limits = SessionLimits(args.max_sessions, max_client_sessions)
    if args.mcp == "http":
        from utp_env.serve.mcp_server import http_app

        return http_app(factory, policy, limits, session_timeout=args.session_timeout)
    from utp_env.serve.openenv_server import openenv_app

    return openenv_app(factory, policy, limits, session_timeout=args.session_timeout, worker=worker)
