"""The `events` table: dated events at venues that suit them, at the hours their names imply.

Each event is one of `EVENT_KINDS`: a city run or a cyclothon starting at dawn from its start area
(the big cities' real ones, `utp_env.tools.india.venue_facts.event_venues`: Azad Maidan, Red Road,
Sree Kanteerava Stadium ...), cricket at a stadium at real match hours (a T20 night at 19:30, a Ranji
Trophy day from 09:30), kabaddi and badminton in an indoor stadium, concerts, recitals and comedy
in auditoriums, clubs and open-air grounds in the evening, plays in theatres in the region's
language (Marathi natak, Konkani tiatr, Bengali natok ...), screenings in cinemas. An open-air
event ends by 22:00 (the Noise Pollution Rules' limit on loudspeakers). A city's real venues are
used first; a city without one for the kind gets a generated venue named as its region names halls
and grounds. Events are held in the 60 cities of most population or tourist draw and in every city
with a listed venue, bigger ones hosting more.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import NamedTuple

import numpy as np

from utp_env.tools.clock import format_hhmm, parse_hhmm
from utp_env.tools.india.venue_facts import event_venues
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import Columns, power, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import EVENT_SEGMENTS


class EventKind(NamedTuple):
    """A kind of event: its name template, segment, the venue kinds that stage it, start times and
    lengths (minutes) to draw from, and ticket prices (INR)."""

    name: str
    segment: str
    venues: tuple[str, ...]
    starts: tuple[str, ...]
    minutes: tuple[int, ...]
    prices: tuple[int, ...]
    big_only: bool = False  # only in a city of a million or more


_RUN = ("run_start", "stadium")
_HALL = ("auditorium", "theatre")
EVENT_KINDS: tuple[EventKind, ...] = (
    EventKind("{city} Marathon", "Sports", _RUN, ("05:00", "05:15", "05:30"), (300, 330), (1200, 1500, 2000), True),
    EventKind("{city} Half Marathon", "Sports", _RUN, ("05:30", "06:00"), (210, 240), (800, 1000, 1200)),
    EventKind("{city} 10K Run", "Sports", _RUN, ("06:00", "06:30"), (120,), (500, 800)),
    EventKind("{city} Cyclothon", "Sports", _RUN, ("06:00", "06:30"), (180,), (300, 500)),
    EventKind("T20 Cricket Night", "Sports", ("stadium",), ("19:00", "19:30"), (210,), (500, 800, 1500, 2500)),
    EventKind("Ranji Trophy Match Day", "Sports", ("stadium",), ("09:30",), (420,), (0, 100, 200)),
    EventKind("One-Day Cricket Match", "Sports", ("stadium",), ("13:30", "14:00"), (480,), (800, 1500, 2500), True),
    EventKind("Football League Match", "Sports", ("stadium",), ("19:30",), (120,), (200, 400, 800)),
    EventKind("Inter-State Kabaddi Cup", "Sports", ("indoor_stadium",), ("19:30", "20:00"), (150,), (200, 400)),
    EventKind("Pro Badminton Exhibition", "Sports", ("indoor_stadium",), ("17:00", "18:00"), (180,), (300, 500)),
    EventKind("Bollywood Retro Night", "Concerts", ("auditorium", "indoor_stadium", "open_air"), ("18:30", "19:00"),
              (150, 180), (499, 799, 1499)),
    EventKind("Sufi Nights", "Concerts", ("auditorium", "open_air"), ("19:00", "19:30"), (150,), (499, 999)),
    EventKind("Indie Rock Showcase", "Concerts", ("music_club", "auditorium"), ("20:00", "20:30"), (150,), (499, 799),
              True),
    EventKind("{word} Music Festival", "Concerts", ("open_air",), ("16:00", "17:00"), (300,), (999, 1999, 2999)),
    EventKind("Ghazal Evening", "Concerts", ("auditorium",), ("19:00", "19:30"), (150,), (299, 499, 999)),
    EventKind("EDM Night", "Concerts", ("music_club",), ("21:00",), (180, 240), (999, 1499), True),
    EventKind("Kathak Recital", "Arts & Theatre", ("auditorium",), ("18:30", "19:00"), (120,), (0, 200, 500)),
    EventKind("Bharatanatyam Evening", "Arts & Theatre", ("auditorium",), ("18:00", "18:30"), (120,), (0, 200, 500)),
    EventKind("{play}: {word}", "Arts & Theatre", _HALL, ("16:00", "19:30"), (120, 150), (200, 400, 800)),
    EventKind("{city} Art Fair", "Arts & Theatre", ("gallery", "open_air"), ("11:00",), (420,), (0, 100)),
    EventKind("Puppet Theatre Show", "Arts & Theatre", _HALL, ("17:00", "18:00"), (90,), (100, 200)),
    EventKind("Folk Dance Evening", "Arts & Theatre", ("auditorium", "open_air"), ("18:30",), (120,), (0, 200)),
    EventKind("Carnatic Classical Concert", "Music", ("auditorium",), ("16:00", "18:00", "18:30"), (150,),
              (0, 300, 500)),
    EventKind("Hindustani Vocal Recital", "Music", ("auditorium",), ("18:30", "19:00"), (150,), (0, 300, 500)),
    EventKind("Qawwali Night", "Music", ("auditorium", "open_air"), ("19:30",), (150,), (299, 499)),
    EventKind("Jazz Evening", "Music", ("music_club", "auditorium"), ("20:00",), (150,), (499, 999), True),
    EventKind("Folk Music of {city}", "Music", ("auditorium", "open_air"), ("18:30",), (120,), (0, 200)),
    EventKind("Sitar and Tabla Jugalbandi", "Music", ("auditorium",), ("19:00",), (150,), (300, 500, 800)),
    EventKind("{city} Film Festival Screening", "Film", ("cinema", "auditorium"), ("10:00", "13:00", "16:00", "19:00"),
              (150,), (0, 150, 300)),
    EventKind("Classic Cinema Night", "Film", ("cinema",), ("19:00", "20:00"), (150,), (150, 250)),
    EventKind("Short Film Showcase", "Film", ("auditorium", "cinema"), ("17:00", "18:00"), (120,), (0, 100, 200)),
    EventKind("Documentary Evening", "Film", ("auditorium",), ("18:30",), (120,), (0, 100)),
    EventKind("Stand-up Comedy Night", "Comedy", ("comedy_club", "auditorium"), ("20:00", "21:00"), (90,),
              (299, 499, 799)),
    EventKind("{word} Comedy Hour", "Comedy", ("comedy_club", "auditorium"), ("19:30", "20:00"), (75,), (299, 499)),
    EventKind("Improv Comedy Jam", "Comedy", ("comedy_club", "theatre"), ("20:00",), (90,), (299, 399), True),
    EventKind("{language} Stand-up Special", "Comedy", ("auditorium",), ("19:00", "20:00"), (120,), (499, 799)),
)
OPEN_AIR_END = "22:00"  # amplified music outdoors ends by 22:00 (Noise Pollution Rules, 2000)
EVENT_HOSTS = 60
# The language of a region's plays and stand-up (`names.STATE_REGION`); a big city also stages
# English ones.
REGION_LANGUAGE: dict[str, str] = {
    "hindi": "Hindi", "rajasthani": "Hindi", "punjabi": "Punjabi", "marathi": "Marathi", "gujarati": "Gujarati",
    "konkani": "Konkani", "kannada": "Kannada", "tamil": "Tamil", "telugu": "Telugu", "malayalam": "Malayalam",
    "bengali": "Bengali", "odia": "Odia", "assamese": "Assamese", "northeast": "English", "himalayan": "Hindi",
    "pahari": "Hindi", "kashmiri": "Urdu",
}
# What a play is called in each language (a Marathi natak, a Konkani tiatr, a Bengali natok).
PLAY_NAME: dict[str, str] = {"Marathi": "Marathi Natak", "Gujarati": "Gujarati Natak", "Bengali": "Bengali Natok",
                             "Konkani": "Konkani Tiatr", "Odia": "Odia Natak"}
# Generated venues by kind (where a city has no listed venue of that kind); "@stage" is the
# region's own name for a hall (`names.Region.stage`).
VENUE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "stadium": ("{person} Stadium",), "run_start": ("{person} Stadium",),
    "indoor_stadium": ("{person} Indoor Stadium",), "auditorium": ("@stage", "{person} Auditorium"),
    "theatre": ("@stage", "{person} Natya Mandir"), "comedy_club": ("The {word} Comedy Club",),
    "music_club": ("{word} Live",),
    "cinema": ("{word} Cinemas", "{word} Talkies"), "open_air": ("{person} Maidan", "{word} Open Air Theatre"),
    "gallery": ("{word} Art Gallery", "{person} Kala Kendra"),
}
BIG_CITY = 1_000_000
CLUB_KINDS = frozenset({"comedy_club", "music_club"})  # a smaller city's comedy and gigs are in its hall


def calendar(profile: SandboxProfile) -> list[date]:
    """Every date of the sandbox calendar."""
    start, end = date.fromisoformat(profile.calendar_start), date.fromisoformat(profile.calendar_end)
    if end < start:
        raise ValueError(f"profile {profile.name!r}: calendar_end is before calendar_start")
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def event_hosts(cities: Cities) -> np.ndarray:
    """Indices of the cities that hold events: the `EVENT_HOSTS` of most population or tourist draw,
    then every other city with a listed venue."""
    size = np.maximum(cities.population, cities.draw)
    top = np.argsort(-size, kind="stable")[: min(EVENT_HOSTS, cities.n)].tolist()
    listed = event_venues()
    return np.array(top + [i for i, c in enumerate(cities.name) if c in listed and i not in top], dtype=np.int64)


def kind_allowed(kind: EventKind, population: float) -> bool:
    return not kind.big_only or population >= BIG_CITY


def event_end(kind: EventKind, start: str, minutes: int, venue_kind: str) -> str:
    """End time of an event of `kind` from `start` lasting `minutes`: an open-air one by 22:00."""
    end = parse_hhmm(start) + minutes
    if venue_kind == "open_air":
        end = min(end, parse_hhmm(OPEN_AIR_END))
    return format_hhmm(end)


def events_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    """`profile.events` events over the hosts (`event_hosts`), bigger cities hosting more."""
    rng = stage_rng(seed, "events")
    days = calendar(profile)
    hosts = event_hosts(cities)
    w = power(np.maximum(cities.population, cities.draw)[hosts], 1.2)
    city_idx = hosts[rng.choice(len(hosts), profile.events, p=w / w.sum())]
    cols: Columns = {k: [] for k in ("name", "city", "date", "start_time", "end_time", "segment", "venue",
                                     "price_inr")}
    taken: dict[int, set[str]] = {}
    venue_names: dict[tuple[int, str], list[str]] = {}
    for c in city_idx.tolist():
        city, state, pop = cities.name[c], cities.state[c], float(cities.population[c])
        segment = EVENT_SEGMENTS[int(rng.integers(len(EVENT_SEGMENTS)))]
        options = [k for k in EVENT_KINDS if k.segment == segment and kind_allowed(k, pop)]
        kind = options[int(rng.integers(len(options)))]
        day = days[int(rng.integers(len(days)))].isoformat()
        language = REGION_LANGUAGE[nm.region_key(state)]
        if pop >= BIG_CITY and rng.random() < 0.3:
            language = "English"
        play = PLAY_NAME.get(language, f"{language} Play")
        base = nm.fill(kind.name.replace("{language}", language).replace("{play}", play), city, state, rng)
        name = base
        key = f"{name}|{day}".casefold()
        seen = taken.setdefault(c, set())
        tries = 0
        while key in seen:  # the key is (city, name, date): a second one that day gets a suffix
            tries += 1
            name = f"{base} ({tries + 1})"
            key = f"{name}|{day}".casefold()
        seen.add(key)
        venue_kind, venue = _venue(kind, c, cities, venue_names, rng)
        start = str(kind.starts[int(rng.integers(len(kind.starts)))])
        minutes = int(kind.minutes[int(rng.integers(len(kind.minutes)))])
        cols["name"].append(name)
        cols["city"].append(city)
        cols["date"].append(day)
        cols["start_time"].append(start)
        cols["end_time"].append(event_end(kind, start, minutes, venue_kind))
        cols["segment"].append(segment)
        cols["venue"].append(venue)
        cols["price_inr"].append(float(kind.prices[int(rng.integers(len(kind.prices)))]))
    return cols


def _venue(kind: EventKind, c: int, cities: Cities, memo: dict[tuple[int, str], list[str]],
           rng: np.random.Generator) -> tuple[str, str]:
    """(venue kind, venue name) for an event of `kind` in city `c`: one of the city's listed venues
    of a kind that stages it, else its generated venue of the first such kind (a hall rather than a
    club below a million people; one per city and kind, so a town's events share its stadium and
    its hall)."""
    city, state = cities.name[c], cities.state[c]
    listed = [v for v in event_venues().get(city, ()) if v.kind in kind.venues]
    pick = int(rng.integers(1 << 30))
    if listed:
        v = listed[pick % len(listed)]
        return v.kind, v.name
    small = float(cities.population[c]) < BIG_CITY
    venue_kind = next((k for k in kind.venues if not (small and k in CLUB_KINDS)), kind.venues[0])
    names = memo.get((c, venue_kind))
    if names is None:
        template = VENUE_TEMPLATES[venue_kind][pick % len(VENUE_TEMPLATES[venue_kind])]
        if template.startswith("@"):
            template = getattr(nm.region_of(state), template[1:])
        names = memo[(c, venue_kind)] = [nm.fill(template, city, state, rng)]
    return venue_kind, names[0]


VENUE_KIND_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("indoor_stadium", ("indoor stadium", "arena", "dome", "sports complex")),
    ("stadium", ("stadium", "gardens")),
    ("cinema", ("cinema", "cinemas", "talkies", "inox", "multiplex", "nandan")),
    ("comedy_club", ("comedy club", "laugh club")),
    ("music_club", ("live",)),
    ("gallery", ("gallery", "kala kendra", "aspinwall")),
    ("open_air", ("maidan", "open air", "ground", "grounds", "lawns", "garden", "stage", "promenade", "road",
                  "bridge", "plaza", "drive", "riverfront")),
    ("theatre", ("theatre", "natya", "rangmandir", "natyagruha", "natyagruh", "mancha", "rangalaya", "mandali",
                 "academy", "kala academy", "antarang", "centre for performing arts")),
    ("auditorium", ("auditorium", "hall", "sabhagar", "rangmanch", "kalamandira", "kalaiarangam", "kalakshetram",
                    "kalakshetra", "mandap", "bhavan", "bhawan", "sadan", "mandir", "town hall", "centre", "sabha",
                    "arangam", "vedika", "bharathi", "mahal")),
)


def venue_kind(city: str, venue: str) -> str:
    """The kind of an event venue (`venue_facts.EVENT_VENUE_KINDS`): a listed venue's kind, else the
    first kind whose words its name holds, else "auditorium"."""
    from utp_env.tools.sandbox.venues import kind_from_words

    listed = {v.name: v.kind for v in event_venues().get(city, ())}
    if venue in listed:
        return listed[venue]
    return kind_from_words(venue, VENUE_KIND_WORDS) or "auditorium"
