"""`utp-env serve` as a subprocess on 127.0.0.1 for the serving tests (OpenEnv, MCP over HTTP, the
remote RL env): one way to start it, read the URL from its stderr line, and stop it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


@contextmanager
def served(*args: str, banner: str = "") -> Iterator[str]:
    """`utp-env serve --host 127.0.0.1 --port 0 *args` as a subprocess; yields its URL (from its first
    stderr line, which must also hold `banner`); terminated on exit."""
    proc = subprocess.Popen([sys.executable, "-m", "utp_env", "serve", "--host", "127.0.0.1", "--port", "0", *args],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert banner in line and " on http://127.0.0.1:" in line, line + proc.stderr.read()
        yield line.rsplit(" on ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def openenv_server(*args: str) -> AbstractContextManager[str]:
    """The OpenEnv server (`utp-env serve ...`); yields its base URL."""
    return served(*args, banner="OpenEnv")
