"""What the reference planner picks: legs, stays, the order it tries venues in, and events.

Two policies share the candidate sets of `utp_env.queries.options` (the same ones the query
generator prices): `preferred` weighs comfort and reliability by the persona's spending style
(value of time, expected delay, ratings), `cheapest` takes the cheapest of everything and is the
fallback that the generator's budget is guaranteed to cover.
"""

from __future__ import annotations

from typing import Literal

from utp_env.evaluation.tripcraft import preferred_categories
from utp_env.queries.feasibility import Skeleton, TripQuote, cheapest_events
from utp_env.queries.options import (
    LegOption,
    attractions_by_appeal,
    events_on,
    leg_options,
    restaurants_by_cost,
    stay_cost,
    stay_options,
)
from utp_env.query import Query
from utp_env.tools.database import Database, normalize

Policy = Literal["preferred", "cheapest"]
# INR per traveller-minute of journey (duration plus expected delay) and per rating point of a stay-night.
VALUE_OF_TIME = {"luxury": 10.0, "moderate": 4.0, "economical": 1.0}
STAY_RATING_PREMIUM = {"luxury": 1500.0, "moderate": 500.0, "economical": 0.0}


def spending_style(query: Query) -> str:
    text = query.persona.spending.lower()
    return next((k for k in VALUE_OF_TIME if k in text), "moderate")


def choose_legs(query: Query, db: Database, quote: TripQuote, multiplier: float, policy: Policy) -> list[LegOption]:
    """One option per leg: the quote's (cheapest, conflict-free) legs, or the best fare + time value +
    delay risk for the persona among the modes the quote's legs allow (never both flight and cab)."""
    if policy == "cheapest":
        return list(quote.legs)
    sk = quote.skeleton
    banned = "cab" if any(leg.mode == "flight" for leg in quote.legs) else "flight"
    stops = (query.org, *sk.cities, query.org)
    vot = VALUE_OF_TIME[spending_style(query)] * query.people_number
    out = []
    for j, day in enumerate(sk.leg_days):
        opts = leg_options(db, stops[j], stops[j + 1], query.dates[day], query.people_number,
                           query.local_constraint, first=j == 0, last=j == len(sk.leg_days) - 1, multiplier=multiplier)
        out.append(min((o for o in opts if o.mode != banned), default=quote.legs[j],
                       key=lambda o: (o.fare + vot * (o.hist_duration + (1 + multiplier) * o.expected_delay),
                                      o.dep, o.mode, o.number or "")))
    return out


def choose_stays(query: Query, db: Database, sk: Skeleton, policy: Policy) -> list[int]:
    """One admissible stay per city: the cheapest, or the best price-for-rating for the persona."""
    premium = STAY_RATING_PREMIUM[spending_style(query)]
    rating = db.tables["accommodations"].columns["rating"]
    out = []
    for city, nights in zip(sk.cities, sk.nights, strict=True):
        opts = stay_options(db, city, query.local_constraint, query.people_number, nights)
        if policy == "cheapest" or premium == 0:
            out.append(opts[0])
        else:
            out.append(min(opts, key=lambda s: (stay_cost(db, s, query.people_number, nights)
                                                - premium * float(rating[s]) * nights, s)))
    return out


def restaurant_order(db: Database, city: str, policy: Policy) -> list[int]:
    rows = restaurants_by_cost(db, city)
    if policy == "cheapest":
        return rows
    rating = db.tables["restaurants"].columns["rating"]
    return sorted(rows, key=lambda r: (-round(float(rating[r]), 1), rows.index(r)))


def attraction_order(db: Database, city: str, policy: Policy, query: Query) -> list[int]:
    """Attractions to try: the city's top sights first (`attractions_by_appeal`, the order the budget
    prices), and with the preferred policy, among equally rated ones those of a category the persona
    favours (`preferred_categories`, the categories P_persona counts) first."""
    rows = attractions_by_appeal(db, city)
    if policy == "cheapest":
        return rows
    persona = query.persona
    favoured = preferred_categories(persona.location_preference, persona.purpose, persona.traveler_type)
    cols = db.tables["attractions"].columns
    return sorted(rows, key=lambda a: (-round(float(cols["rating"][a]), 1),
                                       not favoured.intersection(cols["categories"][a]),
                                       float(cols["visit_duration_hr"][a]), a))


def choose_events(query: Query, db: Database, sk: Skeleton) -> dict[int, int]:
    """Day index -> event row: for each required segment, the cheapest event on a free full day
    (the events the quote prices, `utp_env.queries.feasibility.cheapest_events`)."""
    return cheapest_events(query, db, sk)


def other_events(query: Query, db: Database, sk: Skeleton, chosen: dict[int, int]) -> list[dict[int, int]]:
    """Other event bookings than `chosen` (`choose_events`), each moving one required segment's event
    to another free full day, cheapest first: the fallback when the chosen event takes the only
    evening a required attraction category is open in its city."""
    cols = db.tables["events"].columns
    out: list[tuple[float, int, dict[int, int]]] = []
    for day, row in chosen.items():
        rest = {d: e for d, e in chosen.items() if d != day}
        segments = [s for s in query.local_constraint.event_types if normalize(s) == normalize(cols["segment"][row])]
        for j, city in enumerate(sk.cities):
            for d in sk.full_days(j):
                if d == day or d in rest:
                    continue
                for segment in segments:
                    for e in events_on(db, city, query.dates[d], segment):
                        out.append((float(cols["price_inr"][e]), len(out), {**rest, d: e}))
    return [events for _, _, events in sorted(out)]


def roomier_legs(query: Query, db: Database, quote: TripQuote, multiplier: float, legs: list[LegOption],
                 cities: set[str]) -> list[LegOption]:
    """`legs` with the legs into a city of `cities` replaced by the earliest planned arrival and the
    legs out of one by the latest departure (cheapest among equals; modes as `choose_legs` allows):
    the fallback that gives a required attraction open only in some hours more time in its city."""
    sk = quote.skeleton
    banned = "cab" if any(leg.mode == "flight" for leg in legs) else "flight"
    stops = (query.org, *sk.cities, query.org)
    last = len(sk.leg_days) - 1
    out = list(legs)
    for j, day in enumerate(sk.leg_days):
        into, out_of = j < last and stops[j + 1] in cities, j > 0 and stops[j] in cities
        if not (into or out_of):
            continue
        opts = [o for o in leg_options(db, stops[j], stops[j + 1], query.dates[day], query.people_number,
                                       query.local_constraint, first=j == 0, last=j == last, multiplier=multiplier)
                if o.mode != banned]
        if opts:
            out[j] = (min(opts, key=lambda o: (o.planned_arrival(multiplier), o.fare, o.number or "")) if into
                      else min(opts, key=lambda o: (-o.dep, o.fare, o.number or "")))
    return out
