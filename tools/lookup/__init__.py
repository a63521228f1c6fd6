"""Agent-facing lookup tools over the Database, with generated OpenAI and LangChain schemas.

`LOOKUP_TOOLS` maps each tool name to its `ToolSpec`; `LOOKUP.invoke(db, name, args)` runs one
by name. Importing this package registers every tool (transport, geography, venues, uncertainty).
"""

from utp_env.tools.lookup import geo, transport, uncertainty, venues
from utp_env.tools.lookup.common import LOOKUP, LOOKUP_TOOLS, lookup_tool
from utp_env.tools.tool_schemas import provider_schema
from utp_env.tools.toolkit import Registry, ToolError, ToolResult, ToolSpec, make_registry

__all__ = ["LOOKUP", "LOOKUP_TOOLS", "Registry", "ToolError", "ToolResult", "ToolSpec", "geo", "lookup_tool",
           "make_registry", "provider_schema", "transport", "uncertainty", "venues"]
