"""Traveller figures of the road tables (`distances`, `road_routes`, `buses`); each names its target's source.

- driving time of a known road (the `distances` table's `duration_min`, the time a cab's free-flow
  leg takes), in hours, within the typical time road guides and the state tourism departments give
  (`ROAD_TIMES`): Siliguri -> Darjeeling 2.5-3.5 (65 km of hill road), Jammu -> Srinagar 6-8 (NH44
  over the Banihal pass), Chandigarh -> Shimla 3-4.5, Chandigarh -> Manali 7-10, Coimbatore -> Ooty
  2.5-3.5 (the Nilgiri ghat), Mumbai -> Pune 2.5-3.5 (the Expressway), Delhi -> Agra 3-4.5 (the
  Yamuna Expressway), Bengaluru -> Mysuru 2.5-3.5, each where both cities are in the database;
- road routes (so cabs and buses) into Leh when the calendar is in winter = 0: the Srinagar-Leh
  road (Zoji La) and the Manali-Leh road close for the winter (Border Roads Organisation);
- buses: median trip 80 km or more and none under 20 km (intercity coaches, not city buses);
- buses faster than a cab on the same road (`duration_min` under the road's `free_flow_min`) = 0,
  and the fastest bus of Siliguri -> Darjeeling and Jammu -> Srinagar (`BUS_ROADS`) longer than
  the road's driving time (speed limits by vehicle class under the Motor Vehicles Act: a bus's
  are below a car's);
- cab routes of more than 14 h of driving: at most 1 % (outstation cabs drive a day, not two).
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.database import Database
from utp_env.tools.sandbox.calibration import air_only_towns
from utp_env.tools.sandbox.traveller.figure import Figure

ROAD_SOURCE = "road guides and state tourism departments' typical driving times"
ROAD_TIMES: tuple[tuple[str, str, float, float], ...] = (
    ("Siliguri", "Darjeeling", 2.5, 3.5), ("Jammu", "Srinagar", 6.0, 8.0), ("Chandigarh", "Shimla", 3.0, 4.5),
    ("Chandigarh", "Manali", 7.0, 10.0), ("Coimbatore", "Ooty", 2.5, 3.5), ("Mumbai", "Pune", 2.5, 3.5),
    ("Delhi", "Agra", 3.0, 4.5), ("Bengaluru", "Mysuru", 2.5, 3.5),
)
LONG_CAB_HOURS = 14.0
BUS_ROADS: tuple[tuple[str, str], ...] = (("Siliguri", "Darjeeling"), ("Jammu", "Srinagar"))
BUS_SOURCE = "speed limits by vehicle class (Motor Vehicles Act): a bus is slower than a car on the same road"


def figures(db: Database) -> list[Figure]:
    """The road figures of `db`."""
    out: list[Figure] = []
    cities = set(db.cities)
    d = db.tables["distances"].columns
    hours = {(o, t): float(m) / 60.0 for o, t, m in zip(d["origin_city"], d["dest_city"], d["duration_min"],
                                                         strict=True)}
    for a, b, low, high in ROAD_TIMES:
        if a in cities and b in cities:
            h = hours[(a, b)]
            out.append(Figure(name=f"drive {a} -> {b} (h)", value=round(h, 1), target=f"{low:g}-{high:g}",
                              passed=low <= h <= high, source=ROAD_SOURCE))
    r = db.tables["road_routes"].columns
    calendar = db.manifest.get("calendar") if isinstance(db.manifest, dict) else None
    if "Leh" in cities and isinstance(calendar, dict) and "Leh" in air_only_towns(db):
        into = sum(1 for o, t in zip(r["origin_city"], r["dest_city"], strict=True) if "Leh" in (o, t))
        out.append(Figure(name=f"road routes into Leh ({calendar['start']}..{calendar['end']})", value=into,
                          target="= 0 (closed in winter)", passed=into == 0,
                          source="Border Roads Organisation winter closures of Zoji La and the Manali-Leh road"))
    road_km = dict(zip(zip(r["origin_city"], r["dest_city"], strict=True), np.asarray(r["distance_km"], float),
                       strict=True))
    buses = db.tables["buses"].columns
    km = np.array([road_km.get(p, np.nan) for p in zip(buses["origin_city"], buses["dest_city"], strict=True)])
    km = km[~np.isnan(km)]
    if km.size:
        median, short = float(np.median(km)), int(np.sum(km < 20))
        out.append(Figure(name="bus trip median km / under 20 km", value=f"{median:.0f} / {short}",
                          target=">= 80 / = 0", passed=median >= 80 and short == 0,
                          source="intercity coach networks (state transport and private operators)"))
    out.extend(_bus_times(db, cities, hours))
    free = np.asarray(r["free_flow_min"], float) / 60.0
    if free.size:
        share = float(np.mean(free > LONG_CAB_HOURS))
        out.append(Figure(name=f"cab routes over {LONG_CAB_HOURS:g} h of driving", value=f"{100 * share:.1f}%",
                          target="<= 1%", passed=share <= 0.01,
                          source="outstation cab practice: a day's drive"))
    return out


def _bus_times(db: Database, cities: set[str], drive_hours: dict[tuple[str, str], float]) -> list[Figure]:
    """Buses faster than a cab on their road, and the fastest bus of each of `BUS_ROADS` against the
    road's driving time."""
    r, buses = db.tables["road_routes"].columns, db.tables["buses"].columns
    free = dict(zip(zip(r["origin_city"], r["dest_city"], strict=True), np.asarray(r["free_flow_min"], float),
                    strict=True))
    fastest: dict[tuple[str, str], float] = {}
    faster = counted = 0
    for pair, minutes in zip(zip(buses["origin_city"], buses["dest_city"], strict=True), buses["duration_min"],
                             strict=True):
        if pair in free:
            counted += 1
            faster += int(float(minutes) < free[pair])
        fastest[pair] = min(float(minutes), fastest.get(pair, float("inf")))
    out: list[Figure] = []
    if counted:
        out.append(Figure(name="buses faster than a cab on the same road", value=f"{faster}/{counted}",
                          target="= 0", passed=faster == 0, source=BUS_SOURCE))
    for a, b in BUS_ROADS:
        if a in cities and b in cities and (a, b) in fastest:
            bus, drive = fastest[(a, b)] / 60.0, drive_hours[(a, b)]
            out.append(Figure(name=f"fastest bus {a} -> {b} / drive (h)", value=f"{bus:.1f} / {drive:.1f}",
                              target="bus > drive", passed=bus > drive, source=BUS_SOURCE))
    return out
