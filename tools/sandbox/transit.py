"""The `transit_stops` table: the nearest public-transit stop of each venue."""

from __future__ import annotations

import numpy as np

from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import EARTH_RADIUS_KM, Columns, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile

METRO_POPULATION = 2_000_000  # cities this large get metro stations


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
    dist = np.clip(rng.lognormal(np.log(450.0), 0.8, n), 20.0, 9000.0)
    bearing = rng.uniform(0, 2 * np.pi, n)
    lat = np.array([r[3] for r in rows])
    lon = np.array([r[4] for r in rows])
    dlat = np.degrees(dist / 1000.0 * np.cos(bearing) / EARTH_RADIUS_KM)
    dlon = np.degrees(dist / 1000.0 * np.sin(bearing) / (EARTH_RADIUS_KM * np.cos(np.radians(lat))))
    pop = dict(zip(cities.name, cities.population.tolist(), strict=True))
    kinds = rng.random(n)
    areas = rng.integers(0, len(nm.AREAS), n)
    stops = []
    for i, r in enumerate(rows):
        area = nm.AREAS[int(areas[i])]
        if pop[r[2]] >= METRO_POPULATION and kinds[i] < 0.5:
            stops.append(f"{area} Metro Station")
        elif kinds[i] < 0.85:
            stops.append(f"{area} Bus Stop")
        else:
            stops.append(f"{r[2]} Railway Station")
    return {"poi_name": [r[1] for r in rows], "poi_type": [r[0] for r in rows], "city": [r[2] for r in rows],
            "stop_name": stops, "stop_latitude": np.round(lat + dlat, 5), "stop_longitude": np.round(lon + dlon, 5),
            "distance_m": np.round(dist, 0)}
