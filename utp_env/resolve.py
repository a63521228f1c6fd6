"""Resolve the names in a plan to database rows: which flight a leg is, which venue an item is.

Evaluation, simulation, the plan-format parser and the env all need the same answers (the leg's
schedule, its E[D], its historical duration; the venue's row and crowd profile), so they are
computed here once. `find_venue` is the one venue search; `resolve_leg` the one leg match.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from utp_env.itinerary import Mode, TransportLeg
from utp_env.tools.clock import parse_hhmm
from utp_env.tools.database import Database, normalize
from utp_env.tools.delays import delay_index
from utp_env.tools.memo import remember
from utp_env.tools.schema import (
    CROWD_KINDS,
    SERVICE_TABLE,
    VENUE_KIND,
    VENUE_TABLES,
    VenueKind,
    runs_on,
    scheduled_arrival,
)

__all__ = ["VENUE_TABLES", "CityKeys", "ResolvedLeg", "VenueName", "VenueRef", "crowd_of", "departure_point",
           "departure_point_names", "find_service", "find_venue", "resolve_leg", "split_name_city"]


@dataclass(frozen=True)
class ResolvedLeg:
    """A transport leg matched to the database.

    `row` is the service row (flights/trains/buses; None for cabs or when not found) and
    `road_row` the road route (buses and cabs). `hist_duration` is the paper's historical
    duration: the scheduled duration of a flight, train or bus (a bus is slower than its road's
    free-flow time: tools/sandbox/road.py `BUS_SLOWDOWN`), the road's free-flow time for a cab (or a
    bus not in the timetable).
    """

    mode: Mode
    row: int | None
    road_row: int | None
    found: bool
    expected_delay: float
    delay_measured: bool
    hist_duration: float | None
    scheduled_dep: int | None
    scheduled_arr: int | None
    runs_on_date: bool | None


def find_service(db: Database, mode: Mode, number: str | None, origin: str, dest: str) -> int | None:
    """Row of the flight/train/bus `number` between two cities, or None."""
    table_name = SERVICE_TABLE.get(mode)
    if table_name is None or not number:
        return None
    rows = db.services(table_name, origin, dest, number)
    return rows[0] if rows else None


def departure_point(db: Database, mode: Mode, row: int | None, origin: str) -> str:
    """The place a leg leaves from, as a plan's `arrive` item names it (`Name, City`): a flight's
    `<origin airport> Airport`, a train's origin station, `<City> Bus Stand` (the database names no
    bus stands), `Cab pickup` (a cab fetches the traveller). The reference planner writes it; the
    env's reward knows it (`departure_point_names`)."""
    if mode == "flight" and row is not None:
        return f"{db.tables['flights'].columns['origin_airport'][row]} Airport, {origin}"
    if mode == "train" and row is not None:
        return f"{db.tables['trains'].columns['origin_station'][row]}, {origin}"
    if mode == "bus":
        return f"{origin} Bus Stand, {origin}"
    return f"Cab pickup, {origin}"


def departure_point_names(db: Database, mode: Mode, row: int | None, origin: str) -> frozenset[str]:
    """The normalised names (without `, City`) an `arrive` item may give a leg's departure point:
    `departure_point`'s, and the other ways a plan writes it: a flight's airport code alone,
    `<City> Airport` or `<City> International Airport`; a train's `<City> Station`, `<City> Railway
    Station` or `<City> Junction`; a bus's `<City> Bus Station` or `<City> Bus Terminal`. A cab leaves
    from wherever the traveller is: every name is its pickup (the empty set here)."""
    if mode == "cab":
        return frozenset()
    names = [VenueName.of(departure_point(db, mode, row, origin)).name]
    if mode == "flight":
        names += [f"{origin} Airport", f"{origin} International Airport"]
        if row is not None:
            names.append(str(db.tables["flights"].columns["origin_airport"][row]))
    elif mode == "train":
        names += [f"{origin} Station", f"{origin} Railway Station", f"{origin} Junction"]
    else:
        names += [f"{origin} Bus Station", f"{origin} Bus Terminal"]
    return frozenset(normalize(n) for n in names)


MEMO_LIMIT = 1 << 15  # entries a per-database memo keeps before it starts afresh (bounded memory)


class _ResolveMemo:
    """Per-database memo of `resolve_leg`: the database is read-only and the answer depends only on
    the leg's mode, number and cities (`services`: the match without a date, with the service's
    `run_days`) and the date (`legs`: the whole answer). Plans name the same services again and
    again, on other dates. Each is cleared when it reaches `MEMO_LIMIT`."""

    def __init__(self, db: Database) -> None:
        self.legs: dict[tuple[str, str | None, str, str, str | None], ResolvedLeg] = {}
        self.services: dict[tuple[str, str | None, str, str], tuple[ResolvedLeg, str | None]] = {}


def resolve_leg(db: Database, leg: TransportLeg, date: str | None = None) -> ResolvedLeg:
    """Match `leg` to its service and road route; E[D] falls back to the mode median if unmeasured.

    Memoised per database on everything the answer reads (`_ResolveMemo`); a `ResolvedLeg` is frozen."""
    memo = db.derived(_ResolveMemo)
    key = (leg.mode, leg.number, leg.origin, leg.destination, date)
    resolved = memo.legs.get(key)
    if resolved is None:
        service = key[:4]
        undated = memo.services.get(service)
        if undated is None:
            undated = remember(memo.services, service,
                               _resolve_leg(db, leg.mode, leg.number, leg.origin, leg.destination), MEMO_LIMIT)
        resolved, run_days = undated
        runs = runs_on(run_days, date) if run_days is not None else None
        if runs is not None:
            resolved = replace(resolved, runs_on_date=runs)
        remember(memo.legs, key, resolved, MEMO_LIMIT)
    return resolved


def _resolve_leg(db: Database, mode: Mode, number: str | None, origin: str,
                 destination: str) -> tuple[ResolvedLeg, str | None]:
    """The leg matched without a date (`runs_on_date` None) and the matched service's run_days (None without one)."""
    delays = delay_index(db)
    row = find_service(db, mode, number, origin, destination)
    road_rows = db.pair_rows("road_routes", origin, destination)
    road_row = int(road_rows[0]) if len(road_rows) and mode in ("bus", "cab") else None
    scheduled_dep = scheduled_arr = run_days = None
    hist: float | None = None
    if row is not None:
        columns = db.tables[SERVICE_TABLE[mode]].columns
        scheduled_dep = parse_hhmm(columns["dep_time"][row])
        scheduled_arr = scheduled_arrival(columns, row)
        run_days = columns["run_days"][row]
        hist = float(columns["duration_min"][row])
    if mode in ("flight", "train"):
        found = row is not None
        expected, measured = delays.of(mode, row)
    else:
        found = road_row is not None and (mode == "cab" or row is not None)
        expected, measured = delays.of(mode, road_row)
        if hist is None and road_row is not None:
            hist = float(db.tables["road_routes"].columns["free_flow_min"][road_row])
    return ResolvedLeg(mode, row, road_row, found, expected, measured, hist, scheduled_dep, scheduled_arr,
                       None), run_days


@dataclass(frozen=True)
class VenueRef:
    """A venue found in the database: its table, canonical city and row, and the normalised city
    and name it was found under (the keys of the crowd and transit tables)."""

    table: str
    city: str
    row: int
    city_key: str
    name_key: str

    @property
    def venue_type(self) -> VenueKind:
        return VENUE_KIND[self.table]


class CityKeys(tuple[str, ...]):
    """Cities already passed through `normalize`: a caller that resolves many names against the
    same cities (the evaluator, once per day) normalises them once and passes this to `find_venue`."""

    @classmethod
    def of(cls, cities: Iterable[str]) -> CityKeys:
        """The keys of `cities`; memoised by the cities as given (a pure function, `_CITY_KEYS`)."""
        given = tuple(cities)
        hit = _CITY_KEYS.get(given) if cls is CityKeys else None
        if hit is None:
            hit = cls(normalize(c) for c in given)
            if cls is CityKeys and all(type(c) is str for c in given):
                remember(_CITY_KEYS, given, hit, MEMO_LIMIT)
        return hit


_CITY_KEYS: dict[tuple[str, ...], CityKeys] = {}  # CityKeys.of by the cities as given (bounded by MEMO_LIMIT)


def split_name_city(text: str) -> tuple[str, str | None]:
    """Split the paper's `Name, City` into (name, city); (text, None) when there is no comma."""
    name, sep, city = text.rpartition(",")
    if not sep:
        return text.strip(), None
    return name.strip(), city.strip() or None


class VenueName(NamedTuple):
    """A venue as a plan names it, the paper's `Name` or `Name, City`, split and normalised once."""

    text: str
    name: str
    stated_city: str | None
    key: str  # normalize(name)

    @classmethod
    def of(cls, text: str) -> VenueName:
        """`text` split and normalised; memoised (a pure function of the text, `_VENUE_NAMES`)."""
        hit = _VENUE_NAMES.get(text)
        if hit is None:
            name, sep, city = text.rpartition(",")  # split_name_city, inlined: the evaluator's hot path
            if not sep:
                name, stated = text.strip(), None
            else:
                name, stated = name.strip(), city.strip() or None
            hit = cls(text, name, stated, normalize(name))
            if type(text) is str:  # a str subclass may compare equal yet differ
                remember(_VENUE_NAMES, text, hit, MEMO_LIMIT)
        return hit


_VENUE_NAMES: dict[str, VenueName] = {}  # VenueName.of by text (bounded by MEMO_LIMIT)


def find_venue(db: Database, name: str | VenueName, cities: Sequence[str], tables: Sequence[str] = VENUE_TABLES,
               date: str | None = None) -> VenueRef | None:
    """The venue called `name` in one of `cities` (first city first), searching `tables` in order
    within each city; exact match after `normalize`; None when there is none.

    A `str` is the venue's name as it is (tool arguments, POI item names). A `VenueName` is how
    plans name venues, `Name` or `Name, City`: the stated city is searched before `cities`, and
    a name that itself contains a comma is tried whole when the split finds nothing.
    Events are keyed by date as well; without a date the first event of that name matches.
    `cities` may be `CityKeys` (already normalised), so a caller resolving many names against
    the same cities (the evaluator) normalises them once.
    """
    keys = cities if isinstance(cities, CityKeys) else [normalize(c) for c in cities]
    if isinstance(name, str):
        return _search(db, tables, keys, normalize(name), date)
    if name.stated_city is not None:
        found = _search(db, tables, [normalize(name.stated_city), *keys], name.key, date)
        if found is not None:
            return found
        return _search(db, tables, keys, normalize(name.text), date)
    return _search(db, tables, keys, name.key, date)


def _search(db: Database, tables: Sequence[str], city_keys: Sequence[str], name_key: str,
            date: str | None) -> VenueRef | None:
    for city in city_keys:
        for table in tables:
            if table != "events":
                row = db.tables[table].by_key.get((city, name_key))
            elif date is not None:
                row = db.tables["events"].by_key.get((city, name_key, normalize(date)))
            else:
                row = _first_event(db, city, name_key)
            if row is not None:  # a row's city is known, so it has a canonical spelling
                return VenueRef(table, db.city(city), row, city, name_key)
    return None


def _first_event(db: Database, city: str, name_key: str) -> int | None:
    names = db.tables["events"].columns["name"]
    for i in db.city_rows("events", city):
        if normalize(names[i]) == name_key:
            return int(i)
    return None


def crowd_of(db: Database, venue: VenueRef) -> int | None:
    """The crowd-table row of an attraction or restaurant, or None when it has no crowd data."""
    if venue.venue_type not in CROWD_KINDS:
        return None
    return db.tables["crowd"].by_key.get((venue.city_key, venue.venue_type, venue.name_key))
