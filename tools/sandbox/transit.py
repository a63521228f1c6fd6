"""The `transit_stops` table: the nearest public-transit stop of each venue.

In a city with a metro or a suburban railway (`utp_env.tools.india.venue_facts.transit_stations`:
the real stations of its lines, in the cities of `METRO_CITIES` and Mumbai's suburban lines) half
the generated venues are nearest a station of it, named as its operator names it ("Rajiv Chowk
Metro Station", "Dadar Railway Station"); a real sight is nearest its listed station (the Red Fort
Lal Quila, the Victoria Memorial Maidan, `Sight.nearest_stop`), else a bus stop, never a station
picked at random; every other stop is a bus stop named after a locality of the
city (`names.city_localities`: its own neighbourhoods, a planned city's sectors, else its region's
common locality names). No city without a metro has a metro station, and no "Sector 12" lies
outside a planned city. The stop is 20-9,000 m from the venue (log-normal around 450 m).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from utp_env.tools.india.venue_facts import STOP_SUFFIX, sight_index, transit_stations
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import EARTH_RADIUS_KM, Columns, cos, sin, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile

RAIL_SHARE = 0.5  # generated venues nearest a metro or suburban station, in a city that has them


@cache
def stop_names(city: str, state: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the rail stops, the bus stops) a venue of `city` may be nearest to."""
    rail = tuple(f"{s.station} {STOP_SUFFIX[s.system]}" for s in transit_stations().get(city, ()))
    bus = tuple(f"{place} Bus Stop" for place in nm.city_localities(city, state))
    return rail, bus


def transit_table(cities: Cities, venues: dict[str, Columns], profile: SandboxProfile, seed: int) -> Columns:
    """One row per venue (attractions, restaurants, then accommodations) up to `profile.transit_stops`."""
    rng = stage_rng(seed, "transit_stops")
    rows = [(t, name, city, lat, lon)
            for t, table in (("attraction", "attractions"), ("restaurant", "restaurants"),
                             ("accommodation", "accommodations"))
            for name, city, lat, lon in zip(venues[table]["name"], venues[table]["city"],
                                            np.asarray(venues[table]["latitude"]).tolist(),
                                            np.asarray(venues[table]["longitude"]).tolist(), strict=True)]
    if len(rows) < profile.transit_stops:
        raise ValueError(f"profile {profile.name!r}: transit_stops={profile.transit_stops} exceeds the "
                         f"{len(rows)} venues")
    rows = rows[: profile.transit_stops]
    n = len(rows)
    dist = np.clip(rng.lognormal(math.log(450.0), 0.8, n), 20.0, 9000.0)
    bearing = rng.uniform(0, 2 * np.pi, n)
    lat = np.array([r[3] for r in rows])
    lon = np.array([r[4] for r in rows])
    dlat = np.degrees(dist / 1000.0 * cos(bearing) / EARTH_RADIUS_KM)
    dlon = np.degrees(dist / 1000.0 * sin(bearing) / (EARTH_RADIUS_KM * cos(np.radians(lat))))
    state_of = dict(zip(cities.name, cities.state, strict=True))
    kinds = rng.random(n)
    picks = rng.integers(0, 1 << 30, n)
    stops = []
    sights = sight_index()
    for i, r in enumerate(rows):
        rail, bus = stop_names(r[2], state_of[r[2]])
        sight = sights.get((r[2], r[1].casefold())) if r[0] == "attraction" else None
        if sight is not None and sight.nearest_stop:
            stops.append(sight.nearest_stop)
            continue
        pool = rail if rail and kinds[i] < RAIL_SHARE and sight is None else bus
        stops.append(pool[int(picks[i]) % len(pool)])
    return {"poi_name": [r[1] for r in rows], "poi_type": [r[0] for r in rows], "city": [r[2] for r in rows],
            "stop_name": stops, "stop_latitude": np.round(lat + dlat, 5), "stop_longitude": np.round(lon + dlon, 5),
            "distance_m": np.round(dist, 0)}
