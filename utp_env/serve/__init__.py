"""Episodes served to agents in other processes and machines (docs/SERVE.md).

`session.py`: one served episode (`EpisodeSession`) and the factory a server makes them with;
`mcp_server.py`: the env's tools over MCP (stdio, streamable HTTP); `openenv_server.py`: an OpenEnv
environment server (reset/step/state over HTTP and WebSocket) and its Python client. The packages
(`mcp`, `openenv`, `uvicorn`) come with the `serve` extra and are imported only by those modules.
Core code: nothing here imports `utp_env.agents`.
"""
