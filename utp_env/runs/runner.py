"""`utp-env run`: schedule episodes on a backend, store each as it finishes (with a progress bar),
summarise at the end.

Episodes are identified by (query id, trial) and seeded from (run seed, query id, trial), so a
resumed, re-sharded or Ray-backed run gives the same results as a one-worker run. Each episode
runs in `utp_env/runs/episode.py`; `store.py` writes results.jsonl; `summary.py` the summary.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from utp_env.runs.config import RunConfig
from utp_env.runs.episode import context_for, run_episode
from utp_env.runs.store import ResultsStore, episode_key

CONFIG_FILE = "config.json"


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


def _prepare_dir(config: RunConfig, db_hash: str) -> Path:
    run_dir = config.run_dir()
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / CONFIG_FILE
    identity = {"config": config.identity(), "db_hash": db_hash}
    if path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        previous = {"config": saved.get("config_identity"), "db_hash": saved.get("db_hash")}
        if previous != identity:
            raise ValueError(f"{run_dir} holds a run with another configuration or database; "
                             "use another --out folder or delete it")
    path.write_text(json.dumps({"config": config.model_dump(mode="json"), "config_identity": identity["config"],
                                "db_hash": db_hash, "versions": _versions()}, indent=2) + "\n", encoding="utf-8")
    return run_dir


def _local(config: RunConfig, todo: list[tuple[str, int]]) -> Iterator[dict[str, Any]]:
    if config.workers == 1:
        for qid, trial in todo:
            yield run_episode(config, qid, trial)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=config.workers, mp_context=mp.get_context("spawn")) as pool:
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
    """The run's progress bar: a tqdm bar on stderr whose postfix shows episodes done, the running
    final pass rate and the mean BAS/CATS/TDAS so far (from each record's `metrics`)."""

    def __init__(self, total: int, done: list[dict[str, Any]], enabled: bool = True) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=len(done), desc="episodes", unit="ep", file=sys.stderr,
                        disable=not enabled, dynamic_ncols=True)
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


def run(config: RunConfig, progress: bool = True) -> Path:
    """Execute (or resume) the run of `config`; returns its folder, with the summary written."""
    ctx = context_for(config, progress=progress)
    run_dir = _prepare_dir(config, ctx.dataset.db.content_hash)
    store = ResultsStore(run_dir)
    episodes = plan_episodes(config)
    todo = [(q, t) for q, t in episodes if not store.done(q, t)]
    if store.records or store.torn_lines:
        print(f"resuming {run_dir}: {len(episodes) - len(todo)} of {len(episodes)} episodes done"
              + (f", {store.torn_lines} torn line redone" if store.torn_lines else ""), file=sys.stderr)
    with RunProgress(total=len(episodes), done=store.ordered([episode_key(*e) for e in episodes]),
                     enabled=progress) as bar:
        for record in BACKENDS[config.backend](config, todo):
            store.append(record)
            bar.update(record)
    from utp_env.runs.summary import write_summary

    write_summary(run_dir, ctx, store.ordered([episode_key(*e) for e in episodes]))
    return run_dir
