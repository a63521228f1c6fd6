"""The common random numbers of a realised trip (`utp_env/simulation/realise.py`, docs/REPLAN.md).

A step's delay does not come from a shared stream but from its own generator, seeded by
`crn_key`: (seed, mode, service, date) for a leg, (seed, "visit", venue, date) for a visit's
overrun, drawn with the simulation's only sampler (`delay_models.sample`). The service is the
resolved one (`service_key`) and the venue its name without a ', City' (`venue_key`), so a plan's
spelling does not change the draw; the date is the one the leg is actually travelled
(`travel_date`). Two agents that start from the same seed meet the same delays on every service,
date and visit they share, whatever else they do.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np

from utp_env.itinerary import Plan, PlanItem, TransportLeg
from utp_env.query import Query
from utp_env.resolve import find_service
from utp_env.simulation.compile import LEG, CompiledPlan
from utp_env.simulation.delay_models import DelayArrays, sample
from utp_env.tools.database import Database, normalize
from utp_env.tools.schema import NUMBER_COLUMN, SERVICE_TABLE
from utp_env.tools.seeding import stable_int

LEG_ELEMENT, ITEM_ELEMENT = 0, 1  # `CompiledPlan.source` codes


def element_of(plan: Plan, source: tuple[int, int, int]) -> TransportLeg | PlanItem:
    """The plan element a compiled step comes from (`CompiledPlan.source[j]`)."""
    day_index, what, index = source
    day = plan.days[day_index]
    return day.transport[index] if what == LEG_ELEMENT else day.items[index]


def step_date(plan: Plan, query: Query | None, day_index: int) -> str | None:
    """The date of a plan day: its own, else the query's (as `compile_plan` reads it)."""
    day = plan.days[day_index]
    if day.date:
        return day.date
    return query.dates[day_index] if query is not None and day_index < len(query.dates) else None


def travel_date(date: str | None, wait_days: int) -> str | None:
    """The date `wait_days` days after `date` (YYYY-MM-DD): when a missed leg is actually taken."""
    if not wait_days or date is None:
        return date
    try:
        return (dt.date.fromisoformat(date) + dt.timedelta(days=wait_days)).isoformat()
    except ValueError:
        return f"{date}+{wait_days}"


def canonical_city(db: Database, city: str) -> str:
    return db.known_city(city) or normalize(city)


def service_key(db: Database, leg: TransportLeg) -> str:
    """The service a leg is, independent of how the plan spells it: the timetable's number of the
    resolved row (flights, trains, buses), else the normalised number; for a cab (or a leg with no
    number) `origin->destination` in the database's city spelling."""
    if leg.number:
        row = find_service(db, leg.mode, leg.number, leg.origin, leg.destination)
        if row is not None:
            table = SERVICE_TABLE[leg.mode]
            return str(db.tables[table].columns[NUMBER_COLUMN[table]][row])
        return normalize(leg.number)
    return f"{canonical_city(db, leg.origin)}->{canonical_city(db, leg.destination)}"


def crn_key(seed: int, element: TransportLeg | PlanItem, date: str | None, db: Database) -> int:
    """The seed of one delay element's own generator: (seed, mode, service, date) for a leg
    (`service_key`; `date` the day it is travelled), (seed, "visit", venue, date) for a visit."""
    if isinstance(element, TransportLeg):
        return stable_int("replan", seed, element.mode, service_key(db, element), date)
    return stable_int("replan", seed, "visit", venue_key(db, element.name), date)


def venue_key(db: Database, name: str) -> str:
    """A venue item's name without the ', City' a lived plan writes (`utp_env.env.replan.lived_plan`),
    so a visit meets the same draw whether it is named 'Name, City' or 'Name' (as add_item writes it)."""
    bare, sep, city = name.rpartition(", ")
    return bare if sep and db.known_city(city) else name


def crn_draw(compiled: CompiledPlan, j: int, plan: Plan, query: Query | None, seed: int, db: Database,
             wait_days: int = 0) -> float:
    """The delay of step j under common random numbers (0 when the step has no delay element);
    `wait_days`: a leg taken that many days after its planned date meets that date's delay."""
    k = int(compiled.draw[j])
    if k < 0:
        return 0.0
    date = travel_date(step_date(plan, query, compiled.source[j][0]), wait_days)
    rng = np.random.default_rng(crn_key(seed, element_of(plan, compiled.source[j]), date, db))
    return float(sample(DelayArrays.of([compiled.models[k]]), rng, 1)[0, 0])


def crn_cancelled(compiled: CompiledPlan, j: int, plan: Plan, query: Query | None, seed: int, db: Database) -> bool:
    """Whether flight step j is cancelled (only when the `cancellation` kind is active).

    An assumption beyond the paper's data: a flight whose common-random-numbers draw falls in the
    delay model's disruption branch (probability p_dis = (cancelled + diverted) / N of its on-time
    statistics, the branch that otherwise costs Dmax minutes) is cancelled. The branch is read from
    the same generator and the same sampler: the element is sampled again with Dmax replaced by -1,
    which changes no draw, so a negative value marks the disruption branch.
    """
    k = int(compiled.draw[j])
    if k < 0 or compiled.kind[j] != LEG:
        return False
    model = compiled.models[k]
    element = element_of(plan, compiled.source[j])
    if not isinstance(element, TransportLeg) or element.mode != "flight" or model.p_dis <= 0:
        return False
    rng = np.random.default_rng(crn_key(seed, element, step_date(plan, query, compiled.source[j][0]), db))
    return bool(sample(DelayArrays.of([replace(model, dmax=-1.0)]), rng, 1)[0, 0] < 0)


def crn_delays(compiled: CompiledPlan, plan: Plan, query: Query | None, seed: int, db: Database) -> np.ndarray:
    """(1, k) delays of every delay element of a compiled plan under common random numbers, each
    leg on its planned date, in the layout `engine.run` takes: the draws of a realisation in which
    no leg is missed (a missed leg meets the delay of the day it is taken: `crn_draw`)."""
    out = np.zeros((1, compiled.delays.k))
    for j in range(compiled.n_steps):
        if compiled.draw[j] >= 0:
            out[0, compiled.draw[j]] = crn_draw(compiled, j, plan, query, seed, db)
    return out
