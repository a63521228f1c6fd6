"""Compile a Plan into flat numpy arrays: one timeline of steps (items and legs) over the trip.

Times become absolute trip minutes (day index x 1440 + minutes from that day's midnight). Within
a day, the timed items and the legs are ordered by start time (a leg departing at t comes before
an item starting at t). Untimed items cannot be simulated and are listed in `skipped`; `travel`
items on a day with legs are the journeys themselves, modelled by the legs, and are dropped.

Each step has a kind:
- VISIT (attraction/restaurant visit): keeps at least its base duration v plus a sampled overrun;
- ELASTIC (stay, rest, event): ends at its planned end (sleep/rest/a fixed event absorbs lateness);
- FIXED (check-in, checkout, arrive, travel): keeps its planned length, shifted when late;
- LEG (flight/train/bus): scheduled, missed if reached after departure - boarding margin;
- CAB: leaves when the traveller is ready (never missed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from utp_env.config import UncertaintyConfig
from utp_env.evaluation.context import eval_index
from utp_env.evaluation.uncertainty import base_visit_minutes
from utp_env.itinerary import Day, PlanItem, TransportLeg, format_hhmm
from utp_env.query import Query
from utp_env.resolve import VenueName, crowd_of, find_venue, resolve_leg
from utp_env.simulation.delay_models import (
    DelayArrays,
    DelayModel,
    flight_model,
    flight_stats,
    lateness_model,
)
from utp_env.tools.clock import MINUTES_PER_DAY
from utp_env.tools.database import Database
from utp_env.tools.schema import CROWD_KINDS, VENUE_TABLE, is_venue_kind

VISIT, ELASTIC, FIXED, LEG, CAB = 0, 1, 2, 3, 4
KIND_NAMES = {VISIT: "visit", ELASTIC: "elastic", FIXED: "fixed", LEG: "leg", CAB: "cab"}
ELASTIC_ACTIVITIES = frozenset({"stay", "rest", "event"})
CROWD_TABLES = tuple(VENUE_TABLE[kind] for kind in CROWD_KINDS)  # where an untyped visit is looked for


@dataclass
class CompiledPlan:
    """The plan as arrays of shape (S,) over its S steps, plus the delay elements of shape (k,).

    `draw[j]` is the delay element of step j (leg delay or visit overrun), -1 when none.
    `day[j]` is the plan's number of the step's day (for display), `day_index[j]` its 0-based position
    (times are offset by day_index x 1440). `arrive[j]` marks an `arrive` item: the traveller is at
    the departure point from its start. For legs `start`/`end` are the scheduled departure and the
    planner's planned arrival,
    `sched_arr` the scheduled arrival and `margin` the boarding margin. `gap[j]` is the intra-city
    travel time before item j when it follows another item (`SimulationParams.intra_city_travel_min`).
    """

    kind: np.ndarray
    start: np.ndarray
    end: np.ndarray
    base: np.ndarray
    sched_arr: np.ndarray
    margin: np.ndarray
    draw: np.ndarray
    gap: np.ndarray
    labels: list[str]
    names: list[str]
    day: list[int]
    day_index: list[int]
    arrive: np.ndarray
    delays: DelayArrays
    models: list[DelayModel]
    skipped: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    """Labels of the legs and visits the database does not know (a leg without its service or road
    route, a visit without its venue): simulated with the mode's median delay or no crowd overrun,
    so a plan made on another database still gets a hold rate; callers warn about them."""
    source: list[tuple[int, int, int]] = field(default_factory=list)
    """Where step j comes from: (day index, 0 for a leg / 1 for an item, index in that day's list)."""

    @property
    def n_steps(self) -> int:
        return int(self.kind.shape[0])

    @property
    def skippable(self) -> np.ndarray:
        """Steps that are lost when reached after their planned end: visits, stays, rests, events."""
        return ((self.kind == VISIT) | (self.kind == ELASTIC)) & (self.end > self.start)

    @property
    def leg_steps(self) -> np.ndarray:
        return np.flatnonzero((self.kind == LEG) | (self.kind == CAB))


@dataclass
class _Step:
    order: tuple[int, int, int]
    kind: int
    start: int
    end: int
    base: float
    sched_arr: int
    margin: float
    model: DelayModel | None
    label: str
    name: str
    day: int
    day_index: int
    arrive: bool = False
    found: bool = True  # a leg's service or a visit's venue is in the database


def is_journey_item(item: PlanItem, day: Day) -> bool:
    """Whether `item` is the journey of a day that has legs (its `travel` item): the legs model it, so
    it is never a step of its own (here, in the realised trip and in the repair policy)."""
    return item.activity == "travel" and bool(day.transport)


def compile_plan(plan_days: list[Day], db: Database, config: UncertaintyConfig,
                 query: Query | None = None) -> CompiledPlan:
    """Turn the plan's days into the step arrays the engine and the loop baseline walk."""
    steps: list[_Step] = []
    skipped: list[str] = []
    for d, day in enumerate(plan_days):
        offset = d * MINUTES_PER_DAY
        date = day.date or (query.dates[d] if query is not None and d < len(query.dates) else None)
        for i, leg in enumerate(day.transport):
            steps.append(_leg_step(db, config, leg, day, d, offset, i, date))
        for i, item in enumerate(day.items):
            if is_journey_item(item, day):
                continue
            if item.start is None or item.end is None:
                skipped.append(f"day {day.day}: {item.name} ({item.activity})")
                continue
            steps.append(_item_step(db, config, item, item.start, item.end, day, d, offset, i, date))
    steps.sort(key=lambda s: s.order)
    models = [s.model for s in steps if s.model is not None]
    draw, k = [], 0
    for s in steps:
        draw.append(k if s.model is not None else -1)
        k += s.model is not None

    travel = config.simulation.intra_city_travel_min
    gap = [travel if j and s.kind not in (LEG, CAB) and steps[j - 1].kind not in (LEG, CAB) else 0.0
           for j, s in enumerate(steps)]

    def arr(values: list, dtype: type = float) -> np.ndarray:
        return np.array(values, dtype=dtype)

    return CompiledPlan(
        kind=arr([s.kind for s in steps], np.int8), start=arr([s.start for s in steps]),
        end=arr([s.end for s in steps]), base=arr([s.base for s in steps]),
        sched_arr=arr([s.sched_arr for s in steps]), margin=arr([s.margin for s in steps]),
        draw=arr(draw, np.int64), gap=arr(gap), labels=[s.label for s in steps], names=[s.name for s in steps],
        day=[s.day for s in steps], day_index=[s.day_index for s in steps],
        arrive=arr([s.arrive for s in steps], bool), delays=DelayArrays.of(models), models=models, skipped=skipped,
        unknown=[s.label for s in steps if not s.found],
        source=[(s.day_index, s.order[1], s.order[2]) for s in steps])


def _leg_step(db: Database, config: UncertaintyConfig, leg: TransportLeg, day: Day, d: int, offset: int,
              i: int, date: str | None) -> _Step:
    sim = config.simulation
    res = resolve_leg(db, leg, date)
    dep = res.scheduled_dep if res.scheduled_dep is not None else leg.dep
    sched_arr = res.scheduled_arr if res.scheduled_arr is not None else leg.arr
    if sched_arr < dep:  # the database row crosses midnight differently from the plan: trust the row
        sched_arr += MINUTES_PER_DAY
    planned_arr = sched_arr + max(0, leg.planned_arrival - leg.arr)
    what = f"{leg.mode.capitalize()} {leg.number}" if leg.number else leg.mode.capitalize()
    label = f"day {day.day}: {what} {leg.origin}->{leg.destination} {format_hhmm(dep)}"
    if leg.mode == "flight":
        stats, _ = flight_stats(db, res.row)
        model = flight_model(label, stats, sim.flight_lognormal_sigma_default)
    else:
        log_sd = sim.train_lognormal_sigma if leg.mode == "train" else sim.road_lognormal_sigma
        model = lateness_model(label, res.expected_delay, log_sd)
    return _Step((offset + dep, 0, i), CAB if leg.mode == "cab" else LEG, offset + dep, offset + planned_arr,
                 0.0, offset + sched_arr, float(sim.boarding_margin_min.get(leg.mode, 0.0)), model, label,
                 what, day.day, d, found=res.found)


def _item_step(db: Database, config: UncertaintyConfig, item: PlanItem, start: int, end: int, day: Day, d: int,
               offset: int, i: int, date: str | None) -> _Step:
    if end < start:  # an end written as a clock time past midnight
        end += MINUTES_PER_DAY
    label = f"day {day.day}: {item.name} ({item.activity} {format_hhmm(start)}-{format_hhmm(end)})"
    model, base, found = None, float(end - start), True
    if item.activity == "visit" and item.venue_type not in ("event", "accommodation", "transit", "transport"):
        kind = VISIT
        base, model, found = _visit_model(db, config, item, day, start, end, label, date)
    elif item.activity in ELASTIC_ACTIVITIES or item.venue_type == "event":
        kind = ELASTIC
    else:
        kind = FIXED
    return _Step((offset + start, 1, i), kind, offset + start, offset + end, base, 0, 0.0, model, label,
                 item.name, day.day, d, item.activity == "arrive", found)


def _visit_model(db: Database, config: UncertaintyConfig, item: PlanItem, day: Day, start: int, end: int,
                 label: str, date: str | None) -> tuple[float, DelayModel, bool]:
    """Base duration v, the overrun element of a visit and whether its venue is in the database;
    unknown venues keep their planned length."""
    sim = config.simulation
    kind = item.venue_type
    tables = (VENUE_TABLE[kind],) if is_venue_kind(kind) and kind in CROWD_KINDS else CROWD_TABLES
    venue = find_venue(db, VenueName.of(item.name), day.cities, tables, date)
    planned = float(end - start)
    if venue is None:
        return planned, lateness_model(label, 0.0, sim.overrun_lognormal_sigma), False
    base = base_visit_minutes(db, venue.table, venue.row, start, config.restaurant_meals) or planned
    crowd = crowd_of(db, venue)
    tier = (eval_index(db).crowd(crowd).level_at((start // 60) % 24) if crowd is not None else None) or "L"
    fraction = sim.overrun_fraction_by_tier.get(tier, 0.0)
    return base, lateness_model(label, fraction * base, sim.overrun_lognormal_sigma), True
