"""The local backend of `utp-env run`: episodes in this process, or in a pool of worker processes.

Pool workers die with the driver (`die_with_parent`); a worker that dies ends the run with a
one-line `WorkerDiedError` saying which and how. At most two episodes per process are queued at a
time, so memory does not grow with the number of episodes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Generator
from typing import Any

from utp_env.runs.config import RunConfig
from utp_env.runs.episode import run_episode
from utp_env.tools.worker_lifetime import die_with_parent

Records = Generator[dict[str, Any], None, None]
"""What a backend yields: finished episode records; closing it stops its workers."""


class WorkerDiedError(RuntimeError):
    """A pool worker process died (killed, out of memory, a crash in native code) during the run;
    the message is one line saying which, what was saved and that rerunning resumes."""


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "ended"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        cause = " (kill -9 or the out-of-memory killer)" if -code == signal.SIGKILL else ""
        return f"was killed by {name}{cause}"
    return f"exited with status {code}"


def _exit_code(proc: Any) -> int | None:
    """The exit code of a pool worker once it has ended (None while it runs after 5 s).

    The pool's own manager thread reaps a dead worker too: when it wins the race, this thread's `join`
    returns with the code not yet recorded (its wait found no child), and the code lands a moment later.
    Without waiting for it, a worker killed by a signal was reported as "a worker process died" on a
    loaded machine."""
    from multiprocessing.connection import wait

    proc.join(timeout=5)
    if proc.exitcode is None and wait([proc.sentinel], 0):  # it has ended: its code is being recorded
        deadline = time.monotonic() + 5
        while proc.exitcode is None and time.monotonic() < deadline:
            time.sleep(0.01)
    return proc.exitcode


def run_local(config: RunConfig, todo: list[tuple[str, int]], processes: int) -> Records:
    """Episodes in this process (one worker) or a pool of `processes` worker processes.

    Where the platform can fork (Linux), the pool's workers are forked from this process after
    `run` has built the run's context (`context_for`: dataset, indices, agent), so each worker
    starts ready, sharing those pages copy-on-write, instead of importing the package and
    opening the dataset again (a spawned worker needs about a second before its first episode,
    more than 30 reference episodes take). Elsewhere, or when this process has started
    Ray, the workers are spawned. At most two episodes per process are queued at a time, so memory
    does not grow with the number of episodes. Workers die with this process (`die_with_parent`);
    when one dies, the others are stopped and a `WorkerDiedError` says which and how.
    """
    if processes <= 1:
        for qid, trial in todo:
            yield run_episode(config, qid, trial)
        return
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    ray = sys.modules.get("ray")  # Ray's gRPC threads in this process do not survive a fork cleanly
    forkable = "fork" in mp.get_all_start_methods() and not (ray is not None and ray.is_initialized())
    method = "fork" if forkable else "spawn"
    pool = ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context(method),
                               initializer=die_with_parent, initargs=(os.getpid(),))
    pending: set[Future[dict[str, Any]]] = set()
    queue = iter(todo)
    workers: dict[int, Any] = {}
    finished = False

    def refill() -> None:
        for qid, trial in queue:
            pending.add(pool.submit(run_episode, config, qid, trial))
            workers.update(getattr(pool, "_processes", None) or {})  # for the exit codes if one dies
            if len(pending) >= 2 * processes:
                return

    def died() -> WorkerDiedError:
        codes = {pid: _exit_code(proc) for pid, proc in workers.items()}
        dead = [(pid, code) for pid, code in codes.items() if code not in (0, None, -signal.SIGTERM)]
        who = f"worker process {dead[0][0]} {_describe_exit(dead[0][1])}" if dead else "a worker process died"
        return WorkerDiedError(f"{who} during the run")

    try:
        try:
            refill()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    pending.discard(future)
                    yield future.result()
                refill()
        except BrokenProcessPool:  # from a result, or from submit once the pool knows
            raise died() from None
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:  # an error, Ctrl-C or a dead worker: stop at once, do not wait for queued episodes
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers.values():
                with contextlib.suppress(Exception):
                    proc.terminate()
            for proc in workers.values():
                with contextlib.suppress(Exception):
                    proc.join(timeout=5)
            manager = getattr(pool, "_executor_manager_thread", None)  # it sees the workers gone and ends;
            if manager is not None:                                   # waking it at exit while it closes
                manager.join(timeout=10)                              # its pipe prints an EBADF traceback
