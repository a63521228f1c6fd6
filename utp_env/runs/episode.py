"""One benchmark episode: the agent plans a query, the plan is evaluated and replayed.

Runs inside worker processes (local pool or Ray): the database, queries and agent are loaded
once per process and cached. Whatever goes wrong inside an episode (agent exception, model
error, unparseable plan) is recorded in its result with a reason; it never stops the run.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Any

from utp_env.dataset import Dataset, open_dataset
from utp_env.query import Query
from utp_env.runs.config import RunConfig
from utp_env.runs.seeds import episode_seed


@dataclass
class RunContext:
    """What every episode of a run shares inside one process."""

    config: RunConfig
    dataset: Dataset
    queries: dict[str, Query]
    agent: Any


_CONTEXTS: dict[str, RunContext] = {}


def context_for(config: RunConfig, progress: bool = False) -> RunContext:
    """The cached RunContext of `config` in this process (built on first use)."""
    key = config.model_dump_json()
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        dataset = open_dataset(config.db, profile=config.profile, progress=progress)
        from utp_env.agents.registry import load_agent  # the run worker is a composition point

        agent = load_agent(config.agent, config.agent_settings)
        ctx = RunContext(config, dataset, {q.query_id: q for q in dataset.queries}, agent)
        _CONTEXTS[key] = ctx
    return ctx


def run_episode(config: RunConfig, query_id: str, trial: int) -> dict[str, Any]:
    """Plan, evaluate and replay one (query, trial); returns the results.jsonl record."""
    started = time.perf_counter()
    seed = episode_seed(config.seed, query_id, trial)
    record: dict[str, Any] = {"query_id": query_id, "trial": trial, "seed": seed, "plan": None,
                              "report": None, "robustness": None, "trace": None, "usage": None,
                              "final_pass": False, "metrics": None, "termination_reason": None,
                              "error": None}
    try:
        ctx = context_for(config)
    except Exception as exc:  # the run cannot start: reported by the caller, not per episode
        raise RuntimeError(f"cannot set up the run: {exc}") from exc
    query = ctx.queries[query_id]
    try:
        result = _plan(ctx, query)
    except Exception as exc:
        record.update(termination_reason="agent_error", error=_describe(exc))
        record["duration_s"] = round(time.perf_counter() - started, 3)
        return record
    record["trace"] = _trace_summary(result.trace)
    record["usage"] = _usage(result.trace)
    if result.plan is None:
        record.update(termination_reason="not_delivered", error=result.error or "agent returned no plan")
    else:
        from utp_env.evaluation import evaluate
        from utp_env.plan_format import format_plan

        record["plan"] = format_plan(result.plan)
        reference = ctx.dataset.references.get(query_id)
        report = evaluate(result.plan, query, ctx.dataset.db, reference=reference)
        record["report"] = report.model_dump(mode="json")
        record["final_pass"] = report.final_pass
        record["metrics"] = report.metrics()
        record["termination_reason"] = "submitted"
        if config.rollouts:
            from utp_env.simulation import simulate

            robustness = simulate(result.plan, query, ctx.dataset.db, n=config.rollouts, seed=seed)
            record["robustness"] = robustness.model_dump(mode="json")
        if result.error:
            record["error"] = result.error
    record["duration_s"] = round(time.perf_counter() - started, 3)
    return record


def _plan(ctx: RunContext, query: Query) -> Any:
    from utp_env.agents.base import Toolkit

    return ctx.agent.run(query, Toolkit(ctx.dataset.db))


def _trace_summary(trace: Any) -> dict[str, Any] | None:
    """What the agent did, without timings (so that reruns compare equal): how many steps of each
    kind and name, and which failed."""
    if trace is None or not hasattr(trace, "steps"):
        return None
    counts: dict[str, int] = {}
    failed: dict[str, int] = {}
    for step in trace.steps:
        key = f"{step.kind}:{step.name}"
        counts[key] = counts.get(key, 0) + 1
        if not step.ok:
            failed[key] = failed.get(key, 0) + 1
    return {"steps": len(trace.steps), "by_name": dict(sorted(counts.items())), "failed": dict(sorted(failed.items()))}


def _usage(trace: Any) -> dict[str, Any] | None:
    if trace is None:
        return None
    return {key: getattr(trace, key, None) for key in ("tool_calls", "model_calls", "input_tokens",
                                                       "output_tokens", "cost_usd")}


def _describe(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
