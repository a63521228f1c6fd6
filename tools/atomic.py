"""Atomic file writes: a temporary file in the target's folder, flushed and synced, then renamed
over the target, so a reader (or a crash) never sees a half-written file.

The one helper every writer of the package uses (`utp_env/dataset.py`, `utp_env/runs/`,
`utp_env/cli/`). Text is encoded as UTF-8 with `backslashreplace`, so a lone surrogate (which
JSON text may carry, e.g. from `"\\ud800"`) is written as the escape `\\ud800` instead of failing
the write: inside a JSON string that is the same value read back.

A temporary file is named `.NAME.PID.RANDOM.tmp` (plus the target's suffix while a writer fills it),
so `remove_stale_temporaries` can tell the ones a killed process left (its PID is gone) from the ones
a running writer holds. A write that fails or is interrupted removes its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

UNTAGGED_STALE_SECONDS = 600.0
"""A temporary file named without a PID (by an older version) counts as left behind once it has not
been written for this long."""


class FileWriteError(OSError):
    """A file could not be written; `str()` is one line naming the file, the cause and the fix."""

    def __init__(self, errno: int | None, message: str) -> None:
        super().__init__(errno, message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    @classmethod
    def of(cls, exc: OSError, path: str | Path) -> FileWriteError:
        """The error for `exc` raised while writing `path` (itself when it already is one)."""
        return exc if isinstance(exc, FileWriteError) else cls(exc.errno, describe_os_error(exc, path))


def describe_os_error(exc: OSError, path: str | Path) -> str:
    """`cannot write FILE: No space left on device` with a hint for the usual causes."""
    reason = exc.strerror or type(exc).__name__
    hint = {13: "; check the folder's permissions or choose another one",
            21: "; it is a folder: name a file in it",
            28: "; free some space and run the command again (finished work is kept)",
            30: "; the file system is read-only: choose another folder"}.get(exc.errno or 0, "")
    return f"cannot write {path}: {reason}{hint}"


@contextlib.contextmanager
def _temporary(path: Path) -> Iterator[Path]:
    """A temporary path next to `path` (its folder created if missing), renamed over it when the
    block succeeds, removed otherwise."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise FileWriteError.of(exc, path) from exc
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; these are ordinary readable files
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise FileWriteError.of(exc, path) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` atomically (flushed and fsynced before the rename)."""
    with _temporary(Path(path)) as tmp, tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` atomically as UTF-8 (lone surrogates as `\\udXXX` escapes)."""
    write_bytes_atomic(path, text.encode("utf-8", errors="backslashreplace"))


def write_with_atomic(path: str | Path, writer: Callable[[Path], object]) -> None:
    """Let `writer(temporary_path)` write the file (e.g. matplotlib's `savefig`), then rename it
    over `path`; the temporary file keeps `path`'s suffix so format detection works."""
    target = Path(path)
    with _temporary(target) as tmp:
        if not target.suffix:  # nothing to keep: the writer fills the temporary file itself
            writer(tmp)
            return
        named = tmp.with_name(tmp.name + target.suffix)
        try:
            writer(named)
            os.replace(named, tmp)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(named)


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the temporary files of `path` that killed writers left in its folder (their PID is not a
    running process; one named without a PID once it is `UNTAGGED_STALE_SECONDS` old); returns them."""
    target = Path(path)
    pattern = re.compile(re.escape(f".{target.name}.") + r"(?:(\d+)\.)?[^.]+\.tmp(?:\..*)?$")
    removed = []
    try:
        candidates = list(target.parent.iterdir())
    except OSError:
        return []
    for candidate in candidates:
        match = pattern.match(candidate.name)
        if match is None or not candidate.is_file():
            continue
        pid = match.group(1)
        if pid is not None and _running(int(pid)):
            continue
        if pid is None and time.time() - candidate.stat().st_mtime < UNTAGGED_STALE_SECONDS:
            continue
        with contextlib.suppress(OSError):
            candidate.unlink()
            removed.append(candidate)
    return removed


def _running(pid: int) -> bool:
    """Whether a process `pid` exists (this one included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True
