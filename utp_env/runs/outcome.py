"""What an episode's agent left, as a run records it: its plan through the env's `finish`
(`plan_outcome`), its trace and usage, and an exception in one line.

Shared by the two episode workers, `utp_env/runs/episode.py` (UTP-v0) and
`utp_env/runs/replan_episode.py` (the closed loop); neither imports the other's helpers, so the
two modules form no import circle (the first dispatches to the second).
"""

from __future__ import annotations

import traceback
from typing import Any, Protocol

from utp_env.dataset import Dataset
from utp_env.env.episode import EpisodeOutcome, TerminationReason, finish
from utp_env.query import Query
from utp_env.runs.config import RunConfig


class PlanningContext(Protocol):
    """What `plan_outcome` reads of a worker's context (`utp_env.runs.episode.RunContext`)."""

    config: RunConfig
    dataset: Dataset
    reward_weights: dict[str, float]


def plan_outcome(ctx: PlanningContext, query: Query, seed: int, result: Any) -> EpisodeOutcome:
    """The outcome of an agent's result (`AgentResult`): its plan through the env's `finish`, or
    why there is none. An agent that drove the env says how its episode ended (e.g. step_limit);
    that reason is kept, and an unknown one is the agent's error."""
    ended = getattr(result, "termination_reason", None)
    if ended is not None and ended not in TerminationReason.__members__.values():
        return EpisodeOutcome(TerminationReason.AGENT_ERROR, error=f"the agent returned the unknown "
                              f"termination_reason {ended!r}; use a TerminationReason value")
    if result.plan is None:
        no_plan = TerminationReason.NOT_DELIVERED if ended in (None, TerminationReason.SUBMITTED) else ended
        return EpisodeOutcome(TerminationReason(no_plan), error=result.error or "agent returned no plan")
    return finish(TerminationReason(ended or TerminationReason.SUBMITTED), result.plan, query, ctx.dataset.db,
                  weights=ctx.reward_weights, reference=ctx.dataset.references.get(query.query_id),
                  rollouts=ctx.config.rollouts, rollout_seed=seed, error=result.error)


def trace_summary(trace: Any) -> dict[str, Any] | None:
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


def usage(trace: Any) -> dict[str, Any] | None:
    if trace is None:
        return None
    return {key: getattr(trace, key, None) for key in ("tool_calls", "model_calls", "input_tokens",
                                                       "output_tokens", "cost_usd")}


AGENT_FAULTS: tuple[type[BaseException], ...] = (Exception, SystemExit)
"""What an agent's code may raise that is its fault and recorded as the episode's `agent_error`:
any `Exception`, and `SystemExit` (a model library or agent calling `sys.exit`), which would
otherwise end the whole run. `KeyboardInterrupt` still stops the run."""


def describe(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
