"""The `crowd` table: BestTime-style average-day crowd profiles of venues in the crowd cities, the
places a visitor to India most goes to (`crowd_cities`).

Each venue's hourly intensity follows its kind (`venues.attraction_kind`, `venues.restaurant_kind`;
`ATTRACTION_PEAKS`, `RESTAURANT_PEAKS`): beaches, promenades and markets fill in the evening,
temples at the morning and evening aarti, ghats at dawn and at the evening aarti, museums and zoos
around midday, forts, palaces and monuments from mid-morning to mid-afternoon, viewpoints at sunset,
safaris early and late, restaurants at lunch and more at dinner, breakfast places in the morning
too, bars late. Like BestTime's, a profile is relative to the venue's own busiest hour: the Taj
Mahal's quiet hour is quiet for the Taj Mahal, so a famous sight gets its kind's curve, not a
higher one. The profile is shifted by the venue's popularity and noise, quantised
to the five levels and merged into windows over its open hours (which may wrap past midnight).
Some venues lack quiet hours or a peak window, as real BestTime data does. The table is one
average day over the sandbox calendar: a weekday-weekend or seasonal difference would need a
day-of-week column, which neither the schema nor CATS has.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.clock import parse_hhmm
from utp_env.tools.india import TOURIST_CITIES
from utp_env.tools.india.venue_facts import BREAKFAST_KINDS
from utp_env.tools.sandbox.common import Columns, exp, stage_rng
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


Peaks = tuple[tuple[float, float, float], ...]  # (centre hour, width in hours, height)
# Crowd peaks of each kind of attraction, and the level between them (BestTime's typical day
# curves and what travellers know: the morning and evening aarti, the sunset at the beach).
ATTRACTION_PEAKS: dict[str, tuple[float, Peaks]] = {
    "temple": (0.15, ((7.5, 1.5, 1.0), (19.0, 1.5, 1.0))),
    "gurudwara": (0.3, ((6.0, 1.5, 0.8), (19.0, 2.0, 0.9), (13.0, 2.0, 0.5))),
    "ghat": (0.1, ((6.0, 1.2, 0.6), (18.75, 1.0, 1.1))),
    "mosque": (0.15, ((13.5, 1.2, 0.8), (18.5, 1.5, 0.9))),
    "church": (0.15, ((10.5, 2.0, 0.6), (17.5, 1.5, 0.6))),
    "monastery": (0.15, ((7.0, 1.5, 0.7), (11.0, 2.0, 0.7))),
    "fort": (0.05, ((13.0, 2.0, 1.0),)), "palace": (0.05, ((13.0, 2.0, 1.0),)),
    "monument": (0.05, ((13.0, 2.0, 1.0),)), "cave": (0.05, ((13.0, 2.0, 1.0),)),
    "museum": (0.05, ((13.0, 2.0, 1.0),)), "zoo": (0.1, ((11.5, 2.0, 1.0),)),
    "garden": (0.1, ((7.0, 1.2, 0.6), (17.0, 1.5, 0.9))), "park": (0.1, ((7.0, 1.2, 0.6), (17.0, 1.5, 0.9))),
    "lake": (0.1, ((10.0, 2.0, 0.4), (17.0, 1.8, 0.9))), "beach": (0.1, ((6.5, 1.0, 0.4), (17.75, 1.5, 1.1))),
    "promenade": (0.15, ((19.0, 2.0, 1.0),)), "viewpoint": (0.1, ((6.0, 1.0, 0.6), (17.0, 1.2, 1.0))),
    "waterfall": (0.1, ((12.5, 2.0, 0.9),)), "wildlife": (0.05, ((7.5, 1.2, 0.9), (15.5, 1.2, 0.9))),
    "market": (0.1, ((12.0, 2.0, 0.3), (19.0, 2.0, 1.0))), "food_street": (0.1, ((20.5, 1.5, 1.0),)),
    "show": (0.05, ((19.5, 1.2, 1.0),)), "amusement_park": (0.1, ((14.0, 2.0, 1.0),)),
    "water_park": (0.1, ((14.0, 2.0, 1.0),)), "boat": (0.1, ((11.0, 2.0, 0.8), (16.5, 1.5, 0.9))),
    "adventure": (0.1, ((10.0, 2.0, 1.0),)), "snow": (0.1, ((12.0, 2.0, 1.0),)),
    "dunes": (0.1, ((17.5, 1.2, 1.1),)), "spa": (0.2, ((15.0, 3.0, 0.7),)),
    "nightlife": (0.1, ((22.5, 1.5, 1.0),)), "casino": (0.2, ((23.0, 3.0, 1.0),)),
    "workshop": (0.2, ((11.0, 2.0, 0.6), (16.0, 2.0, 0.6))), "games": (0.15, ((18.0, 2.5, 1.0),)),
}
# Restaurants: lunch and a larger dinner; breakfast places a morning peak too; bars, lounges and
# night markets late; chaat corners at dusk.
RESTAURANT_PEAKS: dict[str, tuple[float, Peaks]] = {
    "meals": (0.05, ((13.5, 1.5, 0.5), (20.5, 1.8, 1.0))),
    "breakfast": (0.05, ((8.5, 1.2, 0.7), (13.5, 1.5, 0.5), (20.0, 1.8, 0.9))),
    "late": (0.05, ((14.0, 1.5, 0.3), (22.0, 1.5, 1.0))),
    "chaat": (0.05, ((19.0, 1.5, 1.0),)),
}
LATE_RESTAURANTS = frozenset({"pub", "brewpub", "lounge", "food_market"})


def restaurant_profile(kind: str) -> str:
    """Which of `RESTAURANT_PEAKS` a restaurant of `kind` follows."""
    if kind in LATE_RESTAURANTS:
        return "late"
    if kind == "chaat":
        return "chaat"
    return "breakfast" if kind in BREAKFAST_KINDS else "meals"


def intensity(peaks: tuple[float, Peaks], hours: np.ndarray) -> np.ndarray:
    """Typical crowd intensity (0-1 and a little over) by hour of a venue with these peaks; hours
    before 06:00 count as the night after the evening (a bar open to 01:00 is busiest at 23:00)."""
    base, spikes = peaks
    h = np.where(hours.astype(float) < 6, hours.astype(float) + 24, hours.astype(float))
    out = np.full(len(h), base)
    for centre, width, height in spikes:
        out = np.maximum(out, height * exp(-(((h - centre) / width) ** 2)))
    return out


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
    from utp_env.tools.sandbox.venues import attraction_kind, restaurant_kind

    rng = stage_rng(seed, "crowd")
    covered = {cities.name[i] for i in crowd_cities(cities, profile)}
    cols: Columns = {k: [] for k in ("venue_name", "venue_type", "city", "open_hour", "close_hour", "surge_in_hour",
                                     "surge_out_hour", "windows", "quiet_hours", "peak_window")}
    for kind, table in (("attraction", "attractions"), ("restaurant", "restaurants")):
        t = venues[table]
        tags = t["categories"] if kind == "attraction" else t["cuisines"]
        for name, city, o, c, tag in zip(t["name"], t["city"], t["open_time"], t["close_time"], tags, strict=True):
            if city not in covered:
                continue
            hours = open_hours(o, c)
            if kind == "attraction":
                peaks = ATTRACTION_PEAKS[attraction_kind(city, name, tag)]
            else:
                peaks = RESTAURANT_PEAKS[restaurant_profile(restaurant_kind(city, name, tag))]
            value = intensity(peaks, np.array(hours)) + rng.uniform(-0.25, 0.25) + rng.normal(0, 0.08, len(hours))
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
