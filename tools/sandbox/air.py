"""The `flights` table: scheduled domestic flights between airport cities with on-time statistics.

Pairs are served by a gravity model on the size of both airports (their approximate yearly
passengers, `AIRPORT_MPAX`, from the Airports Authority of India's traffic statistics; from the
city population for airports not listed) over distance, with hops under `SHORT_HOP_KM` strongly
damped (people take the train or the road), so that the busiest routes are India's busiest
domestic routes (Delhi-Mumbai, Delhi-Bengaluru, Mumbai-Bengaluru ...). Every airport city gets at
least a link to its nearest hub at least `SHORT_HOP_KM` away; each pair is flown both ways by the
same number of flights. A row is a flight number with its operating days; the paper's 29,346
rows over 67 cities are more than today's ~3,000 daily departures, so the busiest routes carry
several hundred flight numbers (one per schedule the table records). Flight
numbers are unique per airline and city pair. On-time statistics are multinomial counts that sum
to `otp_total`; the mean delay of late flights is calibrated to the paper's 40.59 min.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.clock import format_hhmm
from utp_env.tools.sandbox.common import Columns, apportion, lognormal_with_mean, rescale_to_mean, run_days, stage_rng
from utp_env.tools.sandbox.geography import Airport, Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import AIRLINES

CRUISE_KMH = 750.0
TAXI_MIN = 30
MIN_FLIGHT_KM = 150.0
SHORT_HOP_KM = 300.0
# approximate yearly passengers (millions, AAI FY2023-24, rounded) of the busiest airports
AIRPORT_MPAX = {
    "DEL": 74.0, "BOM": 53.0, "BLR": 37.0, "HYD": 25.0, "MAA": 22.0, "CCU": 20.0, "AMD": 12.0, "COK": 10.5,
    "PNQ": 9.5, "GOI": 8.0, "GOX": 4.5, "GAU": 6.2, "LKO": 5.6, "JAI": 5.5, "SXR": 4.6, "TRV": 4.4, "BBI": 4.5,
    "CCJ": 3.8, "PAT": 3.5, "IDR": 3.4, "VNS": 3.0, "NAG": 2.9, "CJB": 2.9, "IXB": 3.0, "VTZ": 2.8, "RPR": 2.3,
    "IXC": 2.4, "IXR": 2.0, "IXE": 2.1, "TRZ": 1.9, "ATQ": 1.6, "BHO": 1.6, "IXM": 1.6, "DED": 1.6, "IXJ": 1.5,
    "UDR": 1.4, "BDQ": 1.4, "STV": 1.3, "IXA": 1.3, "VGA": 1.2, "TIR": 1.0, "IXL": 1.3, "GWL": 0.5, "JDH": 0.8,
    "IXU": 0.6, "RAJ": 0.6, "HBX": 0.5, "IXZ": 1.4,
}
AIRLINE_SHARE = {"6E": 0.55, "AI": 0.16, "IX": 0.09, "SG": 0.07, "QP": 0.07, "UK": 0.06}
# on-time, late, very late, excessive, cancelled, diverted (Dirichlet concentration)
OTP_ALPHA = np.array([72.0, 11.0, 6.0, 5.0, 1.6, 0.4])
STATS_SHARE = 0.9


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
    pop = cities.population.astype(float)
    size = np.zeros(cities.n)
    for i, airport in airports.items():  # unlisted airports: ~0.1 million passengers per 100,000 people
        size[i] = AIRPORT_MPAX.get(airport.iata, min(1.0, pop[i] / 1e6))
    weight = (size[a] * size[b]) ** 0.75 / dist**0.2 / (1.0 + (SHORT_HOP_KM / dist) ** 6)
    hubs = idx[np.argsort(-size[idx], kind="stable")[:6]]
    floor = np.zeros(len(a), dtype=np.int64)
    for c in idx.tolist():  # every airport city: two daily links to its nearest hub
        touching = np.flatnonzero((a == c) | (b == c))
        to_hub = touching[np.isin(np.where(a[touching] == c, b[touching], a[touching]), hubs)]
        if np.any(dist[to_hub] >= SHORT_HOP_KM):
            to_hub = to_hub[dist[to_hub] >= SHORT_HOP_KM]
        if to_hub.size:
            floor[to_hub[np.argmin(dist[to_hub])]] = 2
    per_direction = profile.flights // 2
    counts = floor + apportion(per_direction - int(floor.sum()), weight, minimum=0)
    o = np.concatenate([np.repeat(a, counts), np.repeat(b, counts)])
    d = np.concatenate([np.repeat(b, counts), np.repeat(a, counts)])
    km = gc[o, d]
    n = len(o)
    codes = list(AIRLINE_SHARE)
    airline = rng.choice(len(codes), n, p=np.array(list(AIRLINE_SHARE.values())))
    numbers = _flight_numbers(o, d, airline, rng)
    dep = rng.integers(5 * 12, 23 * 12 + 6, n) * 5
    dur = (np.round((km / CRUISE_KMH * 60 + TAXI_MIN) / 5) * 5).astype(np.int64)
    arr = dep + dur
    price = np.round((1800.0 + 4.2 * km) * rng.lognormal(0.0, 0.25, n), 0)
    cols: Columns = {
        "flight_number": [f"{codes[k]}-{num}" for k, num in zip(airline.tolist(), numbers.tolist(), strict=True)],
        "airline": [AIRLINES[codes[k]] for k in airline.tolist()],
        "origin_city": [cities.name[i] for i in o.tolist()],
        "dest_city": [cities.name[i] for i in d.tolist()],
        "origin_airport": [airports[i].iata for i in o.tolist()],
        "dest_airport": [airports[i].iata for i in d.tolist()],
        "dep_time": [format_hhmm(m) for m in dep.tolist()],
        "arr_time": [format_hhmm(m) for m in arr.tolist()],
        "arr_day_offset": (arr // 1440).tolist(),
        "duration_min": dur.tolist(),
        "run_days": run_days(rng, n, 0.7),
        "price_inr": price,
    }
    cols.update(_otp_columns(n, profile, rng))
    return cols


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


def _otp_columns(n: int, profile: SandboxProfile, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """On-time counts (summing to otp_total) and the late-delay mean, s.d. and maximum."""
    has = rng.random(n) < STATS_SHARE
    total = rng.integers(20, 181, n)
    probs = rng.dirichlet(OTP_ALPHA, n)
    counts = rng.multinomial(total, probs).astype(float)  # columns in OTP_ALPHA order
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
