"""Worker processes that end with the process that started them (the run's pool, the train split's
parallel build): `die_with_parent`, the pool initializer both use."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """Pool worker initializer: end this worker when the driver `parent` dies, however it dies.

    On Linux the kernel sends SIGKILL when the parent ends (`prctl(PR_SET_PDEATHSIG)`); elsewhere a
    daemon thread polls `os.getppid()` every second. Either way a `kill -9` of `utp-env run` leaves
    no worker waiting forever on its queue. Ctrl-C is the driver's to handle (it stops the pool),
    so workers ignore SIGINT instead of recording a KeyboardInterrupt as the agent's error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    armed = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError, TypeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    if not armed:
        def watch() -> None:
            import time

            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="utp-env-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the driver died before the signal was armed
        os._exit(1)
