"""`utp-env run`: schedule episodes on a backend, store each as it finishes (with a progress bar),
summarise at the end.

Episodes are identified by (query id, trial) and seeded from (run seed, query id, trial), so a
resumed, re-sharded or Ray-backed run gives the same results as a one-worker run. Each episode
runs in `utp_env/runs/episode.py`; `store.py` writes results.jsonl; `summary.py` the summary.

One writer per folder: `run` holds an exclusive `fcntl.flock` on the folder's `.run.lock` while it
works, so a second `utp-env run` on the same folder stops at once with a one-line message. A
folder is refused when it holds results without the `config.json` that says how they were made
(unless `adopt_results`), or files that are not a run's.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from utp_env.runs.agent_identity import agent_identity, identity_changes
from utp_env.runs.config import RunConfig, identity_differences
from utp_env.runs.episode import agent_spec, check_agent_settings, context_for, run_episode
from utp_env.runs.records import LEGACY_AGENT, RecordContext
from utp_env.runs.store import REJECTED, RESULTS, ResultsStore, episode_key
from utp_env.tools.atomic import FileWriteError, write_text_atomic

CONFIG_FILE = "config.json"
LOCK_FILE = ".run.lock"
# What a run folder may hold besides hidden files (the lock, temporary files of atomic writes).
RUN_FILES = frozenset({CONFIG_FILE, RESULTS, REJECTED, "summary.json", "summary.md",
                       "metrics_by_horizon_risk.png", "pass_rates_by_level.png", "timeline.png", "report.html",
                       "realised_timeline.png"})


class RunFolderError(ValueError):
    """The run folder cannot be used as it is; the message names it and says what to do."""


def plan_episodes(config: RunConfig) -> list[tuple[str, int]]:
    """The run's episodes in canonical order: selected queries × trials."""
    ctx = context_for(config)
    ids = [q.query_id for q in ctx.queries.values()
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


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on `run_dir` (creating the folder) for the block; a RunFolderError
    at once when another process holds it. Without `fcntl` (Windows) the folder is not locked."""
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
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise FileWriteError.of(exc, path) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
            raise RunFolderError(f"{run_dir} is in use by another `utp-env run`"
                                 + (f" (process {holder})" if holder.isdigit() else "")
                                 + "; wait for it to finish or choose another --out folder") from None
        with contextlib.suppress(OSError):  # who holds it, for the message above (informative only)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
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
    saved: Any = None
    if path.exists():
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise RunFolderError(f"{path} cannot be read ({type(exc).__name__}: {exc}); restore it, or choose "
                                 "another --out folder") from None
        if not isinstance(saved, dict):
            raise RunFolderError(f"{path} is not a run's config (a JSON {type(saved).__name__}); choose another "
                                 "--out folder")
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


def _local(config: RunConfig, todo: list[tuple[str, int]]) -> Iterator[dict[str, Any]]:
    """Episodes in this process (one worker) or a process pool.

    Where the platform can fork (Linux), the pool's workers are forked from this process after
    `run` has built the run's context (`context_for`: dataset, indices, agent), so each worker
    starts ready, sharing those pages copy-on-write, instead of importing the package and
    opening the dataset again (a spawned worker needs about a second before its first episode,
    more than 30 reference episodes take; issue 14). Elsewhere, or when this process has started
    Ray, the workers are spawned.
    """
    if config.workers == 1:
        for qid, trial in todo:
            yield run_episode(config, qid, trial)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ray = sys.modules.get("ray")  # Ray's gRPC threads in this process do not survive a fork cleanly
    forkable = "fork" in mp.get_all_start_methods() and not (ray is not None and ray.is_initialized())
    method = "fork" if forkable else "spawn"
    with ProcessPoolExecutor(max_workers=config.workers, mp_context=mp.get_context(method)) as pool:
        futures = [pool.submit(run_episode, config, qid, trial) for qid, trial in todo]
        for future in as_completed(futures):
            yield future.result()


def _ray(config: RunConfig, todo: list[tuple[str, int]]) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError as exc:
        raise ValueError("the ray backend needs Ray: pip install 'utp-env[ray]'") from exc
    if not ray.is_initialized():
        ray.init(address=config.ray_address, num_cpus=None if config.ray_address else config.workers,
                 include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_episode)
    pending = [remote.remote(config, qid, trial) for qid, trial in todo]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
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


BACKENDS: dict[str, Callable[[RunConfig, list[tuple[str, int]]], Iterator[dict[str, Any]]]] = {
    "local": _local, "ray": _ray,
}


def run(config: RunConfig, progress: bool = True, adopt_results: bool = False,
        accept_agent_change: bool = False) -> Path:
    """Execute (or resume) the run of `config`; returns its folder, with the summary written.

    `adopt_results`: accept a results.jsonl found without its config.json (the caller vouches
    that it was made with this configuration). `accept_agent_change`: resume a folder whose
    records an agent with other code or settings made, keeping them (else refused). Every record
    read back is checked (`utp_env/runs/records.py`); a bad one is moved to results.rejected.jsonl
    and its episode run again. Errors about the folder are `RunFolderError`
    (a ValueError), about writing it `FileWriteError` (an OSError); both are one line naming it.
    """
    check_agent_settings(config)
    ctx = context_for(config, progress=progress)
    if config.env == "replan":
        from utp_env.runs.replan_episode import repair_notice

        notice = repair_notice(ctx.agent)
        if notice:
            print(notice, file=sys.stderr)
    cls, settings, _ = agent_spec(config)
    agent = agent_identity(cls, settings)
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
        todo = [(q, t) for q, t in episodes if not store.done(q, t)]
        if store.records or store.rejected:
            message = (f"resuming {run_dir}: {len(episodes) - len(todo)} of {len(episodes)} episodes done, "
                       f"{len(store.records)} valid record(s) kept")
            if store.rejected:
                message += (f", {store.bad_lines} bad line(s) moved to {REJECTED} and their episodes redone "
                            f"({store.rejected_summary()})")
            print(message, file=sys.stderr)
        with RunProgress(total=len(episodes), done=store.ordered([episode_key(*e) for e in episodes]),
                         enabled=progress) as bar:
            for record in BACKENDS[config.backend](config, todo):
                refused = store.append(record)
                if refused is not None:
                    print(f"warning: the record of {episode_key(record['query_id'], record['trial'])} is invalid "
                          f"({refused}); moved to {REJECTED}, its episode runs again on resume", file=sys.stderr)
                bar.update(record)
        from utp_env.runs.summary import write_summary

        write_summary(run_dir, ctx, store.ordered([episode_key(*e) for e in episodes]), progress=progress)
    return run_dir
