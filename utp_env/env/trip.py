"""The lived trip of a closed-loop episode (`utp_env/UTP-Replan-v0`): its `ExecutionPhase`.

Once the plan is submitted, `ExecutionPhase` (`Episode.execution`) holds one realisation of the
trip (`utp_env.simulation.realise.Realiser`): the locks the itinerary tools consult before they
change the plan (`locks.Execution`), the clock that `continue_trip` runs on to the next
disruption (`resume`), the texts the agent reads, and the score of what happened (`score`:
utp_env/evaluation/realised.py, weighted by `ReplanConfig.reward_weights`). It pickles without its
episode and database and is attached back to the episode by `UTPEnv.__setstate__`.
"""

from __future__ import annotations

from typing import Any

from utp_env.config import load_uncertainty
from utp_env.env.config import ReplanConfig
from utp_env.env.episode import Episode, EpisodeOutcome, TerminationReason
from utp_env.env.plan_view import plan_text
from utp_env.env.reward import realised_reward, realised_terms
from utp_env.evaluation.realised import booked_nights_cost, extra_fares, within_leg_ranges
from utp_env.itinerary import Plan, PlanItem, TransportLeg
from utp_env.query import Query
from utp_env.simulation.compile import ELASTIC, is_journey_item
from utp_env.simulation.realise import REALISER_STATE, Realiser
from utp_env.simulation.trip_steps import Disruption, clock_text, element_key, time_of_day
from utp_env.tools.clock import MINUTES_PER_DAY
from utp_env.tools.toolkit import ToolResult


def new_realiser(ep: Episode, seed: int, config: ReplanConfig) -> Realiser:
    """A new realisation of the episode's trip: reality seed = the episode seed (common random numbers)."""
    return Realiser(db=ep.db, query=ep.query, seed=seed, config=load_uncertainty(),
                    kinds=frozenset(config.disruptions), slack=config.slack, max_disruptions=config.max_disruptions)


def _leg_signature(day_index: int, leg: TransportLeg) -> tuple[Any, ...]:
    return (day_index, leg.mode, leg.number, leg.origin, leg.destination, leg.dep)


class ExecutionPhase:
    """The execution phase of one episode (`Episode.execution`): the realised trip so far, the locks
    the itinerary tools consult, and `resume` (the `continue_trip` tool)."""

    def __init__(self, ep: Episode, realiser: Realiser, submitted: Plan, plan_outcome: EpisodeOutcome,
                 config: ReplanConfig, seed: int) -> None:
        self.ep = ep
        self.realiser = realiser
        self.seed = seed
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

    # ------------------------------------------------------------ locks (locks.Execution)

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

    # ------------------------------------------------------------ pickling (with `UTPEnv.__getstate__`)

    def __getstate__(self) -> dict[str, Any]:
        """The phase without its episode and database: the submitted plan, its outcome, the realiser's
        state, the last disruption; `attach` rebuilds the rest."""
        return {"submitted": self.submitted.model_dump(mode="json"), "plan_outcome": self.plan_outcome,
                "realiser": {k: getattr(self.realiser, k) for k in REALISER_STATE}, "last": self.last,
                "config": self.config, "seed": self.seed, "submitted_end": self.submitted_end}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._saved = state

    def attach(self, ep: Episode) -> None:
        """Make this unpickled phase the execution of `ep` (the episode `UTPEnv.__setstate__` rebuilt)."""
        saved = self._saved
        del self._saved
        self.ep, self.config, self.seed = ep, saved["config"], saved["seed"]
        self.realiser = new_realiser(ep, self.seed, self.config)
        for k, v in saved["realiser"].items():
            setattr(self.realiser, k, v)
        self.submitted = Plan.model_validate(saved["submitted"])
        self.plan_outcome, self.last, self.submitted_end = saved["plan_outcome"], saved["last"], saved["submitted_end"]
        ep.execution = self
