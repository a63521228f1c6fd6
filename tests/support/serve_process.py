"""`utp-env serve` as a subprocess on 127.0.0.1 for the serving tests (OpenEnv, MCP over HTTP, the
remote RL env): one way to start it, read the URL from its stderr line, and stop it."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass


@dataclass
class ServerProcess:
    """A running server: its process, URL (as printed) and port."""

    proc: subprocess.Popen[str]
    url: str

    @property
    def port(self) -> int:
        return int(self.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])

    def kill(self) -> None:
        """Kill it without a goodbye (SIGKILL: no close frames, as a crash or a lost machine)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)


@contextmanager
def server_process(*args: str, banner: str = "") -> Iterator[ServerProcess]:
    """`utp-env serve --host 127.0.0.1 *args` (`--port 0` unless args give one) as a subprocess; its first
    stderr line must hold `banner` and the URL; terminated on exit."""
    port = [] if "--port" in args else ["--port", "0"]
    proc = subprocess.Popen([sys.executable, "-m", "utp_env", "serve", "--host", "127.0.0.1", *port, *args],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert banner in line and " on http://127.0.0.1:" in line, line + proc.stderr.read()
        yield ServerProcess(proc, line.rsplit(" on ", 1)[1].strip())
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=60)


@contextmanager
def served(*args: str, banner: str = "") -> Iterator[str]:
    """`server_process`, yielding only its URL."""
    with server_process(*args, banner=banner) as server:
        yield server.url


def openenv_server(*args: str) -> AbstractContextManager[str]:
    """The OpenEnv server (`utp-env serve ...`); yields its base URL."""
    return served(*args, banner="OpenEnv")
