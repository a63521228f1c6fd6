"""Calibration figures of a database against the paper's published statistics (section 3.6).

One pure function, `calibrate(db)`, computes every figure; `utp-env data stats` prints it and the
tests assert it. Definitions (also in docs/DATA.md):

- train horizon mean: mean of each `avg_delay_*` column over rows that have it, in 40.8-46.7;
- delayed-flight mean: mean of `delay_avg_min` over flights with statistics, weighted by their
  late count `otp_late + otp_very_late + otp_excessive`, 40.59 +/- 1.5;
- road mean: mean of `road_routes.historical_delay_min`, 52.2 +/- 2;
- right skew: per mode, mean > median of the per-row delay (train E[D], flight `delay_avg_min`,
  road `historical_delay_min`);
- crowd timing (Figure 2, whose bars count the venues at each crowd level per hour): the number of
  venues at Above Average or High (`BUSY_LEVELS`) per hour, averaged over the day hours 11-16 and
  the evening hours 19-22; attractions busier by day, restaurants by evening. (A mean intensity
  over the venues open at each hour, the measure until generator 11, reads a city's evening as
  busier than its day once markets, beaches and temples peak in the evening as they do: at 21:00
  only they are open, at 13:00 everything is. The paper's figure counts venues, closed ones
  adding nothing.) The mean intensity per hour is printed beside it (`hourly_intensity`);
- connectivity: every city reaches every other over the transport tables (all modes; without
  flights; without cabs, where cabs may drive exactly the `road_routes` pairs).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from pydantic import BaseModel

from utp_env.tools.database import Database
from utp_env.tools.delays import TRAIN_HORIZON_WEIGHTS, train_expected_delay
from utp_env.tools.sandbox.profiles import PROFILES, Calibration
from utp_env.tools.schema import CROWD_LEVELS

DAY_HOURS = tuple(range(11, 17))
EVENING_HOURS = tuple(range(19, 23))
INTENSITY = dict(zip(CROWD_LEVELS, (0.0, 0.25, 0.5, 0.75, 1.0), strict=True))
BUSY_LEVELS = frozenset({"AA", "H"})


class Check(BaseModel):
    """One calibration figure with its target and whether it meets it."""

    name: str
    value: int | float | str
    target: str
    passed: bool


class CalibrationReport(BaseModel):
    checks: list[Check]
    hourly_intensity: dict[str, list[float | None]]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def _within(name: str, value: float, low: float, high: float, target: str) -> Check:
    return Check(name=name, value=round(float(value), 2), target=target, passed=bool(low <= value <= high))


def hourly_intensity(db: Database, venue_type: str) -> list[float | None]:
    """Mean crowd intensity per hour (0-23) over the venues of one type open at that hour."""
    total, count = np.zeros(24), np.zeros(24)
    crowd = db.tables["crowd"].columns
    for kind, windows in zip(crowd["venue_type"], crowd["windows"], strict=True):
        if kind != venue_type:
            continue
        for start, end, level in windows:
            h = start
            while True:
                total[h] += INTENSITY[level]
                count[h] += 1
                if h == end:
                    break
                h = (h + 1) % 24
    return [round(float(t / c), 4) if c else None for t, c in zip(total, count, strict=True)]


def busy_venues_by_hour(db: Database, venue_type: str) -> list[int]:
    """The number of venues of one type at a busy crowd level (`BUSY_LEVELS`) at each hour (0-23):
    the paper's Figure 2 bars of its top two levels."""
    busy = [0] * 24
    crowd = db.tables["crowd"].columns
    for kind, windows in zip(crowd["venue_type"], crowd["windows"], strict=True):
        if kind != venue_type:
            continue
        for start, end, level in windows:
            if level not in BUSY_LEVELS:
                continue
            h = start
            while True:
                busy[h] += 1
                if h == end:
                    break
                h = (h + 1) % 24
    return busy


def _mean_over(values: list[float | None], hours: tuple[int, ...]) -> float:
    picked = [v for v in (values[h] for h in hours) if v is not None]
    return float(np.mean(picked)) if picked else float("nan")


def air_only_towns(db: Database, calendar: dict | None = None) -> list[str]:
    """The towns of `db` whose roads are all closed by snow in its calendar (`calendar`, else
    `manifest.json`'s; `ROAD_CLOSURES`; Leh in winter): reached by air only, so left out of the
    no-flight connectivity."""
    from utp_env.tools.sandbox.road import calendar_months, closed_roads

    if calendar is None:
        calendar = db.manifest.get("calendar") if isinstance(db.manifest, dict) else None
    if not isinstance(calendar, dict) or not {"start", "end"} <= set(calendar):
        return []
    names = list(db.cities)
    _, towns = closed_roads(names, calendar_months(str(calendar["start"]), str(calendar["end"])))
    return sorted(names[t] for t in towns)


def connectivity(db: Database, calendar: dict | None = None) -> dict[str, bool]:
    """Whether every city reaches every other: by all modes, without flights (but for the towns
    snow leaves reachable by air only in the calendar, `air_only_towns`), without cabs."""
    cities = db.cities
    by_air_only = set(air_only_towns(db, calendar))
    edges = {}
    for mode, table in (("flight", "flights"), ("train", "trains"), ("bus", "buses"), ("cab", "road_routes")):
        cols = db.tables[table].columns
        edges[mode] = set(zip(cols["origin_city"], cols["dest_city"], strict=True))
    out = {}
    for variant, modes in (("all_modes", ("flight", "train", "bus", "cab")), ("no_flight", ("train", "bus", "cab")),
                           ("no_cab", ("flight", "train", "bus"))):
        graph: nx.DiGraph[str] = nx.DiGraph()
        graph.add_nodes_from(cities)
        for m in modes:
            graph.add_edges_from(edges[m])
        if variant == "no_flight":
            graph.remove_nodes_from(by_air_only)
        out[variant] = nx.is_strongly_connected(graph)
    return out


def calibrate(db: Database, calibration: Calibration | None = None) -> CalibrationReport:
    """Every calibration figure of `db` with its target and pass/fail."""
    cal = calibration or Calibration()
    checks: list[Check] = []
    profile = PROFILES.get(str(db.manifest.get("profile", "")))
    if profile is not None:
        for table, n in db.counts().items():
            expected = {"cities": profile.n_cities, "distances": profile.n_cities * (profile.n_cities - 1),
                        "accommodations": profile.accommodations}.get(table, getattr(profile, table, None))
            if expected is not None:
                checks.append(Check(name=f"rows: {table}", value=n, target=f"= {expected}", passed=n == expected))
        states = len(set(db.tables["cities"].columns["state"]))
        checks.append(Check(name="states/UTs", value=states, target=f"= {profile.n_states}",
                            passed=states == profile.n_states))
        crowd = int(np.sum(db.tables["cities"].columns["has_crowd_data"]))
        checks.append(Check(name="cities with crowd data", value=crowd, target=f"= {profile.crowd_cities}",
                            passed=crowd == profile.crowd_cities))
    t = db.tables["trains"].columns
    low, high = cal.train_range_min
    for col in TRAIN_HORIZON_WEIGHTS:
        checks.append(_within(f"train mean delay {col} (min)", np.nanmean(t[col]), low, high, f"{low}-{high}"))
    f = db.tables["flights"].columns
    late = np.nan_to_num(f["otp_late"] + f["otp_very_late"] + f["otp_excessive"])
    has = ~np.isnan(f["delay_avg_min"]) & (late > 0)
    flight_mean = np.average(f["delay_avg_min"][has], weights=late[has]) if has.any() else float("nan")
    tol = cal.flight_tolerance_min
    checks.append(_within("delayed-flight mean delay (min)", flight_mean, cal.flight_delayed_mean_min - tol,
                          cal.flight_delayed_mean_min + tol, f"{cal.flight_delayed_mean_min} ± {tol}"))
    road = db.tables["road_routes"].columns["historical_delay_min"]
    tol = cal.road_tolerance_min
    checks.append(_within("road mean historical delay (min)", float(np.mean(road)), cal.road_mean_min - tol,
                          cal.road_mean_min + tol, f"{cal.road_mean_min} ± {tol}"))
    per_row = {"train": train_expected_delay(*(t[c] for c in TRAIN_HORIZON_WEIGHTS)),
               "flight": np.asarray(f["delay_avg_min"], float), "road": np.asarray(road, float)}
    for mode, values in per_row.items():
        v = values[~np.isnan(values)]
        mean, median = float(np.mean(v)), float(np.median(v))
        checks.append(Check(name=f"{mode} delay mean / median (min)", value=f"{mean:.2f} / {median:.2f}",
                            target="mean > median", passed=mean > median))
    hourly = {kind: hourly_intensity(db, kind) for kind in ("attraction", "restaurant")}
    for kind, busier, quieter in (("attraction", DAY_HOURS, EVENING_HOURS), ("restaurant", EVENING_HOURS, DAY_HOURS)):
        busy: list[float | None] = [float(n) for n in busy_venues_by_hour(db, kind)]
        a, b = _mean_over(busy, busier), _mean_over(busy, quieter)
        label = "day > evening" if busier == DAY_HOURS else "evening > day"
        checks.append(Check(name=f"{kind}s at Above Average or High, per hour: day / evening",
                            value=f"{_mean_over(busy, DAY_HOURS):.1f} / {_mean_over(busy, EVENING_HOURS):.1f}",
                            target=label, passed=bool(a > b)))
    air_only = air_only_towns(db)
    for variant, ok in connectivity(db).items():
        but = f"; {', '.join(air_only)} by air only in season" if variant == "no_flight" and air_only else ""
        checks.append(Check(name=f"connected ({variant.replace('_', ' ')}{but})", value=str(ok), target="True",
                            passed=ok))
    return CalibrationReport(checks=checks, hourly_intensity=hourly)
