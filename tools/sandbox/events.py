"""The `events` table: dated events in the larger cities over the sandbox calendar."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np

from utp_env.tools.clock import format_hhmm
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import Columns, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import EVENT_SEGMENTS

EVENT_TEMPLATES: dict[str, tuple[str, ...]] = {
    "Concerts": ("Bollywood Retro Night", "Sufi Nights", "Indie Rock Showcase", "{word} Music Festival",
                 "Ghazal Evening", "EDM Night {city}"),
    "Sports": ("{city} Marathon", "Inter-State Kabaddi Cup", "{city} Premier League Final", "Pro Badminton Exhibition",
               "{city} Cyclothon", "T20 Cricket Night"),
    "Arts & Theatre": ("Kathak Recital", "Bharatanatyam Evening", "Hindi Play: {word}", "{city} Art Fair",
                       "Puppet Theatre Show", "Marathi Natak: {word}"),
    "Music": ("Carnatic Classical Concert", "Hindustani Vocal Recital", "Qawwali Night", "Jazz by the Lake",
              "Folk Music of {city}", "Sitar and Tabla Jugalbandi"),
    "Film": ("{city} Film Festival Screening", "Classic Cinema Night", "Short Film Showcase", "Documentary Evening"),
    "Comedy": ("Stand-up Comedy Night", "{word} Comedy Hour", "Improv Comedy Jam", "Hindi Stand-up Special"),
}
VENUE_TEMPLATES = ("{city} Stadium", "{person} Auditorium", "{word} Convention Centre", "{city} Town Hall",
                   "{word} Open Air Theatre", "{area} Community Hall")


def calendar(profile: SandboxProfile) -> list[date]:
    """Every date of the sandbox calendar."""
    start, end = date.fromisoformat(profile.calendar_start), date.fromisoformat(profile.calendar_end)
    if end < start:
        raise ValueError(f"profile {profile.name!r}: calendar_end is before calendar_start")
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def events_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    """`profile.events` events in the 60 most populous cities, bigger cities hosting more."""
    rng = stage_rng(seed, "events")
    days = calendar(profile)
    hosts = np.argsort(-cities.population, kind="stable")[: min(60, cities.n)]
    w = cities.population[hosts].astype(float) ** 1.2
    city_idx = hosts[rng.choice(len(hosts), profile.events, p=w / w.sum())]
    cols: Columns = {k: [] for k in ("name", "city", "date", "start_time", "end_time", "segment", "venue",
                                     "price_inr")}
    taken: dict[int, set[str]] = {}
    for c in city_idx.tolist():
        city = cities.name[c]
        segment = EVENT_SEGMENTS[int(rng.integers(len(EVENT_SEGMENTS)))]
        day = days[int(rng.integers(len(days)))].isoformat()
        templates = EVENT_TEMPLATES[segment]
        base = nm.fill(templates[int(rng.integers(len(templates)))], city, rng)
        # key is (city, name, date): make the name unique per city and date
        name = base
        key = f"{name}|{day}".casefold()
        seen = taken.setdefault(c, set())
        tries = 0
        while key in seen:
            tries += 1
            suffix = nm.AREAS[int(rng.integers(len(nm.AREAS)))] if tries < 10 else str(tries)
            name = f"{base} {suffix}"
            key = f"{name}|{day}".casefold()
        seen.add(key)
        start = (9 * 60 if segment == "Sports" else 17 * 60) + int(rng.integers(0, 8)) * 30
        length = int(rng.choice([90, 120, 150, 180, 240]))
        cols["name"].append(name)
        cols["city"].append(city)
        cols["date"].append(day)
        cols["start_time"].append(format_hhmm(start))
        cols["end_time"].append(format_hhmm(start + length))
        cols["segment"].append(segment)
        cols["venue"].append(nm.fill(VENUE_TEMPLATES[int(rng.integers(len(VENUE_TEMPLATES)))], city, rng))
        cols["price_inr"].append(float(rng.choice([0, 199, 299, 499, 799, 999, 1499, 2499, 3999])))
    return cols
