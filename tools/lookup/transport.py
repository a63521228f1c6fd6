"""Transport lookups: scheduled flights, trains and buses on a date, and cabs between cities.

`services` is the core query (row indices through the city-pair index, filtered by the weekday's
`run_days` bit and sorted); the tools render its rows with each service's expected delay E[D]
from `utp_env.tools.delays`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from utp_env.tools.clock import MINUTES_PER_DAY, WEEKDAYS, format_day_offset, weekday
from utp_env.tools.database import Database
from utp_env.tools.delays import delay_index
from utp_env.tools.lookup.common import Args, DateStr, Name, Paged, in_calendar, lookup_tool, pair_of
from utp_env.tools.lookup.index import lookup_index
from utp_env.tools.lookup.render import page, row_memo, table_of_lines, table_text
from utp_env.tools.schema import FARE_COLUMN, SERVICE_MODE, fare_class
from utp_env.tools.toolkit import ToolResult

ServiceTable = Literal["flights", "trains", "buses"]
SortBy = Literal["departure", "price", "duration"]


def services(db: Database, table: ServiceTable, origin: str, dest: str, weekday: int,
             sort_by: SortBy = "departure") -> np.ndarray:
    """Row indices of `table` from `origin` to `dest` (canonical names) running on `weekday`
    (Mon = 0), sorted by departure time, fare or duration (ties by departure, then row order)."""
    index = lookup_index(db)
    rows = db.pair_rows(table, origin, dest)
    rows = rows[index.runs[table][rows, weekday]]
    dep = index.dep_min[table][rows]
    if sort_by == "departure":
        return rows[np.argsort(dep, kind="stable")]
    key = db.tables[table].columns[FARE_COLUMN[table] if sort_by == "price" else "duration_min"][rows]
    return rows[np.lexsort((dep, key))]


def road_route_row(db: Database, origin: str, dest: str) -> int | None:
    """Row of the road route from `origin` to `dest`, or None if no road route exists."""
    rows = db.pair_rows("road_routes", origin, dest)
    return int(rows[0]) if rows.size else None


def _arrival(row: dict[str, Any]) -> str:
    """The arrival cell: `HH:MM`, with the `+N day` note of `utp_env.tools.clock` after midnight."""
    offset = format_day_offset(MINUTES_PER_DAY * int(row["arr_day_offset"]))
    return f"{row['arr_time']} {offset}" if offset else str(row["arr_time"])


def _delay_cell(value: float, measured: bool) -> str:
    return f"{value:.1f}" if measured else f"{value:.1f}*"


_MEDIAN_NOTE = "* no delay statistics for this service: the mode's median E[D] over the database stands in."


class ServiceSearch(Paged):
    origin: Name = Field(description="Departure city, e.g. 'Pune'")
    destination: Name = Field(description="Arrival city, e.g. 'Indore'")
    date: DateStr = Field(description="Travel date YYYY-MM-DD, e.g. '2025-11-20'; services run on set weekdays")
    sort_by: SortBy = Field("departure", description="Order: departure time, price (cheapest first) or duration")


class FlightSearch(ServiceSearch):
    pass


class TrainSearch(ServiceSearch):
    pass


class BusSearch(ServiceSearch):
    pass


SERVICE_HEADERS: dict[str, list[str]] = {
    "flights": ["flight", "airline", "airports", "dep", "arr", "duration_min", "fare_inr", "exp_delay_min"],
    "trains": ["train", "name", "stations", "dep", "arr", "duration_min", "classes", "fare_class", "fare_inr",
               "exp_delay_min"],
    "buses": ["bus_id", "operator", "type", "dep", "arr", "duration_min", "fare_inr", "exp_delay_min"],
}
"""The columns of a service search's answer per table (the service's number first)."""
SERVICE_NARROW = "sort by price or duration, or raise limit (max 100)."
"""What a truncated service search's answer suggests."""


def service_heading(table: str, origin: str, dest: str, date: str, day_name: str, sort_by: str) -> str:
    """The first words of a service search's answer, e.g. `Trains from Pune to Goa on 2026-02-14 (Sat), by
    departure`."""
    return f"{table.capitalize()} from {origin} to {dest} on {date} ({day_name}), by {sort_by}"


def _search(db: Database, table: ServiceTable, args: ServiceSearch) -> ToolResult:
    origin, dest = pair_of(db, args.origin, args.destination)
    in_calendar(db, args.date, "date")
    day = weekday(args.date)
    found = services(db, table, origin, dest, day, args.sort_by)
    shown, cut = page(found, args.limit)
    index = delay_index(db)
    mode = SERVICE_MODE[table]
    road = road_route_row(db, origin, dest) if table == "buses" else None
    rows = shown.tolist()

    memo = row_memo(db)

    def cells(new_rows: list[int]) -> list[list[Any]]:
        """Cell values of rows not rendered before (E[D] included: it depends on the row alone)."""
        lines = []
        for i, r in zip(new_rows, memo.rows(db, table, new_rows), strict=True):
            ed, measured = index.of(mode, road if table == "buses" else i)
            if table == "flights":
                lines.append([r["flight_number"], r["airline"], f"{r['origin_airport']}-{r['dest_airport']}",
                              r["dep_time"], _arrival(r), r["duration_min"], r["price_inr"],
                              _delay_cell(ed, measured)])
            elif table == "trains":
                lines.append([r["train_number"], r["train_name"], f"{r['origin_station']} - {r['dest_station']}",
                              r["dep_time"], _arrival(r), r["duration_min"], r["classes"], fare_class(r["classes"]),
                              r["fare_inr"], _delay_cell(ed, measured)])
            else:
                lines.append([r["bus_id"], r["operator"], r["bus_type"], r["dep_time"], _arrival(r),
                              r["duration_min"], r["fare_inr"], _delay_cell(ed, measured)])
        return lines

    lines = memo.lines(table, rows, cells)
    if table == "buses":
        unmeasured = bool(rows) and not index.of(mode, road)[1]
    else:
        unmeasured = bool(np.isnan((index.flight if table == "flights" else index.train)[shown]).any())
    header = SERVICE_HEADERS[table]
    any_on_pair = db.pair_rows(table, origin, dest).size > 0
    empty = (f"Services exist from {origin} to {dest} but none runs on a {WEEKDAYS[day]}; try another date."
             if any_on_pair else
             f"No {table} run from {origin} to {dest} on any day; try the other modes "
             "(search_flights, search_trains, search_buses, cab_route) or a connection via a nearby city.")
    notes = [_MEDIAN_NOTE] if unmeasured else []
    if table == "buses" and found.size:
        notes.append("exp_delay_min of a bus is the road route's historical traffic delay.")
    text = table_of_lines(service_heading(table, origin, dest, args.date, WEEKDAYS[day], args.sort_by), header,
                          lines, total=int(found.size), truncated=cut, narrow=SERVICE_NARROW, empty=empty, notes=notes)
    return ToolResult(ok=True, text=text, rows=memo.rows(db, table, rows), truncated=cut)


@lookup_tool
def search_flights(db: Database, args: FlightSearch) -> ToolResult:
    """Find direct flights between two cities on a date.

    Returns one line per flight: flight number, airline, airports, departure and arrival times
    (local HH:MM; `+1 day` = next day), duration, economy fare per person (INR) and the expected
    delay E[D] in minutes from its on-time statistics (use it as the buffer after arrival).
    Use it to choose a flight for a travel day; only flights operating on that weekday are listed.
    Example: {"origin": "Pune", "destination": "Indore", "date": "2025-11-20", "sort_by": "price"}
    """
    return _search(db, "flights", args)


@lookup_tool
def search_trains(db: Database, args: TrainSearch) -> ToolResult:
    """Find direct trains between two cities on a date.

    Returns one line per train: 5-digit number, name, stations, departure and arrival (`+1 day` =
    next day), duration, classes, the fare class (3A where offered, else CC, SL or 2S) and the
    fare per person in it (INR), and the expected delay E[D] in minutes from the train's
    1-week..1-year delay history. Only trains running that weekday (from this boarding city) are
    listed. Example: {"origin": "Bhopal", "destination": "Kanpur", "date": "2025-11-06"}
    """
    return _search(db, "trains", args)


@lookup_tool
def search_buses(db: Database, args: BusSearch) -> ToolResult:
    """Find intercity buses between two cities on a date.

    Returns one line per bus: service id, operator, bus type, departure and arrival (`+1 day` = next
    day), duration, fare per person (INR) and the expected road delay E[D] (the road route's
    historical traffic delay, minutes). Only buses running that weekday are listed.
    Example: {"origin": "Pune", "destination": "Mumbai", "date": "2025-11-20", "sort_by": "price"}
    """
    return _search(db, "buses", args)


# The lookup tool that lists each scheduled mode's services, keyed by mode (a tool's name is its
# function's name): the one place messages and agents take a mode's search tool from.
SEARCH_TOOL_OF_MODE: dict[str, str] = {"flight": search_flights.__name__, "train": search_trains.__name__,
                                       "bus": search_buses.__name__}


class CabRoute(Args):
    origin: Name = Field(description="Start city, e.g. 'Pune'")
    destination: Name = Field(description="End city, e.g. 'Mumbai'")


@lookup_tool
def cab_route(db: Database, args: CabRoute) -> ToolResult:
    """Cab (taxi) option between two cities, any day and time.

    Returns road distance (km), drive time (min), the fare of one cab for up to 4 people (INR),
    and the road route's free-flow time and historical traffic delay (minutes; add the delay as
    a buffer). Cabs only drive pairs with a road route; otherwise it says no cab is available.
    Example: {"origin": "Pune", "destination": "Mumbai"}
    """
    origin, dest = pair_of(db, args.origin, args.destination)
    road = road_route_row(db, origin, dest)
    if road is None:
        return ToolResult(ok=True, text=(f"Cab from {origin} to {dest}: no results. No cab is available on this "
                                         "pair (no road route); try search_flights, search_trains or "
                                         "search_buses, or a cab to a nearer city."))
    dist = db.pair_rows("distances", origin, dest)
    row = db.tables["road_routes"].row(road)
    if dist.size:
        d = db.tables["distances"].row(int(dist[0]))
        row |= {"duration_min": d["duration_min"], "cab_fare_inr": d["cab_fare_inr"]}
    text = table_text(f"Cab from {origin} to {dest}",
                      ["distance_km", "drive_min", "cab_fare_inr (per cab, <=4 people)", "free_flow_min",
                       "historical_delay_min", "estimated_delay_min"],
                      [[row["distance_km"], row.get("duration_min"), row.get("cab_fare_inr"), row["free_flow_min"],
                        row["historical_delay_min"], row["estimated_delay_min"]]],
                      total=1, truncated=0, narrow="", empty="")
    return ToolResult(ok=True, text=text, rows=[row])
