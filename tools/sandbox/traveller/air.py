"""Traveller figures of the flights table (see `__init__.py`); each names its target's source.

A flight row flies on the weekdays of its `run_days`, so departures a day are the row's operating
days over 7, summed. A figure about named cities is left out when the database lacks one of them.

- domestic departures a day: all rows, 3,000-3,200 (India's domestic departures a day in
  2024-25, Ministry of Civil Aviation daily traffic figures); where Delhi, Mumbai, Kolkata and
  Chennai are all in the database (an India-wide table);
- departures a day from Delhi: 450-600 (AAI traffic statistics: Delhi handles about 1,400
  aircraft movements a day, about three quarters of them domestic);
- Delhi -> Mumbai departures a day: 40-60 (airline timetables 2025: IndiGo, Air India, Akasa Air
  and SpiceJet fly about 45-55 a day each way);
- Mumbai -> Goa departures a day (Panaji's airports, Dabolim and Mopa): 10-25 (airline
  timetables 2025);
- departures a day from a regional airport, Manali (Kullu-Bhuntar): 1-4 (Alliance Air's
  timetable: one or two Delhi-Kullu flights a day);
- departures a day from Kota, Dhanbad, Warangal and Jamshedpur, which have aerodromes but no
  scheduled flights: = 0 (Airports Authority of India's list of operational airports), where
  any of them is in the database;
- flight pairs in the vendored route table: the share of the table's (origin airport,
  destination airport) pairs that are pairs of `tools/india/air/routes.csv`, = 100 %
  (OpenFlights route database, 2014, with the updates of `tools/india/air/updates.csv`);
- busiest routes: the five unordered city pairs with the most departures, Delhi-Mumbai first and
  all among India's 16 busiest domestic routes (`air_facts.BUSIEST_ROUTES`; DGCA and AAI route
  traffic statistics), where Delhi and Mumbai are in the database;
- airlines flying: every airline of the table flies today (`tools/india/air/carriers.csv`), so no
  Vistara (merged into Air India in November 2024), Jet Airways (stopped 2019) or Go First
  (stopped 2023) (DGCA's scheduled operators, 2025);
- IndiGo's share of departures: 55-70 % (DGCA domestic traffic 2025: about 64 % of passengers),
  for an India-wide table;
- Delhi -> Mumbai block times: shortest and longest scheduled `duration_min`, within 2 h 00-2 h 30
  (airline timetables 2025: 2 h 05-2 h 25).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from utp_env.tools.database import Database
from utp_env.tools.india.air_facts import (
    BUSIEST_ROUTES,
    NATIONAL_DEPARTURES_RANGE,
    NO_SCHEDULED_FLIGHTS,
    read_carriers,
    read_routes,
)
from utp_env.tools.sandbox.traveller.figure import Figure

INDIA_WIDE = ("Delhi", "Mumbai", "Kolkata", "Chennai")
GOA = "Panaji"
REGIONAL_AIRPORT_CITY = "Manali"


def departures_a_day(f: dict) -> dict[tuple[str, str], float]:
    """Departures a day (operating days / 7) per ordered city pair."""
    out: dict[tuple[str, str], float] = defaultdict(float)
    for o, d, days in zip(f["origin_city"], f["dest_city"], f["run_days"], strict=True):
        out[(o, d)] += days.count("1") / 7.0
    return out


def _figure(name: str, value: float | int | str, target: str, passed: bool, source: str) -> Figure:
    return Figure(name=name, value=value, target=target, passed=bool(passed), source=source)


def figures(db: Database) -> list[Figure]:
    """The air figures of `db`."""
    f = db.tables["flights"].columns
    cities = set(db.tables["cities"].columns["city"])
    pairs = departures_a_day(f)
    from_city: dict[str, float] = defaultdict(float)
    for (o, _), n in pairs.items():
        from_city[o] += n
    total = sum(pairs.values())
    india_wide = all(c in cities for c in INDIA_WIDE)
    out: list[Figure] = []
    if india_wide:
        low, high = NATIONAL_DEPARTURES_RANGE
        out.append(_figure("domestic departures a day", f"{total:,.0f}", f"{low:,}-{high:,}", low <= total <= high,
                           "Ministry of Civil Aviation daily domestic traffic, 2024-25"))
    if "Delhi" in cities:
        n = from_city["Delhi"]
        out.append(_figure("departures a day from Delhi", f"{n:.0f}", "450-600", 450 <= n <= 600,
                           "AAI traffic statistics: about 1,400 movements a day, three quarters domestic"))
    if {"Delhi", "Mumbai"} <= cities:
        n = pairs[("Delhi", "Mumbai")]
        out.append(_figure("Delhi -> Mumbai departures a day", f"{n:.1f}", "40-60", 40 <= n <= 60,
                           "airline timetables 2025 (about 45-55 a day each way)"))
    if {"Mumbai", GOA} <= cities:
        n = pairs[("Mumbai", GOA)]
        out.append(_figure("Mumbai -> Goa (Dabolim, Mopa) departures a day", f"{n:.1f}", "10-25", 10 <= n <= 25,
                           "airline timetables 2025"))
    if REGIONAL_AIRPORT_CITY in cities:
        n = from_city[REGIONAL_AIRPORT_CITY]
        out.append(_figure("departures a day from Manali (Kullu-Bhuntar)", f"{n:.1f}", "1-4", 1 <= n <= 4,
                           "Alliance Air timetable 2025 (one or two Delhi-Kullu flights a day)"))
    small = [c for c in NO_SCHEDULED_FLIGHTS if c in cities]
    if small:
        n = sum(from_city[c] + sum(v for (o, d), v in pairs.items() if d == c) for c in small)
        out.append(_figure(f"departures a day to or from {', '.join(small)}", f"{n:.1f}", "= 0", n == 0,
                           "AAI list of operational airports (aerodromes without scheduled flights)"))
    real = {frozenset((r.airport_a, r.airport_b)) for r in read_routes()}
    legs = Counter(frozenset(p) for p in zip(f["origin_airport"], f["dest_airport"], strict=True))
    inside = sum(1 for p in legs if p in real)
    out.append(_figure("flight pairs in the vendored route table", f"{inside}/{len(legs)}", "= 100%",
                       inside == len(legs) and len(legs) > 0,
                       "OpenFlights route database (2014, ODbL) with tools/india/air/updates.csv"))
    if {"Delhi", "Mumbai"} <= cities:
        routes: dict[frozenset[str], float] = defaultdict(float)
        for (o, d), n in pairs.items():
            routes[frozenset((o, d))] += n
        top = sorted(routes, key=lambda r: -routes[r])[:5]
        text = ", ".join("-".join(sorted(route)) for route in top[:3])
        ok = bool(top) and top[0] == frozenset(("Delhi", "Mumbai")) and all(r in BUSIEST_ROUTES for r in top)
        out.append(_figure("busiest flight routes", text, "Delhi-Mumbai first; top 5 among India's busiest", ok,
                           "DGCA and AAI route traffic statistics"))
    carriers = read_carriers()
    flying = {c.airline for c in carriers if c.flying}
    gone = {c.airline for c in carriers if not c.flying}
    seen = set(f["airline"])
    out.append(_figure("airlines flying", f"{len(seen)}: {', '.join(sorted(seen & gone)) or 'none gone'}",
                       "only today's (no Vistara, Jet Airways, Go First)", bool(seen) and seen <= flying,
                       "DGCA scheduled operators 2025"))
    if india_wide:
        indigo = sum(days.count("1") for a, days in zip(f["airline"], f["run_days"], strict=True) if a == "IndiGo")
        share = indigo / 7.0 / total if total else 0.0
        out.append(_figure("IndiGo's share of departures", f"{100 * share:.0f}%", "55-70%", 0.55 <= share <= 0.70,
                           "DGCA domestic traffic 2025 (about 64 % of passengers)"))
    if {"Delhi", "Mumbai"} <= cities:
        blocks = [int(m) for o, d, m in zip(f["origin_city"], f["dest_city"], f["duration_min"], strict=True)
                  if (o, d) == ("Delhi", "Mumbai")]
        ok = bool(blocks) and min(blocks) >= 120 and max(blocks) <= 150
        text = f"{min(blocks) // 60}h{min(blocks) % 60:02d}-{max(blocks) // 60}h{max(blocks) % 60:02d}" if blocks \
            else "none"
        out.append(_figure("Delhi -> Mumbai block times", text, "2h00-2h30", ok, "airline timetables 2025"))
    return out
