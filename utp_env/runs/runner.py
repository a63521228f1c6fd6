"""`utp-env run`: schedule episodes on a backend, store each as it finishes (with a progress bar),
summarise at the end.

Episodes are identified by (query id, trial) and seeded from (run seed, query id, trial), so a
resumed, re-sharded or Ray-backed run gives the same results as a one-worker run. Each episode
runs in `utp_env/runs/episode.py`; `store.py` writes results.jsonl; `summary.py` the summary.

One writer per folder: `run` holds an exclusive POSIX record lock (`fcntl.lockf`) on the folder's
`.run.lock` while it works, so a second `utp-env run` on the same folder stops at once with a
one-line message. A POSIX lock belongs to the process that took it: forked pool workers never hold
it, and the kernel drops it when that process dies, however it dies; the next run takes over the
folder with a one-line notice (`run_lock`). Pool workers die with the driver (`_die_with_parent`);
a worker that dies ends the run with a one-line `WorkerDiedError`. A folder is refused when it
holds results without the `config.json` that says how they were made (unless `adopt_results`),
or files that are not a run's.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from utp_env.runs.agent_identity import agent_identity, identity_changes
from utp_env.runs.config import RunConfig, env_identity, identity_differences
from utp_env.runs.episode import agent_spec, check_agent_settings, context_for, dataset_for, run_episode
from utp_env.runs.records import CONFIG_FILE, LEGACY_AGENT, RecordContext, read_run_config
from utp_env.runs.store import REJECTED, RESULTS, ResultsStore, episode_key
from utp_env.tools.atomic import FileWriteError, write_text_atomic

LOCK_FILE = ".run.lock"
# What a run folder may hold besides hidden files (the lock, temporary files of atomic writes).
RUN_FILES = frozenset({CONFIG_FILE, RESULTS, REJECTED, "summary.json", "summary.md",
                       "metrics_by_horizon_risk.png", "pass_rates_by_level.png", "timeline.png", "report.html",
                       "realised_timeline.png"})


LOCAL_WORKERS_PER_CPU = 4
"""Local pool processes are at most max(8, this x os.cpu_count()) (LLM agents wait on the network, so
more processes than cores pay; hundreds do not); more is clamped with a notice (`worker_count`)."""


class RunFolderError(ValueError):
    """The run folder cannot be used as it is; the message names it and says what to do."""


class WorkerDiedError(RuntimeError):
    """A pool worker process died (killed, out of memory, a crash in native code) during the run;
    the message is one line saying which, what was saved and that rerunning resumes."""


def plan_episodes(config: RunConfig) -> list[tuple[str, int]]:
    """The run's episodes in canonical order: selected queries × trials (the database is opened, the
    agent is not loaded)."""
    ids = [q.query_id for q in dataset_for(config).queries
           if (config.split == "all" or q.split == config.split) and q.days in config.horizons]
    ids.sort()
    if config.limit is not None:
        ids = ids[: config.limit]
    return [(qid, trial) for qid in ids for trial in range(config.trials)]


def _versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in ("utp-env", "numpy", "pydantic", "gymnasium", "langchain-core", "networkx"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


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
    for an empty file, and for the bare `PID` that versions before issue 26 wrote and never
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


def _check_new_folder(run_dir: Path, adopt_results: bool) -> None:
    """A folder without config.json may be used only when it holds nothing but run files, and
    results only when the caller adopts them."""
    if not run_dir.is_dir():
        return
    results = run_dir / RESULTS
    if results.exists() and results.stat().st_size > 0 and not adopt_results:
        raise RunFolderError(f"{run_dir} holds {RESULTS} but no {CONFIG_FILE}, so nothing says which "
                             "configuration made those results; pass --adopt-results to keep them as this "
                             "run's (only if they were made with the same options), or choose another --out")
    foreign = sorted(p.name for p in run_dir.iterdir() if p.name not in RUN_FILES and not p.name.startswith("."))
    if foreign:
        raise RunFolderError(f"{run_dir} is not a run folder: it holds {len(foreign)} other file(s), e.g. "
                             f"{foreign[0]!r}; choose a new or empty --out folder")


def _prepare_dir(config: RunConfig, db_hash: str, adopt_results: bool = False, agent: dict[str, Any] | None = None,
                 accept_agent_change: bool = False) -> frozenset[str]:
    """Check that the (locked) run folder may hold this run, then write its config.json; returns
    the agent hashes whose records the run keeps (`_accepted_agents`)."""
    run_dir = config.run_dir()
    path = run_dir / CONFIG_FILE
    identity = {"config": config.identity(), "db_hash": db_hash}
    saved: dict[str, Any] | None = None
    if path.exists():
        try:
            saved = read_run_config(run_dir, fix="restore it, or choose another --out folder")
        except ValueError as exc:
            raise RunFolderError(str(exc)) from None
        previous = {"config": saved.get("config_identity"), "db_hash": saved.get("db_hash")}
        if previous != identity:
            saved_config = previous["config"] if isinstance(previous["config"], dict) else {}
            differ = identity_differences(config.identity(), saved_config)
            if previous["db_hash"] != db_hash:
                differ.append("the database differs")
            raise RunFolderError(f"{run_dir} holds a run with another configuration or database "
                                 f"({'; '.join(differ) or 'its saved identity is unreadable'}); "
                                 "use another --out folder or delete it")
    else:
        _check_new_folder(run_dir, adopt_results)
    accepted = _accepted_agents(run_dir, saved, agent, accept_agent_change or (saved is None and adopt_results))
    extra = {} if agent is None else {"agent": agent, "agent_hashes": sorted(accepted)}
    write_text_atomic(path, json.dumps({"config": config.model_dump(mode="json"),
                                        "config_identity": identity["config"], "db_hash": db_hash,
                                        "env_config": env_identity(config),
                                        **extra, "versions": _versions()}, indent=2) + "\n")
    return accepted


def _accepted_agents(run_dir: Path, saved: Any, agent: dict[str, Any] | None, accept_change: bool) -> frozenset[str]:
    """The agent hashes whose records this run keeps: the current agent's, those the folder already
    accepted, and `LEGACY_AGENT` for a folder made before agents were recorded (or adopted
    results). An agent whose identity differs from the folder's is refused (RunFolderError naming
    what changed) unless `accept_change` (--accept-agent-change)."""
    if agent is None:
        return frozenset({LEGACY_AGENT})
    if not isinstance(saved, dict):
        return frozenset({agent["hash"]} | ({LEGACY_AGENT} if accept_change else set()))
    before = saved.get("agent")
    hashes = saved.get("agent_hashes")
    if not isinstance(before, dict) or not isinstance(hashes, list):  # made before agents were recorded
        return frozenset({agent["hash"], LEGACY_AGENT})
    if before.get("hash") != agent["hash"] and agent["hash"] not in hashes and not accept_change:
        changes = "; ".join(identity_changes(before, agent))
        raise RunFolderError(f"{run_dir} holds results of another version of agent {agent['class']} ({changes}); "
                             "choose another --out folder to rerun it, or pass --accept-agent-change to keep the "
                             "old episodes and run the rest with this agent")
    return frozenset({agent["hash"], *(h for h in hashes if isinstance(h, str))})


def worker_count(config: RunConfig, episodes: int, todo: int) -> tuple[int, str | None]:
    """How many worker processes run `todo` episodes of a run of `episodes`, and a one-line notice
    when that is fewer than `--workers` asks for because the run has fewer episodes or, for local
    processes, more than max(8, LOCAL_WORKERS_PER_CPU x CPUs) are asked. (A resumed run with few
    episodes left uses fewer processes without a notice.) With a Ray cluster address the cluster
    schedules: only the episode count applies."""
    wanted = config.workers
    notice = None
    if 0 < episodes < wanted:
        notice = (f"--workers {wanted}: this run has {episodes} episode(s), so at most {episodes} worker "
                  f"process(es)")
        wanted = episodes
    if config.backend == "local" or config.ray_address is None:
        cap = max(8, LOCAL_WORKERS_PER_CPU * (os.cpu_count() or 1))
        if wanted > cap:
            notice = (f"--workers {config.workers}: at most {cap} local worker processes on this machine "
                      f"(max(8, {LOCAL_WORKERS_PER_CPU} x {os.cpu_count() or 1} CPUs)); using {cap}")
            wanted = cap
    return max(1, min(wanted, todo)), notice


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> None:
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


Records = Generator[dict[str, Any], None, None]
"""What a backend yields: finished episode records; closing it stops its workers."""


def _local(config: RunConfig, todo: list[tuple[str, int]], processes: int) -> Records:
    """Episodes in this process (one worker) or a pool of `processes` worker processes.

    Where the platform can fork (Linux), the pool's workers are forked from this process after
    `run` has built the run's context (`context_for`: dataset, indices, agent), so each worker
    starts ready, sharing those pages copy-on-write, instead of importing the package and
    opening the dataset again (a spawned worker needs about a second before its first episode,
    more than 30 reference episodes take; issue 14). Elsewhere, or when this process has started
    Ray, the workers are spawned. At most two episodes per process are queued at a time, so memory
    does not grow with the number of episodes. Workers die with this process (`_die_with_parent`);
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
                               initializer=_die_with_parent, initargs=(os.getpid(),))
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
        for proc in workers.values():
            proc.join(timeout=5)
        dead = [(pid, p.exitcode) for pid, p in workers.items() if p.exitcode not in (0, None, -signal.SIGTERM)]
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


def ray_temp_notice() -> str:
    """Where a Ray started by this run keeps its session files and logs, as the one line `run`
    prints before starting it: Ray's default (ray._common.utils.get_default_ray_temp_dir, 2.x):
    `$RAY_TMPDIR/ray`, else on Linux `$TMPDIR/ray`, else `/tmp/ray` on Linux and macOS, else the
    system temporary folder's `ray`."""
    import tempfile

    if os.environ.get("RAY_TMPDIR"):
        root = os.environ["RAY_TMPDIR"]
    elif sys.platform.startswith("linux") and os.environ.get("TMPDIR"):
        root = os.environ["TMPDIR"]
    elif sys.platform.startswith(("linux", "darwin")):
        root = "/tmp"
    else:
        root = tempfile.gettempdir()
    return (f"utp-env run: notice: Ray keeps its session files and logs under {Path(root) / 'ray'} (set "
            "RAY_TMPDIR to choose another folder; delete old session_* folders there to free space)")


def _ray(config: RunConfig, todo: list[tuple[str, int]], processes: int) -> Records:
    try:
        import ray
    except ImportError as exc:
        raise ValueError("the ray backend needs Ray: pip install 'utp-env[ray]'") from exc
    if not ray.is_initialized():
        if config.ray_address is None:
            print(ray_temp_notice(), file=sys.stderr)
        ray.init(address=config.ray_address, num_cpus=None if config.ray_address else processes,
                 include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_episode)
    queue = iter(todo)
    window = 4 * max(1, int(ray.cluster_resources().get("CPU", processes)))  # bounded, as locally
    pending = [remote.remote(config, qid, trial) for qid, trial in itertools.islice(queue, window)]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        pending.extend(remote.remote(config, qid, trial) for qid, trial in itertools.islice(queue, 1))
        yield ray.get(done[0])


# ---------------------------------------------------------------- progress

SCORES = ("bas", "cats", "tdas")


class RunProgress:
    """The run's progress bar (utp_env.tools.progress: live on a terminal only), whose postfix shows
    episodes done, the running final pass rate and the mean BAS/CATS/TDAS so far."""

    def __init__(self, total: int, done: list[dict[str, Any]], enabled: bool = True) -> None:
        from utp_env.tools.progress import progress_bar

        self.bar = progress_bar(total, "episodes", "episode", enabled=enabled, initial=len(done))
        self.n = 0
        self.passed = 0
        self.sums = dict.fromkeys(SCORES, 0.0)
        self.counts = dict.fromkeys(SCORES, 0)
        for record in done:
            self._add(record)

    def _add(self, record: dict[str, Any]) -> None:
        self.n += 1
        self.passed += bool(record.get("final_pass"))
        metrics = record.get("metrics") or {}
        for key in SCORES:
            value = metrics.get(key)
            if value is not None:
                self.sums[key] += value
                self.counts[key] += 1

    def update(self, record: dict[str, Any]) -> None:
        """Count one finished episode and refresh the bar."""
        self._add(record)
        postfix = {"pass": f"{self.passed / self.n:.0%}"}
        for key in SCORES:
            if self.counts[key]:
                postfix[key.upper()] = f"{self.sums[key] / self.counts[key]:.2f}"
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()


BACKENDS: dict[str, Callable[[RunConfig, list[tuple[str, int]], int], Records]] = {
    "local": _local, "ray": _ray,
}


def with_agent_folder(config: RunConfig, cls: type, agent: dict[str, Any]) -> RunConfig:
    """`config` with its default run folder named after the version of a user's agent too (8 hex digits of
    its identity hash, `agent_identity`) when no --out is given and the agent is not one of utp-env's: every
    edit of one's own agent then starts a folder of its own instead of being refused by the folder of the
    last version (which --accept-agent-change would mix in). utp-env's agents keep the names the docs use."""
    if config.out is not None or cls.__module__.startswith("utp_env."):
        return config
    return config.model_copy(update={"out": str(Path("runs") / f"{config.default_run_name()}-agent"
                                                                 f"{agent['hash'][:8]}")})


INFRASTRUCTURE = "infrastructure_error"
RETIRED = "run again: it ended in an infrastructure error (model server down, a timeout, a tool or evaluator failure)"


def run(config: RunConfig, progress: bool = True, adopt_results: bool = False,
        accept_agent_change: bool = False, retry_failed: bool = True) -> Path:
    """Execute (or resume) the run of `config`; returns its folder, with the summary written.

    `adopt_results`: accept a results.jsonl found without its config.json (the caller vouches
    that it was made with this configuration). `accept_agent_change`: resume a folder whose
    records an agent with other code or settings made, keeping them (else refused). Every record
    read back is checked (`utp_env/runs/records.py`); a bad one is moved to results.rejected.jsonl
    and its episode run again. Errors about the folder are `RunFolderError`
    (a ValueError), about writing it `FileWriteError` (an OSError); both are one line naming it.
    A pool worker that dies ends the run with a one-line `WorkerDiedError` (finished episodes
    are kept; the same call resumes). On resume, episodes that ended in an infrastructure error (the
    model server down or timing out, a tool, the evaluator or the simulation failing) run again, their
    old records moved to results.rejected.jsonl, unless `retry_failed` is False (--no-retry-failed).
    """
    check_agent_settings(config)
    cls, settings, _ = agent_spec(config)
    agent = agent_identity(cls, settings)
    config = with_agent_folder(config, cls, agent)
    ctx = context_for(config, progress=progress)
    if config.env == "replan":
        from utp_env.runs.replan_episode import repair_notice

        notice = repair_notice(ctx.agent)
        if notice:
            print(notice, file=sys.stderr)
    run_dir = config.run_dir()
    if not (run_dir / CONFIG_FILE).exists():
        _check_new_folder(run_dir, adopt_results)  # before the lock file is created in a foreign folder
    with run_lock(run_dir):
        db_hash = ctx.dataset.db.content_hash
        accepted = _prepare_dir(config, db_hash, adopt_results, agent, accept_agent_change)
        episodes = plan_episodes(config)
        context = RecordContext(queries=frozenset(q for q, _ in episodes), trials=config.trials, db_hash=db_hash,
                                agent_hashes=accepted, env=config.env)
        store = ResultsStore(run_dir, context, agent_hash=agent["hash"])
        failed = sorted(k for k, r in store.records.items() if r.get("termination_reason") == INFRASTRUCTURE)
        if failed and retry_failed:
            store.retire(failed, RETIRED)
        todo = [(q, t) for q, t in episodes if not store.done(q, t)]
        if store.records or store.rejected or failed:
            message = (f"resuming {run_dir}: {len(episodes) - len(todo)} of {len(episodes)} episodes done, "
                       f"{len(store.records)} valid record(s) kept")
            if failed:
                what = "run again (--no-retry-failed keeps them)" if retry_failed else "kept (--no-retry-failed)"
                message += (f"; {len(failed)} episode(s) that ended in an infrastructure error (e.g. {failed[0]}: "
                            f"model server down, a timeout) {what}")
            if store.bad_lines:
                message += (f", {store.bad_lines} bad line(s) moved to {REJECTED} and their episodes redone "
                            f"({store.rejected_summary()})")
            print(message, file=sys.stderr)
        processes, notice = worker_count(config, len(episodes), len(todo))
        if notice:
            print(f"utp-env run: notice: {notice}", file=sys.stderr)
        with RunProgress(total=len(episodes), done=store.ordered([episode_key(*e) for e in episodes]),
                         enabled=progress) as bar:
            try:  # closing: on any error (a full disk, Ctrl-C) the pool is stopped before it propagates
                with contextlib.closing(BACKENDS[config.backend](config, todo, processes)) as records:
                    for record in records:
                        refused = store.append(record)
                        if refused is not None:
                            print(f"warning: the record of {episode_key(record['query_id'], record['trial'])} is "
                                  f"invalid ({refused}); moved to {REJECTED}, its episode runs again on resume",
                                  file=sys.stderr)
                        bar.update(record)
            except WorkerDiedError as exc:
                raise WorkerDiedError(f"{exc}; {len(store.records)} of {len(episodes)} episodes are saved in "
                                      f"{store.path}; rerun the same command to resume") from None
        from utp_env.runs.summary import write_summary

        write_summary(run_dir, ctx, store.ordered([episode_key(*e) for e in episodes]), progress=progress)
    return run_dir
