"""One benchmark episode: the agent plans a query, and the plan goes through the env's `finish`.

Runs inside worker processes (local pool or Ray): the database, queries and agent are loaded
once per process and cached. The end of an episode is the env's: `utp_env.env.episode.finish`
evaluates the plan, rewards it with the weights of `configs/env.yaml`, replays it with Monte
Carlo rollouts and builds the `EpisodeOutcome` whose JSON is the core of the results.jsonl
record. Whatever goes wrong inside an episode (agent exception, model error, no plan, an
evaluator bug) is recorded with its `TerminationReason`; it never stops the run.

Seeds are derived with SHA-256 from their inputs (`episode_seed`), so results never depend on
worker count, backend, process or Python's hash randomisation.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utp_env.dataset import Dataset, open_dataset
from utp_env.env.config import load_env_config
from utp_env.env.episode import EpisodeOutcome, TerminationReason
from utp_env.query import Query
from utp_env.runs.config import RunConfig
from utp_env.runs.outcome import AGENT_FAULTS, describe, plan_outcome, trace_summary, usage
from utp_env.tools.database import Database, collector_paused
from utp_env.tools.seeding import stable_int


def episode_seed(run_seed: int, query_id: str, trial: int) -> int:
    """The seed of one episode of a run: a function of (run seed, query id, trial) only."""
    return stable_int("episode", run_seed, query_id, trial)


@dataclass
class RunContext:
    """What every episode of a run shares inside one process."""

    config: RunConfig
    dataset: Dataset
    queries: dict[str, Query]
    agent: Any
    reward_weights: dict[str, float]


_CONTEXTS: dict[str, RunContext] = {}
_DATASETS: dict[tuple[Any, ...], Dataset] = {}


def context_for(config: RunConfig, progress: bool = False) -> RunContext:
    """The cached RunContext of `config` in this process (built on first use).

    The dataset is opened once per database and process (`_dataset`) and its indices are built
    at once (`_build_indices`), so a worker is ready in well under a second and its first episode
    costs what later ones do; local workers forked by the runner inherit the driver's context and
    start with nothing to load (`utp_env/runs/runner.py`).
    """
    key = config.model_dump_json()
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        dataset = dataset_for(config, progress)
        from utp_env.agents.registry import load_agent  # the run worker is a composition point

        agent = load_agent(config.agent, config.agent_settings)
        ctx = RunContext(config, dataset, {q.query_id: q for q in dataset.queries}, agent,
                         dict(load_env_config().reward_weights))
        _CONTEXTS[key] = ctx
    return ctx


def dataset_for(config: RunConfig, progress: bool = False) -> Dataset:
    """The dataset of the run's database, opened once per process for runs that share it (another
    output folder or worker count is the same data); a database folder whose files changed
    (name, size, modification time) is opened again."""
    files: tuple[tuple[str, int, int], ...] = ()
    if config.db is not None:
        with contextlib.suppress(OSError):
            files = tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in Path(config.db).iterdir()))
    key = (str(config.db), config.profile, config.world, files)
    dataset = _DATASETS.get(key)
    if dataset is None:
        _DATASETS.clear()  # one database per process is the common case; do not hold several
        with collector_paused():
            dataset = open_dataset(config.db, profile=config.profile, seed=config.world, progress=progress)
            _build_indices(dataset.db)
            # The dataset lives as long as the process: moved to the collector's permanent
            # generation (before the collector runs again), it is not walked by every full
            # collection during the episodes (about a fifth of a reference episode's time
            # otherwise), nor copied page by page into forked workers.
            gc.freeze()
        _DATASETS[key] = dataset
    return dataset


def _build_indices(db: Database) -> None:
    """Build the database's keyed, lookup, delay and evaluation indices now rather than inside
    the first episode."""
    from utp_env.evaluation.context import eval_index
    from utp_env.tools.delays import delay_index
    from utp_env.tools.lookup.index import lookup_index

    db.build_indices()
    lookup_index(db)
    delay_index(db)
    index = eval_index(db)
    for table in ("attractions", "restaurants", "events", "accommodations"):
        index.cities_with(table, "")


def agent_spec(config: RunConfig) -> tuple[type, dict[str, Any], str]:
    """The run's agent class, its resolved settings (config file values updated by `--set`) and
    where they came from, as `load_agent` resolves them (without building the agent)."""
    from utp_env.agents.registry import NAMES, import_agent_class, read_config

    source = config.agent
    if ":" in source and not Path(source).exists() and source not in NAMES:
        data: dict[str, Any] = {"agent": source}
        where = f"agent {source}"
    else:
        data, where = read_config(source)
    data.update(config.agent_settings)
    cls = import_agent_class(data.pop("agent"), where)
    return cls, data, where


def check_agent_settings(config: RunConfig) -> None:
    """Refuse, before anything runs, agent settings the agent would not accept: unknown names,
    and values of the wrong type for its `Settings` model or, without one, for its constructor's
    annotated parameters (`--set buffers=flase`, `--set max_days=abc`). One-line
    `AgentConfigError` (a ValueError) naming the setting, the value and the expected type."""
    from pydantic import TypeAdapter, ValidationError

    from utp_env.agents.registry import AgentConfigError, check_settings

    cls, data, where = agent_spec(config)
    check_settings(cls, data, where, frozenset(config.agent_settings))  # names, and values with a Settings model
    if isinstance(getattr(cls, "Settings", None), type):
        return
    try:
        params = inspect.signature(cls, eval_str=True).parameters
    except (NameError, TypeError, ValueError):  # annotations that cannot be evaluated: names were checked
        return
    for key, value in data.items():
        param = params.get(key)
        if param is None or param.annotation is inspect.Parameter.empty or isinstance(param.annotation, str):
            continue
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(param.annotation)
        except Exception:  # a type pydantic cannot describe: nothing to check it with
            continue
        try:
            adapter.validate_python(value)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            origin = "--set" if key in config.agent_settings else f"{where}: setting"
            raise AgentConfigError(f"{origin} {key}={value!r} is refused: {first['msg']} "
                                   f"(expected {_type_name(param.annotation)}); fix the value, e.g. "
                                   f"--set {key}=<{_type_name(param.annotation)}>") from None


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def run_episode(config: RunConfig, query_id: str, trial: int) -> dict[str, Any]:
    """Plan, evaluate and replay one (query, trial); returns the results.jsonl record."""
    started = time.perf_counter()
    seed = episode_seed(config.seed, query_id, trial)
    try:
        ctx = context_for(config)
    except Exception as exc:  # the run cannot start: reported by the caller, not per episode
        raise RuntimeError(f"cannot set up the run: {exc}") from exc
    query = ctx.queries[query_id]
    if config.env == "replan":  # the closed loop (UTP-Replan-v0): plan, then live the trip
        from utp_env.runs.replan_episode import run_replan_episode

        return run_replan_episode(ctx, query, trial, seed, started, _plan)
    trace: Any = None
    repairs: list[str] = []
    try:
        result = _plan(ctx, query)
    except AGENT_FAULTS as exc:
        outcome = EpisodeOutcome(TerminationReason.AGENT_ERROR, error=describe(exc))
    else:
        trace = result.trace
        repairs = list(getattr(result, "repairs", None) or [])
        outcome = plan_outcome(ctx, query, seed, result)
    return {"query_id": query_id, "trial": trial, "seed": seed, "db_hash": ctx.dataset.db.content_hash,
            **outcome.to_json(), **({"repairs": repairs} if repairs else {}),
            "trace": trace_summary(trace), "usage": usage(trace),
            "duration_s": round(time.perf_counter() - started, 3)}


def _plan(ctx: RunContext, query: Query) -> Any:
    from utp_env.agents.base import Toolkit

    return ctx.agent.run(query, Toolkit(ctx.dataset.db))
