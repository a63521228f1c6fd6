"""Facts about India's venues that the sandbox's venue stages read: real sights, restaurants and
hotels, the localities of the big cities, the stations of the metro and suburban railways, the
venues of concerts, plays and matches, and the small lists that say where a kind of place may be
(cities with a metro, planned cities numbered in sectors, resort areas).

The tables are vendored CSV files (`sights/sights.csv`, `venues/*.csv`), read through
`utp_env.tools.india.sources.read_source`, which refuses a damaged file in one line naming the file
and row; each file's provenance (kind of public source, date, licence) is in its folder's
`SOURCE.json`. They are facts compiled from public listings (the Archaeological Survey of India's
and state tourism departments' monument listings, the venues' own sites, 2024-25), not text copied
from them. A field left empty is one the listing did not settle: the generator derives it by the
rule docs/DATA.md states (fees and hours by kind of place).

The kind of a place (`ATTRACTION_KINDS`, `RESTAURANT_KINDS`) is the one vocabulary the generator
uses for hours, visit lengths, fees and crowd profiles; `tools/sandbox/venues.py` derives it for a
generated venue from its name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from utp_env.tools.india.sources import (
    SOURCES_DIR,
    SourceError,
    hhmm,
    integer,
    listed,
    number,
    optional_hhmm,
    optional_number,
    optional_text,
    optional_words,
    read_source,
    text,
)
from utp_env.tools.schema import ATTRACTION_CATEGORIES, CUISINES, HOUSE_TYPES, PRICE_TIERS, days_mask

# The root the fact files are read from (a test points it at a damaged copy).
FACTS_ROOT: Path = SOURCES_DIR

# Kinds of attraction: what a traveller would call the place. Each has its opening hours, typical
# visit and crowd profile (`tools/sandbox/attractions.py`, `tools/sandbox/crowd.py`).
ATTRACTION_KINDS: tuple[str, ...] = (
    "temple", "gurudwara", "mosque", "church", "monastery", "ghat", "fort", "palace", "monument", "cave",
    "museum", "garden", "park", "lake", "beach", "promenade", "viewpoint", "waterfall", "zoo", "wildlife",
    "market", "food_street", "show", "amusement_park", "water_park", "boat", "adventure", "snow", "dunes",
    "spa", "nightlife", "casino", "workshop", "games",
)
# Kinds of restaurant. Those of `BREAKFAST_KINDS` open in the morning (tiffin rooms, Udupi and
# darshini places, cafes and coffee houses, Irani cafes, bakeries, sweet shops, Gujarati nasta
# houses, misal houses, dhabas, paratha places); the others open for lunch or in the evening only.
RESTAURANT_KINDS: tuple[str, ...] = (
    "tiffin", "cafe", "irani_cafe", "bakery", "sweet_shop", "nasta", "misal", "dhaba", "paratha",
    "mess", "bhojanalaya", "biryani", "kebab", "chaat", "family", "chinese", "momo", "pizzeria", "grill",
    "seafood", "fine_dining", "bistro", "continental", "burger", "shawarma", "cantina", "pub", "brewpub",
    "lounge", "food_market",
)
BREAKFAST_KINDS: frozenset[str] = frozenset({"tiffin", "cafe", "irani_cafe", "bakery", "sweet_shop", "nasta",
                                             "misal", "dhaba", "paratha"})
# Kinds that open for lunch or in the evening only: none of them serves breakfast.
LUNCH_EVENING_KINDS: frozenset[str] = frozenset({
    "pizzeria", "chinese", "grill", "kebab", "biryani", "pub", "brewpub", "lounge", "food_market", "fine_dining",
    "cantina", "shawarma", "bistro", "continental", "chaat"})
# Venues of events, by what is staged there (`tools/sandbox/events.py`).
EVENT_VENUE_KINDS: tuple[str, ...] = ("stadium", "indoor_stadium", "auditorium", "theatre", "comedy_club",
                                      "music_club", "cinema", "open_air", "run_start", "gallery")
TRANSIT_SYSTEMS: tuple[str, ...] = ("metro", "suburban")
STOP_SUFFIX: dict[str, str] = {"metro": "Metro Station", "suburban": "Railway Station"}  # a station's stop name

# Cities with a metro line in commercial service by the end of 2025 (the operators' and the Ministry
# of Housing and Urban Affairs' announcements): Delhi and the NCR cities its lines reach (Noida,
# Gurugram, Ghaziabad, Faridabad), Kolkata and Howrah, Chennai, Bengaluru, Mumbai and Navi Mumbai,
# Hyderabad and Secunderabad, Kochi, Jaipur, Lucknow, Ahmedabad and Gandhinagar, Pune and
# Pimpri-Chinchwad, Nagpur, Kanpur, Agra, Indore and Bhopal. No other city has a metro station.
# Those without station names in `venues/transit_lines.csv` (Indore, Bhopal) get none either.
METRO_CITIES: frozenset[str] = frozenset({
    "Delhi", "Noida", "Gurugram", "Ghaziabad", "Faridabad", "Kolkata", "Howrah", "Chennai", "Bengaluru", "Mumbai",
    "Navi Mumbai", "Hyderabad", "Secunderabad", "Kochi", "Jaipur", "Lucknow", "Ahmedabad", "Gandhinagar", "Pune",
    "Pimpri-Chinchwad", "Nagpur", "Kanpur", "Agra", "Indore", "Bhopal",
})
# Planned cities whose localities are numbered sectors (Chandigarh and its neighbours, the NCR's new
# towns, Navi Mumbai, Gandhinagar, Bhilai): the only places a "Sector 12" may be.
SECTOR_CITIES: frozenset[str] = frozenset({
    "Chandigarh", "Mohali", "Panchkula", "Noida", "Greater Noida", "Gurugram", "Faridabad", "Navi Mumbai",
    "Gandhinagar", "Bhilai",
})
# Cities with Irani cafes (the Zoroastrian Iranian immigrants' cafes of the 19th and 20th
# centuries: Mumbai, Pune and Hyderabad, whose Irani chai places still open at dawn).
IRANI_CAFE_CITIES: frozenset[str] = frozenset({"Mumbai", "Thane", "Pune", "Hyderabad", "Secunderabad"})
# Resort areas beyond the coast, the hill stations and the wildlife gateways of
# `utp_env.tools.india` (COASTAL_CITIES, HILL_CITIES, WILDLIFE_CITIES): beach towns, hill stations
# and desert-camp towns of TOURIST_CITIES those sets do not list. A "Resort/Beach" stay is only in
# a resort area (`resort_area`).
MORE_RESORT_AREAS: frozenset[str] = frozenset({
    "Varkala", "Kanyakumari", "Gokarna", "Mahabalipuram", "Rameswaram", "Dwarka", "Munnar", "Kodaikanal",
    "Madikeri", "Lonavala", "Mahabaleshwar", "Dalhousie", "Dharamshala", "Pahalgam", "Jaisalmer",
})


def resort_area(city: str) -> bool:
    """Whether `city` is on a beach or in a resort area: a coastal city, a hill station, a
    wildlife gateway (`utp_env.tools.india`) or one of `MORE_RESORT_AREAS`."""
    from utp_env.tools.india import COASTAL_CITIES, HILL_CITIES, WILDLIFE_CITIES

    return city in COASTAL_CITIES or city in HILL_CITIES or city in WILDLIFE_CITIES or city in MORE_RESORT_AREAS


class Sight(NamedTuple):
    """A real sight of a city, most visited first in its city's list.

    `visit_hr` is a typical visit; a day trip's (`day_trip_hr` set: the one-way journey from the
    city in hours, by road, ferry or on foot) includes the journey there and back. `fee_inr` is the
    Indian-citizen adult ticket (None: not settled, derived by kind); `hours` the opening hours
    (None: by kind; open == close: round the clock); `closed` the weekly closing days;
    `midday_closed` the hours a temple or palace shuts at midday (kept as a fact; the tables have
    no column for it, docs/DATA.md says why); `nearest_stop` the metro or suburban station next to
    it, where one is (a station of `transit_stations`; None: a bus stop)."""

    city: str
    name: str
    categories: tuple[str, ...]
    visit_hr: float
    fee_inr: float | None
    hours: tuple[str, str] | None
    closed: tuple[str, ...]
    midday_closed: tuple[str, str] | None
    day_trip_hr: float | None
    kind: str
    nearest_stop: str | None = None


class RealRestaurant(NamedTuple):
    """A real, well-known restaurant: its cuisines (Table 8 groups), kind, price tier, typical cost
    of a meal per person (INR) and opening hours (None: by kind)."""

    city: str
    name: str
    cuisines: tuple[str, ...]
    kind: str
    price_tier: str
    avg_cost_inr: float
    hours: tuple[str, str] | None


class RealHotel(NamedTuple):
    """A real hotel with its stars, house type and typical price of the entry room per night (INR)."""

    city: str
    name: str
    stars: int
    house_type: str
    price_inr: float


class TransitStation(NamedTuple):
    """A real station of a city's metro or suburban railway (`system`) on `line`."""

    city: str
    system: str
    line: str
    station: str


class EventVenue(NamedTuple):
    """A real venue of concerts, plays, matches, screenings or runs and what it stages (`kind`)."""

    city: str
    name: str
    kind: str


def _one_of(vocabulary: tuple[str, ...] | frozenset[str] | dict[str, Any], what: str) -> Callable[[str], str]:
    def parse(cell: str) -> str:
        value = text(cell)
        if value not in vocabulary:
            raise ValueError(f"not a known {what}")
        return value
    return parse


def _all_of(vocabulary: tuple[str, ...] | dict[str, Any], what: str) -> Callable[[str], tuple[str, ...]]:
    def parse(cell: str) -> tuple[str, ...]:
        items = listed(cell)
        if not items:
            raise ValueError(f"no {what}")
        unknown = [i for i in items if i not in vocabulary]
        if unknown:
            raise ValueError(f"{unknown[0]!r} is not a known {what}")
        return items
    return parse


def _weekdays(cell: str) -> tuple[str, ...]:
    days = optional_words(cell)
    days_mask(days)  # a name that is not a weekday raises ValueError
    return days


def _interval(cell: str) -> tuple[str, str] | None:
    if not cell.strip():
        return None
    start, sep, end = cell.partition("-")
    if not sep or hhmm(start) >= hhmm(end):
        raise ValueError("not HH:MM-HH:MM with the start first")
    return start, end


def _positive(cell: str) -> float:
    value = number(cell)
    if value <= 0:
        raise ValueError("not positive")
    return value


def _row_error(relative: str, row: int, message: str) -> SourceError:
    return SourceError(f"{FACTS_ROOT.name}/{relative}, row {row}: {message}; correct the fact file and record it "
                       f"with `python -m utp_env.tools.india.sources --update {relative}`")


def _hours(relative: str, row: int, opening: str | None, closing: str | None) -> tuple[str, str] | None:
    if (opening is None) != (closing is None):
        raise _row_error(relative, row, "give both open and close, or neither")
    return None if opening is None or closing is None else (opening, closing)


def _unique(relative: str, keys: list[tuple[str, str]]) -> None:
    seen: set[tuple[str, str]] = set()
    for row, key in enumerate(keys, 1):
        folded = (key[0].casefold(), key[1].casefold())
        if folded in seen:
            raise _row_error(relative, row, f"{key[1]!r} of {key[0]} is listed twice")
        seen.add(folded)


SIGHTS_FILE = "sights/sights.csv"


@cache
def sights() -> dict[str, tuple[Sight, ...]]:
    """City -> its real sights, most visited first (`sights/sights.csv`)."""
    rows = read_source(SIGHTS_FILE, {
        "city": text, "name": text, "categories": _all_of(ATTRACTION_CATEGORIES, "Table 7 category"),
        "visit_hr": _positive, "fee_inr": optional_number, "open": optional_hhmm, "close": optional_hhmm,
        "closed": _weekdays, "midday_closed": _interval, "day_trip_hr": optional_number,
        "kind": _one_of(ATTRACTION_KINDS, "attraction kind"), "nearest_stop": optional_text,
    }, FACTS_ROOT)
    out: dict[str, list[Sight]] = {}
    for n, r in enumerate(rows, 1):
        hours = _hours(SIGHTS_FILE, n, r["open"], r["close"])
        trip = r["day_trip_hr"]
        if trip is not None and r["visit_hr"] < 2 * trip + 0.5:
            raise _row_error(SIGHTS_FILE, n, f"a day trip's visit_hr ({r['visit_hr']:g}) includes the journey "
                             f"there and back (2 x {trip:g} h) and some time on site")
        if r["visit_hr"] > 14 or (r["fee_inr"] is not None and r["fee_inr"] < 0):
            raise _row_error(SIGHTS_FILE, n, "visit_hr above 14 h or a negative fee")
        if r["midday_closed"] is not None and hours is not None and hours[0] != hours[1] and not (
                hours[0] < r["midday_closed"][0] and r["midday_closed"][1] < hours[1]):
            raise _row_error(SIGHTS_FILE, n, "the midday closure lies outside the opening hours")
        out.setdefault(r["city"], []).append(Sight(
            r["city"], r["name"], tuple(r["categories"]), float(r["visit_hr"]), r["fee_inr"], hours, tuple(r["closed"]),
            r["midday_closed"], trip, r["kind"], r["nearest_stop"]))
    _unique(SIGHTS_FILE, [(r["city"], r["name"]) for r in rows])
    stations = {(s.city, f"{s.station} {STOP_SUFFIX[s.system]}") for v in transit_stations().values() for s in v}
    for n, r in enumerate(rows, 1):
        if r["nearest_stop"] is not None and (r["city"], r["nearest_stop"]) not in stations:
            raise _row_error(SIGHTS_FILE, n, f"nearest_stop {r['nearest_stop']!r} is not a station of {r['city']} "
                             f"in {TRANSIT_FILE}")
    return {city: tuple(places) for city, places in out.items()}


RESTAURANTS_FILE = "venues/restaurants.csv"


@cache
def real_restaurants() -> dict[str, tuple[RealRestaurant, ...]]:
    """City -> its real, well-known restaurants (`venues/restaurants.csv`)."""
    rows = read_source(RESTAURANTS_FILE, {
        "city": text, "name": text, "cuisines": _all_of(CUISINES, "Table 8 cuisine group"),
        "kind": _one_of(RESTAURANT_KINDS, "restaurant kind"), "price_tier": _one_of(PRICE_TIERS, "price tier"),
        "avg_cost_inr": _positive, "open": optional_hhmm, "close": optional_hhmm,
    }, FACTS_ROOT)
    out: dict[str, list[RealRestaurant]] = {}
    for n, r in enumerate(rows, 1):
        out.setdefault(r["city"], []).append(RealRestaurant(
            r["city"], r["name"], tuple(r["cuisines"]), r["kind"], r["price_tier"], float(r["avg_cost_inr"]),
            _hours(RESTAURANTS_FILE, n, r["open"], r["close"])))
    _unique(RESTAURANTS_FILE, [(r["city"], r["name"]) for r in rows])
    return {city: tuple(v) for city, v in out.items()}


HOTELS_FILE = "venues/hotels.csv"


@cache
def real_hotels() -> dict[str, tuple[RealHotel, ...]]:
    """City -> its real hotels with their price per night (`venues/hotels.csv`)."""
    def stars(cell: str) -> int:
        value = integer(cell)
        if not 0 <= value <= 5:
            raise ValueError("not 0-5 stars")
        return value

    rows = read_source(HOTELS_FILE, {"city": text, "name": text, "stars": stars,
                                     "house_type": _one_of(HOUSE_TYPES, "house type"), "price_inr": _positive},
                       FACTS_ROOT)
    out: dict[str, list[RealHotel]] = {}
    for n, r in enumerate(rows, 1):
        if r["house_type"] == "Resort/Beach" and not resort_area(r["city"]):
            raise _row_error(HOTELS_FILE, n, f"a Resort/Beach stay in {r['city']}, which is not a resort area")
        out.setdefault(r["city"], []).append(RealHotel(r["city"], r["name"], r["stars"], r["house_type"],
                                                       float(r["price_inr"])))
    _unique(HOTELS_FILE, [(r["city"], r["name"]) for r in rows])
    return {city: tuple(v) for city, v in out.items()}


LOCALITIES_FILE = "venues/localities.csv"


@cache
def localities() -> dict[str, tuple[str, ...]]:
    """City -> real localities (neighbourhoods, markets, main roads) of it (`venues/localities.csv`)."""
    rows = read_source(LOCALITIES_FILE, {"city": text, "locality": text}, FACTS_ROOT)
    out: dict[str, list[str]] = {}
    for n, r in enumerate(rows, 1):
        if r["locality"].startswith("Sector ") and r["city"] not in SECTOR_CITIES:
            raise _row_error(LOCALITIES_FILE, n, f"a numbered sector in {r['city']}, which has none (SECTOR_CITIES)")
        out.setdefault(r["city"], []).append(r["locality"])
    _unique(LOCALITIES_FILE, [(r["city"], r["locality"]) for r in rows])
    return {city: tuple(v) for city, v in out.items()}


TRANSIT_FILE = "venues/transit_lines.csv"


@cache
def transit_stations() -> dict[str, tuple[TransitStation, ...]]:
    """City -> the stations of its metro and suburban railway lines (`venues/transit_lines.csv`);
    one entry per station and system (an interchange listed on two lines counts once)."""
    rows = read_source(TRANSIT_FILE, {"city": text, "system": _one_of(TRANSIT_SYSTEMS, "transit system"),
                                      "line": text, "station": text}, FACTS_ROOT)
    out: dict[str, dict[tuple[str, str], TransitStation]] = {}
    for n, r in enumerate(rows, 1):
        if r["system"] == "metro" and r["city"] not in METRO_CITIES:
            raise _row_error(TRANSIT_FILE, n, f"a metro station in {r['city']}, which has no metro (METRO_CITIES)")
        out.setdefault(r["city"], {}).setdefault((r["system"], r["station"]),
                                                 TransitStation(r["city"], r["system"], r["line"], r["station"]))
    return {city: tuple(v.values()) for city, v in out.items()}


EVENT_VENUES_FILE = "venues/event_venues.csv"


@cache
def event_venues() -> dict[str, tuple[EventVenue, ...]]:
    """City -> its real venues of events with what they stage (`venues/event_venues.csv`)."""
    rows = read_source(EVENT_VENUES_FILE, {"city": text, "name": text,
                                           "kind": _one_of(EVENT_VENUE_KINDS, "event venue kind")}, FACTS_ROOT)
    _unique(EVENT_VENUES_FILE, [(r["city"], r["name"]) for r in rows])
    out: dict[str, list[EventVenue]] = {}
    for r in rows:
        out.setdefault(r["city"], []).append(EventVenue(r["city"], r["name"], r["kind"]))
    return {city: tuple(v) for city, v in out.items()}


def top_sights(city: str) -> tuple[str, ...]:
    """The names of `city`'s real sights, most visited first (the first is the one every visitor
    goes to); empty for a city without listed sights."""
    return tuple(sight.name for sight in sights().get(city, ()))


@cache
def sight_index() -> dict[tuple[str, str], Sight]:
    """(city, case-folded name) -> the real sight."""
    return {(s.city, s.name.casefold()): s for places in sights().values() for s in places}


@cache
def restaurant_index() -> dict[tuple[str, str], RealRestaurant]:
    """(city, case-folded name) -> the real restaurant."""
    return {(r.city, r.name.casefold()): r for rows in real_restaurants().values() for r in rows}


def clear_caches() -> None:
    """Forget the fact files read so far (after `FACTS_ROOT` changes, in tests)."""
    for reader in (sights, real_restaurants, real_hotels, localities, transit_stations, event_venues, sight_index,
                   restaurant_index):
        reader.cache_clear()
