"""`UTPReplanEnv` (`utp_env/UTP-Replan-v0`): plan a trip, then live through it and repair it (docs/REPLAN.md).

The same env as `utp_env/UTP-v0` (`UTPEnv`, utp_env/env/core.py: tools, spaces, action grammar and
code paths) with a second phase:

- *planning*: exactly UTP-v0. `submit`/`submit_plan` evaluates the plan as UTP-v0 does (kept in
  `info["plan_evaluation"]`) and starts the trip instead of ending the episode;
  `reset(options={"plan": ...})` starts directly at the trip's start with a given plan.
- *execution*: one realisation of the trip (`utp_env.simulation.realise.Realiser`: the simulation's
  delay models and engine semantics, common random numbers keyed by the episode seed) runs until
  reality departs from the plan beyond its slack; the observation is then a disruption report. The
  agent repairs what is still ahead with the same tools (what has started or passed is locked:
  `locks.Execution`, filled in by `ExecutionPhase` of utp_env/env/trip.py) and calls
  `continue_trip`.
- *ended*: the trip is over (`terminated`), or the step limit cut the episode (`truncated`; the trip
  is then played out without repairs): the reward is the realised outcome
  (`utp_env/evaluation/realised.py`, weights in configs/replan.yaml).

This module holds the env (it fills in `UTPEnv`'s hooks: `EXTRA_TOOLS`, `on_submit`, `episode_info`,
`_finish`), the closed loop's tools (`continue_trip`, and `submit`/`submit_plan` as the closed loop
describes them) and `lived_plan`; its config, `ReplanConfig`, is beside `EnvConfig` in
utp_env/env/config.py.
"""

from __future__ import annotations

import dataclasses
import traceback
from pathlib import Path
from typing import Any, ClassVar, Literal

from utp_env.env.config import (
    REPLAN_CONFIG_PATH,
    DisruptionKind,
    EnvConfig,
    ReplanConfig,
    load_replan_config,
)
from utp_env.env.core import RESET_OPTIONS, UTPEnv
from utp_env.env.episode import (
    Episode,
    EpisodeOutcome,
    TerminationReason,
    finish,
    report_text,
)
from utp_env.env.itinerary_tools import ITINERARY_TOOLS, NoArgs
from utp_env.env.levels import FULL_LEVEL
from utp_env.env.locks import Execution
from utp_env.env.trip import ExecutionPhase, new_realiser
from utp_env.itinerary import Plan, PlanItem
from utp_env.query import Query
from utp_env.simulation.realise import copy_plan
from utp_env.simulation.trip_steps import clock_text
from utp_env.tools.database import Database
from utp_env.tools.schema import is_venue_kind
from utp_env.tools.seeding import stable_int
from utp_env.tools.toolkit import Registry, ToolError, ToolResult, ToolSpec, make_registry

Phase = Literal["planning", "execution", "ended"]
EXECUTION: Registry[Episode] = make_registry("execution")
EXECUTION_TOOLS = EXECUTION.tools
"""The tools of the execution phase of `utp_env/UTP-Replan-v0` only (`continue_trip`)."""


def lived_plan(plan: Plan, query: Query, db: Database) -> Plan:
    """The plan the traveller lives: `plan` with each venue item named `Canonical Name, City` (its
    canonical database name and the city the evaluator resolved it in) and with its kind
    (`venue_type`) and meal written out as the evaluator reads them
    (`utp_env.evaluation.context.build_context`). Plans read from the paper's format often leave both
    to be inferred ('Cafe X, Pune', no type); written out, the itinerary tools keep a day's meals,
    visits and events when a repair edits it, and every agent's plan names a venue alike (the common
    random numbers of a visit are keyed by its name). The city stays in the name because a travel
    day has two cities and a name may exist in both: without it the realised trip would be resolved
    in the day's first city, not where the submitted plan put the venue. Items the evaluator cannot
    resolve are kept."""
    from utp_env.evaluation.context import build_context

    out = copy_plan(plan)
    ctx = build_context(out, query, db)
    typed: dict[int, PlanItem] = {}
    for v in ctx.visits:
        if v.item is None or v.ref is None or not is_venue_kind(v.kind):
            continue
        name = f"{db.tables[v.ref.table].columns['name'][v.ref.row]}, {v.ref.city}"
        meal = v.item.meal if v.kind != "restaurant" else (v.item.meal or v.meal)
        typed[id(v.item)] = v.item.model_copy(update={"name": name, "venue_type": v.item.venue_type or v.kind,
                                                      "meal": meal})
    for day in out.days:
        day.items = [typed.get(id(item), item) for item in day.items]
    return out



# ---------------------------------------------------------------- the closed loop's tools


CLOSED_LOOP_ENDINGS: dict[str, tuple[str, str]] = {
    "submit_plan": ("and ends the episode, which is then scored.",
                    "and starts the trip: it is lived through one sampled reality, paused at disruptions for "
                    "repairs (continue_trip resumes it), and what actually happens is scored."),
    "submit": ("the episode ends and is scored.",
               "the trip then starts: it is lived through one sampled reality, paused at disruptions for "
               "repairs (continue_trip resumes it), and what actually happens is scored."),
}
"""For each ending tool, the words of its description that say the episode ends, and what they say
instead in the closed-loop env utp_env/UTP-Replan-v0, where submitting starts the trip."""


def closed_loop_ending_tools() -> dict[str, ToolSpec[Episode]]:
    """`submit` and `submit_plan` as utp_env/UTP-Replan-v0 describes them (`CLOSED_LOOP_ENDINGS`):
    the same specs with the description saying that submitting starts the trip."""
    out: dict[str, ToolSpec[Episode]] = {}
    for name, (ends, starts) in CLOSED_LOOP_ENDINGS.items():
        spec = ITINERARY_TOOLS[name]
        if ends not in spec.description:
            raise RuntimeError(f"the description of {name} no longer says {ends!r}; update CLOSED_LOOP_ENDINGS")
        out[name] = dataclasses.replace(spec, description=spec.description.replace(ends, starts))
    return out


@EXECUTION.tool
def continue_trip(ep: Episode, args: NoArgs) -> ToolResult:
    """Go on with the trip after a disruption report (or the briefing at its start): the clock runs
    until the next disruption or the trip's end, which ends the episode and scores what happened.

    Repair first with the lookup and itinerary tools if you want to: what has started or passed is
    locked. Only in the closed-loop env utp_env/UTP-Replan-v0, after the plan is submitted.
    Example: {}
    """
    execution: Execution | None = ep.execution
    if execution is None:
        raise ToolError("the trip has not started: this tool is only available after the plan is submitted; "
                        "call submit (or submit_plan) first")
    return execution.resume()


def closed_loop_note(config: ReplanConfig) -> str:
    """What the closed loop adds to the task text: how the episode goes on after submission."""
    return ("CLOSED LOOP: submitting does not end the episode. The trip is then lived through one sampled "
            "reality (transport delays, visit overruns); when it departs from your plan beyond "
            f"{config.late_arrival_slack_min:g} minutes the trip pauses with a DISRUPTION report (at most "
            f"{config.max_disruptions}). Repair what is still ahead with the same tools (what has started or "
            "passed is locked; fares already paid are not refunded), then call continue_trip. You are "
            "scored on what actually happens: planned visits, meals and events done, the budget and hard "
            "constraints of the realised trip, punctuality, commonsense.")


# ---------------------------------------------------------------- the env


class UTPReplanEnv(UTPEnv):
    """Plan a trip, then live through one realisation of it and repair it (`utp_env/UTP-Replan-v0`).

    UTP-v0 (`UTPEnv`) with a second phase: submitting starts the trip instead of ending the episode
    (docs/REPLAN.md). It fills in `UTPEnv`'s hooks and overrides nothing else.

    ## Action Space

    As `UTPEnv`'s, plus the tool `continue_trip` (run the trip on to the next disruption or its end);
    `submit` and `submit_plan` start the trip and are refused once it is under way. What has started
    or passed is locked: an itinerary tool that would change it answers why, and the plan is unchanged.

    ## Observation

    As `UTPEnv`'s (text). `submit` answers with the plan's evaluation and the trip's first disruption
    report (or its end); each `continue_trip` with the next one. A disruption report says what
    happened (a late leg, a missed departure, an overrun, a cancellation), where the traveller is and
    what is still ahead.

    ## Rewards

    0 until the episode ends, then the realised score in [0, 1]: the weighted mean of the realised
    terms of utp_env/env/reward/ (completion: planned visits, meals and events done; hard: budget
    and hard constraints of the lived trip; punctuality; commonsense), weights in
    configs/replan.yaml (`ReplanConfig.reward_weights`; docs/REPLAN.md). The plan's own UTP-v0
    reward is `info["plan_reward"]`.

    ## Episode End

    Terminated when the trip is over. Truncated at `EnvConfig.step_limit` steps: the trip is then
    played out without repairs and scored. `info["phase"]` is planning, execution or ended;
    `info["disruption"]` is set on the step that paused the trip.

    ## Arguments

    db_path, profile, split, config, render_mode, world: as `UTPEnv` (`config.stochastic` must be
    false: the trip is always lived through one realisation drawn from the reset seed).
    replan: A `ReplanConfig`, a dict of overrides, or a YAML path; default configs/replan.yaml.

    `reset` takes `query_id`, `query` and `split` as `UTPEnv.reset`, and `plan`: a `Plan`, a plan in
    the paper's format as text or JSON, or a `Plan` JSON dict, which starts at the trip's start with
    that plan, in the execution phase; with a `Plan`, `plan_outcome` is that plan's `EpisodeOutcome`
    already computed by the caller (`finish`, as the run worker does, utp_env/runs/replan_episode.py):
    it becomes `info["plan_evaluation"]` and the plan is not evaluated a second time.
    """

    RESETS_FROM_PLAN: ClassVar[bool] = True
    RESET_OPTIONS: ClassVar[frozenset[str]] = RESET_OPTIONS | {"plan", "plan_outcome"}
    EXTRA_TOOLS: ClassVar[dict[str, ToolSpec[Any]]] = {**closed_loop_ending_tools(), **EXECUTION_TOOLS}
    NO_STOCHASTIC: ClassVar[str | None] = ("utp_env/UTP-Replan-v0: the trip is always lived through one "
                                           "realisation drawn from the reset seed")

    def __init__(self, db_path: str | Path | None = None, profile: str = "full", split: str | None = None,
                 config: EnvConfig | dict[str, Any] | str | Path | None = None, render_mode: str | None = None,
                 replan: ReplanConfig | dict[str, Any] | str | Path | None = None, world: int = 0,
                 level: int | None = None) -> None:
        super().__init__(db_path, profile, split, config, render_mode, world=world, level=level)
        if self.level.number != FULL_LEVEL:
            raise ValueError(f"level: the closed loop lives through the whole trip (level {FULL_LEVEL}), not level "
                             f"{self.level.number}; use utp_env/UTP-L{self.level.number}-v0 for a level")
        if self.config.stochastic:
            raise ValueError("config: stochastic does not apply to utp_env/UTP-Replan-v0 (the trip is always lived "
                             "through one realisation drawn from the reset seed); set stochastic: false")
        self._init_args["replan"] = replan if not isinstance(replan, Path) else str(replan)  # type: ignore[assignment]
        self.replan_config = load_replan_config(replan)
        self.task_note = closed_loop_note(self.replan_config)

    @property
    def phase(self) -> Phase:
        """planning, execution or ended."""
        ep = self.episode
        if ep is None or ep.done:
            return "ended"
        return "planning" if ep.execution is None else "execution"

    # ------------------------------------------------------------ UTPEnv's hooks

    def on_submit(self, ep: Episode, outcome: EpisodeOutcome | None = None, at_reset: bool = False) -> str | None:
        """A submission starts the trip: the plan is evaluated as UTP-v0 does (unless `outcome` is
        given) and the clock runs to the first disruption (at reset: the briefing before the start)."""
        ep.status = None
        self._begin_execution(ep, outcome)
        execution = self._execution(ep)
        if at_reset:
            return execution.briefing()
        summary = report_text(execution.plan_outcome.report) if execution.plan_outcome.report else ""
        return (f"Plan submitted ({len(ep.plan.days)} days). Its evaluation as a plan:\n{summary}\n"
                f"The trip starts at {clock_text(execution.realiser.clock)}.\n\n{execution.advance()}")

    def episode_info(self, ep: Episode, at_reset: bool = False) -> dict[str, Any]:
        """The phase; at a reset from a plan, its evaluation as a plan; after a pause, the disruption
        (reported once: the step that paused the trip)."""
        info: dict[str, Any] = {}
        execution = ep.execution
        if at_reset and execution is not None:
            info["plan_evaluation"] = self._plan_evaluation(execution)
        info["phase"] = self.phase
        if execution is not None:
            last, execution.last = execution.last, None
            if last is not None and not ep.done:
                info["disruption"] = last.to_json()
        return info

    def _finish(self, ep: Episode, reason: TerminationReason) -> tuple[float, dict[str, Any]]:
        """End `ep`: play the trip out without repairs (when it was not over) and score what happened."""
        if reason == TerminationReason.INFRASTRUCTURE_ERROR:  # a tool of ours failed: no trip to score
            _, broken = super()._finish(ep, reason)
            broken.update(phase="ended", reward=0.0)
            return 0.0, broken
        try:
            if ep.execution is None:
                self._begin_execution(ep)
            execution = self._execution(ep)
            execution.play_out()
            reward, realised = execution.score(ep.query, ep.reference, self.replan_config)
        except Exception as exc:  # a bug of ours must not crash the agent's run
            _, failed = super()._finish(ep, TerminationReason.INFRASTRUCTURE_ERROR)
            failed.update(phase="ended", reward=0.0, error=f"replan failed: {type(exc).__name__}: {exc}",
                          traceback=traceback.format_exc(limit=8))
            return 0.0, failed
        ep.status = reason
        outcome = execution.plan_outcome
        info: dict[str, Any] = {"episode_id": ep.episode_id, "steps": ep.steps, **outcome.to_json()}
        info.update(termination_reason=reason.value, plan=ep.plan.model_dump(mode="json"),
                    submitted_plan=execution.submitted.model_dump(mode="json"), reward=reward,
                    plan_reward=outcome.reward, plan_evaluation=self._plan_evaluation(execution), **realised)
        return reward, info

    # ------------------------------------------------------------ internals

    def _execution(self, ep: Episode) -> ExecutionPhase:
        assert isinstance(ep.execution, ExecutionPhase)
        return ep.execution

    def _begin_execution(self, ep: Episode, outcome: EpisodeOutcome | None = None) -> None:
        """Enter the execution phase with the episode's plan: evaluate it as UTP-v0 does (unless the
        caller gives its `outcome`), start the clock."""
        assert self.seed_value is not None
        submitted = copy_plan(ep.plan)
        if outcome is None:
            robust = self.config.robustness
            outcome = finish(TerminationReason.SUBMITTED, submitted, ep.query, ep.db,
                             weights=self.config.reward_weights, reference=ep.reference,
                             rollouts=self.config.robustness_rollouts if robust else 0,
                             rollout_seed=stable_int(ep.episode_id, "robustness") if robust else 0)
        ep.plan = lived_plan(ep.plan, ep.query, ep.db)
        realiser = new_realiser(ep, self.seed_value, self.replan_config)
        realiser.start(ep.plan)
        ep.execution = ExecutionPhase(ep, realiser, submitted, outcome, self.replan_config, self.seed_value)

    @staticmethod
    def _plan_evaluation(execution: ExecutionPhase) -> dict[str, Any] | None:
        report = execution.plan_outcome.report
        return None if report is None else report.model_dump(mode="json")


__all__ = ["EXECUTION_TOOLS", "REPLAN_CONFIG_PATH", "DisruptionKind", "ExecutionPhase", "ReplanConfig",
           "UTPReplanEnv", "closed_loop_ending_tools", "lived_plan", "load_replan_config"]
