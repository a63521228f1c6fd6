"""Episodes served to agents in other processes and machines (docs/SERVE.md).

`session.py`: the factory a server makes its sessions with (one `EpisodeEngine` of
utp_env/env/engine.py each), the session limits and the threads heavy calls run on; `guard.py`: the
token, Host, Origin and size checks; `listen.py`: the sockets, connection caps, request timeouts and
`--workers`; `openenv_server.py`: the OpenEnv-protocol server (`wire.py`: its message shapes) and
`openenv_client.py` its Python client; `mcp_server.py`: the env's tools over MCP (stdio, streamable
HTTP). The packages (`mcp`, `uvicorn`, `starlette`; `openenv` for the client only) come with the
`serve` extra and are imported only by these modules. Core code: nothing here imports `utp_env.agents`.
"""
