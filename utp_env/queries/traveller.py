"""Traveller figures of a query set and its reference plans: do the trips go where people go, and
would a traveller who knows India make these plans?

`query_figures(queries, references, db)` computes each figure with its target and the source of
that target (a `Figure`, as the database's traveller figures of `utp_env/tools/sandbox/traveller/`);
`utp-env data stats` prints them after the database's, and the tests assert them on the full
sandbox's query set. A query's destinations are its destination city (3 days), else the cities its
reference plan stays in. Definitions:

- top destinations: of the 10 cities most queries go to, at least 8 among India's 30 most visited
  places (the first 30 of `TOURIST_CITIES`, after the Ministry of Tourism's *India Tourism
  Statistics*);
- queries whose destinations are all tourist destinations (`TOURIST_CITIES`), >= 95%;
- the places a traveller expects trips to (Goa's Panaji, Leh, Darjeeling, Rishikesh, Puri, Shimla,
  Manali): each a destination of at least one query, where the database has it;
- origins in cities of a million people or more, >= 50% (the generator's stated rule: travellers
  set out from the big cities, drawn by population);
- for each location preference (`PREFERENCE_CITIES`: "Beaches" the coast, "Mountains" hill stations,
  "Historical Sites" heritage cities ...), queries whose destinations include none of its places, = 0;
- median budget per person-day of "Luxury Traveler" queries over "Economical Traveler" ones, >= 2
  (the budget is the cheapest valid plan x the level's slack x the spending multiplier);
- queries whose destinations include two parts of one metropolitan area (Mumbai and Thane), = 0;
- top sight seen: of the reference plans' stays with a full day in a city with listed top sights
  (`top_sights`), the share whose plan visits the city's first-listed sight, >= 90% (a stay whose
  full days all fall on that sight's closing day is left out);
- "Historical Sites" plans: share of their attraction visits at Sights & Landmarks or Museums, >= 60%;
- meal times (TripCraft's fitted Indian meal hours, breakfast about 09:50, lunch 14:25, dinner 20:25,
  and the paper's Figure 3 plan, dinner 19:30-21:00): median breakfast start 07:30-09:30, lunch
  12:30-14:30, dinner 19:00-21:00; dinners ending after 23:30, = 0;
- median meal length by meal and risk profile (`MEAL_MINUTES`): the meal a traveller in India takes
  (breakfast 30-45 min, lunch 45-60, dinner 60-90) with the profile's buffer on top (paper
  Appendix B: more for the optimized and averse profiles): breakfast 30-60 min tolerant, 45-90
  optimized, 60-105 averse; lunch 45-90, 60-120, 75-135; dinner 60-120, 90-150, 105-165 (targets
  for the full query set: the mini sandbox's crowd cities, busier at meal hours, add a few minutes). The
  reference planner books a traveller's meal (breakfast 30 min, lunch 45, dinner 60) plus the
  buffer BAS asks of the meal's v (`agents/reference/timing.py`); before generator 12 it booked v
  plus that buffer, a tolerant breakfast of 75 min and an averse one of 113 (docs/PAPER.md, "BAS
  and a traveller's meal");
- attraction visits: median booked length 60-180 min, share of 4 h or more <= 10% (a day trip to
  Ajanta or Fatehpur Sikri is one);
- breakfasts at a restaurant of a lunch-or-evening kind (`LUNCH_EVENING_KINDS`: a pizzeria, Chinese
  corner, grill, kebab or biryani house, pub or bar ..., by `restaurant_kind`), = 0.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.clock import weekday
from utp_env.tools.database import Database, normalize
from utp_env.tools.india import PREFERENCE_CITIES, TOP_TOURIST_COUNT, TOURIST_CITIES, same_metro
from utp_env.tools.india.venue_facts import LUNCH_EVENING_KINDS, top_sights
from utp_env.tools.sandbox.traveller import Figure
from utp_env.tools.sandbox.venues import restaurant_kind

MOST_VISITED = 30
EXPECTED_PLACES = ("Panaji", "Leh", "Darjeeling", "Rishikesh", "Puri", "Shimla", "Manali")
BIG_CITY = 1_000_000
TOURISM_STATISTICS = "Ministry of Tourism, India Tourism Statistics (most visited places)"
GENERATOR_RULE = "the query generator's stated rule (utp_env/queries/generate.py)"
MEAL_SOURCE = "TripCraft's fitted meal hours (configs/uncertainty.yaml) and the paper's Figure 3 plan"
MEAL_STARTS = {"breakfast": (7 * 60 + 30, 9 * 60 + 30), "lunch": (12 * 60 + 30, 14 * 60 + 30),
               "dinner": (19 * 60, 21 * 60)}
PROFILES = ("tolerant", "optimized", "averse")
# median meal length (min) by meal and risk profile, in `PROFILES` order
MEAL_MINUTES: dict[str, tuple[tuple[int, int], ...]] = {
    "breakfast": ((30, 60), (45, 90), (60, 105)), "lunch": ((45, 90), (60, 120), (75, 135)),
    "dinner": ((60, 120), (90, 150), (105, 165)),
}
MEAL_LENGTH_SOURCE = ("a traveller's meal in India (breakfast 30-45 min, lunch 45-60, dinner 60-90) "
                      "with the profile's buffer (paper Appendix B)")
LATEST_DINNER_END = 23 * 60 + 30
# Why the mini sandbox may miss the meal-length targets (they are the full query set's).
MEAL_LENGTH_ELSEWHERE = ("meal lengths: the targets are the full sandbox's; the mini query set's meals fall at crowded "
                         "hours more often (57% of them at a congestion factor above 1, full: 44%), and a "
                         "crowded meal carries the larger buffer BAS asks (low x v x Cf)")


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


def _clock(minutes: float) -> str:
    m = round(minutes) % 1440
    return f"{m // 60:02d}:{m % 60:02d}"


def _share(name: str, hits: int, total: int, low: float | None, high: float | None, target: str,
           source: str) -> Figure:
    share = hits / total if total else 0.0
    ok = total > 0 and (low is None or share >= low) and (high is None or share <= high)
    return Figure(name=name, value=f"{100 * share:.1f}% ({hits}/{total})", target=target, passed=ok, source=source)


def destination_figures(qs: list[Query], references: Mapping[str, Plan], db: Database) -> list[Figure]:
    """Where the trips go and where they start."""
    out: list[Figure] = []
    where = {q.query_id: destinations(q, references.get(q.query_id), db) for q in qs}
    counts = Counter(c for cities in where.values() for c in cities)
    tourist = set(TOURIST_CITIES)
    if set(TOURIST_CITIES[:TOP_TOURIST_COUNT]) <= set(db.cities):  # an India-wide database
        top = [c for c, _ in counts.most_common(10)]
        inside = sum(1 for c in top if c in TOURIST_CITIES[:MOST_VISITED])
        out.append(Figure(name="top 10 destinations among the 30 most visited",
                          value=f"{inside}/10 ({', '.join(top[:5])} ...)", target=">= 8", passed=inside >= 8,
                          source=TOURISM_STATISTICS))
        for place in EXPECTED_PLACES:
            if place in db.cities:
                n = counts.get(place, 0)
                out.append(Figure(name=f"queries to {place}", value=n, target=">= 1", passed=n >= 1,
                                  source=TOURISM_STATISTICS))
    all_tourist = sum(1 for cities in where.values() if cities and all(c in tourist for c in cities))
    out.append(_share("queries going only to tourist destinations", all_tourist, len(qs), 0.95, None, ">= 95%",
                      TOURISM_STATISTICS))
    population = dict(zip(db.tables["cities"].columns["city"], np.asarray(db.tables["cities"].columns["population"],
                                                                          float).tolist(), strict=True))
    big = sum(1 for q in qs if population.get(db.known_city(q.org) or q.org, 0.0) >= BIG_CITY)
    out.append(_share("origins in cities of 1 million or more", big, len(qs), 0.5, None, ">= 50%", GENERATOR_RULE))
    for preference, places in PREFERENCE_CITIES.items():
        asked = [q for q in qs if q.persona.location_preference == preference]
        missed = sum(1 for q in asked if not set(where[q.query_id]) & places)
        out.append(Figure(name=f'"{preference}" queries visiting none of its places', value=f"{missed}/{len(asked)}",
                          target="= 0", passed=missed == 0, source="utp_env/tools/india/__init__.py PREFERENCE_CITIES"))
    spend = {s: [per_person_day(q) for q in qs if q.persona.spending == s]
             for s in ("Luxury Traveler", "Economical Traveler")}
    if all(spend.values()):
        lux, eco = (float(np.median(spend[s])) for s in ("Luxury Traveler", "Economical Traveler"))
        out.append(Figure(name="median budget per person-day, luxury / economical",
                          value=f"{lux / eco:.2f}x ({lux:,.0f} / {eco:,.0f})", target=">= 2x", passed=lux / eco >= 2,
                          source=GENERATOR_RULE))
    both = sum(1 for cities in where.values() if same_metro(cities))
    out.append(Figure(name="queries visiting two parts of one metro", value=both, target="= 0", passed=both == 0,
                      source="utp_env/tools/india/__init__.py METRO_AREAS"))
    return out


def plan_figures(qs: list[Query], references: Mapping[str, Plan], db: Database) -> list[Figure]:
    """What the reference plans visit, and when and how long they eat and sightsee."""
    out: list[Figure] = []
    cats = db.tables["attractions"].columns["categories"]
    open_days = db.tables["attractions"].columns["open_days"]
    seen = stays = 0
    heritage = heritage_total = 0
    starts: dict[str, list[int]] = {m: [] for m in MEAL_STARTS}
    lengths: dict[tuple[str, str], list[int]] = {(m, p): [] for m in MEAL_MINUTES for p in PROFILES}
    visits: list[int] = []
    late_dinners = bad_breakfasts = 0
    for q in qs:
        plan = references.get(q.query_id)
        if plan is None:
            continue
        historical = q.persona.location_preference == "Historical Sites"
        visited: dict[str, set[str]] = {}
        full_days: dict[str, list[str]] = {}
        for day in plan.days:
            if len(day.cities) == 1 and not day.transport and day.date:
                full_days.setdefault(day.cities[0], []).append(day.date)
            for item in day.items:
                if item.start is None or item.end is None:
                    continue
                length = item.end - item.start
                if item.meal is not None:
                    meal: str = item.meal
                    starts[meal].append(item.start)
                    lengths.setdefault((meal, q.risk_profile), []).append(length)
                    if meal == "dinner" and item.end > LATEST_DINNER_END:
                        late_dinners += 1
                    if meal == "breakfast":
                        name, _, city = item.name.rpartition(", ")
                        row = db.venue("restaurants", city, name)
                        cuisines = db.tables["restaurants"].columns["cuisines"][row] if row is not None else ()
                        bad_breakfasts += restaurant_kind(city, name, cuisines) in LUNCH_EVENING_KINDS
                elif item.venue_type == "attraction":
                    visits.append(length)
                    name, _, city = item.name.rpartition(", ")
                    visited.setdefault(city, set()).add(normalize(name))
                    if historical:
                        row = db.venue("attractions", city, name)
                        if row is not None:
                            heritage_total += 1
                            heritage += bool({"Sights & Landmarks", "Museums"} & set(cats[row]))
        for city, dates in full_days.items():
            sights = top_sights(city)
            if not sights:
                continue
            row = db.venue("attractions", city, sights[0])
            if row is not None and all(open_days[row][weekday(d)] == "0" for d in dates):
                continue  # every full day falls on its closing day
            stays += 1
            seen += normalize(sights[0]) in visited.get(city, set())
    out.append(_share("stays with a full day that see the city's top sight", seen, stays, 0.9, None, ">= 90%",
                      "utp_env/tools/india top sights (ASI, state tourism listings)"))
    if heritage_total:
        out.append(_share('"Historical Sites" visits at landmarks or museums', heritage, heritage_total, 0.6, None,
                          ">= 60%", "the persona's meaning"))
    for meal, (low, high) in MEAL_STARTS.items():
        if starts[meal]:
            median = statistics.median(starts[meal])
            out.append(Figure(name=f"median {meal} start", value=_clock(median), target=f"{_clock(low)}-{_clock(high)}",
                              passed=low <= median <= high, source=MEAL_SOURCE))
    out.append(Figure(name="dinners ending after 23:30", value=late_dinners, target="= 0", passed=late_dinners == 0,
                      source="the paper's Figure 3 plan (dinner 19:30-21:00)"))
    for meal, ranges in MEAL_MINUTES.items():
        kept = [(p, lengths[(meal, p)], r) for p, r in zip(PROFILES, ranges, strict=True) if lengths[(meal, p)]]
        if kept:
            medians = [statistics.median(values) for _, values, _ in kept]
            met = all(low <= m <= high for m, (_, _, (low, high)) in zip(medians, kept, strict=True))
            out.append(Figure(name=f"median {meal} length, {' / '.join(p for p, _, _ in kept)} (min)",
                              value=" / ".join(f"{m:.0f}" for m in medians),
                              target=" / ".join(f"{low}-{high}" for _, _, (low, high) in kept),
                              passed=met,
                              source=MEAL_LENGTH_SOURCE,
                              shortfall=MEAL_LENGTH_ELSEWHERE if db.manifest.get("profile") == "mini" else None))
    if visits:
        median, long = statistics.median(visits), sum(1 for v in visits if v >= 240)
        out.append(Figure(name="attraction visit median (min) / share of 4 h or more",
                          value=f"{median:.0f} / {100 * long / len(visits):.1f}%", target="60-180 / <= 10%",
                          passed=60 <= median <= 180 and long <= 0.1 * len(visits),
                          source="typical visit times of the sights (tools/india)"))
    out.append(Figure(name="breakfasts at a lunch-or-evening kind of restaurant", value=bad_breakfasts,
                      target="= 0", passed=bad_breakfasts == 0,
                      source="Indian breakfast places (tools/india/venue_facts.py LUNCH_EVENING_KINDS)"))
    return out


def query_figures(queries: Iterable[Query], references: Mapping[str, Plan], db: Database) -> list[Figure]:
    """Every traveller figure of a query set and its reference plans, with its target and source."""
    qs = list(queries)
    return destination_figures(qs, references, db) + plan_figures(qs, references, db)
