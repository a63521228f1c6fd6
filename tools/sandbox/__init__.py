"""The deterministic India sandbox generator (DESIGN section 2): real geography, calibrated delays."""

from utp_env.tools.sandbox.build import GENERATOR_VERSION, build_sandbox
from utp_env.tools.sandbox.cache import cache_root, ensure_sandbox, open_sandbox, sandbox_path
from utp_env.tools.sandbox.profiles import PROFILES, SandboxProfile, load_profile

__all__ = ["GENERATOR_VERSION", "PROFILES", "SandboxProfile", "build_sandbox", "cache_root", "ensure_sandbox",
           "load_profile", "open_sandbox", "sandbox_path"]
