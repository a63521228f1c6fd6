"""Realism figures of a query set: do the queries honour their personas as a traveller would expect?

`query_realism(queries, references, db)` computes each figure with its target; `utp-env data stats`
prints them after the sandbox's realism figures (tools/sandbox/realism.py) and the tests assert them
on the full sandbox's query set (issue 23). Definitions (also in docs/DATA.md):

- a query's destinations: its destination city (3 days), else the cities its reference plan stays
  in (the cities the reference planner's cheapest valid route visits);
- preference honoured: for each location preference with places (`PREFERENCE_CITIES`: "Beaches"
  coastal cities, "Mountains" hill stations, "Wildlife" national parks' towns, "Religious Sites"
  pilgrimage towns), queries whose destinations include none of them, = 0;
- budget by spending: median budget per person-day (budget / (people x days)) of "Luxury
  Traveler" queries over that of "Economical Traveler" queries, >= 2;
- metros: queries whose destinations include two parts of one metropolitan area, = 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.india import PREFERENCE_CITIES, same_metro
from utp_env.tools.sandbox.calibration import Check


def destinations(query: Query, reference: Plan | None, db: Database) -> list[str]:
    """The cities `query` visits: its destination city (3 days), else its reference plan's stay cities."""
    if query.days == 3:
        return [db.city(query.dest)]
    if reference is None:
        return []
    org = db.city(query.org)
    seen: list[str] = []
    for day in reference.days:
        for city in day.cities:
            if city != org and city not in seen:
                seen.append(city)
    return seen


def per_person_day(query: Query) -> float:
    """The query's budget per traveller per day (INR)."""
    return query.budget_inr / (query.people_number * query.days)


def query_realism(queries: Iterable[Query], references: Mapping[str, Plan], db: Database) -> list[Check]:
    """Every query realism figure with its target and pass/fail."""
    qs = list(queries)
    checks: list[Check] = []
    for preference, places in PREFERENCE_CITIES.items():
        asked = [q for q in qs if q.persona.location_preference == preference]
        missed = sum(1 for q in asked if not set(destinations(q, references.get(q.query_id), db)) & places)
        checks.append(Check(name=f'"{preference}" queries visiting none of its places', value=f"{missed}/{len(asked)}",
                            target="= 0", passed=missed == 0))
    spend = {s: [per_person_day(q) for q in qs if q.persona.spending == s]
             for s in ("Luxury Traveler", "Economical Traveler")}
    if all(spend.values()):
        lux, eco = (float(np.median(spend[s])) for s in ("Luxury Traveler", "Economical Traveler"))
        ratio = lux / eco
        checks.append(Check(name="median budget per person-day, luxury / economical",
                            value=f"{ratio:.2f}x ({lux:,.0f} / {eco:,.0f})", target=">= 2x", passed=ratio >= 2))
    both = sum(1 for q in qs if same_metro(destinations(q, references.get(q.query_id), db)))
    checks.append(Check(name="queries visiting two parts of one metro", value=both, target="= 0", passed=both == 0))
    return checks
