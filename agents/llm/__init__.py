"""LLM baselines: direct prompting (C.2/C.4), ATLAS-style multi-agent planning, generic tool calling.

Models come from LangChain (`utp_env.agents.llm.models`); tests drive every agent with fake chat models.
Importing this package does not import any provider package.
"""

from utp_env.agents.llm.atlas import AtlasAgent
from utp_env.agents.llm.direct import DirectAgent
from utp_env.agents.llm.models import ModelConfigError, ModelSpec, make_chat_model
from utp_env.agents.llm.tool_calling import ToolCallingAgent

__all__ = ["AtlasAgent", "DirectAgent", "ModelConfigError", "ModelSpec", "ToolCallingAgent", "make_chat_model"]
