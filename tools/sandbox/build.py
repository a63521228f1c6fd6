"""Build the whole sandbox: run every generation stage and write one CSV per table plus the manifest.

`build_sandbox` is the only entry point; each table comes from its own module and its own
seeded generator, and the written directory is reopened with `Database.open`, which validates
it and yields the content hash recorded in `manifest.json`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from utp_env.tools.database import MANIFEST, Database
from utp_env.tools.lookup.index import lookup_index
from utp_env.tools.sandbox.air import flights_table
from utp_env.tools.sandbox.attractions import attractions_table
from utp_env.tools.sandbox.calibration import connectivity
from utp_env.tools.sandbox.crowd import crowd_cities, crowd_table
from utp_env.tools.sandbox.events import events_table
from utp_env.tools.sandbox.geography import Cities, match_airports, select_cities
from utp_env.tools.sandbox.profiles import SandboxProfile, load_profile
from utp_env.tools.sandbox.rail import trains_table
from utp_env.tools.sandbox.restaurants import restaurants_table
from utp_env.tools.sandbox.road import buses_table, distances_table, road_pairs, road_routes_table
from utp_env.tools.sandbox.stays import accommodations_table
from utp_env.tools.sandbox.transit import transit_table
from utp_env.tools.sandbox.version import GENERATOR_VERSION
from utp_env.tools.sandbox.writer import write_table

Progress = Callable[[str], None]


def cities_table(cities: Cities, crowd: list[int]) -> dict[str, Any]:
    has = np.zeros(cities.n, dtype=bool)
    has[crowd] = True
    return {"city": cities.name, "state": cities.state, "latitude": np.round(cities.lat, 5),
            "longitude": np.round(cities.lon, 5), "population": cities.population, "has_crowd_data": has}


def build_sandbox(profile: str | Path = "full", seed: int = 0, out: Path | str | None = None,
                  progress: Progress | None = None) -> dict:
    """Generate the sandbox of `profile` with `seed` into directory `out`; returns the manifest.

    Without `out` it builds into the embedded-sandbox cache directory (`open_sandbox` then reuses
    it); use `ensure_sandbox` for the atomic, build-once variant.
    `progress(stage)` is called before each stage (the CLI and the cache draw a progress bar).
    """
    prof: SandboxProfile = load_profile(profile)
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if out is None:
        from utp_env.tools.sandbox.location import sandbox_path

        out = sandbox_path(str(profile), int(seed))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    step = progress or (lambda stage: None)
    counts: dict[str, int] = {}

    step("cities")
    cities = select_cities(prof)
    gc = cities.distances_km()
    crowd_idx = crowd_cities(cities, prof)
    counts["cities"] = write_table(out, "cities", cities_table(cities, crowd_idx))
    step("distances")
    counts["distances"] = write_table(out, "distances", distances_table(cities, gc, prof))
    step("road_routes")
    routes, ro, rd = road_routes_table(cities, gc, road_pairs(cities, gc, prof), prof, seed)
    counts["road_routes"] = write_table(out, "road_routes", routes)
    step("buses")
    buses = buses_table(cities, ro, rd, routes["distance_km"], routes["free_flow_min"], prof, seed)
    counts["buses"] = write_table(out, "buses", buses)
    step("trains")
    counts["trains"] = write_table(out, "trains", trains_table(cities, prof, seed))
    step("flights")
    flights = flights_table(cities, match_airports(cities, prof.airport_radius_km), prof, seed)
    counts["flights"] = write_table(out, "flights", flights)
    step("venues")
    venues = {"attractions": attractions_table(cities, prof, seed),
              "restaurants": restaurants_table(cities, prof, seed),
              "accommodations": accommodations_table(cities, prof, seed)}
    for name, cols in venues.items():
        counts[name] = write_table(out, name, cols)
    step("events")
    counts["events"] = write_table(out, "events", events_table(cities, prof, seed))
    step("crowd")
    counts["crowd"] = write_table(out, "crowd", crowd_table(cities, venues, prof, seed))
    step("transit_stops")
    counts["transit_stops"] = write_table(out, "transit_stops", transit_table(cities, venues, prof, seed))
    step("validate")
    db = Database.open(out, check_manifest=False)  # an older manifest here is about to be replaced
    db.build_indices()  # kept in .indices.npz beside the tables: workers load them, not build them
    lookup_index(db)
    reach = connectivity(db, {"start": prof.calendar_start, "end": prof.calendar_end})
    if not all(reach.values()):  # guaranteed by construction; a failure is a generator bug
        raise RuntimeError(f"sandbox {prof.name!r} seed {seed} is not connected: {reach}")
    manifest = {
        "profile": prof.name,
        "seed": int(seed),
        "generator_version": GENERATOR_VERSION,
        "calendar": {"start": prof.calendar_start, "end": prof.calendar_end},
        "row_counts": {name: counts[name] for name in db.tables},
        "states": len(set(cities.state)),
        "airport_cities": len(set(flights["origin_city"])),
        "crowd_cities": [cities.name[i] for i in crowd_idx],
        "content_hash": db.content_hash,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
