"""The installed openai-agents SDK for the tests.

The SDK installs its package as top-level `agents`; run from the repository root (as pytest is), that
name finds the repository's own agents/ folder first. `openai_agents_sdk()` imports the SDK with the
repository root off `sys.path` (and forgets the folder if something imported it under that name).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType

from utp_env.env.openai_agents import sdk

ROOT = Path(__file__).resolve().parents[2]


def openai_agents_sdk() -> ModuleType:
    """The `agents` module of the openai-agents distribution."""
    loaded = sys.modules.get("agents")
    if loaded is not None and not hasattr(loaded, "FunctionTool"):
        del sys.modules["agents"]
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != str(ROOT)]
    try:
        return sdk()
    finally:
        sys.path[:] = saved
