"""Where an embedded sandbox lives: the cache root and one sandbox's directory in it.

Its own module so that the builder (`build.py`, which writes there when given no folder) and the
build-once cache (`cache.py`, which runs the builder) both use it without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path

from utp_env.tools.sandbox.profiles import load_profile
from utp_env.tools.sandbox.version import GENERATOR_VERSION

CACHE_ENV = "UTP_ENV_CACHE"


def cache_root() -> Path:
    """Where embedded sandboxes live: $UTP_ENV_CACHE, else the platform's user cache directory."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("utp-env"))


def sandbox_path(profile: str = "full", seed: int = 0) -> Path:
    """The cache directory of one sandbox."""
    name = load_profile(profile).name
    return cache_root() / f"sandbox-{name}-seed{seed}-v{GENERATOR_VERSION}"
