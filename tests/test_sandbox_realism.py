"""The sandbox's network looks like India's: real cities without neighbourhoods, multi-stop trains
named after their ends, intercity buses, flights where people fly (tools/sandbox/realism.py)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.database import Database
from utp_env.tools.sandbox import build_sandbox
from utp_env.tools.sandbox.geography import SEPARATE_MUNICIPALITIES, select_cities
from utp_env.tools.sandbox.profiles import PROFILES
from utp_env.tools.sandbox.realism import realism


def _check(db: Database, prefix: str):
    return next(c for c in realism(db) if c.name.startswith(prefix))


def test_full_city_set_has_no_metro_neighbourhoods() -> None:
    cities = select_cities(PROFILES["full"])
    names = set(cities.name)
    assert cities.n == 504 and len(set(cities.state)) == 33
    for place in ("Dharavi", "Karol Bagh", "Rohini", "Borivli", "Kukatpally", "Ambattur", "New Delhi"):
        assert place not in names
    for city in ("Thane", "Howrah", "Noida", "Ghaziabad", "Gurugram", "Pimpri-Chinchwad", "Navi Mumbai"):
        assert city in names or city not in SEPARATE_MUNICIPALITIES


def test_mini_realism_figures(mini_db: Database) -> None:
    """The figures that do not name cities outside the mini profile's states hold there too."""
    for prefix in ("crowd-city pairs", "train names matching", "city pairs per train number", "buses under 20 km",
                   "bus distance", "cities within 15 km"):
        check = _check(mini_db, prefix)
        assert check.passed, check


def test_mini_trains_have_one_timetable_per_number(mini_db: Database) -> None:
    """Every row of a train agrees on the departure and arrival time at each stop, and rows run forward."""
    t = mini_db.tables["trains"].columns
    dep: dict[tuple[str, str], set[str]] = defaultdict(set)
    arr: dict[tuple[str, str], set[str]] = defaultdict(set)
    for num, o, d, dt, at in zip(t["train_number"], t["origin_city"], t["dest_city"], t["dep_time"], t["arr_time"],
                                 strict=True):
        dep[(num, o)].add(dt)
        arr[(num, d)].add(at)
    assert all(len(v) == 1 for v in dep.values())
    assert all(len(v) == 1 for v in arr.values())
    assert np.all(np.asarray(t["duration_min"]) > 0)


def test_mini_buses_are_intercity(mini_db: Database) -> None:
    b = mini_db.tables["buses"].columns
    r = mini_db.tables["road_routes"].columns
    km = dict(zip(zip(r["origin_city"], r["dest_city"], strict=True), r["distance_km"], strict=True))
    dist = np.array([km[p] for p in zip(b["origin_city"], b["dest_city"], strict=True)])
    assert dist.min() >= 50
    long = dist > 350
    assert all("Sleeper" in t for t, is_long in zip(b["bus_type"], long.tolist(), strict=True) if is_long)


@pytest.mark.slow
def test_full_sandbox_realism_targets(tmp_path: Path) -> None:
    """Every realism target of issue 17 on the full sandbox (the table printed by `utp-env data stats`)."""
    build_sandbox("full", 0, tmp_path / "full")
    checks = realism(Database.open(tmp_path / "full"))
    for c in checks:
        print(f"  {c.name}: {c.value} (target {c.target}) {'pass' if c.passed else 'FAIL'}")
    assert len(checks) == 12
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
