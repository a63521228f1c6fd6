"""Road tables: the all-pairs `distances`, the `road_routes` network and the `buses` on it.

Road distance is great-circle distance times the profile's road factor; driving time comes from
one speed function on the plains, and a hill town (`HILL_APPROACHES` in tools/india/__init__.py:
Darjeeling, Shimla, Manali, Ooty ...) is reached by its last mountain km at hill speed; listed
mountain roads (`MOUNTAIN_ROADS`: Siliguri-Darjeeling, Jammu-Srinagar ...) have their own km and
time. One function (`road_matrix`) gives both, so `distances` and `road_routes` agree on every
pair they share. Roads closed by snow in the profile's calendar (`ROAD_CLOSURES`: Srinagar-Leh
and Manali-Leh in winter) get no road route, and a town all of whose mountain roads are closed
(Leh in winter) none at all: it is reached by air only. Cabs may drive exactly the `road_routes`
pairs. The road pairs are a spanning forest of the open roads (cabs reach every city a road
reaches) plus the intercity pairs of a gravity model (population product over squared distance)
between `BUS_MIN_KM` and `bus_max_km`: Delhi-Jaipur, Mumbai-Pune, Bengaluru-Chennai. Buses run on
the road pairs of at least `BUS_MIN_KM` (none inside one metro), more between big nearby cities;
trips over `OVERNIGHT_KM` are overnight sleepers leaving in the evening. A bus takes its road's
free-flow time (the `road_routes` minutes, so a hill or mountain road's time too) times
`BUS_SLOWDOWN`: every road mode takes at least the road's time, and a bus longer than a cab.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from utp_env.tools.clock import format_hhmm
from utp_env.tools.india import HILL_APPROACHES, MOUNTAIN_ROADS, ROAD_CLOSURES
from utp_env.tools.sandbox.common import (
    Columns,
    apportion,
    exp,
    lognormal_with_mean,
    mst_edges,
    power,
    rescale_to_mean,
    run_days,
    stage_rng,
)
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile

CAB_RATE_INR_PER_KM = 14.0
CAB_MIN_FARE_INR = 600.0
BUS_MIN_KM = 60.0
LOCAL_BUS_MIN_KM = 20.0
OVERNIGHT_KM = 350.0
STATE_TRANSPORT = {
    "Maharashtra": "MSRTC", "Karnataka": "KSRTC Karnataka", "Kerala": "KSRTC Kerala", "Gujarat": "GSRTC",
    "Rajasthan": "RSRTC", "Uttar Pradesh": "UPSRTC", "Andhra Pradesh": "APSRTC", "Telangana": "TGSRTC",
    "Tamil Nadu": "TNSTC", "Goa": "Kadamba Transport", "Punjab": "PRTC", "Haryana": "Haryana Roadways",
    "Himachal Pradesh": "HRTC", "Madhya Pradesh": "MP Tourism Bus", "Bihar": "BSRTC", "Odisha": "OSRTC",
    "West Bengal": "WBTC", "Assam": "ASTC", "Uttarakhand": "Uttarakhand Roadways", "Delhi": "DTC",
}
PRIVATE_OPERATORS = ("VRL Travels", "SRS Travels", "Orange Tours and Travels", "Neeta Tours and Travels",
                     "Paulo Travels", "Kallada Travels", "Hans Travels", "Zingbus", "IntrCity SmartBus",
                     "Jabbar Travels", "Sharma Transports", "Prasanna Purple", "Shrinath Travels",
                     "Kesineni Travels", "National Travels", "Parveen Travels")
# A bus takes its road's free-flow time times a factor drawn from this range: heavy vehicles keep
# lower speed limits than cars (the Motor Vehicles Act's limits by vehicle class) and a coach halts
# at the bus stands on its way, so a bus is slower than a cab on the same road, never faster.
BUS_SLOWDOWN = (1.10, 1.25)
BUS_TYPES = {  # type -> fare INR per km
    "AC Sleeper": 2.0, "Non-AC Sleeper": 1.3, "AC Seater": 1.5, "Non-AC Seater": 1.0,
    "Volvo Multi-Axle AC Semi-Sleeper": 2.3, "AC Seater/Sleeper": 1.8,
}


def road_km(gc_km: np.ndarray, factor: float) -> np.ndarray:
    """Road distance from great-circle distance (at least 1 km)."""
    return np.maximum(np.round(gc_km * factor, 1), 1.0)


def drive_minutes(km: np.ndarray) -> np.ndarray:
    """Free-flow driving time: ~40 km/h in and near towns rising to ~60 km/h on long highways."""
    speed = 40.0 + 20.0 * (1.0 - exp(-np.asarray(km) / 150.0))
    return np.maximum(np.round(np.asarray(km) / speed * 60.0, 1), 1.0)


def road_matrix(cities: Cities, gc: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """(km, minutes) of the road between every two cities: the plains rule (`road_km`,
    `drive_minutes`) with each hill town's mountain km at its hill speed (`HILL_APPROACHES`), and
    the listed mountain roads' own km and time (`MOUNTAIN_ROADS`)."""
    km = road_km(gc, factor)
    index = {name: i for i, name in enumerate(cities.name)}
    hill_km, hill_min = np.zeros(cities.n), np.zeros(cities.n)
    for town, (mountain_km, kmh) in HILL_APPROACHES.items():
        if town in index:
            hill_km[index[town]], hill_min[index[town]] = mountain_km, mountain_km / kmh * 60.0
    hill = hill_km[:, None] + hill_km[None, :]
    climb = hill_min[:, None] + hill_min[None, :]
    part = np.minimum(hill, km) / np.maximum(hill, 1e-9)  # a short road between two hill towns is all mountain
    minutes = np.where(hill > 0, drive_minutes(np.maximum(km - hill, 0.0)) * (hill < km) + climb * part,
                       drive_minutes(km))
    minutes = np.maximum(np.round(minutes, 1), 1.0)
    for a, b, road, duration in MOUNTAIN_ROADS:
        if a in index and b in index:
            i, j = index[a], index[b]
            km[i, j] = km[j, i] = road
            minutes[i, j] = minutes[j, i] = duration
    return km, minutes


def calendar_months(first: str, last: str) -> set[int]:
    """The months (1-12) a calendar from ISO date `first` to `last` touches."""
    start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
    months: set[int] = set()
    day = start.replace(day=1)
    while day <= end:
        months.add(day.month)
        day = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return months


def closed_roads(names: list[str], months: set[int]) -> tuple[set[frozenset[int]], set[int]]:
    """(pairs, towns) of `names` without a road in a calendar touching `months`: the roads of
    `ROAD_CLOSURES` whose closure overlaps it, and the towns all of whose `MOUNTAIN_ROADS` are among
    them (cut off: no road at all, reached by air only)."""
    index = {name: i for i, name in enumerate(names)}
    closed = {frozenset((a, b)) for a, b, shut in ROAD_CLOSURES if months & set(shut)}
    pairs = {frozenset(index[c] for c in pair) for pair in closed if all(c in index for c in pair)}
    towns = set()
    for town in {t for pair in closed for t in pair}:
        roads = [frozenset((a, b)) for a, b, _, _ in MOUNTAIN_ROADS if town in (a, b)]
        if town in index and roads and all(r in closed for r in roads):
            towns.add(index[town])
    return pairs, towns


def cab_fare(km: np.ndarray) -> np.ndarray:
    """Fare of one cab for up to 4 people."""
    return np.round(np.maximum(CAB_MIN_FARE_INR, CAB_RATE_INR_PER_KM * np.asarray(km)), 0)


def distances_table(cities: Cities, gc: np.ndarray, profile: SandboxProfile) -> Columns:
    """Every ordered pair of distinct cities with distance, driving time and cab fare."""
    n = cities.n
    o, d = np.nonzero(~np.eye(n, dtype=bool))
    km_all, minutes = road_matrix(cities, gc, profile.road_factor)
    km = km_all[o, d]
    names = np.array(cities.name, dtype=object)
    return {"origin_city": names[o].tolist(), "dest_city": names[d].tolist(), "distance_km": km,
            "duration_min": minutes[o, d], "cab_fare_inr": cab_fare(km)}


def road_pairs(cities: Cities, gc: np.ndarray, profile: SandboxProfile) -> np.ndarray:
    """Unordered road-route pairs (i < j): a spanning forest of the open roads (so cabs reach every
    city a road reaches; `closed_roads`) plus the intercity pairs with the most gravity-model
    demand, `road_routes / 2` pairs in all."""
    want = profile.road_routes // 2
    n = cities.n
    iu, ju = np.triu_indices(n, 1)
    closed, cut_off = closed_roads(cities.name, calendar_months(profile.calendar_start, profile.calendar_end))
    shut = np.zeros((n, n), dtype=bool)
    for closed_pair in closed:
        i, j = tuple(closed_pair)
        shut[i, j] = shut[j, i] = True
    for t in cut_off:
        shut[t, :] = shut[:, t] = True
    tree = set(mst_edges(np.where(shut, np.inf, gc)))
    if want < len(tree):
        raise ValueError(f"profile {profile.name!r}: road_routes={profile.road_routes} is below the "
                         f"{2 * len(tree)} a connected road network needs")
    pop = cities.draw.astype(float)  # visitors count for tourist places (Goa, Manali ...)
    km = gc[iu, ju] * profile.road_factor
    score = -power(pop[iu] * pop[ju], 0.8) / power(np.maximum(km, 1.0), 1.6)
    score[(km < BUS_MIN_KM) | (km > profile.bus_max_km) | shut[iu, ju]] = np.inf
    order = np.lexsort((ju, iu, score))
    chosen = list(tree)
    for k in order:
        if len(chosen) >= want:
            break
        pair = (int(iu[k]), int(ju[k]))
        if pair not in tree:
            chosen.append(pair)
    return np.array(sorted(chosen), dtype=np.int64)


def road_routes_table(cities: Cities, gc: np.ndarray, pairs: np.ndarray, profile: SandboxProfile,
                      seed: int) -> tuple[Columns, np.ndarray, np.ndarray]:
    """Both directions of each road pair, with free-flow time and right-skewed traffic delays.

    Returns the columns and the ordered (origin, dest) index arrays.
    """
    rng = stage_rng(seed, "road_routes")
    o = np.concatenate([pairs[:, 0], pairs[:, 1]])
    d = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order = np.lexsort((d, o))
    o, d = o[order], d[order]
    km_all, minutes = road_matrix(cities, gc, profile.road_factor)
    km, free = km_all[o, d], minutes[o, d]
    delay = np.sqrt(free) * lognormal_with_mean(rng, 1.0, profile.calibration.lognormal_sigma, len(o))
    delay = np.round(rescale_to_mean(delay, profile.calibration.road_mean_min), 1)
    estimated = np.round(delay * rng.lognormal(0.0, 0.3, len(o)), 1)
    names = np.array(cities.name, dtype=object)
    cols = {"origin_city": names[o].tolist(), "dest_city": names[d].tolist(), "distance_km": km,
            "free_flow_min": free, "historical_delay_min": delay, "estimated_delay_min": estimated}
    return cols, o, d


def buses_table(cities: Cities, o: np.ndarray, d: np.ndarray, km: np.ndarray, free_min: np.ndarray,
                profile: SandboxProfile, seed: int) -> Columns:
    """Bus services on the road pairs from `BUS_MIN_KM` to `bus_max_km`, busier between big nearby
    cities; a town none of whose roads is that long (Habra, 45 km from Kolkata) gets its shortest
    road of at least `LOCAL_BUS_MIN_KM` (the state transport's town bus), so buses reach every city
    a road reaches. `o`, `d`, `km` and `free_min` are the `road_routes` pairs with their km and
    free-flow minutes: a bus takes its road's time times `BUS_SLOWDOWN`."""
    rng = stage_rng(seed, "buses")
    ok = (km >= BUS_MIN_KM) & (km <= profile.bus_max_km)
    served = set(o[ok].tolist())
    for town in sorted(set(o.tolist()) - served):
        local = np.flatnonzero((o == town) & (km >= LOCAL_BUS_MIN_KM))
        if local.size:
            nearest = int(local[np.argmin(km[local])])
            ok |= ((o == o[nearest]) & (d == d[nearest])) | ((o == d[nearest]) & (d == o[nearest]))
    o, d, km, free_min = o[ok], d[ok], km[ok], np.asarray(free_min, dtype=float)[ok]
    if profile.buses < len(o):
        raise ValueError(f"profile {profile.name!r}: buses={profile.buses} is below one per bus pair ({len(o)})")
    pop = cities.draw.astype(float)
    counts = apportion(profile.buses, power(pop[o] * pop[d], 0.5) / power(km, 0.7), minimum=1)
    bo, bd, bkm, bfree = np.repeat(o, counts), np.repeat(d, counts), np.repeat(km, counts), np.repeat(free_min, counts)
    n = len(bo)
    state_ops = [STATE_TRANSPORT.get(cities.state[i]) for i in bo.tolist()]
    private = rng.integers(0, len(PRIVATE_OPERATORS), n)
    use_state = rng.random(n) < 0.35
    operator = [s if (u and s) else PRIVATE_OPERATORS[p]
                for s, u, p in zip(state_ops, use_state.tolist(), private.tolist(), strict=True)]
    types = list(BUS_TYPES)
    long_trip = bkm > OVERNIGHT_KM
    sleepers = [k for k, name in enumerate(types) if "Sleeper" in name]
    seaters = [k for k, name in enumerate(types) if "Sleeper" not in name or "Seater" in name]
    t = np.where(long_trip, np.array(sleepers)[rng.integers(0, len(sleepers), n)],
                 np.array(seaters)[rng.integers(0, len(seaters), n)])
    dep = np.where(long_trip, rng.integers(18 * 12, 24 * 12, n), rng.integers(5 * 12, 23 * 12, n)) * 5
    # the road's own free-flow time (hill approaches and mountain roads included), slowed for a bus
    dur = np.maximum(np.ceil(bfree * rng.uniform(*BUS_SLOWDOWN, n) / 5) * 5, 20).astype(np.int64)
    arr = dep + dur
    fare = np.round(np.maximum(120.0, bkm * np.array([BUS_TYPES[types[k]] for k in t.tolist()])
                               * rng.uniform(0.9, 1.2, n)), 0)
    return {
        "bus_id": [f"BUS{i:06d}" for i in range(1, n + 1)],
        "operator": operator,
        "bus_type": [types[k] for k in t.tolist()],
        "origin_city": [cities.name[i] for i in bo.tolist()],
        "dest_city": [cities.name[i] for i in bd.tolist()],
        "dep_time": [format_hhmm(m) for m in dep.tolist()],
        "arr_time": [format_hhmm(m) for m in arr.tolist()],
        "arr_day_offset": (arr // 1440).tolist(),
        "duration_min": dur.tolist(),
        "run_days": run_days(rng, n, 0.8),
        "fare_inr": fare,
    }
