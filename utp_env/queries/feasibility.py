"""Is a query feasible, and what does its cheapest valid plan cost? (configs/queries.yaml sets the grid it serves)

A trip is a closed route org -> c1 (-> c2 (-> c3)) -> org with one direct leg on each travel day
(`skeleton`). A route is valid when every leg has an allowed option on its date, every city has
an admissible stay, and every local constraint can be met somewhere on it. The cheapest valid
plan prices the cheapest such route with its cheapest legs, stays, meals, entry fees and events
(the meals of an event's day at restaurants that can host them around the event); the generator
calibrates budgets from it and the reference planner falls back to it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from dataclasses import dataclass, field
from typing import overload

from utp_env.config import UncertaintyConfig
from utp_env.itinerary import parse_hhmm
from utp_env.queries.options import (
    MEAL_WINDOWS,
    LegOption,
    attraction_fits,
    attractions_by_appeal,
    buffer_multiplier,
    events_on,
    has_category,
    leg_options,
    meal_costs,
    restaurants_by_cost,
    serves,
    serves_meal,
    stay_cost,
    stay_options,
)
from utp_env.query import Query
from utp_env.tools.database import Database, normalize
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.india import PREFERENCE_CITIES, TOURIST_CITIES, same_metro

MAX_VISIT_GAP_MIN = 300.0  # longest stretch a full day offers one attraction visit (buffer included)
MAX_ROUTE_CANDIDATES = 8  # most populous visitable cities of a state considered for multi-city routes
ROUTE_SPARE_DESTINATIONS = 2  # a k-city route draws on the state's k + 2 most visited destinations
MEALS_PER_DAY = 3
ATTRACTIONS_PER_DAY = 3


@dataclass(frozen=True)
class Skeleton:
    """Where the traveller sleeps each night and on which day index each leg runs."""

    cities: tuple[str, ...]  # visited cities in order (without org)
    nights: tuple[int, ...]  # nights in each visited city
    leg_days: tuple[int, ...]  # day index of each leg; len = len(cities) + 1

    def full_days(self, j: int) -> range:
        """Day indices spent wholly in city j (no travel)."""
        return range(self.leg_days[j] + 1, self.leg_days[j + 1])


def skeleton(days: int, cities: tuple[str, ...]) -> Skeleton:
    """Split the days - 1 nights evenly over the cities (earlier cities take any extra night)."""
    k = len(cities)
    if not 1 <= k <= days - 1:
        raise ValueError(f"a {days}-day trip cannot visit {k} cities (one night each at least)")
    base, extra = divmod(days - 1, k)
    nights = tuple(base + (1 if j < extra else 0) for j in range(k))
    leg_days = tuple(itertools.accumulate((0, *nights)))
    return Skeleton(cities, nights, leg_days)


@dataclass
class TripQuote:
    """The cheapest valid plan of one route: chosen legs and stays, and the cost by component."""

    skeleton: Skeleton
    legs: list[LegOption]
    stays: list[int]
    costs: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return float(sum(self.costs.values()))


def visitable(db: Database, city: str, nights: int) -> bool:
    """A city a trip can spend `nights` in: a stay, enough distinct restaurants and attractions."""
    cache: dict = db.__dict__.setdefault("_utp_visitable", {})
    key = (normalize(city), nights)
    if key not in cache:
        cache[key] = _visitable(db, city, nights)
    return cache[key]


def _visitable(db: Database, city: str, nights: int) -> bool:
    return (len(db.city_rows("accommodations", city)) >= 1
            and len(db.city_rows("restaurants", city)) >= MEALS_PER_DAY * nights + 1
            and len(db.city_rows("attractions", city)) >= nights + 1)


def candidate_routes(query: Query, db: Database) -> list[tuple[str, ...]]:
    """Ordered city tuples the query may visit (the dest city, or k cities of the dest state).

    A k-city route runs through the state's k + `ROUTE_SPARE_DESTINATIONS` most visited tourist
    destinations (`TOURIST_CITIES`; those honouring the persona's preference first), other cities
    only when it has fewer than k visitable ones; it never visits two
    parts of one metropolitan area (Mumbai and Thane), and when the persona's location preference
    names places (`utp_env.tools.india.PREFERENCE_CITIES`: the coast for "Beaches", hill stations
    for "Mountains" ...) and some route of the state visits one, only such routes are candidates
    (those places are considered first)."""
    if query.days == 3:
        return [(db.city(query.dest),)]
    k = query.visiting_city_number
    nights = (query.days - 1) // k
    wanted = PREFERENCE_CITIES.get(query.persona.location_preference, frozenset())
    rank = {c: r for r, c in enumerate(TOURIST_CITIES)}
    cities = [c for c in db.cities_of_state(query.dest)  # most populous first
              if normalize(c) != normalize(query.org) and visitable(db, c, nights)]
    tourist = sorted((c for c in cities if c in rank), key=lambda c: (c not in wanted, rank[c]))
    if len(tourist) >= k:  # the state's most visited destinations (those honouring the persona first)
        pool = tourist[: k + ROUTE_SPARE_DESTINATIONS]
    else:
        pool = sorted(tourist + [c for c in cities if c not in rank], key=lambda c: c not in wanted)
    pool = pool[:MAX_ROUTE_CANDIDATES]
    routes = [r for r in itertools.permutations(pool, k) if not same_metro(r)]
    honoured = [r for r in routes if any(c in wanted for c in r)]
    return honoured or routes


def route_legs(query: Query, db: Database, sk: Skeleton, multiplier: float) -> list[list[LegOption]] | str:
    """Allowed options of each leg of the route, or the problem with the first leg that has none."""
    stops = (query.org, *sk.cities, query.org)
    out = []
    for j, day in enumerate(sk.leg_days):
        opts = leg_options(db, stops[j], stops[j + 1], query.dates[day], query.people_number,
                           query.local_constraint, first=j == 0, last=j == len(sk.leg_days) - 1, multiplier=multiplier)
        if not opts:
            return (f"no allowed transport from {stops[j]} to {stops[j + 1]} on {query.dates[day]} "
                    f"(day {day + 1})")
        out.append(opts)
    return out


def constraint_problems(query: Query, db: Database, sk: Skeleton, multiplier: float) -> list[str]:
    """Local constraints that the route cannot satisfy (stays, cuisines, events, categories)."""
    lc, problems = query.local_constraint, []
    for city, nights in zip(sk.cities, sk.nights, strict=True):
        if not stay_options(db, city, lc, query.people_number, nights):
            problems.append(f"no stay in {city} meets the house rule/type/amenities/services "
                            f"for {nights} nights")
    for cuisine in lc.cuisine:
        if not any(serves(db, int(r), cuisine) and any(serves_meal(db, int(r), m) for m in MEAL_WINDOWS)
                   for c in sk.cities for r in db.city_rows("restaurants", c)):
            problems.append(f"no restaurant serving {cuisine!r} in {', '.join(sk.cities)}")
    for category in lc.attraction_categories:
        if not any(has_category(db, int(r), category) and attraction_fits(db, int(r), multiplier, MAX_VISIT_GAP_MIN)
                   for c in sk.cities for r in db.city_rows("attractions", c)):
            problems.append(f"no attraction of category {category!r} that fits a day in {', '.join(sk.cities)}")
    for segment in lc.event_types:
        if not any(events_on(db, c, query.dates[d], segment)
                   for j, c in enumerate(sk.cities) for d in sk.full_days(j)):
            problems.append(f"no {segment!r} event on a full day in {', '.join(sk.cities)}")
    return problems


# Minutes a meal needs inside its window, around an event on the same day (a buffered meal with
# its transfers): an event that leaves less before and after it in a meal's window takes that meal.
MEAL_ROOM_MIN = 150


def event_leaves_meals(db: Database, row: int) -> bool:
    """Whether event `row` leaves MEAL_ROOM_MIN minutes of every meal's window free (before or after
    it): an evening show at 20:30 leaves no room for dinner, a match from 12:30 to 15:30 none for lunch."""
    return span_leaves_meals(*event_span(db, row))


def span_leaves_meals(start: int, end: int) -> bool:
    """Whether a busy span from `start` to `end` (minutes; an end before the start is after
    midnight) leaves MEAL_ROOM_MIN minutes of every meal's window free before or after it."""
    if end <= start:
        end += 24 * 60
    return all(min(hi, start) - lo >= MEAL_ROOM_MIN or hi - max(lo, end) >= MEAL_ROOM_MIN
               for lo, hi in MEAL_WINDOWS.values())


def cheapest_events(query: Query, db: Database, sk: Skeleton) -> dict[int, int]:
    """Day index -> event row: for each required segment in turn, the cheapest event on a full day
    not already taken (the events the quote prices and the reference planner books), one that
    leaves time for the day's meals (`event_leaves_meals`) first."""
    chosen: dict[int, int] = {}
    price = db.tables["events"].columns["price_inr"]
    for segment in query.local_constraint.event_types:
        options = sorted((not event_leaves_meals(db, e), float(price[e]), d, e)
                         for j, city in enumerate(sk.cities) for d in sk.full_days(j)
                         if d not in chosen for e in events_on(db, city, query.dates[d], segment))
        if options:
            _, _, day, row = options[0]
            chosen[day] = row
    return chosen


def event_span(db: Database, row: int) -> tuple[int, int]:
    """(start, end) of event `row` in minutes from midnight."""
    cols = db.tables["events"].columns
    return parse_hhmm(cols["start_time"][row]), parse_hhmm(cols["end_time"][row])


def mixes_flight_and_cab(legs: list[LegOption]) -> bool:
    """A trip with both a flight and a cab has conflicting transport (paper Table 8)."""
    modes = {leg.mode for leg in legs}
    return "flight" in modes and "cab" in modes


def conflict_free_cheapest(options: list[list[LegOption]]) -> list[LegOption] | None:
    """The cheapest option of each leg such that the trip does not mix flights and cabs, or None."""
    chosen = [opts[0] for opts in options]
    if not mixes_flight_and_cab(chosen):
        return chosen
    best: list[LegOption] | None = None
    for banned in ("flight", "cab"):
        firsts = (next((o for o in opts if o.mode != banned), None) for opts in options)
        picks = [p for p in firsts if p is not None]
        if len(picks) == len(options):
            total = sum(p.fare for p in picks)
            if best is None or total < sum(o.fare for o in best):
                best = picks
    return best


def quote_route(query: Query, db: Database, cities: tuple[str, ...], config: UncertaintyConfig) -> TripQuote | str:
    """The cheapest valid plan along `cities`, or why there is none."""
    multiplier = buffer_multiplier(config, query.risk_profile)
    sk = skeleton(query.days, cities)
    legs = route_legs(query, db, sk, multiplier)
    if isinstance(legs, str):
        return legs
    problems = constraint_problems(query, db, sk, multiplier)
    if problems:
        return problems[0]
    people, lc = query.people_number, query.local_constraint
    chosen = conflict_free_cheapest(legs)
    if chosen is None:
        return f"every way along {' -> '.join((query.org, *cities, query.org))} mixes a flight and a cab"
    stays = [stay_options(db, c, lc, people, n)[0] for c, n in zip(cities, sk.nights, strict=True)]
    rcost = db.tables["restaurants"].columns["avg_cost_inr"]
    fees = db.tables["attractions"].columns["entry_fee_inr"]
    events = cheapest_events(query, db, sk)
    meals = attractions = 0.0
    for j, (city, nights) in enumerate(zip(cities, sk.nights, strict=True)):
        meals += meal_costs(db, city, nights + 1, tuple(event_span(db, events[d]) for d in sk.full_days(j)
                                                        if d in events))
        # the fees of the sights a traveller goes for (the planner's order), not of the cheapest venues
        sights = attractions_by_appeal(db, city)[: ATTRACTIONS_PER_DAY * (nights + 1)]
        attractions += sum(float(fees[a]) for a in sights)
    for cuisine in lc.cuisine:  # the cheapest restaurant of each required cuisine, on top
        meals += min(float(rcost[r]) for c in cities for r in restaurants_by_cost(db, c) if serves(db, r, cuisine))
    for category in lc.attraction_categories:
        attractions += min(float(fees[a]) for c in cities for a in db.city_rows("attractions", c)
                           if has_category(db, a, category))
    eprice = db.tables["events"].columns["price_inr"]
    event_cost = sum(float(eprice[e]) for e in events.values())
    costs = {
        "transport": sum(o.fare for o in chosen),
        "stays": sum(stay_cost(db, s, people, n) for s, n in zip(stays, sk.nights, strict=True)),
        "meals": meals * people,
        "attractions": attractions * people,
        "events": event_cost * people,
    }
    return TripQuote(sk, chosen, stays, costs)


def cheapest_trip(query: Query, db: Database, config: UncertaintyConfig | None = None) -> TripQuote | str:
    """The cheapest valid plan over every candidate route, or the reason no route is valid."""
    config = config or UncertaintyConfig()
    best: TripQuote | None = None
    reason = "no candidate route"
    for cities in candidate_routes(query, db):
        quote = quote_route(query, db, cities, config)
        if isinstance(quote, str):
            reason = quote
        elif best is None or quote.total < best.total:
            best = quote
    if best is None and query.days > 3:
        reason = f"no route through {query.visiting_city_number} cities of {query.dest}: {reason}"
    return best if best is not None else reason


@overload
def calendar(db: Database, default: tuple[str, str]) -> tuple[dt.date, dt.date]: ...
@overload
def calendar(db: Database, default: None = None) -> tuple[dt.date, dt.date] | None: ...
def calendar(db: Database, default: tuple[str, str] | None = None) -> tuple[dt.date, dt.date] | None:
    """The sandbox calendar: manifest `calendar` ({start, end} or [start, end]), else the span of the
    events' dates, else `default` (None when there is nothing to go by)."""
    cal = db.manifest.get("calendar") if isinstance(db.manifest, dict) else None
    if isinstance(cal, dict) and "start" in cal and "end" in cal:
        return dt.date.fromisoformat(cal["start"]), dt.date.fromisoformat(cal["end"])
    if isinstance(cal, list | tuple) and len(cal) == 2:
        return dt.date.fromisoformat(cal[0]), dt.date.fromisoformat(cal[1])
    dates = db.tables["events"].columns["date"]
    if len(dates):
        return dt.date.fromisoformat(min(dates)), dt.date.fromisoformat(max(dates))
    if default is None:
        return None
    return dt.date.fromisoformat(default[0]), dt.date.fromisoformat(default[1])


def check(query: Query, db: Database, config: UncertaintyConfig | None = None) -> list[str]:
    """Problems that make `query` infeasible; an empty list means feasible.

    Checks the names, the dates, reachability by allowed modes in a closed chain from org, each
    local constraint's satisfiability, and that the budget covers the cheapest valid plan.
    """
    problems: list[str] = []
    try:
        db.city(query.org)
        if query.days == 3:
            db.city(query.dest)
        else:
            db.cities_of_state(query.dest)
    except UnknownNameError as exc:
        return [str(exc)]
    if len(query.dates) != query.days:
        problems.append(f"{len(query.dates)} dates for a {query.days}-day trip")
    elif any(b != _next_day(a) for a, b in itertools.pairwise(query.dates)):
        problems.append("dates are not consecutive days")
    span = calendar(db)
    if not problems and span is not None and not (span[0].isoformat() <= query.dates[0]
                                                  and query.dates[-1] <= span[1].isoformat()):
        problems.append(f"dates {query.dates[0]}..{query.dates[-1]} are outside the sandbox calendar "
                        f"{span[0]}..{span[1]}")
    expected_k = 1 if query.days == 3 else None
    if expected_k and query.visiting_city_number != expected_k:
        problems.append("a 3-day trip visits exactly one city")
    if problems:
        return problems
    quote = cheapest_trip(query, db, config)
    if isinstance(quote, str):
        return [quote]
    if query.budget_inr < quote.total:
        problems.append(f"budget INR {query.budget_inr:.0f} is below the cheapest valid plan "
                        f"(INR {math.ceil(quote.total)})")
    return problems


def _next_day(date: str) -> str:
    return (dt.date.fromisoformat(date) + dt.timedelta(days=1)).isoformat()
