"""The embedded sandbox: built once per (profile, seed, generator version) into the user cache.

The build goes to a temporary sibling directory that is renamed into place, so concurrent
processes never see a half-written sandbox; the loser of a race simply uses the winner's copy.
`UTP_ENV_CACHE` overrides the cache root (tests point it at a temporary directory).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from utp_env.tools.database import MANIFEST, Database
from utp_env.tools.sandbox.build import GENERATOR_VERSION, build_sandbox
from utp_env.tools.sandbox.profiles import load_profile

CACHE_ENV = "UTP_ENV_CACHE"
STAGES = 11


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


def ensure_sandbox(profile: str = "full", seed: int = 0, quiet: bool = False) -> Path:
    """Build the cached sandbox if it is not there yet (atomically); returns its directory."""
    target = sandbox_path(profile, seed)
    if (target / MANIFEST).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        if not quiet:
            print(f"utp-env: building the {profile} sandbox (seed {seed}) once into {target}", file=sys.stderr)
        from tqdm import tqdm

        with tqdm(total=STAGES, desc="sandbox", unit="stage", file=sys.stderr, disable=quiet) as bar:
            def step(stage: str) -> None:
                bar.set_postfix_str(stage)
                bar.update(1)

            build_sandbox(profile, seed, tmp, progress=step)
        try:
            os.replace(tmp, target)
        except OSError as exc:
            if not (target / MANIFEST).exists():  # a real failure, not a lost race
                raise OSError(f"cannot move the built sandbox into {target}: {exc}; if that directory is "
                              "a leftover without manifest.json, delete it and retry") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def open_sandbox(profile: str = "full", seed: int = 0) -> Database:
    """The embedded sandbox as a Database, building it into the cache on first use."""
    return Database.open(ensure_sandbox(profile, seed))
