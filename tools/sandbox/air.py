"""The `flights` table: scheduled domestic flights between airport cities with on-time statistics.

Pairs are served by a gravity model on the size of both airports (their approximate yearly
passengers, `AIRPORT_MPAX`, from the Airports Authority of India's traffic statistics; from the
city population for airports not listed) over distance, with hops under `SHORT_HOP_KM` strongly
damped (people take the train or the road), so that the busiest routes are India's busiest
domestic routes (Delhi-Mumbai, Delhi-Bengaluru, Mumbai-Bengaluru ...). Every airport city gets at
least a link to its nearest hub at least `SHORT_HOP_KM` away; each pair is flown both ways by the
same number of flights. A row is a flight number with its operating days. The paper's 29,346
rows are about seven times India's ~3,000 daily domestic departures, so a row is one weekly
departure: a route's rows are spread evenly over the weekdays, one day each (Delhi -> Mumbai:
about 60 departures every day; a route of 3 rows is flown three days a week), and every airport
city's link to its nearest hub has 7 rows a way (daily). Departures fall in the
morning and evening banks (`HOUR_WEIGHT`), no two of a route on one day at the same minute;
block times are route-specific (distance at `CRUISE_KMH` plus taxi, a per-route and per-airline
offset and a few minutes of variation per flight). Airlines and their shares are those flying in
2025-26 (Vistara merged into Air India in November 2024). Flight numbers are unique per airline
and city pair. On-time statistics are multinomial counts that sum to `otp_total`, around each
airline's own on-time share (`AIRLINE_ON_TIME`); the mean delay of late flights is calibrated to
the paper's 40.59 min.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.clock import format_hhmm
from utp_env.tools.sandbox.common import Columns, apportion, lognormal_with_mean, rescale_to_mean, stage_rng
from utp_env.tools.sandbox.geography import AIRPORT_MPAX, Airport, Cities, airport_traffic
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import AIRLINES

CRUISE_KMH = 750.0
TAXI_MIN = 35
MIN_FLIGHT_KM = 150.0
SHORT_HOP_KM = 300.0
# domestic market shares 2025 (DGCA monthly traffic data, rounded); Vistara is part of Air India
AIRLINE_SHARE = {"6E": 0.64, "AI": 0.18, "IX": 0.09, "QP": 0.05, "SG": 0.04}
# minutes an airline's block times add to the route's (Air India and SpiceJet schedule more padding)
AIRLINE_BLOCK_MIN = {"6E": 0, "AI": 5, "IX": 0, "QP": 0, "SG": 5}
# on-time share of each airline (DGCA on-time performance at the six metro airports, 2024-25, rounded)
AIRLINE_ON_TIME = {"6E": 0.80, "AI": 0.68, "IX": 0.72, "QP": 0.78, "SG": 0.58}
# late, very late, excessive, cancelled, diverted: relative shares of the flights not on time
OTP_REST = np.array([11.0, 6.0, 5.0, 1.6, 0.4])
OTP_CONCENTRATION = 96.0  # Dirichlet concentration of a flight's outcome shares
STATS_SHARE = 0.9
# departures per hour of day (05:00-23:59): the morning and evening banks of Indian airports
HOUR_WEIGHT = {5: 3, 6: 8, 7: 9, 8: 9, 9: 7, 10: 6, 11: 5, 12: 4, 13: 4, 14: 5, 15: 5, 16: 6, 17: 7, 18: 8,
               19: 8, 20: 7, 21: 5, 22: 3, 23: 1}


def flights_table(cities: Cities, gc: np.ndarray, airports: dict[int, Airport], profile: SandboxProfile,
                  seed: int) -> Columns:
    """Exactly `profile.flights` rows (an even number: both directions of every served pair)."""
    if profile.flights % 2:
        raise ValueError(f"profile {profile.name!r}: flights must be even (pairs are flown both ways)")
    rng = stage_rng(seed, "flights")
    idx = np.array(sorted(airports), dtype=np.int64)
    iu, ju = np.triu_indices(len(idx), 1)
    a, b = idx[iu], idx[ju]
    dist = gc[a, b]
    far = dist >= MIN_FLIGHT_KM
    a, b, dist = a[far], b[far], dist[far]
    size = np.zeros(cities.n)
    for i, airport in airports.items():  # all of a city's airports (Goa: Dabolim and Mopa)
        size[i] = sum(airport_traffic(code, cities.draw[i]) for code in (airport.iata, *airport.others))
    weight = (size[a] * size[b]) ** 0.75 / dist**0.2 / (1.0 + (SHORT_HOP_KM / dist) ** 6)
    hubs = idx[np.argsort(-size[idx], kind="stable")[:6]]
    floor = np.zeros(len(a), dtype=np.int64)
    for c in idx.tolist():  # every airport city: a daily link to its nearest hub
        touching = np.flatnonzero((a == c) | (b == c))
        to_hub = touching[np.isin(np.where(a[touching] == c, b[touching], a[touching]), hubs)]
        if np.any(dist[to_hub] >= SHORT_HOP_KM):
            to_hub = to_hub[dist[to_hub] >= SHORT_HOP_KM]
        if to_hub.size:
            floor[to_hub[np.argmin(dist[to_hub])]] = 7
    per_direction = profile.flights // 2
    counts = floor + apportion(per_direction - int(floor.sum()), weight, minimum=0)
    o = np.concatenate([np.repeat(a, counts), np.repeat(b, counts)])
    d = np.concatenate([np.repeat(b, counts), np.repeat(a, counts)])
    route = np.concatenate([np.repeat(np.arange(len(a)), counts)] * 2)  # unordered pair of each row
    km = gc[o, d]
    n = len(o)
    codes = list(AIRLINE_SHARE)
    airline = rng.choice(len(codes), n, p=np.array(list(AIRLINE_SHARE.values())))
    numbers = _flight_numbers(o, d, airline, rng)
    days, dep = _week_schedule(o, d, rng)
    route_offset = rng.integers(-1, 3, len(a)) * 5  # per route: -5 .. +10 min
    block = km / CRUISE_KMH * 60 + TAXI_MIN + route_offset[route] + np.array(
        [AIRLINE_BLOCK_MIN[codes[k]] for k in airline.tolist()]) + rng.integers(-1, 2, n) * 5
    dur = (np.round(block / 5) * 5).astype(np.int64)
    arr = dep + dur
    price = np.round((1800.0 + 4.2 * km) * rng.lognormal(0.0, 0.25, n), 0)
    origin_airport = [_airport_of(airports[i], rng) for i in o.tolist()]
    dest_airport = [_airport_of(airports[i], rng) for i in d.tolist()]
    cols: Columns = {
        "flight_number": [f"{codes[k]}-{num}" for k, num in zip(airline.tolist(), numbers.tolist(), strict=True)],
        "airline": [AIRLINES[codes[k]] for k in airline.tolist()],
        "origin_city": [cities.name[i] for i in o.tolist()],
        "dest_city": [cities.name[i] for i in d.tolist()],
        "origin_airport": origin_airport,
        "dest_airport": dest_airport,
        "dep_time": [format_hhmm(m) for m in dep.tolist()],
        "arr_time": [format_hhmm(m) for m in arr.tolist()],
        "arr_day_offset": (arr // 1440).tolist(),
        "duration_min": dur.tolist(),
        "run_days": days,
        "price_inr": price,
    }
    cols.update(_otp_columns(airline, codes, profile, rng))
    return cols


def _airport_of(airport: Airport, rng: np.random.Generator) -> str:
    """The airport of one flight of a city: its main one, or one of its others by their traffic."""
    if not airport.others:
        return airport.iata
    codes = (airport.iata, *airport.others)
    w = np.array([AIRPORT_MPAX.get(c, 0.5) for c in codes])
    return codes[int(rng.choice(len(codes), p=w / w.sum()))]


def _week_schedule(o: np.ndarray, d: np.ndarray, rng: np.random.Generator) -> tuple[list[str], np.ndarray]:
    """Run days and departure minutes of every row: one weekday per row, spread evenly over the
    week from a random day (a direction with c rows has c // 7 or c // 7 + 1 departures every
    day; c < 7 rows fly c different days). The departures of one direction on one day take
    distinct 5-minute slots drawn by `HOUR_WEIGHT`."""
    slots = np.array([h * 60 + m for h in HOUR_WEIGHT for m in range(0, 60, 5)])
    slot_w = np.repeat(np.array(list(HOUR_WEIGHT.values()), float), 12)
    slot_w /= slot_w.sum()
    days = [""] * len(o)
    dep = np.zeros(len(o), dtype=np.int64)
    groups: dict[tuple[int, int], list[int]] = {}
    for k, key in enumerate(zip(o.tolist(), d.tolist(), strict=True)):
        groups.setdefault(key, []).append(k)
    for rows in groups.values():
        c = len(rows)
        start = int(rng.integers(0, 7))
        by_day: dict[int, list[int]] = {}
        for x, k in enumerate(rows):
            day = (start + (x if c >= 7 else x * 7 // c)) % 7
            days[k] = "".join("1" if w == day else "0" for w in range(7))
            by_day.setdefault(day, []).append(k)
        for same_day in by_day.values():
            dep[same_day] = rng.choice(slots, len(same_day), replace=False, p=slot_w)
    return days, dep


def _flight_numbers(o: np.ndarray, d: np.ndarray, airline: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Numbers 100-9999, distinct within each (airline, origin, dest)."""
    numbers = rng.integers(100, 10000, len(o))
    key = (o * 100_000 + d) * 10 + airline
    order = np.lexsort((numbers, key))
    k, num = key[order], numbers[order]
    for _ in range(100):
        dup = np.flatnonzero((k[1:] == k[:-1]) & (num[1:] <= num[:-1])) + 1
        if dup.size == 0:
            break
        num[dup] = num[dup - 1] + 1  # shift collisions upwards, keeps each group distinct
    num = np.where(num > 9999, num - 9900, num)
    out = np.empty_like(numbers)
    out[order] = num
    return out


def _otp_columns(airline: np.ndarray, codes: list[str], profile: SandboxProfile,
                 rng: np.random.Generator) -> dict[str, np.ndarray]:
    """On-time counts (summing to otp_total) around each airline's on-time share, and the
    late-delay mean, s.d. and maximum."""
    n = len(airline)
    has = rng.random(n) < STATS_SHARE
    total = rng.integers(20, 181, n)
    on_time = np.array([AIRLINE_ON_TIME[codes[k]] for k in airline.tolist()])
    alpha = np.column_stack([on_time, (1.0 - on_time)[:, None] * OTP_REST / OTP_REST.sum()]) * OTP_CONCENTRATION
    probs = np.array([rng.dirichlet(row) for row in alpha])
    counts = rng.multinomial(total, probs).astype(float)  # columns: on time, then OTP_REST's order
    late = counts[:, 1] + counts[:, 2] + counts[:, 3]
    mu = lognormal_with_mean(rng, profile.calibration.flight_delayed_mean_min,
                             profile.calibration.lognormal_sigma, n)
    mu = np.round(rescale_to_mean(np.where(has, mu, np.nan), profile.calibration.flight_delayed_mean_min,
                                  weights=late), 1)
    sigma = np.round(mu * rng.uniform(0.35, 0.8, n), 1)
    dmax = np.round(mu + sigma * rng.uniform(2.0, 4.0, n), 0)
    out = {
        "otp_total": total.astype(float), "otp_on_time": counts[:, 0], "otp_late": counts[:, 1],
        "otp_very_late": counts[:, 2], "otp_excessive": counts[:, 3], "otp_cancelled": counts[:, 4],
        "otp_diverted": counts[:, 5], "delay_avg_min": mu, "delay_std_min": sigma, "delay_max_min": dmax,
    }
    for v in out.values():
        v[~has] = np.nan
    return out
