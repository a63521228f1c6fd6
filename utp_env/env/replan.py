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
  `itinerary_tools.Execution`) and calls `continue_trip`.
- *ended*: the trip is over (`terminated`), or the step limit cut the episode (`truncated`; the trip
  is then played out without repairs): the reward is the realised outcome
  (`utp_env/evaluation/realised.py`, weights in configs/replan.yaml).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from utp_env.config import CONFIG_DIR, load_model, load_uncertainty
from utp_env.env.config import EnvConfig
from utp_env.env.core import RESET_OPTIONS, UTPEnv, first_validation_error
from utp_env.env.episode import (
    Episode,
    EpisodeOutcome,
    TerminationReason,
    finish,
    report_text,
)
from utp_env.env.itinerary_tools import ENDING, EXECUTION_TOOLS, closed_loop_ending_tools, plan_text
from utp_env.env.reward import DEFAULT_REALISED_WEIGHTS, REALISED_TERM_NAMES, realised_reward, realised_terms
from utp_env.env.spaces import ToolCallSpace
from utp_env.evaluation.realised import booked_nights_cost, extra_fares, within_leg_ranges
from utp_env.itinerary import Plan, PlanItem, TransportLeg
from utp_env.query import Query
from utp_env.simulation.compile import ELASTIC, is_journey_item
from utp_env.simulation.realise import (
    DEFAULT_KINDS,
    REALISER_STATE,
    Disruption,
    Realiser,
    clock_text,
    copy_plan,
    element_key,
    time_of_day,
)
from utp_env.tools.clock import MINUTES_PER_DAY
from utp_env.tools.database import Database
from utp_env.tools.json_depth import JSONDepthError, loads_bounded
from utp_env.tools.lookup.registry import ToolResult
from utp_env.tools.schema import is_venue_kind
from utp_env.tools.seeding import stable_int

REPLAN_CONFIG_PATH = CONFIG_DIR / "replan.yaml"
DisruptionKind = Literal["late_arrival", "missed_departure", "overrun", "cancellation"]
Phase = Literal["planning", "execution", "ended"]

def _default_kinds() -> list[DisruptionKind]:
    """The kinds active by default: `realise.DEFAULT_KINDS` (no cancellation)."""
    return list(DEFAULT_KINDS)  # type: ignore[arg-type]  # DisruptionKind spells DISRUPTION_KINDS (tested)


class ReplanConfig(BaseModel):
    """The knobs of the closed loop (configs/replan.yaml; a test checks the file equals these defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    disruptions: list[DisruptionKind] = Field(
        default_factory=_default_kinds,
        description="Which departures from the plan pause the trip for a repair; 'cancellation' (a "
                    "flight in its delay model's disruption branch does not fly) is an assumption beyond "
                    "the paper's data, off by default")
    late_arrival_slack_min: float = Field(
        default=15.0, ge=0, description="A late leg pauses the trip when the next step would start more than "
                                        "this many minutes late (or is lost or missed)")
    overrun_slack_min: float = Field(
        default=15.0, ge=0, description="A visit that overruns pauses the trip when the next step would start "
                                        "more than this many minutes late (or is lost or missed)")
    max_disruptions: int = Field(default=3, ge=0, le=50, description="Most pauses per trip; then it plays out")
    punctuality_scale_min: float = Field(default=120.0, gt=0,
                                         description="Late minutes at commitments that make punctuality 0")
    reward_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REALISED_WEIGHTS),
                                             description="Realised term -> weight (>= 0); the terms not "
                                                         "named keep their default weight")

    @field_validator("reward_weights", mode="before")
    @classmethod
    def _merge_weights(cls, given: Any) -> Any:
        """A partial `reward_weights` overrides only the terms it names (the others keep their default)."""
        return {**DEFAULT_REALISED_WEIGHTS, **given} if isinstance(given, dict) else given

    @model_validator(mode="after")
    def _weights(self) -> ReplanConfig:
        bad = {k: w for k, w in self.reward_weights.items() if not (math.isfinite(w) and w >= 0)}
        if bad:
            raise ValueError(f"reward_weights must be finite numbers >= 0; got {bad}")
        if not any(w > 0 for w in self.reward_weights.values()):
            raise ValueError(f"reward_weights: at least one of {', '.join(REALISED_TERM_NAMES)} needs a positive "
                             f"weight (else every trip scores 0); got {self.reward_weights}")
        unknown = set(self.reward_weights) - set(REALISED_TERM_NAMES)
        if unknown:
            raise ValueError(f"reward_weights: unknown term(s) {sorted(unknown)}; "
                             f"known: {', '.join(REALISED_TERM_NAMES)}")
        if len(set(self.disruptions)) != len(self.disruptions):
            raise ValueError(f"disruptions: each kind once; got {self.disruptions}")
        return self

    @property
    def slack(self) -> dict[str, float]:
        return {"late_arrival": self.late_arrival_slack_min, "overrun": self.overrun_slack_min}


def load_replan_config(config: ReplanConfig | dict[str, Any] | str | Path | None = None,
                       source: str = "replan=") -> ReplanConfig:
    """A `ReplanConfig` from an instance, a dict of overrides, a YAML path, or configs/replan.yaml.

    An error in a dict of overrides names `source` (where the caller's dict came from: the `replan=`
    argument, a run config's `replan:`), not configs/replan.yaml, which holds only the defaults."""
    if isinstance(config, ReplanConfig):
        return config
    default = REPLAN_CONFIG_PATH if REPLAN_CONFIG_PATH.exists() else None
    if isinstance(config, dict):
        base = load_model(ReplanConfig, default)  # an error in the defaults names their file
        try:
            return ReplanConfig.model_validate({**base.model_dump(), **config})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            known = ", ".join(ReplanConfig.model_fields)
            raise ValueError(f"{source}: {where + ': ' if where else ''}{first['msg']} (keys of ReplanConfig: "
                             f"{known}; docs/REPLAN.md)") from None
    return load_model(ReplanConfig, default if config is None else config)


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


def _decoded_plan_json(given: Any) -> Any:
    """`given` decoded when it is a JSON object as text (`Plan.model_dump_json()`, a JSON file's
    text); otherwise `given` as it is (a list as text is left to `parse_plan`). Text nested deeper
    than `MAX_JSON_DEPTH` is a `ValueError` naming the option."""
    if isinstance(given, str | bytes) and given.lstrip()[:1] in ("{", b"{"):
        try:
            return loads_bounded(given, "reset: options['plan']")
        except JSONDepthError:
            raise
        except ValueError:
            return given
    return given


def _leg_signature(day_index: int, leg: TransportLeg) -> tuple[Any, ...]:
    return (day_index, leg.mode, leg.number, leg.origin, leg.destination, leg.dep)


class ExecutionPhase:
    """The execution phase of one episode (`Episode.execution`): the realised trip so far, the locks
    the itinerary tools consult, and `resume` (the `continue_trip` tool)."""

    def __init__(self, ep: Episode, realiser: Realiser, submitted: Plan, plan_outcome: EpisodeOutcome,
                 config: ReplanConfig) -> None:
        self.ep = ep
        self.realiser = realiser
        self.submitted = submitted
        self.plan_outcome = plan_outcome
        self.config = config
        self.last: Disruption | None = None
        # the trip's end lateness is measured from the submitted plan with its legs' buffers capped at
        # their TDAS range (`realised.within_leg_ranges`): hours of padding on a leg buy no punctuality;
        # and at its real end, the last committed step (a leg home, a visit), never a stay, rest or event,
        # which ends when planned however late it starts (`realised.late_minutes`)
        report = plan_outcome.report
        compiled = realiser.compile(submitted if report is None else within_leg_ranges(submitted, report))
        committed = compiled.kind != ELASTIC
        self.submitted_end: float | None = float(compiled.end[committed].max()) if committed.any() else None

    # ------------------------------------------------------------ locks (itinerary_tools.Execution)

    @property
    def current_day(self) -> int:
        return int(self.realiser.clock // MINUTES_PER_DAY) + 1

    def _ahead(self) -> str:
        clock = self.realiser.clock
        return f"change only what is still ahead (after {time_of_day(clock)} on day {self.current_day})"

    def refuse_day(self, day: int, what: str) -> str | None:
        """A plan day before the clock's day is locked once all of its steps have executed (a late
        evening's items still ahead after midnight may be changed)."""
        if self.realiser.finished:
            return "the trip is over; nothing can be changed."
        if day < self.current_day and not self._pending_on(day):
            return (f"{what} is on day {day}, which is over (the trip is at {clock_text(self.realiser.clock)}) "
                    f"and locked; {self._ahead()}.")
        return None

    def _pending_on(self, day: int) -> bool:
        """Whether plan day `day` has a step the realisation has not reached yet."""
        plan = self.ep.plan
        if day > len(plan.days):
            return False
        executed = self.realiser.executed_keys()
        this = plan.days[day - 1]
        elements: list[TransportLeg | PlanItem] = [*this.transport, *this.items]
        for element in elements:
            key = element_key(day - 1, element)
            if executed[key] > 0:
                executed[key] -= 1
            elif isinstance(element, TransportLeg) or (  # items that are steps (as compile_plan reads them)
                    element.timed and not is_journey_item(element, this)):
                return True
        return False

    def refuse_night(self, day: int, what: str) -> str | None:
        """The night of `day` is locked once the traveller has checked in (or begun the stay) that day."""
        for step in self.realiser.steps:
            if (step.day == day and step.venue_type == "accommodation" and step.activity in ("check-in", "stay")
                    and not step.lost and step.actual_start >= (day - 1) * MINUTES_PER_DAY + 12 * 60):
                return (f"{what}: the traveller checked in at {step.name} at {time_of_day(step.actual_start)} on "
                        f"day {day} and that night is locked; change the stay of later nights only.")
        return None

    def refuse_element(self, day: int, element: PlanItem | TransportLeg, what: str) -> str | None:
        key = element_key(day - 1, element)
        for step in self.realiser.steps:
            if step.key == key:
                return (f"{what} on day {day} started at {time_of_day(step.actual_start)} and is locked; "
                        f"{self._ahead()}.")
        return None

    def refuse_time(self, day: int, minute: int, what: str) -> str | None:
        at = (day - 1) * MINUTES_PER_DAY + minute
        if at < self.realiser.clock:
            return (f"{what} at {time_of_day(minute)} on day {day} would be in the past (the "
                    f"trip is at {clock_text(self.realiser.clock)}); {self._ahead()}.")
        return None

    # ------------------------------------------------------------ the clock

    def resume(self) -> ToolResult:
        """Run the trip on to the next disruption (the report) or its end (the episode ends)."""
        if self.realiser.finished:
            return ToolResult.failure("continue_trip: the trip is over; there is nothing to continue")
        return ToolResult(ok=True, text=self.advance())

    def advance(self) -> str:
        """Run the clock; the text of the disruption report, or of the trip's end."""
        disruption = self.realiser.run(self.ep.plan, pause=True)
        self.last = disruption
        if disruption is None:
            self.ep.status = TerminationReason.SUBMITTED
            return self.end_text()
        return self.report_text(disruption)

    def play_out(self) -> None:
        """Run the trip to its end with no more pauses (the step limit, or an ending from outside)."""
        self.realiser.run(self.ep.plan, pause=False)

    def briefing(self) -> str:
        """What the agent reads before the trip starts."""
        r = self.realiser
        return "\n".join([
            f"EXECUTION PHASE: the trip is about to start ({clock_text(r.clock)}, in {r.location()}).",
            "You will live through this plan; delays and overruns are drawn from the simulation's models.",
            plan_text(self.ep),
            f"When reality departs from the plan beyond its slack the trip pauses with a disruption report "
            f"(at most {r.max_disruptions}). You may repair what is still ahead with the itinerary tools first; "
            "call continue_trip to start the trip.",
        ])

    def report_text(self, d: Disruption) -> str:
        """The disruption report: when, where, what happened and why, what is affected, what may change."""
        r, c = self.realiser, d.cause
        if d.kind == "cancellation":
            what = (f"{str(c['mode']).capitalize()} {c['number'] or ''} {c['name']} (departure {c['scheduled']}) is "
                    "cancelled. Without a repair the airline puts you on the same flight the next day (no extra "
                    "fare); if you drop it and book another service, its fare is refunded.").replace("  ", " ")
        elif d.kind == "missed_departure":
            what = (f"You reach the departure point of {c['mode']} {c['number'] or ''} {c['name']} at {c['actual']}: "
                    f"it departs at {c['scheduled']} and boarding closes at {c['planned']}. You miss it. "
                    "Without a repair you take the same service the next day it can be reached (its fare is paid "
                    "again).").replace("  ", " ")
        elif d.kind == "late_arrival":
            what = (f"{str(c['mode']).capitalize()} {c['number'] or ''} {c['name']} was scheduled to arrive at "
                    f"{c['scheduled']}; you planned around {c['planned']}; it arrived at {c['actual']} "
                    f"(delay {c['delay_min']} min).").replace("  ", " ")
        else:
            what = (f"The visit to {c['name']} (planned {c['scheduled']}-{c['planned']}) overran: it ended at "
                    f"{c['actual']}.")
        lines = [f"DISRUPTION {d.index} (of at most {r.max_disruptions}): {d.kind.replace('_', ' ')}, "
                 f"{clock_text(d.clock)}, in {d.location}.", f"What happened: {what}"]
        if d.affected:
            lines.append("Affected steps ahead (played on with no further delay):")
            for a in d.affected:
                j = a.to_json()
                if a.status == "unreachable":
                    where = "it leaves from" if a.what == "leg" else "it is in"
                    lines.append(f"- day {a.day} {a.what} {a.index}: {a.name}: planned {j['planned_start']}: "
                                 f"unreachable (you will not be in the city {where}; it will be "
                                 f"{'not taken' if a.what == 'leg' else 'lost'})")
                    continue
                tail = ("impossible" if a.status == "impossible" and a.what == "item"
                        else "cannot be taken as planned (earliest: the next departure you can reach)"
                        if a.status == "impossible"
                        else f"late by {round(float(a.expected_start - a.planned_start))} min")
                lines.append(f"- day {a.day} {a.what} {a.index}: {a.name}: planned {j['planned_start']}, "
                             f"earliest {j['expected_start']}: {tail}")
        else:
            lines.append("Nothing ahead is affected beyond the slack.")
        before = f" and every day before day {self.current_day}" if self.current_day > 1 else ""
        lines += [
            f"Locked: what has started or passed{before}; {self._ahead()}.",
            "A repair may retime, move or remove items ahead (move_item, remove_item, add_item), drop a leg "
            "ahead and book another service (remove_leg, add_leg: its fare is paid; fares already paid are "
            "not refunded), or change the stay of nights not checked in yet (set_stay: booked nights stay "
            "paid). view_plan shows the plan.",
            "Call continue_trip to go on.",
        ]
        return "\n".join(lines)

    def end_text(self) -> str:
        r = self.realiser
        lost = [s.name for s in r.steps if s.lost]
        missed = [s.name for s in r.steps if s.missed]
        cancelled = [s.name for s in r.steps if s.cancelled]
        parts = [f"The trip is over ({clock_text(r.clock)}). {len(r.disruptions)} disruption(s)."]
        if missed:
            parts.append("Missed and taken later: " + ", ".join(missed) + ".")
        if cancelled:
            parts.append("Cancelled and taken the next day: " + ", ".join(cancelled) + ".")
        if lost:
            parts.append("Lost: " + ", ".join(lost) + ".")
        parts.append("The episode ends and what happened is scored.")
        return " ".join(parts)

    # ------------------------------------------------------------ the score

    def score(self, query: Query, reference: Plan | None, config: ReplanConfig) -> tuple[float, dict[str, Any]]:
        """(realised reward, info keys) of the trip as it happened."""
        from utp_env.evaluation import evaluate

        r, ep = self.realiser, self.ep
        realised = r.realised_plan(ep.plan)
        taken = {_leg_signature(s.day_index, leg) for s in r.steps if s.element == "leg" and not s.unreachable
                 for leg in [TransportLeg.model_validate_json(s.key.split("|", 2)[2])]}
        repaid = [(s.day_index, TransportLeg.model_validate_json(s.key.split("|", 2)[2]))
                  for s in r.steps if s.missed]
        submitted_legs = {_leg_signature(d, leg) for d, day in enumerate(self.submitted.days) for leg in day.transport}
        added_legs = [(d, leg) for d, day in enumerate(ep.plan.days) for leg in day.transport
                      if _leg_signature(d, leg) not in submitted_legs]
        # every booked leg is paid: the submitted ones and those the agent added; the realised plan holds
        # the legs taken, the rest (not taken: dropped, or unreachable) is paid on top
        booked = [(d, leg) for d, day in enumerate(self.submitted.days) for leg in day.transport] + added_legs
        not_taken = [(d, leg) for d, leg in booked
                     if _leg_signature(d, leg) not in taken and element_key(d, leg) not in r.cancelled]
        extra = (extra_fares(repaid + not_taken, query, ep.db)
                 + booked_nights_cost(self.submitted, ep.plan, query, ep.db))
        report = evaluate(realised, query, ep.db, reference=reference)
        airline = sum(1 for s in r.steps if s.cancelled)  # cancelled flights the airline rebooked
        terms = realised_terms(self.submitted, realised, report, r.steps, query, ep.db, extra_cost=extra,
                               rebookings=len(repaid) + len(added_legs) + airline, submitted_end=self.submitted_end,
                               punctuality_scale=config.punctuality_scale_min, final_city=r.location() or None,
                               submitted_report=self.plan_outcome.report, reference=reference)
        reward = realised_reward(terms, config.reward_weights) if self.submitted.days else 0.0
        info = {"realised": {"plan": realised.model_dump(mode="json"), **r.to_json()},
                "disruptions": [d.to_json() for d in r.disruptions], "realised_terms": terms,
                "realised_evaluation": report.model_dump(mode="json")}
        return reward, info


class UTPReplanEnv(UTPEnv):
    """Plan a trip, then live through one realisation of it and repair it (`utp_env/UTP-Replan-v0`).

    Args:
        db_path, profile, split, config, render_mode, world: as `UTPEnv`.
        replan: A `ReplanConfig`, a dict of overrides, or a YAML path; default configs/replan.yaml.
    """

    RESETS_FROM_PLAN: ClassVar[bool] = True
    RESET_OPTIONS: ClassVar[frozenset[str]] = RESET_OPTIONS | {"plan", "plan_outcome"}

    def __init__(self, db_path: str | Path | None = None, profile: str = "full", split: str | None = None,
                 config: EnvConfig | dict[str, Any] | str | Path | None = None, render_mode: str | None = None,
                 replan: ReplanConfig | dict[str, Any] | str | Path | None = None, world: int = 0) -> None:
        self._setup(db_path, profile, split, config, render_mode, replan, world=world)

    def _setup(self, db_path: str | Path | None, profile: str, split: str | None,
               config: EnvConfig | dict[str, Any] | str | Path | None, render_mode: str | None,
               replan: ReplanConfig | dict[str, Any] | str | Path | None = None, *, world: int = 0) -> None:
        super()._setup(db_path, profile, split, config, render_mode, world=world)
        if self.config.stochastic:
            raise ValueError("config: stochastic does not apply to utp_env/UTP-Replan-v0 (the trip is always lived "
                             "through one realisation drawn from the reset seed); set stochastic: false")
        self._init_args["replan"] = replan if not isinstance(replan, Path) else str(replan)  # type: ignore[assignment]
        self.replan_config = load_replan_config(replan)
        endings = {k: v for k, v in closed_loop_ending_tools().items() if k in self.tools}
        self.tools = {**self.tools, **endings, **EXECUTION_TOOLS}
        self.action_space = ToolCallSpace(self.tools, self.db.cities, self.config.max_action_bytes,
                                          self.config.max_calls_per_action)
        self._schemas = None

    # ------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """As `UTPEnv.reset` (a failed reset is a one-line `ValueError` naming the option and leaves
        no episode); `options["plan"]` (a `Plan`, a plan in the paper's format as text or JSON, or a
        `Plan` JSON dict) starts at the trip's start with that plan, in the execution phase.
        `options["plan_outcome"]`, with a `Plan`, is that plan's `EpisodeOutcome` already computed by
        the caller (`finish`, as the run worker does, utp_env/runs/replan_episode.py): it becomes
        `info["plan_evaluation"]` and the plan is not evaluated a second time."""
        return super().reset(seed=seed, options=options)

    def _reset(self, seed: int | None, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if "stochastic" in options:
            raise ValueError("reset: options['stochastic'] does not apply to utp_env/UTP-Replan-v0: the trip is "
                             "always lived through one realisation drawn from the reset seed; drop the option")
        given = options.pop("plan", None)
        evaluated = options.pop("plan_outcome", None)
        if evaluated is not None and not (isinstance(evaluated, EpisodeOutcome) and isinstance(given, Plan)
                                          and evaluated.plan == given and evaluated.report is not None):
            raise ValueError("reset: options['plan_outcome'] must be the EpisodeOutcome (with its report) of "
                             "options['plan'], a Plan; drop it to let the env evaluate the plan")
        decoded = _decoded_plan_json(given)
        named = (decoded.query_id if isinstance(decoded, Plan)
                 else decoded.get("query_id") if isinstance(decoded, dict) else None) if given is not None else None
        if isinstance(named, str) and named and options.get("query_id") is None and options.get("query") is None:
            options["query_id"] = named  # the query the plan names, rather than a random one
        observation, info = super()._reset(seed, options)
        ep = self._require_episode()
        if given is not None:
            ep.plan = self._read_plan(decoded, ep.query)
            if ep.plan.query_id and ep.plan.query_id != ep.query.query_id:
                raise ValueError(f"reset: options['plan'] is a plan for {ep.plan.query_id}, not for the episode's "
                                 f"query {ep.query.query_id}; give that query's plan, or drop options['query_id']")
            self._begin_execution(ep, evaluated)
            execution = self._execution(ep)
            observation = self._clip(observation + "\n\n" + execution.briefing())
            info["plan_evaluation"] = self._plan_evaluation(execution)
        info["phase"] = self.phase
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """As `UTPEnv.step`; `info` also says the `phase` and, after a pause, the `disruption`."""
        ep = self._require_episode()
        if ep.execution is not None:
            self._execution(ep).last = None
        observation, reward, terminated, truncated, info = super().step(action)
        info["phase"] = self.phase
        if ep.execution is not None and self._execution(ep).last is not None and not ep.done:
            info["disruption"] = self._execution(ep).last.to_json()  # type: ignore[union-attr]
        return observation, reward, terminated, truncated, info

    def task_text(self, query: Query) -> str:
        """UTP-v0's task text, then how the closed loop goes on after submission."""
        r = self.replan_config
        return "\n".join([
            super().task_text(query), "",
            "CLOSED LOOP: submitting does not end the episode. The trip is then lived through one sampled "
            "reality (transport delays, visit overruns); when it departs from your plan beyond "
            f"{r.late_arrival_slack_min:g} minutes the trip pauses with a DISRUPTION report (at most "
            f"{r.max_disruptions}). Repair what is still ahead with the same tools (what has started or "
            "passed is locked; fares already paid are not refunded), then call continue_trip. You are "
            "scored on what actually happens: planned visits, meals and events done, the budget and hard "
            "constraints of the realised trip, punctuality, commonsense.",
        ])

    @property
    def phase(self) -> Phase:
        """planning, execution or ended."""
        ep = self.episode
        if ep is None or ep.done:
            return "ended"
        return "planning" if ep.execution is None else "execution"

    def call_tool(self, name: str, args: dict[str, Any] | str | None = None) -> ToolResult:
        ep = self._require_episode()
        if name in EXECUTION_TOOLS:
            return EXECUTION_TOOLS[name].invoke(ep, args)
        if name in ENDING and ep.execution is not None:
            return ToolResult.failure(f"{name}: the plan was already submitted and the trip is under way; repair "
                                      "what is still ahead with the itinerary tools, then call continue_trip")
        result = super().call_tool(name, args)
        if name in ENDING and result.ok and ep.status == TerminationReason.SUBMITTED:
            ep.status = None
            self._begin_execution(ep)
            execution = self._execution(ep)
            summary = report_text(execution.plan_outcome.report) if execution.plan_outcome.report else ""
            text = (f"Plan submitted ({len(ep.plan.days)} days). Its evaluation as a plan:\n{summary}\n"
                    f"The trip starts at {clock_text(execution.realiser.clock)}.\n\n{execution.advance()}")
            return ToolResult(ok=True, text=text)
        return result

    # ------------------------------------------------------------ internals

    def _execution(self, ep: Episode) -> ExecutionPhase:
        assert isinstance(ep.execution, ExecutionPhase)
        return ep.execution

    def _read_plan(self, given: Any, query: Query) -> Plan:
        """The plan of reset's options['plan'], given as a Plan or as `_decoded_plan_json` left it."""
        from utp_env.plan_format import PlanFormatError, parse_plan

        try:
            if isinstance(given, Plan):
                return copy_plan(given)  # validated again on the way: a Plan built in code meets the caps too
            if isinstance(given, dict) and isinstance(given.get("days"), list) and all(
                    isinstance(d, dict) and "cities" in d for d in given["days"]):
                return Plan.model_validate(given)  # the canonical Plan JSON (info["plan"], Plan.model_dump)
            return parse_plan(given, query=query, db=self.db)
        except ValidationError as exc:
            raise ValueError(f"reset: options['plan'] is not a valid Plan ({first_validation_error(exc)}); give a "
                             "Plan, its JSON, or a plan in the paper's JSON day format (docs/PLAN_FORMAT.md)") from None
        except (PlanFormatError, ValueError) as exc:
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise ValueError(f"reset: options['plan'] could not be read ({first}); give a Plan, its JSON, or a "
                             "plan in the paper's JSON day format (docs/PLAN_FORMAT.md)") from None

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
        realiser = self._realiser(ep)
        realiser.start(ep.plan)
        ep.execution = ExecutionPhase(ep, realiser, submitted, outcome, self.replan_config)

    def _realiser(self, ep: Episode) -> Realiser:
        """A new realisation of the episode's trip: reality seed = the episode seed (common random numbers)."""
        assert self.seed_value is not None
        return Realiser(db=ep.db, query=ep.query, seed=self.seed_value, config=load_uncertainty(),
                        kinds=frozenset(self.replan_config.disruptions), slack=self.replan_config.slack,
                        max_disruptions=self.replan_config.max_disruptions)

    @staticmethod
    def _plan_evaluation(execution: ExecutionPhase) -> dict[str, Any] | None:
        report = execution.plan_outcome.report
        return None if report is None else report.model_dump(mode="json")

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
            import traceback

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
        info["evaluation"] = info["report"]
        return reward, info

    # ------------------------------------------------------------ pickling

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        ep = self.episode
        if ep is not None and ep.execution is not None:
            execution = self._execution(ep)
            r = execution.realiser
            state["execution"] = {
                "submitted": execution.submitted.model_dump(mode="json"), "plan_outcome": execution.plan_outcome,
                "realiser": {k: getattr(r, k) for k in REALISER_STATE},
                "last": execution.last}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        saved = state.get("execution")
        if saved is None or self.episode is None:
            return
        ep = self.episode
        realiser = self._realiser(ep)
        for k, v in saved["realiser"].items():
            setattr(realiser, k, v)
        ep.execution = ExecutionPhase(ep, realiser, Plan.model_validate(saved["submitted"]), saved["plan_outcome"],
                                      self.replan_config)
        ep.execution.last = saved["last"]


__all__ = ["REPLAN_CONFIG_PATH", "ExecutionPhase", "ReplanConfig", "UTPReplanEnv", "load_replan_config"]
