"""One closed-loop benchmark episode (`utp-env run --env replan`, docs/REPLAN.md).

The agent plans the query as in a plan run (`utp_env/runs/episode.py`); then the plan is lived
through one sampled reality of `utp_env/UTP-Replan-v0` (`utp_env/env/replan.py`): the worker
resets the replan env with `options={"query": query, "plan": plan, "plan_outcome": outcome}` (the
plan's outcome the worker computed with `finish`, so the env does not evaluate it again) and the
episode's seed, so
every agent run with the same run seed meets the same delays and overruns (common random
numbers), and loops until the trip ends:

    disruption report -> agent.repair(env, observation, info) -> continue_trip -> ...

An agent without a `repair` method (`no_repair`, `direct`, `atlas`) never repairs: the worker only
continues. An agent that drives an env itself (`run_env(env, options, trace=, seed=)`, the
tool-calling agent) gets the replan env and plays the whole episode, planning phase included.

`repair` is given the env wrapped in `StepRecorder`, a gymnasium wrapper that remembers the last
answer of `step`, so that an episode which ends during a repair (the step limit) is still recorded
with the env's final info; the env itself is `env.unwrapped`. Whatever `repair` raises is recorded
as the episode's `agent_error` and the trip is played out without further repairs, as an agent
error in a plan run still scores the plan.

The record is a plan run's (the submitted plan's evaluation through `finish`, the same keys), with
`reward` the realised reward, `plan_reward` the submitted plan's UTP-v0 reward, and a `replan`
block: realised score and terms, items kept, rebookings, late minutes, extra cost, the disruption
reports, the realised trip and how many repair calls the agent made.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, SupportsFloat

import gymnasium as gym

from utp_env.env.episode import EpisodeOutcome, TerminationReason
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.runs.outcome import AGENT_FAULTS, describe, plan_outcome, trace_summary, usage

CONTINUE = {"tool": "continue_trip", "args": {}}
EXTRA_PAUSES = 4  # beyond the env's disruption bound: the loop stops even if an env never ends

_ENVS: dict[str, Any] = {}


class StepRecorder(gym.Wrapper[str, Any, str, Any]):
    """The replan env as a repair sees it: every `step` is forwarded and its answer remembered
    (`last`), and `steps` counts them; everything else is the env's (`env.unwrapped`)."""

    def __init__(self, env: gym.Env[str, Any]) -> None:
        super().__init__(env)
        self.last: tuple[str, SupportsFloat, bool, bool, dict[str, Any]] | None = None
        self.steps = 0

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        answer = self.env.step(action)
        self.last, self.steps = answer, self.steps + 1
        return answer

    @property
    def ended(self) -> bool:
        """Whether the last forwarded step ended the episode."""
        return self.last is not None and bool(self.last[2] or self.last[3])


def repair_notice(agent: Any) -> str | None:
    """One line for a replan run whose agent never repairs (no `repair`, and it does not drive the
    env itself with `run_env`), so that a user does not read its realised scores as a repair
    policy's; None for an agent that repairs, and for `no_repair`, whose purpose it is."""
    if callable(getattr(agent, "repair", None)) or callable(getattr(agent, "run_env", None)):
        return None
    name = str(getattr(agent, "name", type(agent).__name__))
    if name == "no_repair":
        return None
    return (f"notice: agent {name} has no repair method, so it never repairs: each trip is lived as planned, "
            "as with no_repair (docs/REPLAN.md, 'Agents and runs')")


def replan_env(ctx: Any) -> Any:
    """The process's replan env over the run's database (built on first use, reset per episode).

    For an agent that drives the env itself the env takes the agent's step budget and check_plan
    setting (its `settings.max_steps` and `settings.check_plan`, as the tool-calling agent builds
    its UTP-v0 env), so that a replan run gives it the same budget as a plan run."""
    settings = getattr(ctx.agent, "settings", None)
    overrides = {key: getattr(settings, name) for key, name in (("step_limit", "max_steps"),
                                                                  ("check_plan", "check_plan"))
                 if callable(getattr(ctx.agent, "run_env", None)) and hasattr(settings, name)}
    key = ctx.config.model_dump_json() + repr(sorted(overrides.items()))
    env = _ENVS.get(key)
    if env is None:
        from utp_env.env.replan import UTPReplanEnv

        env = UTPReplanEnv(db_path=ctx.config.db, profile=ctx.config.profile, config=overrides or None,
                           replan=dict(ctx.config.replan) or None, world=ctx.config.world)
        _ENVS.clear()  # one env per process is the common case; do not hold several databases
        _ENVS[key] = env
    return env


def live_trip(env: Any, query: Query, plan: Plan, seed: int, repair: Callable[..., None] | None,
              plan_outcome: EpisodeOutcome | None = None) -> tuple[float, dict[str, Any], int, str | None]:
    """Live `plan` for `query` through the replan env's reality of `seed`, calling `repair` at the
    briefing and at each pause (the env is reset with the query itself, so a query changed for an
    experiment, e.g. another budget, is the one lived). `plan_outcome`, the plan's outcome already
    computed (`finish`), is handed to the env, which then does not evaluate the plan again.

    Returns (realised reward, the env's final info, repair steps taken, the repair's error or None).
    """
    options: dict[str, Any] = {"query": query, "plan": plan}
    if plan_outcome is not None:
        options["plan_outcome"] = plan_outcome
    observation, info = env.reset(seed=seed, options=options)
    recorder = StepRecorder(env)
    error: str | None = None
    bound = int(env.unwrapped.replan_config.max_disruptions) + EXTRA_PAUSES
    final: tuple[SupportsFloat, dict[str, Any]] | None = None
    for _ in range(bound + 1):
        if repair is not None and error is None:
            try:
                repair(recorder, observation, info)
            except AGENT_FAULTS as exc:  # the agent's fault: recorded, the trip goes on without repairs

                error = f"repair failed: {describe(exc)}"
            if recorder.ended:
                assert recorder.last is not None
                final = (recorder.last[1], recorder.last[4])
                break
        observation, reward, terminated, truncated, info = env.step(CONTINUE)
        if terminated or truncated:
            final = (reward, info)
            break
    if final is None:
        raise RuntimeError(f"the replan env did not end after {bound + 1} continue_trip steps "
                           f"(its disruption bound is {bound - EXTRA_PAUSES})")
    return float(final[0]), final[1], recorder.steps, error


def replan_block(reward: float, info: dict[str, Any], repair_steps: int, error: str | None) -> dict[str, Any]:
    """The record's `replan` block from the env's final info (docs/RUNS.md): `items_kept` is the
    share of the submitted plan's visits, meals and events done (the `completion` term), with the
    counts `items_done` of `items_planned`."""
    terms = dict(info.get("realised_terms") or {})
    reports = list(info.get("disruptions") or [])
    return {"realised_score": reward, "terms": terms,
            "items_kept": terms.get("completion"), "items_done": terms.get("items_kept"),
            "items_planned": terms.get("items_planned"), "rebookings": terms.get("rebookings"),
            "late_minutes": terms.get("late_minutes"), "extra_cost": terms.get("extra_cost"),
            "disruptions": len(reports), "reports": reports, "realised": info.get("realised"),
            "repair_steps": repair_steps, "repair_error": error}


def run_replan_episode(ctx: Any, query: Query, trial: int, seed: int, started: float,
                       plan_with: Callable[[Any, Query], Any]) -> dict[str, Any]:
    """Plan `query` with the run's agent (`plan_with(ctx, query)`, the plan run's planning step),
    live the plan through the reality of `seed`, and return the results.jsonl record.

    What the agent raises while planning is its `agent_error` (no trip); what the env raises while
    the trip is lived is an `infrastructure_error` (the plan's outcome is kept, no realised block);
    a failed repair is the agent's error, with the trip played out and scored."""

    agent = ctx.agent
    trace: Any = None
    block: dict[str, Any] | None = None
    drives = callable(getattr(agent, "run_env", None))
    try:
        if drives:
            outcome, trace, block = _agent_drives(ctx, query, seed)
        else:
            result = plan_with(ctx, query)
            trace = result.trace
            outcome = plan_outcome(ctx, query, seed, result)
    except AGENT_FAULTS as exc:
        outcome = EpisodeOutcome(TerminationReason.AGENT_ERROR, error=describe(exc))
    if not drives and outcome.termination_reason == TerminationReason.SUBMITTED and outcome.plan is not None:
        repair = getattr(agent, "repair", None)
        try:
            reward, info, steps, error = live_trip(replan_env(ctx), query, outcome.plan, seed,
                                                   repair if callable(repair) else None, plan_outcome=outcome)
        except Exception as exc:
            outcome = replace(outcome, termination_reason=TerminationReason.INFRASTRUCTURE_ERROR,
                              error=f"the trip could not be lived: {describe(exc)}")
        else:
            block = replan_block(reward, info, steps, error)
            if error is not None:
                outcome = replace(outcome, termination_reason=TerminationReason.AGENT_ERROR, error=error)
    record = outcome.to_json()
    record["plan_reward"] = record["reward"]
    record["reward"] = block["realised_score"] if block is not None else 0.0
    return {"query_id": query.query_id, "trial": trial, "seed": seed, "db_hash": ctx.dataset.db.content_hash,
            **record, "replan": block, "trace": trace_summary(trace), "usage": usage(trace),
            "duration_s": round(time.perf_counter() - started, 3)}


def _agent_drives(ctx: Any, query: Query, seed: int) -> tuple[EpisodeOutcome, Any, dict[str, Any] | None]:
    """An agent with `run_env` (the tool-calling agent) plays the whole replan episode itself: the
    record's plan outcome is the one of the plan it submitted (`info["submitted_plan"]`; the plan it
    ended with when it never submitted), and its realised block comes from the env's final info."""

    outcome = ctx.agent.run_env(replan_env(ctx), {"query_id": query.query_id}, seed=seed)
    result, info = outcome.result, dict(outcome.info)
    submitted = info.get("submitted_plan")
    if submitted and result.plan is not None:
        result = result.model_copy(update={"plan": Plan.model_validate(submitted)})
    block = None
    if info.get("realised") is not None:
        block = replan_block(float(outcome.reward), info, 0, None)
    return plan_outcome(ctx, query, seed, result), result.trace, block
