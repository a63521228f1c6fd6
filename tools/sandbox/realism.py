"""Realism figures of a database: does its network look like India's to someone who knows India?

One pure function, `realism(db)`, computes every figure with its target;
`utp-env data stats` prints them after the calibration figures and the tests assert them on the
full sandbox. A figure about named cities (Delhi, Mumbai ...) is left out when the database lacks
them (the mini profile). Definitions (also in docs/DATA.md):

- bus distance: `road_routes.distance_km` of each bus's city pair; median >= 80 km, share under
  20 km <= 1 %;
- neighbourhoods: cities within 15 km (great circle) of a more populous city, tourist destinations
  excepted (Pushkar by Ajmer, Vrindavan by Mathura, Hampi by Hosapete are places of their own), <= 15;
- train run days: rows whose `run_days` are not the train's run days at its first stop shifted by
  the days between leaving the first stop and leaving the row's boarding stop, = 0;
- train delays: (train number, alighting city) pairs whose rows carry more than one set of
  `avg_delay_*` statistics (a train arrives once, whichever stop the traveller boarded at), = 0;
- train fares by type: median fare per 100 road km of each train type (its type in the vendored
  source, `tools/india/rail/trains.csv`) in its fare class, ordered Express < Superfast <
  Shatabdi, Rajdhani and Vande Bharat;
- train punctuality by type: mean `avg_delay_1m` of Shatabdi, Rajdhani and Vande Bharat rows at
  most 0.7 x that of Mail and Express rows;
- track length: per train number whose first and last stop are at least 100 km apart (great
  circle), the rail km of its first-to-last-stop row (read back from the fare, which is per km:
  `rail.fare_km`) over the great-circle km; median 1.2-1.45 (Indian Railways' route km are
  typically 1.2-1.45 x the great circle: New Delhi-Mumbai 1,385 km for 1,150);
- flights (the traveller figures of `tools/sandbox/traveller/air.py` check the network itself):
  most departures of one route on one day at the same minute = 1; distinct Delhi -> Mumbai block
  times >= 3; on-time shares differ by airline (largest - smallest >= 5 points);
- tourist places: Panaji, Leh, Manali, Rishikesh, Darjeeling, Jaisalmer and Khajuraho are cities,
  each with a train, bus or flight from Delhi, from its state's largest city or from its gateway
  (`TOURIST_GATEWAYS`: Darjeeling from Siliguri, where the hill road and the toy train start), and Delhi ->
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
from utp_env.tools.sandbox.venues import sight_of
from utp_env.tools.schema import shift_run_days

NEIGHBOURHOOD_KM = 15.0
TOURIST_GATEWAYS = {"Darjeeling": "Siliguri"}  # the town a tourist place is reached from


DELAY_COLUMNS = ("avg_delay_1w", "avg_delay_1m", "avg_delay_3m", "avg_delay_6m", "avg_delay_1y")
FARE_ORDER = ("Express", "Superfast")
PREMIUM_TRAINS = ("Shatabdi", "Rajdhani", "Vande Bharat")
ORDINARY_TRAINS = ("Mail", "Express")


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


def row_train_types(t: dict) -> list[str]:
    """The type of each train row: its number's type in the vendored source
    (`tools/india/rail/trains.csv`), "" for a number the source lacks."""
    from utp_env.tools.india.rail_facts import read_rail

    types = {train.number: train.type for train in read_rail().trains}
    return [types.get(num, "") for num in t["train_number"]]


def fare_per_100km_by_kind(t: dict, kinds: list[str], road_km: dict[tuple[str, str], float]) -> dict[str, float]:
    """Median train fare per 100 road km of the row's city pair, per train type (`kinds`, one per row)."""
    per: dict[str, list[float]] = defaultdict(list)
    for kind, o, d, fare in zip(kinds, t["origin_city"], t["dest_city"], t["fare_inr"], strict=True):
        km = road_km.get((o, d))
        if km:
            per[kind].append(100.0 * float(fare) / km)
    return {k: float(np.median(v)) for k, v in per.items() if v}


TOURIST_PLACES = ("Panaji", "Leh", "Manali", "Rishikesh", "Darjeeling", "Jaisalmer", "Khajuraho")
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


TRACK_RATIO = (1.2, 1.45)
TRACK_MIN_KM = 100.0


def track_ratios(t: dict, kinds: list[str], index: dict[str, int], gc: np.ndarray) -> np.ndarray:
    """Per train number with ends >= `TRACK_MIN_KM` apart: rail km of its first-to-last-stop row
    (from its fare, `rail.fare_km`) over the great-circle km between those stops."""
    from utp_env.tools.sandbox.rail import fare_km

    origins: dict[str, set[str]] = defaultdict(set)
    dests: dict[str, set[str]] = defaultdict(set)
    for num, o, d in zip(t["train_number"], t["origin_city"], t["dest_city"], strict=True):
        origins[num].add(o)
        dests[num].add(d)
    out = []
    for num, kind, o, d, fare in zip(t["train_number"], kinds, t["origin_city"], t["dest_city"], t["fare_inr"],
                                     strict=True):
        km = float(gc[index[o], index[d]])
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

    pop = np.asarray(city["population"], float)
    near = (gc <= NEIGHBOURHOOD_KM) & (pop[None, :] > pop[:, None])
    near[[i for i, name in enumerate(names) if name in TOURIST_CITIES]] = False
    n_near = int(np.sum(near.any(axis=1)))
    checks.append(Check(name=f"cities within {NEIGHBOURHOOD_KM:.0f} km of a bigger city", value=n_near,
                        target="<= 15", passed=n_near <= 15))

    t = db.tables["trains"].columns
    kinds = row_train_types(t)
    bad_days = run_day_contradictions(t)
    checks.append(Check(name="train rows whose run days contradict the first stop's", value=bad_days, target="= 0",
                        passed=bad_days == 0))
    spread, pairs_n = delay_spread(t)
    checks.append(Check(name="(train, alighting stop) pairs with more than one delay", value=f"{spread}/{pairs_n}",
                        target="= 0", passed=spread == 0))
    dist = db.tables["distances"].columns
    pair_km = dict(zip(zip(dist["origin_city"], dist["dest_city"], strict=True), dist["distance_km"], strict=True))
    fares = fare_per_100km_by_kind(t, kinds, pair_km)
    order = [k for k in FARE_ORDER if k in fares]
    premium = [fares[k] for k in PREMIUM_TRAINS if k in fares]
    ok = (all(fares[a] < fares[b] for a, b in itertools.pairwise(order))
          and (not premium or not order or min(premium) > fares[order[-1]]))
    text = " < ".join(f"{fares[k]:.0f}" for k in order) + (f" < {min(premium):.0f}" if premium else "")
    checks.append(Check(name="train fare per 100 km: Express < Superfast < premium", value=text,
                        target="increasing", passed=bool(ok)))
    late: dict[str, list[float]] = defaultdict(list)
    for kind, v in zip(kinds, np.asarray(t["avg_delay_1m"], float).tolist(), strict=True):
        if not np.isnan(v):
            late["premium" if kind in PREMIUM_TRAINS else "ordinary" if kind in ORDINARY_TRAINS else kind].append(v)
    if late.get("premium") and late.get("ordinary"):
        prem, slow = float(np.mean(late["premium"])), float(np.mean(late["ordinary"]))
        checks.append(Check(name="train mean delay, premium / Mail and Express (min)", value=f"{prem:.0f} / {slow:.0f}",
                            target="premium <= 0.7 x Mail and Express", passed=prem <= 0.7 * slow))
    ratios = track_ratios(t, kinds, index, gc)
    if ratios.size:
        med = float(np.median(ratios))
        checks.append(Check(name="track km / great-circle km, median over trains",
                            value=f"{med:.2f} ({ratios.size} trains)", target=f"{TRACK_RATIO[0]}-{TRACK_RATIO[1]}",
                            passed=TRACK_RATIO[0] <= med <= TRACK_RATIO[1]))

    f = db.tables["flights"].columns
    if "Delhi" in index and "Mumbai" in index:
        blocks = {int(m) for o, d, m in zip(f["origin_city"], f["dest_city"], f["duration_min"], strict=True)
                  if (o, d) == ("Delhi", "Mumbai")}
        checks.append(Check(name="Delhi -> Mumbai distinct block times", value=len(blocks), target=">= 3",
                            passed=len(blocks) >= 3))
    same = same_minute_max(f)
    checks.append(Check(name="most flights of one route and day at one minute", value=same, target="= 1",
                        passed=same == 1))
    shares = on_time_by_airline(f)
    gap = 100 * (max(shares.values()) - min(shares.values())) if shares else 0.0
    checks.append(Check(name="airlines (on-time share spread, points)", value=f"{len(shares)} ({gap:.0f})",
                        target="spread >= 5", passed=gap >= 5))
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
            ("Delhi", c) in linked or (largest[state_of[c]][0], c) in linked
            or (TOURIST_GATEWAYS.get(c), c) in linked)]
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
