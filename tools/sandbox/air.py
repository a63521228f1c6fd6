"""The `flights` table: India's domestic flights on the real airport pairs, with on-time statistics.

Real (`tools/india/air/`, read through `utp_env.tools.india.air_facts`): the airport pairs with
scheduled service (OpenFlights' 2014 route table brought up to date), the airlines flying today
with their shares, on-time shares and block-time habits, the regional airlines' routes, and each
airport's domestic passengers (Airports Authority of India). Derived by the rules below: how
often each pair is flown, which airline flies each flight, departure times, block times, fares.

The flights are generated for the whole vendored network, independently of the profile's cities,
and a sandbox keeps those between the airports of its cities (`geography.match_airports`): the
mini profile's flights are exactly the full profile's between its cities, and a city without an
airport on the network (Kota, Dhanbad, Warangal, Jamshedpur) gets none. Only the on-time
statistics' delay mean is calibrated per sandbox (one factor) to the paper's 40.59 min.

- A row is one flight number flying one route in one direction on its weekdays (`run_days`), as
  in an airline timetable: most rows fly daily, and a route-direction-airline with w departures
  a week has w // 7 daily rows and, for the rest, one row flying w % 7 days spread over the week.
- Departures: India's `NATIONAL_DEPARTURES_A_DAY` are shared among the airports by their
  domestic passengers, and among each airport's pairs by a gravity model (the product of both
  airports' passengers over distance^`DISTANCE_EXPONENT`, hops under `SHORT_HOP_KM` damped by
  1 / (1 + (`SHORT_HOP_KM` / distance)^4): people take the train or the road), fitted to the
  airports' totals by iterative proportional fitting; each direction is flown equally, at least
  `MIN_WEEKLY` a week.
- Airlines: a regional airline listed on a route flies `REGIONAL_WEEKLY` a week (all of the
  route's flights where it is the only one); the rest go to 1-5 of the five national airlines,
  more on busier routes (`airlines_on_route`), drawn by their share of passengers; the route's
  flights are split among them by share^`SPLIT_EXPONENT`, so that over the network each
  airline's share of departures comes out near its share of passengers.
- Departures at distinct 5-minute slots of one route and direction, drawn by `HOUR_WEIGHT` (the
  morning and evening banks); flight numbers unique per airline.
- Block time: distance at the airline's block speed plus `TAXI_MIN`, the congested airports'
  extra taxi minutes, the airline's own padding and -5/0/+5 min per flight, in 5-minute steps.
- On-time counts: multinomial around the airline's on-time share; the late-delay mean log-normal,
  calibrated (late-count weighted) to the paper's 40.59 min over the sandbox's rows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from utp_env.tools.clock import format_hhmm
from utp_env.tools.india.air_facts import (
    NATIONAL_DEPARTURES_A_DAY,
    Carrier,
    read_airports,
    read_carriers,
    read_route_carriers,
    read_routes,
)
from utp_env.tools.sandbox.common import (
    Columns,
    apportion,
    haversine_km,
    lognormal_with_mean,
    power,
    rescale_to_mean,
    stage_rng,
)
from utp_env.tools.sandbox.geography import Cities, airport_city, indian_airports
from utp_env.tools.sandbox.profiles import Calibration, SandboxProfile
from utp_env.tools.schema import TABLES

DISTANCE_EXPONENT = 0.5
SHORT_HOP_KM = 300.0
FIT_ROUNDS = 60  # iterative proportional fitting converges to < 0.1 % in about 30
MIN_WEEKLY = 2
REGIONAL_WEEKLY = 7
SPLIT_EXPONENT = 0.75
TAXI_MIN = 35
# late, very late, excessive, cancelled, diverted: relative shares of the flights not on time
OTP_REST = np.array([11.0, 6.0, 5.0, 1.6, 0.4])
OTP_CONCENTRATION = 96.0  # Dirichlet concentration of a flight's outcome shares
STATS_SHARE = 0.9
# departures per hour of day (05:00-23:59): the morning and evening banks of Indian airports
HOUR_WEIGHT = {5: 3, 6: 8, 7: 9, 8: 9, 9: 7, 10: 6, 11: 5, 12: 4, 13: 4, 14: 5, 15: 5, 16: 6, 17: 7, 18: 8,
               19: 8, 20: 7, 21: 5, 22: 3, 23: 1}
WEEK = 7
FLIGHT_COLUMNS = tuple(TABLES["flights"].model.model_fields)


@dataclass(frozen=True)
class Network:
    """The vendored route network with its weekly departures (each direction) per route."""

    airport_a: list[str]
    airport_b: list[str]
    km: np.ndarray
    weekly: np.ndarray


def airport_distance_km(a: str, b: str) -> float:
    """Great-circle km between two Indian airports (`airportsdata` coordinates)."""
    records = indian_airports()
    ra, rb = records[a], records[b]
    return float(haversine_km(float(ra["lat"]), float(ra["lon"]), float(rb["lat"]), float(rb["lon"])))


def fit_departures(pa: np.ndarray, pb: np.ndarray, ia: np.ndarray, ib: np.ndarray, km: np.ndarray,
                   airport_departures: np.ndarray) -> np.ndarray:
    """Departures a day each way per route: the gravity weights fitted so that each airport's
    departures (both directions of all its routes) equal `airport_departures`."""
    f = np.sqrt(pa * pb) / power(km, DISTANCE_EXPONENT) / (1.0 + power(SHORT_HOP_KM / km, 4))
    n = len(airport_departures)
    for _ in range(FIT_ROUNDS):
        at = np.bincount(ia, f, n) + np.bincount(ib, f, n)
        scale = np.sqrt(airport_departures / np.maximum(at, 1e-12))
        f = f * scale[ia] * scale[ib]
    return f * (airport_departures.sum() / 2.0 / f.sum())


@functools.cache
def network() -> Network:
    """The vendored pairs with their weekly departures each way (the same for every profile)."""
    routes = read_routes()
    traffic = {a.iata: a.passengers_m for a in read_airports()}
    codes = sorted(traffic)
    where = {c: k for k, c in enumerate(codes)}
    a = [r.airport_a for r in routes]
    b = [r.airport_b for r in routes]
    missing = sorted({c for c in a + b if c not in traffic})
    if missing:
        raise ValueError(f"tools/india/air/airports.csv: no traffic for the airports {missing} of routes.csv; "
                         "add their rows (python -m utp_env.tools.india.derive_air checks this)")
    km = np.array([airport_distance_km(x, y) for x, y in zip(a, b, strict=True)])
    ia = np.array([where[x] for x in a])
    ib = np.array([where[x] for x in b])
    passengers = np.array([traffic[c] for c in codes])
    airport_departures = passengers / passengers.sum() * NATIONAL_DEPARTURES_A_DAY
    daily = fit_departures(passengers[ia], passengers[ib], ia, ib, km, airport_departures)
    weekly = np.maximum(MIN_WEEKLY, np.round(daily * WEEK)).astype(np.int64)
    return Network(a, b, km, weekly)


def airlines_on_route(daily: float) -> int:
    """How many of the national airlines fly a route of `daily` departures each way: one up to 2
    a day, then one more per ~1.5 x sqrt(daily) (Delhi-Mumbai: all five)."""
    return int(min(5, 1 + np.floor(np.sqrt(max(daily, 0.0)) / 1.5)))


def route_airlines(weekly: int, regional: tuple[str, ...], only: bool, national: list[Carrier],
                   rng: np.random.Generator) -> list[tuple[str, int]]:
    """(airline code, weekly departures each way) of one route."""
    out = [(code, REGIONAL_WEEKLY) for code in regional]
    if only:
        split = apportion(max(weekly, REGIONAL_WEEKLY * len(regional)), np.ones(len(regional)))
        return [(code, int(n)) for code, n in zip(regional, split.tolist(), strict=True)]
    rest = weekly
    k = airlines_on_route(rest / WEEK)
    share = np.array([c.share or 0.0 for c in national])
    chosen = np.sort(rng.choice(len(national), size=min(k, len(national)), replace=False, p=share / share.sum()))
    split = apportion(rest, power(share[chosen], SPLIT_EXPONENT), minimum=1 if rest >= len(chosen) else 0)
    out += [(national[c].code, int(n)) for c, n in zip(chosen.tolist(), split.tolist(), strict=True) if n > 0]
    return out


def week_rows(weekly: int, rng: np.random.Generator) -> list[str]:
    """Run days of the rows of `weekly` departures: daily rows, then one row of the remainder's
    days spread evenly from a random weekday."""
    days = ["1" * WEEK] * (weekly // WEEK)
    rest = weekly % WEEK
    if rest:
        start = int(rng.integers(0, WEEK))
        on = {(start + x * WEEK // rest) % WEEK for x in range(rest)}
        days.append("".join("1" if d in on else "0" for d in range(WEEK)))
    return days


@dataclass(frozen=True)
class NetworkFlights:
    """Every flight row of the network (airport level); the delay columns are filled by
    `flights_table` once the late-delay mean is calibrated over a sandbox's rows."""

    columns: Columns
    mu: np.ndarray  # raw late-delay mean (NaN: no statistics)
    spread: np.ndarray  # delay s.d. as a share of the mean
    reach: np.ndarray  # the largest delay's distance above the mean, in s.d.s


def network_flights(seed: int, calibration: Calibration) -> NetworkFlights:
    """The flight rows of the whole vendored network for `seed` (cities not yet attached)."""
    rng = stage_rng(seed, "flights")
    net = network()
    carriers = {c.code: c for c in read_carriers() if c.flying}
    national = [c for c in carriers.values() if c.share]
    regional = {(r.airport_a, r.airport_b): r for r in read_route_carriers()}
    unknown = sorted({code for r in regional.values() for code in r.carriers} - set(carriers))
    if unknown:
        raise ValueError(f"tools/india/air/route_carriers.csv: airline(s) {unknown} are not flying in carriers.csv")
    traffic = {a.iata: a.taxi_extra_min for a in read_airports()}
    origin: list[str] = []
    dest: list[str] = []
    airline: list[str] = []
    days: list[str] = []
    km: list[float] = []
    for a, b, dist, weekly in zip(net.airport_a, net.airport_b, net.km.tolist(), net.weekly.tolist(), strict=True):
        listed = regional.get((a, b))
        plan = route_airlines(int(weekly), listed.carriers if listed else (), bool(listed and listed.only),
                              national, rng)
        for o, d in ((a, b), (b, a)):
            for code, n in plan:
                for run in week_rows(n, rng):
                    origin.append(o)
                    dest.append(d)
                    airline.append(code)
                    days.append(run)
                    km.append(dist)
    n = len(origin)
    distance = np.array(km)
    dep = _departures(origin, dest, rng)
    speed = np.array([carriers[c].cruise_kmh or 750.0 for c in airline])
    extra = np.array([(carriers[c].block_extra_min or 0) + traffic[o] + traffic[d]
                      for c, o, d in zip(airline, origin, dest, strict=True)], dtype=float)
    block = distance / speed * 60 + TAXI_MIN + extra + rng.integers(-1, 2, n) * 5
    dur = (np.round(block / 5) * 5).astype(np.int64)
    arr = dep + dur
    price = np.round((1800.0 + 4.2 * distance) * rng.lognormal(0.0, 0.25, n), 0)
    numbers = _flight_numbers(airline, rng)
    columns: Columns = {
        "flight_number": [f"{c}-{num}" for c, num in zip(airline, numbers, strict=True)],
        "airline": [carriers[c].airline for c in airline],
        "origin_airport": origin,
        "dest_airport": dest,
        "dep_time": [format_hhmm(m) for m in dep.tolist()],
        "arr_time": [format_hhmm(m) for m in arr.tolist()],
        "arr_day_offset": (arr // 1440).tolist(),
        "duration_min": dur.tolist(),
        "run_days": days,
        "price_inr": price,
    }
    on_time = np.array([carriers[c].on_time or 0.75 for c in airline])
    columns.update(_otp_counts(on_time, rng))
    has = ~np.isnan(columns["otp_total"])
    mu = np.where(has, lognormal_with_mean(rng, calibration.flight_delayed_mean_min, calibration.lognormal_sigma, n),
                  np.nan)
    return NetworkFlights(columns, mu, rng.uniform(0.35, 0.8, n), rng.uniform(2.0, 4.0, n))


def flights_table(cities: Cities, airports: dict[str, int], profile: SandboxProfile, seed: int) -> Columns:
    """The network's flights between the airports of the chosen cities (`airports`: IATA -> city
    index), the late-delay mean calibrated over them."""
    flights = network_flights(seed, profile.calibration)
    origin, dest = flights.columns["origin_airport"], flights.columns["dest_airport"]
    keep = [k for k, (o, d) in enumerate(zip(origin, dest, strict=True))
            if o in airports and d in airports and airports[o] != airports[d]]
    idx = np.array(keep, dtype=np.int64)
    cols: Columns = {name: values[idx] if isinstance(values, np.ndarray) else [values[k] for k in keep]
                     for name, values in flights.columns.items()}
    late = np.nan_to_num(cols["otp_late"] + cols["otp_very_late"] + cols["otp_excessive"])
    mu = np.round(rescale_to_mean(flights.mu[idx], profile.calibration.flight_delayed_mean_min, weights=late), 1)
    sigma = np.round(mu * flights.spread[idx], 1)
    cols["delay_avg_min"], cols["delay_std_min"] = mu, sigma
    cols["delay_max_min"] = np.round(mu + sigma * flights.reach[idx], 0)
    cols["origin_city"] = [cities.name[airports[o]] for o in cols["origin_airport"]]
    cols["dest_city"] = [cities.name[airports[d]] for d in cols["dest_airport"]]
    return {name: cols[name] for name in FLIGHT_COLUMNS}


def _departures(origin: list[str], dest: list[str], rng: np.random.Generator) -> np.ndarray:
    """Departure minute of every row: distinct 5-minute slots per route and direction between the
    places the airports serve (Mumbai -> Dabolim and Mumbai -> Mopa share Goa's slots), drawn by
    `HOUR_WEIGHT` (a daily row leaves at the same time every day)."""
    slots = np.array([h * 60 + m for h in HOUR_WEIGHT for m in range(0, 60, 5)])
    weight = np.repeat(np.array(list(HOUR_WEIGHT.values()), float), 12)
    weight /= weight.sum()
    records = indian_airports()
    place = {code: airport_city(records[code]) for code in set(origin) | set(dest)}
    dep = np.zeros(len(origin), dtype=np.int64)
    groups: dict[tuple[str, str], list[int]] = {}
    for k, (o, d) in enumerate(zip(origin, dest, strict=True)):
        groups.setdefault((place[o], place[d]), []).append(k)
    for rows in groups.values():
        dep[rows] = rng.choice(slots, len(rows), replace=False, p=weight)
    return dep


def _flight_numbers(airline: list[str], rng: np.random.Generator) -> list[int]:
    """Numbers 100-9999, distinct within each airline (a flight number is one route)."""
    out = [0] * len(airline)
    rows: dict[str, list[int]] = {}
    for k, code in enumerate(airline):
        rows.setdefault(code, []).append(k)
    for code in sorted(rows):
        drawn = rng.choice(np.arange(100, 10_000), len(rows[code]), replace=False)
        for k, num in zip(rows[code], drawn.tolist(), strict=True):
            out[k] = int(num)
    return out


def _otp_counts(on_time: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """On-time counts summing to `otp_total` around each row's airline on-time share (NaN for the
    rows without statistics)."""
    n = len(on_time)
    has = rng.random(n) < STATS_SHARE
    total = rng.integers(20, 181, n)
    alpha = np.column_stack([on_time, (1.0 - on_time)[:, None] * OTP_REST / OTP_REST.sum()]) * OTP_CONCENTRATION
    probs = np.array([rng.dirichlet(row) for row in alpha]).reshape(n, 6)
    counts = rng.multinomial(total, probs).astype(float).reshape(n, 6)  # on time, then OTP_REST's order
    out = {"otp_total": total.astype(float), "otp_on_time": counts[:, 0], "otp_late": counts[:, 1],
           "otp_very_late": counts[:, 2], "otp_excessive": counts[:, 3], "otp_cancelled": counts[:, 4],
           "otp_diverted": counts[:, 5]}
    for v in out.values():
        v[~has] = np.nan
    return out
