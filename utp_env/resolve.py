"""Resolve the names in a plan to database rows: which flight a leg is, which venue an item is.

Evaluation, simulation and the env all need the same answers (the leg's schedule, its E[D],
its historical duration; the venue's row and crowd profile), so they are computed here once.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from utp_env.itinerary import Mode, TransportLeg, parse_hhmm
from utp_env.tools.database import Database, normalize
from utp_env.tools.delays import delay_index
from utp_env.tools.schema import SERVICE_TABLE

VENUE_TABLES: tuple[str, ...] = ("accommodations", "attractions", "restaurants", "events")


@dataclass(frozen=True)
class ResolvedLeg:
    """A transport leg matched to the database.

    `row` is the service row (flights/trains/buses; None for cabs or when not found) and
    `road_row` the road route (buses and cabs). `hist_duration` is the paper's historical
    duration: the scheduled duration for flights and trains, the free-flow time for road.
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


def weekday_index(date: str | None) -> int | None:
    """0 for Monday .. 6 for Sunday, or None for a missing or malformed date."""
    if not date:
        return None
    try:
        return dt.date.fromisoformat(date).weekday()
    except ValueError:
        return None


def find_service(db: Database, mode: Mode, number: str | None, origin: str, dest: str) -> int | None:
    """Row of the flight/train/bus `number` between two cities, or None."""
    table_name = SERVICE_TABLE.get(mode)
    if table_name is None or not number:
        return None
    rows = db.services(table_name, origin, dest, number)
    return rows[0] if rows else None


def resolve_leg(db: Database, leg: TransportLeg, date: str | None = None) -> ResolvedLeg:
    """Match `leg` to its service and road route; E[D] falls back to the mode median if unmeasured."""
    delays = delay_index(db)
    row = find_service(db, leg.mode, leg.number, leg.origin, leg.destination)
    road_rows = db.pair_rows("road_routes", leg.origin, leg.destination)
    road_row = int(road_rows[0]) if len(road_rows) and leg.mode in ("bus", "cab") else None
    scheduled_dep = scheduled_arr = None
    runs = None
    if row is not None:
        table = db.tables[SERVICE_TABLE[leg.mode]]
        scheduled_dep = parse_hhmm(table.columns["dep_time"][row])
        scheduled_arr = (parse_hhmm(table.columns["arr_time"][row])
                         + 1440 * int(table.columns["arr_day_offset"][row]))
        weekday = weekday_index(date)
        if weekday is not None:
            runs = table.columns["run_days"][row][weekday] == "1"
    if leg.mode in ("flight", "train"):
        found = row is not None
        expected, measured = delays.of(leg.mode, row)
        hist = float(db.tables[SERVICE_TABLE[leg.mode]].columns["duration_min"][row]) if found else None
    else:
        found = road_row is not None and (leg.mode == "cab" or row is not None)
        expected, measured = delays.of(leg.mode, road_row)
        hist = float(db.tables["road_routes"].columns["free_flow_min"][road_row]) if road_row is not None else None
    return ResolvedLeg(leg.mode, row, road_row, found, expected, measured, hist, scheduled_dep, scheduled_arr, runs)


@dataclass(frozen=True)
class VenueRef:
    """A venue found in the database: its table, canonical city and row."""

    table: str
    city: str
    row: int

    @property
    def venue_type(self) -> str:
        return {"accommodations": "accommodation", "attractions": "attraction",
                "restaurants": "restaurant", "events": "event"}[self.table]


def split_name_city(text: str) -> tuple[str, str | None]:
    """Split the paper's `Name, City` into (name, city); (text, None) when there is no comma."""
    name, sep, city = text.rpartition(",")
    if not sep:
        return text.strip(), None
    return name.strip(), city.strip() or None


def find_venue(db: Database, name: str, cities: list[str], tables: tuple[str, ...] = VENUE_TABLES,
               date: str | None = None) -> VenueRef | None:
    """The first venue called `name` in any of `cities`, searching `tables` in order.

    Events are keyed by date as well; without a date the first event of that name matches.
    """
    return find_venue_by_key(db, tables, [normalize(c) for c in cities], normalize(name), date)[0]


def find_venue_by_key(db: Database, tables: tuple[str, ...], city_keys: list[str], name_key: str,
                      date: str | None) -> tuple[VenueRef | None, str | None]:
    """`find_venue` for names already normalised (the evaluator's hot path): the venue and the
    normalised city it was found in, or (None, None)."""
    for city in city_keys:
        for table in tables:
            if table != "events":
                row = db.tables[table].by_key.get((city, name_key))
            elif date is not None:
                row = db.tables["events"].by_key.get((city, name_key, normalize(date)))
            else:
                row = _first_event(db, city, name_key)
            if row is not None:  # a row's city is known, so it has a canonical spelling
                return VenueRef(table, db.city(city), row), city
    return None, None


def find_named_venue(db: Database, text: str, cities: list[str], tables: tuple[str, ...] = VENUE_TABLES,
                     date: str | None = None) -> VenueRef | None:
    """The venue a plan names as `Name` or the paper's `Name, City`, among `cities`."""
    return find_named_venue_by_key(db, text, tables, [normalize(c) for c in cities], date)[0]


def find_named_venue_by_key(db: Database, text: str, tables: tuple[str, ...], city_keys: list[str],
                            date: str | None, split: tuple[str, str | None] | None = None, key: str | None = None
                            ) -> tuple[VenueRef | None, str | None, str | None, str]:
    """Find `text` (`Name` or `Name, City`) in `tables`, the stated city first, then `city_keys`
    (normalised).

    Returns (venue or None, the stated city or None, the venue's normalised city, the normalised
    name that matched). Exact match after normalisation only; callers that already split and
    normalised the name (the evaluator's hot path) pass `split` and `key`.
    """
    name, stated = split or split_name_city(text)
    key = key if key is not None else normalize(name)
    if stated is not None:
        ref, city = find_venue_by_key(db, tables, [normalize(stated), *city_keys], key, date)
        if ref is not None:
            return ref, stated, city, key
        key = normalize(text)  # a name that itself contains a comma
    ref, city = find_venue_by_key(db, tables, city_keys, key, date)
    return ref, stated, city, key


def _first_event(db: Database, city: str, name_key: str) -> int | None:
    names = db.tables["events"].columns["name"]
    for i in db.city_rows("events", city):
        if normalize(names[i]) == name_key:
            return int(i)
    return None


def crowd_of(db: Database, venue: VenueRef) -> int | None:
    """The crowd-table row of an attraction or restaurant, or None when it has no crowd data."""
    if venue.table not in ("attractions", "restaurants"):
        return None
    name = db.tables[venue.table].columns["name"][venue.row]
    return db.crowd_row(venue.city, venue.venue_type, name)
