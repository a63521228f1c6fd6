"""One realisation of a trip, played step by step, that can pause when reality departs from the plan
(the closed-loop env `utp_env/UTP-Replan-v0`, utp_env/env/replan.py; docs/REPLAN.md).

The semantics are the Monte Carlo engine's (docs/SIMULATION.md): the plan is compiled by
`compile.compile_plan` and every step is advanced by `engine.advance`, the same function the
vectorised `engine.run` uses, so with no repair the realised timeline equals `engine.run` on the
draws the realisation made (`realised_delays`; tests/env/test_replan_env.py checks it).

**Common random numbers.** A step's delay does not come from a shared stream but from its own
generator, `np.random.default_rng(stable_int("replan", seed, mode, service, date))` for a leg and
`stable_int("replan", seed, "visit", venue, date)` for a visit's overrun (`venue_key`: its name
without a ', City'), drawn with the
simulation's only sampler (`delay_models.sample`). The service is the resolved one (the timetable's
spelling of the number; a cab's `origin->destination` in the canonical city names), so a plan's
spelling does not change the draw; `date` is the date the leg is actually travelled (a leg missed
and taken w days later, the engine's `next_day` rule, meets that day's delay). Two agents that start
from the same seed meet the same delays on every service, date and visit they share, whatever else
they do and in whatever order they ask.

**Where the traveller is.** The traveller is in the destination of the last leg actually taken
(at the start, the trip's first city). An item in another city, or a leg leaving from another city,
cannot be reached: it is recorded as `unreachable` (an item is lost, a leg is not taken) and takes
no time. With no repair this never happens on a consistent plan (every leg is taken, late or not).

**Pauses.** After each leg or cab that arrives after its planned arrival (`late_arrival`) and each
visit that ends after its planned end (`overrun`), the steps ahead are played forward with no further
delay; when the next step then starts more than the slack late, is lost, or is a missed leg, the walk
pauses with a `Disruption`. Before a leg that the traveller reaches too late to board, it pauses with
`missed_departure`. A step is the subject of at most one pause (the ones a report lists as affected
are not reported again), and at most `max_disruptions` pauses happen per trip.

The common random numbers are utp_env/simulation/crn.py; the records of what happened (`ExecutedStep`,
`Disruption`) utp_env/simulation/trip_steps.py.

**Executed steps** are recorded (`ExecutedStep`) with the JSON of the plan element they came from, so
that the plan can be changed between pauses: each walk compiles the current plan and skips the
elements already executed. What has been executed is locked (utp_env/env/replan.py enforces it).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

import numpy as np

from utp_env.config import UncertaintyConfig
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.query import Query
from utp_env.resolve import VenueName, find_venue
from utp_env.simulation.compile import CAB, KIND_NAMES, LEG, VISIT, CompiledPlan, compile_plan
from utp_env.simulation.crn import (
    LEG_ELEMENT,
    canonical_city,
    crn_cancelled,
    crn_draw,
    element_of,
)
from utp_env.simulation.engine import advance
from utp_env.simulation.trip_steps import (
    Affected,
    Disruption,
    ExecutedStep,
    clock_text,
    element_key,
    leg_name,
)
from utp_env.tools.clock import MINUTES_PER_DAY, format_stamp
from utp_env.tools.database import Database, normalize
from utp_env.tools.schema import VENUE_TABLE, VENUE_TABLES, is_venue_kind

DISRUPTION_KINDS = ("late_arrival", "missed_departure", "overrun", "cancellation")
"""The kinds of pause the realisation knows (configs/replan.yaml `disruptions` picks among them).
`cancellation` is an assumption beyond the paper's data and off by default (`cancelled`)."""
DEFAULT_KINDS = DISRUPTION_KINDS[:3]


def copy_plan(plan: Plan) -> Plan:
    """A deep copy of a plan (through its JSON: about 3x faster than `model_copy(deep=True)`)."""
    return Plan.model_validate_json(plan.model_dump_json())


def realised_delays(compiled: CompiledPlan, steps: list[ExecutedStep]) -> np.ndarray:
    """(1, k) delays a realisation drew for the delay elements of `compiled`, in the layout `engine.run`
    takes: with no repair, `engine.run(compiled, realised_delays(compiled, realiser.steps))` is the
    realised timeline (a missed leg's draw is that of the day it was taken, so `crn_delays` is not).
    `steps` must be the realisation of exactly `compiled` (the same labels in the same order)."""
    labels = [s.label for s in steps]
    if labels != compiled.labels:
        raise ValueError("realised_delays: steps are not a realisation of this compiled plan (a repair "
                         "changed it, or the trip is not finished); compare labels")
    out = np.zeros((1, compiled.delays.k))
    for j, step in enumerate(steps):
        if compiled.draw[j] >= 0:
            out[0, compiled.draw[j]] = step.delay
    return out


@dataclass
class Realiser:
    """The state of one realised trip: the traveller's free time `t` and departure-point time
    `reach` (the engine's), the city they are in, the executed steps, the pauses so far, and the clock.

    Args:
        db, query: what the plan is compiled against.
        seed: the reality seed of the common random numbers (the env's episode seed).
        config: the simulation parameters (`configs/uncertainty.yaml`).
        kinds: the active disruption kinds; slack: minutes per kind before a late start pauses;
        max_disruptions: the most pauses per trip (the env passes configs/replan.yaml's values).
    """

    db: Database
    query: Query | None
    seed: int
    config: UncertaintyConfig
    kinds: frozenset[str]
    slack: dict[str, float]
    max_disruptions: int
    city: str | None = None
    """Where the traveller is: the destination of the last leg taken (None before `start`)."""
    planned_cities: dict[str, str] = field(default_factory=dict)
    """Element key -> the normalised city the plan lived from the start puts each of its items in
    (the destination of the last leg before it in its timeline), set by `start`."""
    t: float = -math.inf
    reach: float = -math.inf
    clock: float = 0.0
    steps: list[ExecutedStep] = field(default_factory=list)
    disruptions: list[Disruption] = field(default_factory=list)
    warned: set[str] = field(default_factory=set)
    cancelled: set[str] = field(default_factory=set)
    """Element keys (`element_key`) of the flights found cancelled (with `cancellation` active)."""
    finished: bool = False
    _item_cities: dict[tuple[str, str | None, tuple[str, ...]], frozenset[str]] = field(
        default_factory=dict, repr=False)

    # ------------------------------------------------------------ the plan as it is now

    def compile(self, plan: Plan) -> CompiledPlan:
        return compile_plan(plan.days, self.db, self.config, self.query)

    def pending(self, plan: Plan, compiled: CompiledPlan) -> list[int]:
        """The steps of `compiled` not executed yet, in timeline order."""
        done = Counter(s.key for s in self.steps)
        out = []
        for j in range(compiled.n_steps):
            key = element_key(compiled.source[j][0], element_of(plan, compiled.source[j]))
            if done[key] > 0:
                done[key] -= 1
            else:
                out.append(j)
        return out

    def executed_keys(self) -> Counter[str]:
        """How many times each plan element has been executed (its key, `element_key`)."""
        return Counter(s.key for s in self.steps)

    def start(self, plan: Plan) -> None:
        """Set the clock at the trip's first step (nothing executed yet) and the traveller in the
        trip's first city."""
        compiled = self.compile(plan)
        self.clock = float(compiled.start[0]) if compiled.n_steps else 0.0
        first = plan.days[0].cities[0] if plan.days else self.query.org if self.query is not None else ""
        self.city = canonical_city(self.db, first) if first else first
        here = normalize(first)
        for j in range(compiled.n_steps):
            element = element_of(plan, compiled.source[j])
            if isinstance(element, TransportLeg):
                here = normalize(element.destination)
            else:
                self.planned_cities.setdefault(element_key(compiled.source[j][0], element), here)

    def location(self) -> str:
        """Where the traveller is: the destination of the last leg taken, else the trip's first city."""
        return self.city or ""

    def item_cities(self, item: PlanItem, plan: Plan) -> frozenset[str]:
        """The normalised cities where an item the agent added or moved can be: those of the trip's
        cities (any day's, and the query's origin) that hold a venue of that name (of its kind), else
        the city its name states ('HSR Airport, Rajkot'); empty when unknown (such an item is never
        unreachable)."""
        trip = tuple(sorted({normalize(c) for day in plan.days for c in day.cities} | set(self.planned_cities.values())
                            | ({normalize(self.query.org)} if self.query is not None else set())))
        key = (item.name, item.venue_type, trip)
        found = self._item_cities.get(key)
        if found is None:
            name = VenueName.of(item.name)
            tables = (VENUE_TABLE[item.venue_type],) if is_venue_kind(item.venue_type) else VENUE_TABLES
            cities = [c for c in trip
                      if find_venue(self.db, name.name, [c], tables) is not None
                      or find_venue(self.db, name.text, [c], tables) is not None]
            if not cities and name.stated_city is not None and self.db.known_city(name.stated_city):
                cities = [name.stated_city]
            found = self._item_cities[key] = frozenset(normalize(c) for c in cities)
        return found

    def reachable(self, plan: Plan, compiled: CompiledPlan, j: int, city: str | None = None) -> bool:
        """Whether the traveller, in `city` (default: where they are now), can take step j: a leg leaving
        from that city; an item of the plan lived from the start in the city that plan put it in
        (`planned_cities`), an item added or moved since where a venue of its name is (`item_cities`)."""
        city = self.city if city is None else city
        if city is None:
            return True
        here = normalize(city)
        element = element_of(plan, compiled.source[j])
        if isinstance(element, TransportLeg):
            return normalize(element.origin) == here
        planned = self.planned_cities.get(element_key(compiled.source[j][0], element))
        if planned is not None:
            return planned == here
        cities = self.item_cities(element, plan)
        return not cities or here in cities

    # ------------------------------------------------------------ the walk

    def run(self, plan: Plan, pause: bool = True) -> Disruption | None:
        """Play the trip on from the clock until a pause (returned) or the end (None; `finished`).

        With `pause=False` (or once `max_disruptions` pauses happened) it plays to the end.
        """
        if self.finished:
            return None
        compiled = self.compile(plan)
        todo = self.pending(plan, compiled)
        skip = self.config.simulation.skip_passed_items
        cancelled = self._cancelled(plan, compiled, todo)
        for pos, j in enumerate(todo):
            can_pause = pause and len(self.disruptions) < self.max_disruptions
            label = compiled.labels[j]
            if not self.reachable(plan, compiled, j):
                self._unreachable(plan, compiled, j)
                continue
            if can_pause and j in cancelled and label not in self.warned:
                return self._pause(plan, compiled, todo[pos:], "cancellation", j, at=self.reach, cancelled=cancelled)
            if (can_pause and compiled.kind[j] == LEG and "missed_departure" in self.kinds and j not in cancelled
                    and label not in self.warned and self.reach > compiled.start[j] - compiled.margin[j]):
                return self._pause(plan, compiled, todo[pos:], "missed_departure", j, at=self.reach,
                                   cancelled=cancelled)
            self._execute(plan, compiled, j, skip, j in cancelled)
            if not can_pause or pos + 1 >= len(todo):
                continue
            kind = ("late_arrival" if compiled.kind[j] in (LEG, CAB) else "overrun" if compiled.kind[j] == VISIT
                    else None)
            if kind is None or kind not in self.kinds or not self.t > compiled.end[j]:
                continue
            # whether the next step taken is late or impossible decides the pause: look ahead only up to
            # it (the steps before it are unreachable, and `run` skips them next without looking ahead
            # again), so the walk stays linear in the plan; the whole look-ahead only for a pause's report
            slack = self.slack.get(kind, 0.0)
            ahead = self.look_ahead(plan, compiled, _tail(todo, pos + 1), slack, cancelled, first_taken=True)
            unreachable = {k for k, a in ahead if a.status == "unreachable"}
            nxt = next((k for k in _tail(todo, pos + 1) if k not in unreachable), None)  # the next step taken
            if nxt is None or compiled.labels[nxt] in self.warned:
                continue
            if any(k == nxt for k, _ in ahead):
                return self._pause(plan, compiled, todo[pos + 1:], kind, j, at=self.t, cancelled=cancelled,
                                   ahead=self.look_ahead(plan, compiled, todo[pos + 1:], slack, cancelled))
        self.finished = True
        self.clock = max(self.clock, self.t)
        return None

    def _cancelled(self, plan: Plan, compiled: CompiledPlan, todo: list[int]) -> set[int]:
        """The pending steps that are cancelled flights (none unless `cancellation` is active)."""
        if "cancellation" not in self.kinds:
            return set()
        out = {j for j in todo if crn_cancelled(compiled, j, plan, self.query, self.seed, self.db)}
        self.cancelled |= {element_key(compiled.source[j][0], element_of(plan, compiled.source[j])) for j in out}
        return out

    def _cancelled_reach(self, compiled: CompiledPlan, j: int, reach: np.ndarray) -> np.ndarray:
        """The departure-point time that makes `engine.advance` take a cancelled flight's next day:
        at least just past boarding closure, so the wait is one day (more if the traveller is later)."""
        return np.maximum(reach, compiled.start[j] - compiled.margin[j] + 1.0)

    def _step_record(self, plan: Plan, compiled: CompiledPlan, j: int, **actual: Any) -> ExecutedStep:
        day_index, what, _ = compiled.source[j]
        element = element_of(plan, compiled.source[j])
        leg = element if isinstance(element, TransportLeg) else None
        return ExecutedStep(
            label=compiled.labels[j], name=leg_name(leg) if leg is not None else compiled.names[j],
            day=compiled.day[j], day_index=day_index, kind=KIND_NAMES[int(compiled.kind[j])],
            element="leg" if what == LEG_ELEMENT else "item", key=element_key(day_index, element),
            planned_start=float(compiled.start[j]), planned_end=float(compiled.end[j]),
            late_slack=self.slack.get("late_arrival", 0.0),
            activity=leg.mode if leg is not None else element.activity,  # type: ignore[union-attr]
            venue_type=None if leg is not None else element.venue_type,  # type: ignore[union-attr]
            city=self.location(), **actual)

    def _unreachable(self, plan: Plan, compiled: CompiledPlan, j: int) -> None:
        """Record step j as not reached: the traveller is in another city. It takes no time."""
        at = float(compiled.start[j])
        self.steps.append(self._step_record(plan, compiled, j, actual_start=at, actual_end=at,
                                            lost=compiled.source[j][1] != LEG_ELEMENT, unreachable=True))

    def _execute(self, plan: Plan, compiled: CompiledPlan, j: int, skip: bool, cancelled: bool = False) -> None:
        reach_in = np.array([self.reach])
        if cancelled:  # the airline's rebooking: the same flight the next day, on time, at no extra fare
            reach_in = self._cancelled_reach(compiled, j, reach_in)
        t_in = np.array([self.t])
        wait = 0
        if compiled.kind[j] == LEG:  # the day it is actually taken decides its draw (common random numbers)
            s0 = advance(compiled, j, np.zeros(1), t_in, reach_in, skip)[0]
            wait = round(float((float(s0[0]) - compiled.start[j]) / MINUTES_PER_DAY))
        d = 0.0 if cancelled else crn_draw(compiled, j, plan, self.query, self.seed, self.db, wait)
        s, e, lost, missed, t, reach = advance(compiled, j, np.array([d]), t_in, reach_in, skip)
        self.t, self.reach = float(t[0]), float(reach[0])
        is_leg = compiled.source[j][1] == LEG_ELEMENT
        self.steps.append(self._step_record(
            plan, compiled, j, actual_start=float(s[0]), actual_end=float(e[0]), delay=d, lost=bool(lost[0]),
            missed=bool(missed[0]) and not cancelled, wait_days=wait, cancelled=cancelled))
        if is_leg:
            leg = element_of(plan, compiled.source[j])
            assert isinstance(leg, TransportLeg)
            self.city = canonical_city(self.db, leg.destination)
        self.clock = max(self.clock, self.t if is_leg else float(e[0]))

    def look_ahead(self, plan: Plan, compiled: CompiledPlan, rest: Iterable[int], slack: float,
                   cancelled: set[int] | frozenset[int] = frozenset(),
                   first_taken: bool = False) -> list[tuple[int, Affected]]:
        """The steps of `rest` that start more than `slack` minutes late (`late`), are lost or are
        missed or cancelled (`impossible`), or are in (a leg: leave from) a city the traveller will not
        be in (`unreachable`: it would be recorded as such, taking no time) when the trip is played on
        from now with no further delay. With `first_taken`, only up to the first step the traveller
        can reach (the same entries as the whole look-ahead's up to there)."""
        t, reach = np.array([self.t]), np.array([self.reach])
        zero = np.zeros(1)
        skip = self.config.simulation.skip_passed_items
        city = self.city
        out = []
        for j in rest:
            element = element_of(plan, compiled.source[j])
            if not self.reachable(plan, compiled, j, city):
                status: str | None = "unreachable"
                s = np.array([compiled.start[j]])
            else:
                if j in cancelled:
                    reach = self._cancelled_reach(compiled, j, reach)
                s, _, lost, missed, t, reach = advance(compiled, j, zero, t, reach, skip)
                if isinstance(element, TransportLeg):
                    city = canonical_city(self.db, element.destination)
                late = float(s[0]) - compiled.start[j]
                status = "impossible" if (lost[0] or missed[0]) else "late" if late > slack else None
                if first_taken and status is None:
                    break
            if status is None:
                continue
            day_index, what, index = compiled.source[j]
            name = leg_name(element) if isinstance(element, TransportLeg) else compiled.names[j]
            out.append((j, Affected(day=compiled.day[j], index=index + 1,
                                    what="leg" if what == LEG_ELEMENT else "item", name=name, status=status,
                                    planned_start=float(compiled.start[j]), expected_start=float(s[0]),
                                    day_index=day_index)))
            if first_taken and status != "unreachable":
                break
        return out

    def _pause(self, plan: Plan, compiled: CompiledPlan, rest: list[int], kind: str, j: int, at: float,
               cancelled: set[int] | frozenset[int] = frozenset(),
               ahead: list[tuple[int, Affected]] | None = None) -> Disruption:
        """Record a pause at step j: what `rest` suffers (`ahead`, when the caller already looked ahead
        over `rest` with this kind's slack), and warn of it once."""
        if ahead is None:
            slack = self.slack.get(kind, self.slack.get("late_arrival", 0.0))
            ahead = self.look_ahead(plan, compiled, rest, slack, cancelled)
        self.clock = max(self.clock, at)
        for k, _ in ahead:
            self.warned.add(compiled.labels[k])
        self.warned.add(compiled.labels[j])
        disruption = Disruption(index=len(self.disruptions) + 1, kind=kind, clock=self.clock,
                                location=self.location(), cause=self._cause(plan, compiled, kind, j),
                                affected=[a for _, a in ahead], trigger=compiled.labels[j])
        self.disruptions.append(disruption)
        return disruption

    def _cause(self, plan: Plan, compiled: CompiledPlan, kind: str, j: int) -> dict[str, Any]:
        off = compiled.day_index[j] * MINUTES_PER_DAY

        def hhmm(minute: float) -> str:
            return format_stamp(round(float(minute - off)))

        element = element_of(plan, compiled.source[j])
        if isinstance(element, TransportLeg):
            base = {"name": f"{element.origin} -> {element.destination}", "mode": element.mode,
                    "number": element.number}
            if kind == "cancellation":
                return {**base, "scheduled": hhmm(compiled.start[j]), "planned": hhmm(compiled.end[j]),
                        "actual": None, "what": "scheduled departure, your planned arrival; the flight does not fly"}
            if kind == "missed_departure":
                return {**base, "scheduled": hhmm(compiled.start[j]),
                        "planned": hhmm(compiled.start[j] - compiled.margin[j]), "actual": hhmm(self.reach),
                        "what": "scheduled departure, boarding deadline, when you reach the departure point"}
            step = self.steps[-1]
            return {**base, "scheduled": hhmm(compiled.sched_arr[j]), "planned": hhmm(compiled.end[j]),
                    "actual": hhmm(step.actual_end), "delay_min": round(step.delay),
                    "what": "scheduled arrival, your planned arrival, actual arrival"}
        step = self.steps[-1]
        return {"name": element.name, "mode": None, "number": None, "scheduled": hhmm(compiled.start[j]),
                "planned": hhmm(compiled.end[j]), "actual": hhmm(step.actual_end),
                "what": "planned start, planned end, actual end"}

    # ------------------------------------------------------------ the realised trip

    def realised_plan(self, plan: Plan) -> Plan:
        """The trip as it happened: `plan` without its lost items and the legs not taken (unreachable),
        executed items at their actual times (whole minutes), legs as scheduled (the timetable the
        evaluator resolves), and each day's meals, attractions and events without the venues whose
        every item there was lost. Every venue item done is named `Name, City`: the lived plan's
        items already are (`utp_env.env.replan.lived_plan`), an item a repair added gets the city the
        traveller was in when it happened, so the evaluator reads each venue where it was visited
        (a travel day has two cities, and a name may exist in both)."""
        out = copy_plan(plan)
        by_key: dict[str, deque[ExecutedStep]] = {}
        for s in self.steps:
            by_key.setdefault(s.key, deque()).append(s)
        for d, (day, new_day) in enumerate(zip(plan.days, out.days, strict=True)):
            legs = []
            for leg in day.transport:
                queue = by_key.get(element_key(d, leg))
                if queue and queue.popleft().unreachable:
                    continue
                legs.append(leg)
            new_day.transport = legs
            items: list[PlanItem] = []
            lost_names: set[str] = set()
            kept_names: set[str] = set()
            for item in day.items:
                queue = by_key.get(element_key(d, item))
                if not queue:
                    items.append(item.model_copy())
                    kept_names.add(item.name)
                    continue
                step = queue.popleft()
                if step.lost:
                    lost_names.add(item.name)
                    continue
                off = d * MINUTES_PER_DAY
                update: dict[str, Any] = {"start": round(float(step.actual_start - off)),
                                          "end": round(float(step.actual_end - off))}
                if is_venue_kind(item.venue_type) and step.city and VenueName.of(item.name).stated_city is None:
                    update["name"] = f"{item.name}, {step.city}"  # bound to where it happened (an added item)
                items.append(item.model_copy(update=update))
                kept_names.add(item.name)
            new_day.items = items
            _drop_lost(new_day, lost_names - kept_names)
        return out

    def to_json(self) -> dict[str, Any]:
        """The realised steps and pauses as JSON-ready values."""
        return {"steps": [s.to_json() for s in self.steps], "disruptions": [d.to_json() for d in self.disruptions],
                "clock": clock_text(self.clock), "finished": self.finished}


def _tail(seq: list[int], start: int) -> Iterator[int]:
    """`seq[start:]` read lazily: no copy, so a walk that looks a few steps ahead stays linear."""
    return (seq[i] for i in range(start, len(seq)))


REALISER_STATE = tuple(f.name for f in fields(Realiser) if not f.name.startswith("_")
                       and (f.default is not MISSING or f.default_factory is not MISSING))
"""The fields of a `Realiser` that change during a trip (what pickling an env in execution keeps): its
public fields with a default; the others are given at construction and the private ones are caches."""


def _drop_lost(day: Day, names: set[str]) -> None:
    """Remove from a day's summary fields the venues named in `names` (item names, with or without
    their ', City' suffix, as summary labels may be written either way)."""
    if not names:
        return
    keys = {normalize(n) for n in names} | {normalize(n.rpartition(", ")[0]) for n in names if ", " in n}

    def gone(label: str | None) -> bool:
        return label is not None and (normalize(label) in keys or normalize(label.rpartition(", ")[0]) in keys)

    for meal in ("breakfast", "lunch", "dinner"):
        if gone(getattr(day, meal)):
            setattr(day, meal, None)
    day.attractions = [a for a in day.attractions if not gone(a)]
    day.events = [e for e in day.events if not gone(e)]

