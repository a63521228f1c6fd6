"""The `trains` table, from Indian Railways' real trains (`tools/india/rail/`, read through
`tools/india/rail_facts.py`).

Real (the vendored open data): each train's number, name, type, stops in order, run days at its
first stop, total duration and distance; each station's name and position.

Derived by the rules below (the open data has no per-stop times, classes or fares):

- Stations in cities (`station_cities`): a station belongs to the city it names ("Agra Cantt",
  "Delhi Sarai Rohilla", "Chandigarh") when that city is within `NAME_MATCH_FACTOR` times its
  station radius, else to the city it lies nearest relative to that radius when within it
  (`station_radius_km`: 8 km for a town, growing with the square root of the population: Delhi 28,
  Mumbai 30); a station `stations.csv` says serves a city (Karmali serves Panaji, Howrah Junction
  Kolkata) is in that city, or in none when the profile lacks it (so a smaller profile's rows are
  the larger one's). A station whose coordinates were only interpolated is in no city. A city has
  the stations its trains call at; a city without one has no train.
- Times along the route (`timetable`): each stop's km from the first stop is the great-circle
  path through the stations' coordinates scaled so that the last stop is at the train's real
  distance; halts (`halt_minutes`: 10 min at a station where at least `MAJOR_STATION_TRAINS` of
  the source's trains call, 5 min at one with at least `BUSY_STATION_TRAINS`, else 2; together at
  most `HALT_SHARE_MAX` of the journey); the running time (the real duration less the halts) is
  spread over the km, so the last arrival is the real duration after the first departure. Where
  `rail/timings.csv` gives a published arrival at a stop (the Gatimaan at Agra), the times before
  and after it are spread the same way on each side.
- Departure from the first stop (`departures`): the published time where `rail/timings.csv` has
  one; else by type and duration: a day train (`DAY_TYPES`: Vande Bharat, Shatabdi, Gatimaan ...)
  leaves its busier end (more of the source's trains call there) in the morning (05:30-08:00) and
  its return working leaves the other end `TURNAROUND_MIN` after the outward one arrives when it
  then arrives by midnight, else in the morning too; another train of 7-15 h runs overnight,
  arriving between 05:30 and 08:30; any other leaves between 05:00 and 23:30, and never so late
  that it arrives more than three days after it left. Minutes are drawn in 5-minute steps from the
  stage's generator, in order of train number over every train of the source, so every profile
  gives a train the same times.
- Rows: one per (train, boarding city, alighting city) in its direction of travel. A row boards
  at the train's first station if that is in the boarding city, alights at its last station if
  that is in the alighting city, and otherwise uses the train's station in that city nearest the
  city centre (`city_stops`); a city the train passes twice keeps that one station. Run days at a
  boarding stop are the first stop's shifted by the midnights passed (`shift_run_days`).
- Classes by type (`TYPE_CLASSES`); fare per person in the train's fare class (`fare_class` in
  tools/schema.py) by class and km (`CLASS_FARE`, after Indian Railways' fare tables) times a
  factor and plus a supplement by type (`TYPE_FARE`).
- Delays (synthesized, calibrated to the paper's section 3.6): a right-skewed base per train,
  scaled by its type's punctuality (`KIND_DELAY`), growing along the route to the alighting stop,
  with noise per horizon; one set of statistics per (train, alighting stop); each column
  rescaled to its target mean over the profile's rows.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from utp_env.tools.clock import format_hhmm, parse_hhmm
from utp_env.tools.india.rail_facts import (
    GHAT_SECTIONS,
    GHAT_WEIGHT,
    RailSource,
    RealTrain,
    Station,
    TimingFact,
    read_rail,
)
from utp_env.tools.sandbox.common import Columns, haversine_km, lognormal_with_mean, rescale_to_mean, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import fare_class, shift_run_days

MINUTES_PER_DAY = 1440
MAX_DAY_OFFSET = 3  # `Train.arr_day_offset` (tools/schema.py)
# Stations in cities.
STATION_RADIUS_MIN_KM = 8.0
NAME_MATCH_FACTOR = 2.0
# Halts: minutes at a station by how many of the source's trains call there.
MAJOR_STATION_TRAINS = 100
BUSY_STATION_TRAINS = 20
HALT_MIN = {"major": 10, "busy": 5, "other": 2}
HALT_SHARE_MAX = 0.2
# Departures.
DAY_TYPES = frozenset({"Gatimaan", "Vande Bharat", "Shatabdi", "Tejas", "Jan Shatabdi", "Intercity",
                       "Double Decker", "Toy Train"})
MORNING = (5 * 60 + 30, 8 * 60)  # a day train's first departure window
TURNAROUND_MIN = 60  # a day train's return leaves this long after the outward one arrives
OVERNIGHT_HOURS = (7, 15)
OVERNIGHT_ARRIVAL = (5 * 60 + 30, 8 * 60 + 30)
ANY_TIME = (5 * 60, 23 * 60 + 30)
STEP_MIN = 5
# Classes each train type offers (Indian Railways' coaching by train category); the fare is quoted
# for the first of `FARE_CLASS_ORDER` (tools/schema.py) offered: 3A on sleeper trains, CC on
# chair-car day trains, 2S on the toy trains (whose first class "FC" is not priced here).
TYPE_CLASSES: dict[str, list[str]] = {
    "Rajdhani": ["3A", "2A", "1A"], "Duronto": ["SL", "3A", "2A"], "Humsafar": ["3A"],
    "Garib Rath": ["3A", "CC"], "Superfast": ["SL", "3A", "2A", "1A"], "Mail": ["SL", "3A", "2A"],
    "Express": ["SL", "3A", "2A"], "Shatabdi": ["CC", "EC"], "Vande Bharat": ["CC", "EC"],
    "Gatimaan": ["CC", "EC"], "Tejas": ["CC", "EC"], "Jan Shatabdi": ["2S", "CC"], "Intercity": ["2S", "CC"],
    "Double Decker": ["CC"], "Toy Train": ["FC", "2S"],
}
# Fare of one class on a Mail/Express: (base INR incl. reservation, INR per km), after Indian
# Railways' published fare tables (rounded): Delhi-Mumbai (1,384 km) 3A about 1,770, SL about 690.
CLASS_FARE: dict[str, tuple[float, float]] = {
    "2S": (15.0, 0.36), "SL": (20.0, 0.48), "CC": (40.0, 1.05), "3E": (40.0, 1.15), "3A": (40.0, 1.25),
    "2A": (50.0, 1.8), "EC": (60.0, 2.1), "1A": (60.0, 3.0),
}
# Train type -> (factor on the class fare, supplement INR): the toy trains at ordinary second-class
# fares, the superfast charge, and the premium trains' fares with catering (Rajdhani, Shatabdi,
# Vande Bharat, Gatimaan, Tejas), so Express < Superfast < premium on one route and class.
TYPE_FARE: dict[str, tuple[float, float]] = {
    "Toy Train": (0.55, 0.0), "Express": (1.0, 0.0), "Mail": (1.0, 0.0), "Intercity": (1.0, 0.0),
    "Superfast": (1.0, 45.0), "Jan Shatabdi": (1.0, 45.0), "Double Decker": (1.0, 45.0),
    "Humsafar": (1.15, 45.0), "Garib Rath": (0.75, 25.0), "Duronto": (1.2, 150.0), "Shatabdi": (1.5, 150.0),
    "Rajdhani": (1.5, 250.0), "Tejas": (1.6, 150.0), "Vande Bharat": (1.7, 150.0), "Gatimaan": (1.9, 150.0),
}
# How late a train type runs relative to a Mail/Express (the premium trains have priority on the
# line): Indian Railways' punctuality by train category, rounded.
KIND_DELAY: dict[str, float] = {
    "Vande Bharat": 0.45, "Gatimaan": 0.45, "Shatabdi": 0.55, "Tejas": 0.55, "Rajdhani": 0.6, "Duronto": 0.7,
    "Jan Shatabdi": 0.8, "Double Decker": 0.8, "Humsafar": 0.85, "Superfast": 0.9, "Garib Rath": 0.95,
    "Intercity": 1.0, "Express": 1.0, "Mail": 1.05, "Toy Train": 1.35,
}
DELAY_MISSING_SHARE = 0.06


def station_radius_km(population: np.ndarray | float) -> np.ndarray:
    """How far from a city's centre its stations may lie: 8 km for a town, 5 + 7 x sqrt(millions)
    for a city (Agra 13 km, Delhi 28, Mumbai 30)."""
    return np.maximum(STATION_RADIUS_MIN_KM, 5.0 + 7.0 * np.sqrt(np.asarray(population, float) / 1e6))


def _named_after(station: str, city: str) -> bool:
    s, c = station.casefold(), city.casefold()
    return s == c or s.startswith(c + " ")


def station_cities(cities: Cities, stations: dict[str, Station]) -> dict[str, int]:
    """Station code -> index of the city it is in (stations in no city are left out)."""
    radius = station_radius_km(cities.population)
    index = {name: i for i, name in enumerate(cities.name)}
    out: dict[str, int] = {}
    for code, s in stations.items():
        if s.position == "interpolated":
            continue
        if s.serves is not None:  # in the city it serves, or in none when the profile lacks that city
            if s.serves in index:
                out[code] = index[s.serves]
            continue
        d = haversine_km(cities.lat, cities.lon, s.lat, s.lon)
        near = np.flatnonzero(d <= NAME_MATCH_FACTOR * radius).tolist()
        named = [i for i in near if _named_after(s.name, cities.name[i])]
        if named:
            out[code] = max(named, key=lambda i: (len(cities.name[i]), -d[i]))
            continue
        i = int(np.argmin(d / radius))
        if d[i] <= radius[i]:
            out[code] = i
    return out


def station_traffic(trains: list[RealTrain]) -> dict[str, int]:
    """How many of the source's trains call at each station."""
    count: dict[str, int] = {}
    for t in trains:
        for code in set(t.stops):
            count[code] = count.get(code, 0) + 1
    return count


def halt_minutes(train: RealTrain, traffic: dict[str, int]) -> np.ndarray:
    """Minutes the train halts at each stop (0 at its ends), by the station's traffic, together at
    most `HALT_SHARE_MAX` of its duration."""
    halts = np.array([HALT_MIN["major"] if traffic.get(c, 0) >= MAJOR_STATION_TRAINS
                      else HALT_MIN["busy"] if traffic.get(c, 0) >= BUSY_STATION_TRAINS
                      else HALT_MIN["other"] for c in train.stops], dtype=float)
    halts[0] = halts[-1] = 0.0
    cap = HALT_SHARE_MAX * train.duration_min
    if halts.sum() > cap:
        halts *= cap / halts.sum()
    return halts


def route_km(train: RealTrain, stations: dict[str, Station]) -> np.ndarray:
    """Km of each stop from the first: the path through the stations' coordinates scaled to the
    train's real distance (evenly spaced where the coordinates give no length)."""
    lat = np.array([stations[c].lat for c in train.stops])
    lon = np.array([stations[c].lon for c in train.stops])
    hops = haversine_km(lat[:-1], lon[:-1], lat[1:], lon[1:])
    if hops.sum() <= 0:
        hops = np.ones(len(hops))
    cum = np.concatenate([[0.0], np.cumsum(hops)])
    return cum * (train.distance_km / cum[-1])


def time_km(train: RealTrain, km: np.ndarray, stations: dict[str, Station]) -> np.ndarray:
    """Cumulative km weighted for running time: a hop across a ghat incline (`GHAT_SECTIONS` in
    tools/india/rail_facts.py: the Bhor and Thal ghats out of Mumbai) counts `GHAT_WEIGHT` times."""
    weight = np.ones(len(km) - 1)
    for h, (a, b) in enumerate(itertools.pairwise(train.stops)):
        sa, sb = stations[a], stations[b]
        for g in GHAT_SECTIONS:
            if min(sa.lon, sb.lon) <= g.west_lon and max(sa.lon, sb.lon) >= g.east_lon \
                    and all(g.lat[0] <= x <= g.lat[1] for x in (sa.lat, sb.lat)):
                weight[h] = GHAT_WEIGHT
    return np.concatenate([[0.0], np.cumsum(np.diff(km) * weight)])


@dataclass(frozen=True)
class Timetable:
    """One train's times, in minutes after its departure from the first stop: arrival and
    departure at each stop (arrival = departure at the first stop), and each stop's km."""

    arrive: np.ndarray
    depart: np.ndarray
    km: np.ndarray


def timetable(train: RealTrain, km: np.ndarray, halts: np.ndarray, anchors: dict[int, int],
              weighted_km: np.ndarray | None = None) -> Timetable:
    """Times at every stop: the running time between two fixed points (the first departure, a
    published arrival in `anchors` as stop index -> minutes after the first departure, the last
    arrival at the real duration) spread over the km (`weighted_km`, default `km`: the km
    weighted for running time, `time_km`), with the halts between."""
    run_km = km if weighted_km is None else weighted_km
    fixed = {0: 0, len(km) - 1: train.duration_min, **anchors}
    points = sorted(fixed)
    arrive = np.zeros(len(km))
    for a, b in itertools.pairwise(points):
        start = fixed[a] + (halts[a] if a else 0.0)  # departure from a
        inner = halts[a + 1 : b]
        running = fixed[b] - start - inner.sum()
        if running <= 0:  # a published time leaves no room for the halts: drop them on this stretch
            inner = np.zeros_like(inner)
            running = fixed[b] - start
        share = (run_km[a + 1 : b + 1] - run_km[a]) / max(run_km[b] - run_km[a], 1e-9)
        # arrival at stop k (a < k <= b): running time over the km so far plus the halts before it
        halts_before = np.concatenate([[0.0], np.cumsum(inner)])
        arrive[a + 1 : b + 1] = start + running * share + halts_before
        arrive[b] = fixed[b]
    depart = arrive + halts
    minutes_arr = np.round(arrive).astype(np.int64)
    minutes_dep = np.maximum(np.round(depart).astype(np.int64), minutes_arr)
    for k in range(1, len(km)):  # at least a minute between stops after rounding
        minutes_arr[k] = max(minutes_arr[k], minutes_dep[k - 1] + 1)
        minutes_dep[k] = max(minutes_dep[k], minutes_arr[k])
    minutes_dep[-1] = minutes_arr[-1]
    return Timetable(minutes_arr, minutes_dep, km)


def _anchors(train: RealTrain, dep0: int, facts: list[TimingFact], km: np.ndarray) -> dict[int, int]:
    """Published arrivals at intermediate stops as minutes after the first departure, each the
    clock time's occurrence nearest the time the km alone would give."""
    out = {}
    for f in facts:
        if f.event != "arr":
            continue
        k = train.stops.index(f.station)
        if k in (0, len(train.stops) - 1):
            continue
        estimate = train.duration_min * km[k] / max(km[-1], 1e-9)
        base = (parse_hhmm(f.time) - dep0) % MINUTES_PER_DAY
        out[k] = min((base + MINUTES_PER_DAY * m for m in range(4)), key=lambda t: abs(t - estimate))
    return out


def _draw(rng: np.random.Generator, window: tuple[int, int], latest: int | None = None) -> int:
    """A minute in `window` (inclusive, 5-minute steps), at most `latest`."""
    low, high = window
    if latest is not None:
        high = min(high, latest)
    steps = max(0, (high - low) // STEP_MIN)
    return low + STEP_MIN * int(rng.integers(0, steps + 1))


def departures(trains: list[RealTrain], facts: list[TimingFact], traffic: dict[str, int],
               rng: np.random.Generator) -> dict[str, int]:
    """Departure minute (0-1439) of every train from its first stop (see the module docstring)."""
    published = {f.number: parse_hhmm(f.time) for f in facts if f.event == "dep"}
    by_number = {t.number: t for t in trains}
    u = {t.number: rng.integers(0, 2**31, 2) for t in trains}  # two draws per train, in number order
    out: dict[str, int] = {}

    def latest(t: RealTrain) -> int:
        return (MAX_DAY_OFFSET + 1) * MINUTES_PER_DAY - 1 - t.duration_min

    def morning(t: RealTrain) -> int:
        return _draw(np.random.default_rng(u[t.number][0]), MORNING, latest(t))

    returns = []
    for t in trains:
        draw = np.random.default_rng(u[t.number][1])
        if t.number in published:
            out[t.number] = published[t.number]
        elif t.type in DAY_TYPES:
            pair = by_number.get(t.pair or "")
            base_end = pair is None or pair.type not in DAY_TYPES or \
                (traffic.get(t.stops[0], 0), pair.number) > (traffic.get(pair.stops[0], 0), t.number)
            if base_end:
                out[t.number] = morning(t)
            else:
                returns.append(t)
        elif OVERNIGHT_HOURS[0] * 60 <= t.duration_min <= OVERNIGHT_HOURS[1] * 60:
            out[t.number] = (_draw(draw, OVERNIGHT_ARRIVAL) - t.duration_min) % MINUTES_PER_DAY
        else:
            out[t.number] = _draw(draw, ANY_TIME, latest(t))
    for t in returns:  # a day train's return working: after the outward one arrives, if it can
        pair = by_number[t.pair or ""]
        if pair.number not in out:  # its pair is itself a return working of another train
            out[t.number] = morning(t)
            continue
        outward_arrival = out[pair.number] + pair.duration_min
        leave = -(-(outward_arrival + TURNAROUND_MIN) // STEP_MIN) * STEP_MIN
        if leave < MINUTES_PER_DAY and leave + t.duration_min <= MINUTES_PER_DAY:
            out[t.number] = leave
        else:
            out[t.number] = morning(t)
    return out


def city_stops(train: RealTrain, city_of: dict[str, int], cities: Cities,
               stations: dict[str, Station]) -> list[tuple[int, int]]:
    """(stop index, city index) of each city the train serves, in order of the stop: the first
    station if in that city, else the last station if in it, else its station there nearest the
    city centre."""
    members: dict[int, list[int]] = {}
    for k, code in enumerate(train.stops):
        c = city_of.get(code)
        if c is not None:
            members.setdefault(c, []).append(k)
    last = len(train.stops) - 1
    chosen = []
    for c, ks in members.items():
        if ks[0] == 0:
            k = 0
        elif ks[-1] == last:
            k = last
        else:
            d = [float(haversine_km(cities.lat[c], cities.lon[c], stations[train.stops[j]].lat,
                                    stations[train.stops[j]].lon)) for j in ks]
            k = ks[int(np.argmin(d))]
        chosen.append((k, c))
    return sorted(chosen)


def train_fare(kind: str, km: np.ndarray) -> np.ndarray:
    """Fare per person (INR, rounded to 5) of a `kind` train over `km` in its fare class."""
    base, per_km = CLASS_FARE[fare_class(TYPE_CLASSES[kind])]
    factor, extra = TYPE_FARE[kind]
    return np.round(((base + per_km * np.asarray(km, float)) * factor + extra) / 5.0) * 5.0


def fare_km(kind: str, fare: np.ndarray) -> np.ndarray:
    """The rail km a `kind` train's fare is quoted for (the inverse of `train_fare`, to within its
    rounding to 5 INR): fares are per km, so the trains table tells its track km."""
    base, per_km = CLASS_FARE[fare_class(TYPE_CLASSES[kind])]
    factor, extra = TYPE_FARE[kind]
    return ((np.asarray(fare, float) - extra) / factor - base) / per_km


def trains_table(cities: Cities, profile: SandboxProfile, seed: int, root: Path | None = None) -> Columns:
    """One row per (train, boarding city, alighting city) of the real trains calling at two or
    more of the profile's cities (`root`: the vendored sources' folder, `tools/india/` by default)."""
    source: RailSource = read_rail(root)
    rng = stage_rng(seed, "trains")
    traffic = station_traffic(source.trains)
    dep0 = departures(source.trains, source.timings, traffic, rng)
    n_stops = sum(len(t.stops) for t in source.trains)
    # drawn for every train and stop of the source in order, so every profile gives a train the same
    base_delay = lognormal_with_mean(rng, 1.0, profile.calibration.lognormal_sigma, len(source.trains))
    city_of = station_cities(cities, source.stations)
    facts: dict[str, list[TimingFact]] = {}
    for f in source.timings:
        facts.setdefault(f.number, []).append(f)
    names = np.array(cities.name, dtype=object)
    parts: dict[str, list] = {k: [] for k in ("train", "o", "d", "so", "sd", "dep", "arr", "km", "days", "delay",
                                             "stop")}
    stop_key = 0  # one key per (train, stop) of the source: a stop's delay statistics are drawn once
    for r, t in enumerate(source.trains):
        visits = city_stops(t, city_of, cities, source.stations)
        if len(visits) >= 2:
            km = route_km(t, source.stations)
            run_km = time_km(t, km, source.stations)
            anchors = _anchors(t, dep0[t.number], facts.get(t.number, []), run_km)
            tt = timetable(t, km, halt_minutes(t, traffic), anchors, run_km)
            k = np.array([v[0] for v in visits])
            c = np.array([v[1] for v in visits])
            i, j = np.triu_indices(len(visits), 1)
            leave = dep0[t.number] + tt.depart[k[i]]
            parts["train"].append(np.full(len(i), r))
            parts["o"].append(c[i])
            parts["d"].append(c[j])
            parts["so"].append(np.array([t.stops[x] for x in k[i]], dtype=object))
            parts["sd"].append(np.array([t.stops[x] for x in k[j]], dtype=object))
            parts["dep"].append(leave)
            parts["arr"].append(dep0[t.number] + tt.arrive[k[j]])
            parts["km"].append(km[k[j]] - km[k[i]])
            parts["days"].append(np.array([shift_run_days(t.run_days, int(m // MINUTES_PER_DAY))
                                           for m in leave.tolist()], dtype=object))
            # delays build up along the route: more at stops further from the start
            parts["delay"].append(base_delay[r] * KIND_DELAY[t.type] * (0.5 + km[k[j]] / max(km[-1], 1.0)))
            parts["stop"].append(stop_key + k[j])
        stop_key += len(t.stops)
    if not parts["train"]:
        raise ValueError(f"profile {profile.name!r}: no real train calls at two of its cities")
    cat = {key: np.concatenate(v) for key, v in parts.items()}
    trains = source.trains
    kinds = np.array([trains[r].type for r in cat["train"].tolist()], dtype=object)
    dep, arr = cat["dep"].astype(np.int64), cat["arr"].astype(np.int64)
    clock = np.array([format_hhmm(m) for m in range(MINUTES_PER_DAY)], dtype=object)
    station_name = {code: s.name for code, s in source.stations.items()}
    fares = np.zeros(len(dep))
    for kind in set(kinds.tolist()):
        mask = kinds == kind
        fares[mask] = train_fare(kind, cat["km"][mask])
    cols: Columns = {
        "train_number": [trains[r].number for r in cat["train"].tolist()],
        "train_name": [trains[r].name for r in cat["train"].tolist()],
        "origin_city": names[cat["o"]].tolist(),
        "dest_city": names[cat["d"]].tolist(),
        "origin_station": [station_name[s] for s in cat["so"].tolist()],
        "dest_station": [station_name[s] for s in cat["sd"].tolist()],
        "dep_time": clock[dep % MINUTES_PER_DAY].tolist(),
        "arr_time": clock[arr % MINUTES_PER_DAY].tolist(),
        "arr_day_offset": (arr // MINUTES_PER_DAY - dep // MINUTES_PER_DAY).tolist(),
        "duration_min": (arr - dep).tolist(),
        "run_days": cat["days"].tolist(),
        "classes": [TYPE_CLASSES[k] for k in kinds.tolist()],
        "fare_inr": fares.astype(np.int64).tolist(),
    }
    cols.update(_delay_columns(cat["delay"], cat["stop"].astype(np.int64), n_stops, profile, rng))
    return cols


def _delay_columns(base: np.ndarray, stop: np.ndarray, n_stops: int, profile: SandboxProfile,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The five delay horizons: the row's base delay with horizon noise, each column calibrated
    to its own target mean (spread over the paper's range); ~6% of (train, alighting stop) pairs
    carry no statistics. The noise and the gaps are drawn per (train, stop) `stop` key over every
    stop of the source, so every row alighting at one stop of one train has the same statistics."""
    missing = (rng.random(n_stops) < DELAY_MISSING_SHARE)[stop]
    out = {}
    for col, target in profile.calibration.train_horizon_means_min.items():
        values = base * rng.lognormal(0.0, 0.25, n_stops)[stop]
        values[missing] = np.nan
        out[col] = np.round(rescale_to_mean(values, target), 1)
    return out
