"""Realism figures of a database: does its network look like India's to someone who knows India?

One pure function, `realism(db)`, computes every figure with its target;
`utp-env data stats` prints them after the calibration figures and the tests assert them on the
full sandbox. A figure about named cities (Delhi, Mumbai ...) is left out when the database lacks
them (the mini profile). Definitions (also in docs/DATA.md):

- crowd-city pairs with a direct train: share of the ordered pairs of crowd-data cities with a
  railway (Leh has none: `rail.NO_RAILWAY`) at most 1,500 km apart (great circle) with at least
  one train row between them, >= 90 %;
- direct trains on a named corridor: distinct train numbers with a row from A to B, >= 5;
- trains calling at both Delhi and Mumbai: distinct train numbers with a row touching each, >= 5;
- train names matching their route: a train's name starts with "{first stop} {last stop} ",
  where the first stop is the origin that is never a destination of that number and the last
  stop the destination that is never an origin, 100 %;
- city pairs per train number: rows of the busiest train number, <= 435 (30 stops; the median
  is printed too);
- bus distance: `road_routes.distance_km` of each bus's city pair; median >= 80 km, share under
  20 km <= 1 %;
- short flights: share of flights between cities under 300 km apart (great circle) <= 3 %;
- top flight route: the unordered city pair with the most flight rows is Delhi-Mumbai, and the
  five busiest are among India's 16 busiest domestic routes (`BUSIEST_ROUTES`, from DGCA and AAI
  traffic statistics: Delhi-Mumbai, Delhi-Bengaluru, Mumbai-Bengaluru, Delhi-Kolkata ...);
- neighbourhoods: cities within 15 km (great circle) of a more populous city, <= 15;
- train run days: rows whose `run_days` are not the train's run days at its first stop shifted by
  the days between leaving the first stop and leaving the row's boarding stop, = 0;
- train delays: (train number, alighting city) pairs whose rows carry more than one set of
  `avg_delay_*` statistics (a train arrives once, whichever stop the traveller boarded at), = 0;
- train fares by type: median fare per 100 km of each train type in its fare class, ordered
  Passenger < Express < Superfast Express < Shatabdi, Rajdhani and Vande Bharat Express;
- train punctuality by type: mean `avg_delay_1m` of Shatabdi, Rajdhani and Vande Bharat rows at
  most 0.7 x that of Passenger rows;
- fastest trains: the shortest `duration_min` of a row from A to B, in hours, within the real
  fastest train's time and a margin (`FASTEST_TRAINS`, from Indian Railways' timetables:
  Delhi -> Mumbai 15-17 h, Rajdhani about 15.5-16; Delhi -> Kolkata 16-20, Rajdhani about 17;
  Delhi -> Bengaluru 30-36, Rajdhani about 33.5; Chennai -> Hyderabad 10-14, Superfast about
  12-13; Mumbai -> Pune 2.5-3.5, about 3 over the Bhor Ghat), each where both cities are in the
  database;
- track length: per train number whose first and last stop are at least 100 km apart (great
  circle), the rail km of its first-to-last-stop row (read back from the fare, which is per km:
  `rail.fare_km`) over the great-circle km; median 1.2-1.45 (Indian Railways' route km are
  typically 1.2-1.45 x the great circle: New Delhi-Mumbai 1,385 km for 1,150);
- flights on one day (a Wednesday): Delhi -> Mumbai 30-70 (a real day has about 45-50),
  Mumbai -> Panaji (Goa) >= 10 (both where Delhi is in the database too: counts of an India-wide
  flights table); most departures of one route on one day at the same minute = 1;
  distinct Delhi -> Mumbai block times >= 3; airlines flying include no Vistara (merged into
  Air India in November 2024); on-time shares differ by airline (largest - smallest >= 5 points);
- tourist places: Panaji, Leh, Manali, Rishikesh, Darjeeling, Jaisalmer and Khajuraho are cities,
  each with a train, bus or flight from Delhi or from its state's largest city, and Delhi ->
  Udaipur has >= 3 direct services (all modes);
- venues where they may be: cities with a casino outside Goa, Sikkim and Daman = 0; bars, pubs and
  brewpubs in dry states (Gujarat, Bihar, Nagaland, Mizoram: a "Nightlife" attraction, a
  restaurant or attraction named bar, pub, brew... or a stay with the "Bar" amenity) = 0;
- crowd cities: crowd cities among India's most-visited places (`india.TOURIST_CITIES`) 100 %;
  where the database holds all of the top 20, all 20 have crowd data (the crowd cities' sights,
  restaurants and stays are traveller figures: `traveller/venues.py`);
- shopping-only attractions (Shopping and/or Food & Drink) charging entry, other than a real
  place's own listed fee (Dilli Haat's Rs 30), = 0;
- prices: 3-star stays' median price per night Rs 2,000-6,000; median stay price per night in towns
  under 300,000 people <= Rs 4,000; restaurants' median cost falls from metro to large city to
  mid-sized city to town (each median over >= 100 venues, else left out).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict

import numpy as np

from utp_env.tools.database import Database
from utp_env.tools.india import (
    CITY_TIERS,
    TOP_TOURIST_COUNT,
    TOURIST_CITIES,
    alcohol_allowed,
    casinos_allowed,
    city_tier,
)
from utp_env.tools.sandbox.calibration import Check
from utp_env.tools.sandbox.common import haversine_km
from utp_env.tools.sandbox.rail import NO_RAILWAY
from utp_env.tools.sandbox.venues import sight_of
from utp_env.tools.schema import shift_run_days

CORE_PAIR_KM = 1_500.0
CORRIDORS = (("Delhi", "Mumbai"), ("Delhi", "Kolkata"), ("Chennai", "Bengaluru"))
MAX_PAIRS_PER_TRAIN = 435  # 30 stops
SHORT_FLIGHT_KM = 300.0
NEIGHBOURHOOD_KM = 15.0
# India's busiest domestic air routes (DGCA / AAI traffic statistics), as unordered city pairs.
BUSIEST_ROUTES = frozenset(frozenset(p) for p in (
    ("Delhi", "Mumbai"), ("Delhi", "Bengaluru"), ("Mumbai", "Bengaluru"), ("Delhi", "Kolkata"),
    ("Delhi", "Hyderabad"), ("Mumbai", "Hyderabad"), ("Bengaluru", "Hyderabad"), ("Delhi", "Chennai"),
    ("Mumbai", "Chennai"), ("Bengaluru", "Kolkata"), ("Mumbai", "Kolkata"), ("Delhi", "Pune"),
    ("Delhi", "Ahmedabad"), ("Bengaluru", "Chennai"), ("Kolkata", "Hyderabad"), ("Chennai", "Kolkata"),
))


DELAY_COLUMNS = ("avg_delay_1w", "avg_delay_1m", "avg_delay_3m", "avg_delay_6m", "avg_delay_1y")
FARE_ORDER = ("Passenger", "Express", "Superfast Express")
PREMIUM_TRAINS = ("Shatabdi Express", "Rajdhani Express", "Vande Bharat Express")


def _minute(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def run_day_contradictions(t: dict) -> int:
    """Train rows whose `run_days` differ from the run days at the train's first stop shifted by
    the day offset of the row's boarding stop (from the row leaving the first stop that arrives there)."""
    origins: dict[str, set[str]] = defaultdict(set)
    dests: dict[str, set[str]] = defaultdict(set)
    for num, o, d in zip(t["train_number"], t["origin_city"], t["dest_city"], strict=True):
        origins[num].add(o)
        dests[num].add(d)
    first = {num: next(iter(origins[num] - dests[num])) for num in origins if len(origins[num] - dests[num]) == 1}
    start: dict[str, str] = {}
    arrive: dict[tuple[str, str], int] = {}  # minutes after midnight of the first stop's departure day
    for num, o, d, dep, dur, days in zip(t["train_number"], t["origin_city"], t["dest_city"], t["dep_time"],
                                         t["duration_min"], t["run_days"], strict=True):
        if first.get(num) == o:
            start[num] = days
            arrive[(num, d)] = _minute(dep) + int(dur)
    bad = 0
    for num, o, dep, days in zip(t["train_number"], t["origin_city"], t["dep_time"], t["run_days"], strict=True):
        if num not in start:
            continue
        days0 = start[num]
        if o == first[num]:
            expected = days0
        else:
            reached = arrive.get((num, o))
            if reached is None:
                bad += 1
                continue
            leave = reached + (_minute(dep) - reached) % 1440  # first departure at the stop's clock time
            expected = shift_run_days(days0, leave // 1440)
        bad += days != expected
    return bad


def delay_spread(t: dict) -> tuple[int, int]:
    """(train number, alighting city) pairs with more than one set of delay statistics, and all pairs."""
    seen: dict[tuple[str, str], set[tuple[float, ...]]] = defaultdict(set)
    values = [np.asarray(t[c], float) for c in DELAY_COLUMNS]
    for i, key in enumerate(zip(t["train_number"], t["dest_city"], strict=True)):
        seen[key].add(tuple(-1.0 if np.isnan(v[i]) else float(v[i]) for v in values))
    return sum(len(v) > 1 for v in seen.values()), len(seen)


def train_kind(name: str) -> str:
    """The train type a generated train name ends with ('Delhi Agra Shatabdi Express' -> 'Shatabdi Express')."""
    from utp_env.tools.sandbox.rail import TRAIN_TYPES

    return max((k for k in TRAIN_TYPES if name.endswith(" " + k)), key=len, default="")


def fare_per_100km_by_kind(t: dict, road_km: dict[tuple[str, str], float]) -> dict[str, float]:
    """Median train fare per 100 road km of the row's city pair, per train type."""
    per: dict[str, list[float]] = defaultdict(list)
    for name, o, d, fare in zip(t["train_name"], t["origin_city"], t["dest_city"], t["fare_inr"], strict=True):
        km = road_km.get((o, d))
        if km:
            per[train_kind(name)].append(100.0 * float(fare) / km)
    return {k: float(np.median(v)) for k, v in per.items() if v}


TOURIST_PLACES = ("Panaji", "Leh", "Manali", "Rishikesh", "Darjeeling", "Jaisalmer", "Khajuraho")
WEDNESDAY = 2


def flights_on_day(f: dict, origin: str, dest: str, day: int = WEDNESDAY) -> int:
    """Flight rows from `origin` to `dest` operating on weekday `day` (Mon = 0)."""
    return sum(1 for o, d, days in zip(f["origin_city"], f["dest_city"], f["run_days"], strict=True)
               if o == origin and d == dest and days[day] == "1")


def same_minute_max(f: dict) -> int:
    """The most flights of one route departing at the same minute on one weekday."""
    seen: Counter[tuple[str, str, int, str]] = Counter()
    for o, d, days, dep in zip(f["origin_city"], f["dest_city"], f["run_days"], f["dep_time"], strict=True):
        for day in range(7):
            if days[day] == "1":
                seen[(o, d, day, dep)] += 1
    return max(seen.values(), default=0)


def on_time_by_airline(f: dict) -> dict[str, float]:
    """Share of observed flights on time, per airline."""
    on: dict[str, float] = defaultdict(float)
    total: dict[str, float] = defaultdict(float)
    for airline, t, n in zip(f["airline"], f["otp_on_time"], f["otp_total"], strict=True):
        if not np.isnan(n):
            on[airline] += float(t)
            total[airline] += float(n)
    return {a: on[a] / total[a] for a in total if total[a]}


# (origin, destination, least hours, most hours) of the fastest direct train
FASTEST_TRAINS: tuple[tuple[str, str, float, float], ...] = (
    ("Delhi", "Mumbai", 15.0, 17.0), ("Delhi", "Kolkata", 16.0, 20.0), ("Delhi", "Bengaluru", 30.0, 36.0),
    ("Chennai", "Hyderabad", 10.0, 14.0), ("Mumbai", "Pune", 2.5, 3.5),
)
TRACK_RATIO = (1.2, 1.45)
TRACK_MIN_KM = 100.0


def fastest_train_hours(t: dict, origin: str, dest: str) -> float | None:
    """Hours of the fastest train row from `origin` to `dest` (None when there is none)."""
    best = min((int(m) for o, d, m in zip(t["origin_city"], t["dest_city"], t["duration_min"], strict=True)
                if o == origin and d == dest), default=None)
    return None if best is None else best / 60.0


def track_ratios(t: dict, index: dict[str, int], gc: np.ndarray) -> np.ndarray:
    """Per train number with ends >= `TRACK_MIN_KM` apart: rail km of its first-to-last-stop row
    (from its fare, `rail.fare_km`) over the great-circle km between those stops."""
    from utp_env.tools.sandbox.rail import fare_km

    origins: dict[str, set[str]] = defaultdict(set)
    dests: dict[str, set[str]] = defaultdict(set)
    for num, o, d in zip(t["train_number"], t["origin_city"], t["dest_city"], strict=True):
        origins[num].add(o)
        dests[num].add(d)
    out = []
    for num, name, o, d, fare in zip(t["train_number"], t["train_name"], t["origin_city"], t["dest_city"],
                                     t["fare_inr"], strict=True):
        kind, km = train_kind(name), float(gc[index[o], index[d]])
        if kind and km >= TRACK_MIN_KM and o not in dests[num] and d not in origins[num]:
            out.append(float(fare_km(kind, np.array([float(fare)]))[0]) / km)
    return np.array(out)


def _share(name: str, hits: int, total: int, low: float | None, high: float | None, target: str) -> Check:
    value = hits / total if total else float("nan")
    ok = total > 0 and (low is None or value >= low) and (high is None or value <= high)
    return Check(name=name, value=f"{100 * value:.1f}% ({hits}/{total})", target=target, passed=bool(ok))


MIN_PRICE_SAMPLE = 100  # a median of fewer venues (a small profile's tier) is noise, not a figure
BAR_NAME_WORDS = ("bar", "pub", "brew", "brewpub", "brewery", "taproom", "lounge")


def _named_bar(name: str) -> bool:
    return any(w in BAR_NAME_WORDS for w in name.casefold().replace(".", " ").split())


def venue_checks(db: Database) -> list[Check]:
    """Venues where they may be, entry fees by kind, prices by star rating and city tier."""
    city = db.tables["cities"].columns
    state_of = dict(zip(city["city"], city["state"], strict=True))
    pop_of = dict(zip(city["city"], np.asarray(city["population"], float).tolist(), strict=True))
    a = db.tables["attractions"].columns
    casino_cities = {c for c, cats in zip(a["city"], a["categories"], strict=True)
                     if "Casinos & Gambling" in cats and not casinos_allowed(c, state_of[c])}
    bars = sum(1 for c, n, cats in zip(a["city"], a["name"], a["categories"], strict=True)
               if not alcohol_allowed(state_of[c]) and ("Nightlife" in cats or _named_bar(n)))
    r = db.tables["restaurants"].columns
    bars += sum(1 for c, n in zip(r["city"], r["name"], strict=True)
                if not alcohol_allowed(state_of[c]) and _named_bar(n))
    s = db.tables["accommodations"].columns
    bars += sum(1 for c, am in zip(s["city"], s["amenities"], strict=True)
                if not alcohol_allowed(state_of[c]) and "Bar" in am)
    shop = [float(f) for c, n, cats, f in zip(a["city"], a["name"], a["categories"], a["entry_fee_inr"], strict=True)
            if set(cats) <= {"Shopping", "Food & Drink"} and sight_of(c, n) is None]  # Dilli Haat's Rs 30 is real
    checks = [Check(name="cities with a casino outside Goa, Sikkim, Daman", value=len(casino_cities), target="= 0",
                    passed=not casino_cities),
              Check(name="bars, pubs and brewpubs in dry states", value=bars, target="= 0", passed=bars == 0),
              Check(name="shopping-only attractions charging entry", value=f"{sum(f > 0 for f in shop)}/{len(shop)}",
                    target="= 0", passed=not any(f > 0 for f in shop))]
    price = np.asarray(s["price_per_night_inr"], float)
    stars = np.asarray(s["star_rating"], int)
    if np.any(stars == 3):
        m3 = float(np.median(price[stars == 3]))
        checks.append(Check(name="3-star stays, median price per night (Rs)", value=f"{m3:,.0f}",
                            target="2,000-6,000", passed=2000 <= m3 <= 6000))
    town = np.array([pop_of[c] < 300_000 for c in s["city"]], bool)
    if town.sum() >= MIN_PRICE_SAMPLE:
        mt = float(np.median(price[town]))
        checks.append(Check(name="stays in towns under 300k, median per night (Rs)", value=f"{mt:,.0f}",
                            target="<= 4,000", passed=mt <= 4000))
    cost = np.asarray(r["avg_cost_inr"], float)
    tiers = np.array([city_tier(pop_of[c]) for c in r["city"]])
    med = [f"{float(np.median(cost[tiers == t])):.0f}" if np.sum(tiers == t) >= MIN_PRICE_SAMPLE else "-"
           for t, _ in CITY_TIERS]
    ordered = [float(x) for x in med if x != "-"]
    checks.append(Check(name="restaurant median cost, metro/large/mid/town (Rs)", value=" / ".join(med),
                        target="falls with tier", passed=all(x >= y for x, y in itertools.pairwise(ordered))))
    return checks


def crowd_city_checks(db: Database) -> list[Check]:
    """The crowd cities are the places a visitor to India most goes to."""
    city = db.tables["cities"].columns
    present = set(city["city"])
    crowd = [c for c, has in zip(city["city"], city["has_crowd_data"], strict=True) if has]
    checks: list[Check] = []
    if not crowd:
        return checks
    tourist = sum(c in TOURIST_CITIES for c in crowd)
    checks.append(_share("crowd cities among India's most-visited places", tourist, len(crowd), 1.0, None, "100%"))
    top = [c for c in TOURIST_CITIES[:TOP_TOURIST_COUNT] if c in present]
    if len(top) == TOP_TOURIST_COUNT:  # a database holding all of them (the full sandbox)
        covered = sum(c in crowd for c in top)
        checks.append(Check(name=f"top {TOP_TOURIST_COUNT} tourist places with crowd data",
                            value=f"{covered}/{len(top)}", target=f"= {len(top)}", passed=covered == len(top)))
    return checks


def realism(db: Database) -> list[Check]:
    """Every realism figure of `db` with its target and pass/fail."""
    city = db.tables["cities"].columns
    names = list(city["city"])
    index = {c: i for i, c in enumerate(names)}
    lat, lon = np.asarray(city["latitude"], float), np.asarray(city["longitude"], float)
    gc = haversine_km(lat[:, None], lon[:, None], lat[None, :], lon[None, :])
    checks: list[Check] = []

    t = db.tables["trains"].columns
    numbers_on: dict[tuple[str, str], set[str]] = defaultdict(set)
    origins: dict[str, set[str]] = defaultdict(set)
    dests: dict[str, set[str]] = defaultdict(set)
    name_of: dict[str, str] = {}
    per_number: Counter[str] = Counter()
    for num, name, o, d in zip(t["train_number"], t["train_name"], t["origin_city"], t["dest_city"], strict=True):
        numbers_on[(o, d)].add(num)
        origins[num].add(o)
        dests[num].add(d)
        name_of[num] = name
        per_number[num] += 1
    crowd = [i for i, has in enumerate(city["has_crowd_data"]) if has and names[i] not in NO_RAILWAY]
    pairs = [(a, b) for a in crowd for b in crowd if a != b and gc[a, b] <= CORE_PAIR_KM]
    served = sum(bool(numbers_on.get((names[a], names[b]))) for a, b in pairs)
    checks.append(_share(f"crowd-city pairs <= {CORE_PAIR_KM:,.0f} km with a direct train", served, len(pairs),
                         0.9, None, ">= 90%"))
    for a, b in CORRIDORS:
        if a in index and b in index:
            n = len(numbers_on.get((a, b), ()))
            checks.append(Check(name=f"direct trains {a} -> {b}", value=n, target=">= 5", passed=n >= 5))
    if "Delhi" in index and "Mumbai" in index:
        both = sum(1 for num in per_number if {"Delhi", "Mumbai"} <= (origins[num] | dests[num]))
        checks.append(Check(name="trains calling at Delhi and Mumbai", value=both, target=">= 5", passed=both >= 5))
    matching = 0
    for num in per_number:
        first, last = origins[num] - dests[num], dests[num] - origins[num]
        if len(first) == 1 and len(last) == 1 and name_of[num].startswith(f"{first.pop()} {last.pop()} "):
            matching += 1
    checks.append(_share("train names matching their first and last stop", matching, len(per_number), 1.0, None,
                         "100%"))
    counts = np.array(list(per_number.values()))
    checks.append(Check(name="city pairs per train number (median / max)",
                        value=f"{np.median(counts):.0f} / {counts.max()}", target=f"max <= {MAX_PAIRS_PER_TRAIN}",
                        passed=bool(counts.max() <= MAX_PAIRS_PER_TRAIN)))

    r = db.tables["road_routes"].columns
    road_km = dict(zip(zip(r["origin_city"], r["dest_city"], strict=True), r["distance_km"], strict=True))
    buses = db.tables["buses"].columns
    bus_km = np.array([road_km.get(p, np.nan) for p in zip(buses["origin_city"], buses["dest_city"], strict=True)],
                      np.float64)
    bus_km = bus_km[~np.isnan(bus_km)]
    if bus_km.size:
        q10, q50, q90 = np.percentile(bus_km, [10, 50, 90])
        checks.append(Check(name="bus distance p10 / median / p90 (km)", value=f"{q10:.0f} / {q50:.0f} / {q90:.0f}",
                            target="median >= 80", passed=bool(q50 >= 80)))
        checks.append(_share("buses under 20 km", int(np.sum(bus_km < 20)), len(bus_km), None, 0.01, "<= 1%"))

    f = db.tables["flights"].columns
    fo = np.array([index[c] for c in f["origin_city"]], dtype=np.int64)
    fd = np.array([index[c] for c in f["dest_city"]], dtype=np.int64)
    short = int(np.sum(gc[fo, fd] < SHORT_FLIGHT_KM))
    checks.append(_share(f"flights between cities under {SHORT_FLIGHT_KM:.0f} km apart", short, len(fo), None, 0.03,
                         "<= 3%"))
    if "Delhi" in index and "Mumbai" in index and len(fo):
        routes = Counter(frozenset((names[o], names[d])) for o, d in zip(fo.tolist(), fd.tolist(), strict=True))
        top = [route for route, _ in routes.most_common(5)]
        text = ", ".join("-".join(sorted(route)) for route in top[:3])
        ok = top[0] == frozenset(("Delhi", "Mumbai")) and all(route in BUSIEST_ROUTES for route in top)
        checks.append(Check(name="busiest flight routes", value=text,
                            target="Delhi-Mumbai first; top 5 real", passed=ok))

    pop = np.asarray(city["population"], float)
    near = (gc <= NEIGHBOURHOOD_KM) & (pop[None, :] > pop[:, None])
    n_near = int(np.sum(near.any(axis=1)))
    checks.append(Check(name=f"cities within {NEIGHBOURHOOD_KM:.0f} km of a bigger city", value=n_near,
                        target="<= 15", passed=n_near <= 15))

    bad_days = run_day_contradictions(t)
    checks.append(Check(name="train rows whose run days contradict the first stop's", value=bad_days, target="= 0",
                        passed=bad_days == 0))
    spread, pairs_n = delay_spread(t)
    checks.append(Check(name="(train, alighting stop) pairs with more than one delay", value=f"{spread}/{pairs_n}",
                        target="= 0", passed=spread == 0))
    dist = db.tables["distances"].columns
    pair_km = dict(zip(zip(dist["origin_city"], dist["dest_city"], strict=True), dist["distance_km"], strict=True))
    fares = fare_per_100km_by_kind(t, pair_km)
    order = [k for k in FARE_ORDER if k in fares]
    premium = [fares[k] for k in PREMIUM_TRAINS if k in fares]
    ok = (all(fares[a] < fares[b] for a, b in itertools.pairwise(order))
          and (not premium or not order or min(premium) > fares[order[-1]]))
    text = " < ".join(f"{fares[k]:.0f}" for k in order) + (f" < {min(premium):.0f}" if premium else "")
    checks.append(Check(name="train fare per 100 km: Passenger < Express < Superfast < premium", value=text,
                        target="increasing", passed=bool(ok)))
    late: dict[str, list[float]] = defaultdict(list)
    for name, v in zip(t["train_name"], np.asarray(t["avg_delay_1m"], float).tolist(), strict=True):
        if not np.isnan(v):
            late["premium" if train_kind(name) in PREMIUM_TRAINS else train_kind(name)].append(v)
    if late.get("premium") and late.get("Passenger"):
        prem, slow = float(np.mean(late["premium"])), float(np.mean(late["Passenger"]))
        checks.append(Check(name="train mean delay, premium / Passenger (min)", value=f"{prem:.0f} / {slow:.0f}",
                            target="premium <= 0.7 x Passenger", passed=prem <= 0.7 * slow))

    for origin, dest, low, high in FASTEST_TRAINS:
        if origin in index and dest in index:
            hours = fastest_train_hours(t, origin, dest)
            checks.append(Check(name=f"fastest train {origin} -> {dest} (h)",
                                value="none" if hours is None else f"{hours:.1f}", target=f"{low:g}-{high:g}",
                                passed=hours is not None and low <= hours <= high))
    ratios = track_ratios(t, index, gc)
    if ratios.size:
        med = float(np.median(ratios))
        checks.append(Check(name="track km / great-circle km, median over trains",
                            value=f"{med:.2f} ({ratios.size} trains)", target=f"{TRACK_RATIO[0]}-{TRACK_RATIO[1]}",
                            passed=TRACK_RATIO[0] <= med <= TRACK_RATIO[1]))

    if "Delhi" in index and "Mumbai" in index:
        n = flights_on_day(f, "Delhi", "Mumbai")
        checks.append(Check(name="Delhi -> Mumbai flights on a Wednesday", value=n, target="30-70",
                            passed=30 <= n <= 70))
        blocks = {int(m) for o, d, m in zip(f["origin_city"], f["dest_city"], f["duration_min"], strict=True)
                  if (o, d) == ("Delhi", "Mumbai")}
        checks.append(Check(name="Delhi -> Mumbai distinct block times", value=len(blocks), target=">= 3",
                            passed=len(blocks) >= 3))
    if "Delhi" in index and "Mumbai" in index and "Panaji" in index:  # an India-wide flights table
        n = flights_on_day(f, "Mumbai", "Panaji")
        checks.append(Check(name="Mumbai -> Panaji (Goa) flights on a Wednesday", value=n, target=">= 10",
                            passed=n >= 10))
    same = same_minute_max(f)
    checks.append(Check(name="most flights of one route and day at one minute", value=same, target="= 1",
                        passed=same == 1))
    shares = on_time_by_airline(f)
    gap = 100 * (max(shares.values()) - min(shares.values())) if shares else 0.0
    checks.append(Check(name="airlines (on-time share spread, points)", value=f"{len(shares)} ({gap:.0f})",
                        target="no Vistara; spread >= 5", passed="Vistara" not in shares and gap >= 5))
    if "Delhi" in index:
        linked: set[tuple[str, str]] = set()
        for table in ("trains", "buses", "flights"):
            c = db.tables[table].columns
            linked |= {(o, d) for o, d in zip(c["origin_city"], c["dest_city"], strict=True)}
        largest: dict[str, tuple[str, int]] = {}
        for name, state, p in zip(names, city["state"], np.asarray(city["population"]).tolist(), strict=True):
            if state not in largest or p > largest[state][1]:
                largest[state] = (name, p)
        state_of = dict(zip(names, city["state"], strict=True))
        present = [c for c in TOURIST_PLACES if c in index and (
            ("Delhi", c) in linked or (largest[state_of[c]][0], c) in linked)]
        checks.append(Check(name="tourist places present and served", value=f"{len(present)}/{len(TOURIST_PLACES)}",
                            target="all", passed=len(present) == len(TOURIST_PLACES)))
        if "Udaipur" in index:
            n = 0
            for table, key in (("trains", "train_number"), ("buses", "bus_id"), ("flights", "flight_number")):
                c = db.tables[table].columns
                n += len({k for k, o, d in zip(c[key], c["origin_city"], c["dest_city"], strict=True)
                          if (o, d) == ("Delhi", "Udaipur")})
            checks.append(Check(name="Delhi -> Udaipur direct services", value=n, target=">= 3", passed=n >= 3))
    return checks + venue_checks(db) + crowd_city_checks(db)
