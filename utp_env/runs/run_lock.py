"""One writer per run folder: `run_lock` holds an exclusive POSIX record lock (`fcntl.lockf`) on the
folder's `.run.lock` while `utp-env run` works, so a second run on the same folder stops at once with
a one-line `RunFolderError`.

A POSIX lock belongs to the process that took it: forked pool workers never hold it, and the kernel
drops it when that process dies, however it dies; the next run takes over the folder with a
one-line notice. The lock file records `PID START` (the holder's pid and start time, so a reused
pid is not mistaken for the holder).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from utp_env.tools.atomic import FileWriteError

LOCK_FILE = ".run.lock"


class RunFolderError(ValueError):
    """The run folder cannot be used as it is; the message names it and says what to do."""


_HELD: set[tuple[int, int]] = set()  # (device, inode) of the lock files this process holds
_HELD_GUARD = threading.Lock()


def process_start(pid: int) -> str:
    """The start time of process `pid` (clock ticks since boot, /proc/PID/stat field 22), '' when
    unknown; with the pid it names a process even after its pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # the command name (field 2) may hold spaces
    return fields[19] if len(fields) > 19 else ""


def _holder(text: str) -> tuple[int, str] | None:
    """(pid, start time or '') recorded in a lock file as `PID START` (START `-` when unknown); None
    for an empty file, and for the bare `PID` that earlier versions of utp-env wrote and never
    cleared (so a folder they used is taken over without a notice)."""
    parts = text.split()
    if len(parts) != 2 or not parts[0].isdigit():
        return None
    return int(parts[0]), "" if parts[1] == "-" else parts[1]


def _alive(pid: int, start: str) -> bool:
    """Whether process `pid` runs and, when `start` is known, is the one that started then."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        pass
    return not start or not process_start(pid) or process_start(pid) == start


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on `run_dir` (creating the folder) for the block; a RunFolderError
    at once when another run (another process, or another run in this one) holds it.

    The lock is a POSIX record lock (`fcntl.lockf`) on `run_dir/.run.lock`, which holds the
    holder's `PID START` while it runs and is emptied when it ends. A POSIX lock is the process's:
    children forked by the pool do not inherit it, and the kernel releases it when the holder
    dies, so a run killed with `kill -9` never wedges its folder. When the lock is free but the
    file still names a process, that run ended without releasing it (it was killed): the folder
    is taken over with a one-line notice. On a filesystem without POSIX locks the recorded holder
    is checked instead (alive, and the same process: its start time guards against pid reuse).
    Without `fcntl` (Windows) the folder is not locked."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise RunFolderError(f"--out {run_dir} is a file, not a folder; choose a folder") from None
    except OSError as exc:
        raise FileWriteError.of(exc, run_dir) from exc
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = run_dir / LOCK_FILE

    def in_use(pid: int | None) -> RunFolderError:
        return RunFolderError(f"{run_dir} is in use by another `utp-env run`"
                              + (f" (process {pid})" if pid is not None else "")
                              + "; wait for it to finish or choose another --out folder")

    def recorded(fd: int) -> str:
        return os.pread(fd, 64, 0).decode("ascii", errors="replace")

    with _HELD_GUARD:  # a second run in this process (any thread): POSIX locks do not exclude it, and
        try:           # opening and closing the file again would drop the first run's lock; so check first
            st = path.stat()
        except OSError:
            pass
        else:
            if (st.st_dev, st.st_ino) in _HELD:
                raise in_use(os.getpid())
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise FileWriteError.of(exc, path) from exc
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        _HELD.add(key)
    try:
        locked = True
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EAGAIN):
                first = recorded(fd).split()[:1]
                raise in_use(int(first[0]) if first and first[0].isdigit() else None) from None
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                raise FileWriteError.of(exc, path) from exc
            locked = False  # no POSIX locks on this filesystem: trust a live recorded holder
        previous = _holder(recorded(fd))
        if not locked and previous is not None and previous[0] != os.getpid() and _alive(*previous):
            raise in_use(previous[0])
        if previous is not None and previous[0] != os.getpid():
            print(f"utp-env run: notice: {path} names process {previous[0]}, which ended without releasing it "
                  "(killed?); taking the folder over", file=sys.stderr)
        with contextlib.suppress(OSError):  # who holds it, for the messages above
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {process_start(os.getpid()) or '-'}\n".encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):  # an empty file: the run ended and released the folder
                os.ftruncate(fd, 0)
    finally:
        with _HELD_GUARD:
            _HELD.discard(key)
        os.close(fd)  # releases the lock
