"""The `crowd` table: BestTime-style average-day crowd profiles of venues in the crowd cities, the
places a visitor to India most goes to (`crowd_cities`).

Each venue's hourly intensity follows its kind (attractions peak in the afternoon, restaurants
at dinner with a smaller lunch peak, as in the paper's Figure 2), shifted by the venue's
popularity and noise, then quantised to the five levels and merged into windows over its open
hours (which may wrap past midnight). Some venues lack quiet hours or a peak window, as real
BestTime data does.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.clock import parse_hhmm
from utp_env.tools.india import TOURIST_CITIES
from utp_env.tools.sandbox.common import Columns, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import CROWD_LEVELS

NO_QUIET_SHARE = 0.1
NO_PEAK_SHARE = 0.1


def crowd_cities(cities: Cities, profile: SandboxProfile) -> list[int]:
    """Indices of the cities with crowd data: the places a visitor to India most goes to
    (`utp_env.tools.india.TOURIST_CITIES`, in that order) present, then the most populous."""
    index = {name: i for i, name in enumerate(cities.name)}
    chosen = [index[c] for c in TOURIST_CITIES if c in index][: profile.crowd_cities]
    for i in np.argsort(-cities.population, kind="stable").tolist():
        if len(chosen) >= profile.crowd_cities:
            break
        if i not in chosen:
            chosen.append(i)
    return sorted(chosen)


def open_hours(open_time: str, close_time: str) -> list[int]:
    """The hours a venue is open, in order, from its HH:MM opening and closing times (may wrap)."""
    first = int(open_time[:2])
    close_min = parse_hhmm(close_time)
    last = ((close_min - 1) // 60) % 24
    hours = [first]
    while hours[-1] != last and len(hours) < 24:
        hours.append((hours[-1] + 1) % 24)
    return hours


def intensity(kind: str, hours: np.ndarray) -> np.ndarray:
    """Typical crowd intensity (0-1) by hour of an attraction or a restaurant."""
    h = hours.astype(float)
    if kind == "attraction":
        return np.exp(-(((h - 14.5) / 3.5) ** 2))
    evening = np.exp(-(((np.where(h < 6, h + 24, h) - 20.5) / 1.8) ** 2))
    return 0.5 * np.exp(-(((h - 13.5) / 1.5) ** 2)) + evening


def windows_of(hours: list[int], levels: list[int]) -> list[tuple[int, int, str]]:
    """Merge consecutive open hours of equal level into [start_hour, end_hour, level] windows."""
    out: list[list] = []
    for h, lv in zip(hours, levels, strict=True):
        if out and out[-1][2] == lv:
            out[-1][1] = h
        else:
            out.append([h, h, lv])
    return [(a, b, CROWD_LEVELS[lv]) for a, b, lv in out]


def crowd_table(cities: Cities, venues: dict[str, Columns], profile: SandboxProfile, seed: int) -> Columns:
    """One crowd row for every attraction and restaurant of the crowd cities."""
    rng = stage_rng(seed, "crowd")
    covered = {cities.name[i] for i in crowd_cities(cities, profile)}
    cols: Columns = {k: [] for k in ("venue_name", "venue_type", "city", "open_hour", "close_hour", "surge_in_hour",
                                     "surge_out_hour", "windows", "quiet_hours", "peak_window")}
    for kind, table in (("attraction", "attractions"), ("restaurant", "restaurants")):
        t = venues[table]
        for name, city, o, c in zip(t["name"], t["city"], t["open_time"], t["close_time"], strict=True):
            if city not in covered:
                continue
            hours = open_hours(o, c)
            value = intensity(kind, np.array(hours)) + rng.uniform(-0.25, 0.25) + rng.normal(0, 0.08, len(hours))
            levels = np.clip(np.round(value * 4), 0, 4).astype(int).tolist()
            top, low = max(levels), min(levels)
            quiet = [h for h, lv in zip(hours, levels, strict=True) if lv == low]
            if low >= 2 or rng.random() < NO_QUIET_SHARE:
                quiet = []
            peak = _peak_window(hours, levels) if top >= 3 and rng.random() >= NO_PEAK_SHARE else None
            cols["venue_name"].append(name)
            cols["venue_type"].append(kind)
            cols["city"].append(city)
            cols["open_hour"].append(hours[0])
            cols["close_hour"].append(hours[-1])
            cols["surge_in_hour"].append(None if peak is None else (peak[0] - 1) % 24)
            cols["surge_out_hour"].append(None if peak is None else peak[1])
            cols["windows"].append(windows_of(hours, levels))
            cols["quiet_hours"].append(sorted(quiet))
            cols["peak_window"].append(peak)
    return cols


def _peak_window(hours: list[int], levels: list[int]) -> tuple[int, int]:
    """The longest run of open hours at the top level (the first one on ties)."""
    top = max(levels)
    best: tuple[int, int] | None = None
    start: int | None = None
    for k, lv in enumerate([*levels, -1]):
        if lv == top and start is None:
            start = k
        elif lv != top and start is not None:
            if best is None or k - 1 - start > best[1] - best[0]:
                best = (start, k - 1)
            start = None
    assert best is not None  # levels is non-empty, so the top level occurs
    return hours[best[0]], hours[best[1]]
