"""Uncertainty lookups: a venue's crowd profile, the delay statistics and E[D] of a transport
service, and the nearest public-transit stop of a venue (what a planner needs for buffers)."""

from __future__ import annotations

from pydantic import Field

from utp_env.tools.database import Database, suggest
from utp_env.tools.delays import Mode, delay_index
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.lookup.common import Args, Name, city_of, lookup_tool, pair_of
from utp_env.tools.lookup.render import table_text
from utp_env.tools.lookup.transport import road_route_row
from utp_env.tools.schema import CROWD_KINDS, NUMBER_COLUMN, SERVICE_TABLE, VENUE_TABLE, CrowdKind, VenueKind
from utp_env.tools.toolkit import ToolError, ToolResult

LEVEL_NAMES = {"L": "Low", "BA": "Below average", "A": "Average", "AA": "Above average", "H": "High"}


def resolve_venue(db: Database, city: str, name: str, kinds: tuple[VenueKind, ...],
                  argument: str = "venue") -> tuple[VenueKind, str]:
    """(venue kind, canonical name) of `name` in `city`, searching the tables of `kinds` in order.

    Raises ToolError with the closest names of those tables in that city when it is unknown.
    """
    for kind in kinds:
        table = VENUE_TABLE[kind]
        i = db.venue(table, city, name)
        if i is not None:
            return kind, db.tables[table].columns["name"][i]
    names = [db.tables[VENUE_TABLE[k]].columns["name"][j] for k in kinds
             for j in db.city_rows(VENUE_TABLE[k], city).tolist()]
    exc = UnknownNameError(" or ".join(kinds), name, suggest(name, names))
    hint = "" if exc.suggestions else f" in {city}; use search_attractions / search_restaurants / search_stays"
    raise ToolError(str(exc) + hint, argument)


def _hours(start: int, end: int) -> str:
    text = f"{start:02d}:00-{end:02d}:59"
    return text + " (past midnight)" if end < start else text


# ---------------------------------------------------------------- crowd


class CrowdQuery(Args):
    city: Name = Field(description="City of the venue, e.g. 'Jaipur'")
    venue: Name = Field(description="Attraction or restaurant name exactly as the search tools list it")
    venue_type: CrowdKind | None = Field(
        None, description="Which kind of venue; give it when an attraction and a restaurant share the name")


@lookup_tool
def crowd_profile(db: Database, args: CrowdQuery) -> ToolResult:
    """Average-day crowd levels of an attraction or restaurant, to time visits away from crowds.

    Returns the crowd windows (hours inclusive: 11:00-16:59) with levels L Low, BA Below average,
    A Average, AA Above average, H High; the quiet hours; the peak (busiest) window; opening hours
    and the hours arrivals and departures surge. Crowded windows make visits longer: add a buffer
    there (about 15-30 min for AA/H) or visit in quiet hours. Venues without data say 'no crowd data'.
    Example: {"city": "Jaipur", "venue": "Hawa Mahal"}
    """
    city = city_of(db, args.city, "city")
    kinds: tuple[VenueKind, ...] = (args.venue_type,) if args.venue_type else CROWD_KINDS
    kind, name = resolve_venue(db, city, args.venue, kinds)
    i = db.crowd_row(city, kind, name)
    if i is None:
        return ToolResult(ok=True, text=f"Crowd profile of {name} ({kind}, {city}): no crowd data. Plan its usual "
                                        "visit duration; crowd levels are unknown (treated as Low).")
    row = db.tables["crowd"].row(i)
    lines = [[_hours(s, e), level, LEVEL_NAMES[level]] for s, e, level in row["windows"]]
    peak = row["peak_window"]
    surge = ", ".join(f"{label} {h:02d}:00" for label, h in (("arrivals surge", row["surge_in_hour"]),
                                                             ("departures surge", row["surge_out_hour"]))
                      if h is not None)
    notes = [f"open hours: {_hours(row['open_hour'], row['close_hour'])}"
             + (f"; {surge}" if surge else ""),
             "quiet hours: " + (", ".join(f"{h:02d}:00" for h in row["quiet_hours"]) or "none"),
             "peak window: " + (_hours(*peak) if peak else "none")]
    text = table_text(f"Crowd profile of {name} ({kind}, {city}), average day", ["hours", "level", "meaning"], lines,
                      total=len(lines), truncated=0, narrow="", empty="The venue lists no crowd windows.",
                      notes=notes)
    return ToolResult(ok=True, text=text, rows=[row])


# ---------------------------------------------------------------- delays


class DelayQuery(Args):
    mode: Mode = Field(description="Transport mode")
    origin: Name = Field(description="Departure city, e.g. 'Pune'")
    destination: Name = Field(description="Arrival city, e.g. 'Indore'")
    number: str | None = Field(None, min_length=1, max_length=40,
                               description="Flight number ('6E-284'), 5-digit train number or bus id; "
                               "omit to list every service of the mode on the pair (ignored for cabs)")


FLIGHT_STATS = ("otp_total", "otp_on_time", "otp_late", "otp_very_late", "otp_excessive", "otp_cancelled",
                "otp_diverted", "delay_avg_min", "delay_std_min", "delay_max_min")
TRAIN_STATS = ("avg_delay_1w", "avg_delay_1m", "avg_delay_3m", "avg_delay_6m", "avg_delay_1y")
ROAD_STATS = ("free_flow_min", "historical_delay_min", "estimated_delay_min")
SERVICE = {mode: (SERVICE_TABLE[mode], NUMBER_COLUMN[SERVICE_TABLE[mode]], stats)
           for mode, stats in (("flight", FLIGHT_STATS), ("train", TRAIN_STATS))}


def _service_rows(db: Database, table: str, column: str, origin: str, dest: str, number: str | None,
                  argument: str = "number") -> list[int]:
    rows = db.pair_rows(table, origin, dest).tolist()
    if number is None:
        return rows
    numbers = db.tables[table].columns[column]
    hit = db.services(table, origin, dest, number)
    if not hit:
        close = suggest(number, [numbers[i] for i in rows])
        on_pair = f"did you mean {', '.join(map(repr, close))}?" if close else (
            f"{len(rows)} {table} serve this pair" + (f", e.g. {numbers[rows[0]]}" if rows else ""))
        raise ToolError(f"no {table[:-1]} {number!r} from {origin} to {dest}; {on_pair}", argument)
    return hit


@lookup_tool
def delay_stats(db: Database, args: DelayQuery) -> ToolResult:
    """Historical delay statistics and the expected delay E[D] (minutes) of transport on a city pair.

    flight: on-time counts (total, on time, late, very late, excessive, cancelled, diverted) and the
    mean, s.d. and maximum delay; E[D] = (n_late/N)(mean + s.d.) + (n_cancelled+diverted/N) max.
    train: mean delay over 1 week, 1 month, 3, 6 and 12 months; E[D] = (1w + 2*1m + 3*3m + 4*6m + 6*1y)/16.
    bus and cab: the road route's free-flow time, historical and current traffic delay; E[D] = historical delay.
    When a service has no statistics the mode's median E[D] stands in (the result says so).
    Use E[D] as the buffer between scheduled arrival and the next plan item.
    Example: {"mode": "flight", "origin": "Pune", "destination": "Indore", "number": "6E-284"}
    """
    origin, dest = pair_of(db, args.origin, args.destination)
    index = delay_index(db)
    lines, rows = [], []
    if args.mode in SERVICE:
        table, column, stats = SERVICE[args.mode]
        cols = db.tables[table].columns
        for i in _service_rows(db, table, column, origin, dest, args.number)[:50]:
            ed, measured = index.of(args.mode, i)
            raw = {s: db.tables[table].value(s, i) for s in stats}
            rows.append({"mode": args.mode, "number": cols[column][i], "origin_city": origin, "dest_city": dest,
                         **raw, "expected_delay_min": ed, "measured": measured})
            lines.append([cols[column][i], *raw.values(), f"{ed:.1f}",
                          "yes" if measured else "no (mode median)"])
        header = ["number", *stats, "E[D]_min", "measured"]
        empty = f"No {table} run from {origin} to {dest}; try another mode."
    else:
        if args.mode == "bus" and args.number is not None:
            _service_rows(db, "buses", NUMBER_COLUMN["buses"], origin, dest, args.number)
        road = road_route_row(db, origin, dest)
        ed, measured = index.of(args.mode, road)
        raw = {s: db.tables["road_routes"].value(s, road) if road is not None else None for s in ROAD_STATS}
        rows.append({"mode": args.mode, "number": args.number if args.mode == "bus" else None,
                     "origin_city": origin, "dest_city": dest, **raw, "expected_delay_min": ed, "measured": measured})
        lines.append([*raw.values(), f"{ed:.1f}", "yes" if measured else "no road route: mode median"])
        header = [*ROAD_STATS, "E[D]_min", "measured"]
        empty = ""
    text = table_text(f"Delay statistics, {args.mode} from {origin} to {dest}"
                      + (f" ({args.number})" if args.number and args.mode != "cab" else ""),
                      header, lines, total=len(lines), truncated=0, narrow="", empty=empty,
                      notes=["a measured 'no' means the service has no statistics and the mode's median E[D] "
                             "over the database stands in"] if any(not r["measured"] for r in rows) else [])
    return ToolResult(ok=True, text=text, rows=rows)


# ---------------------------------------------------------------- transit


class TransitQuery(Args):
    city: Name = Field(description="City of the venue, e.g. 'Pune'")
    venue: Name = Field(description="Attraction, restaurant or stay name exactly as the search tools list it")


@lookup_tool
def nearest_transit(db: Database, args: TransitQuery) -> ToolResult:
    """Nearest public-transit stop of an attraction, restaurant or stay.

    Returns the stop name, its walking distance from the venue (metres and km) and coordinates.
    Use it for the `nearest transit: Stop, 0.5km away` notes of the point-of-interest list.
    Example: {"city": "Pune", "venue": "Conrad Pune"}
    """
    city = city_of(db, args.city, "city")
    kind, name = resolve_venue(db, city, args.venue, ("attraction", "restaurant", "accommodation"))
    i = db.tables["transit_stops"].find(city, kind, name)
    if i is None:
        return ToolResult(ok=True, text=f"Nearest transit of {name} ({kind}, {city}): no results. No transit stop "
                                        "is recorded for this venue; write 'nearest transit: -'.")
    row = db.tables["transit_stops"].row(i)
    text = table_text(f"Nearest transit of {name} ({kind}, {city})", ["stop", "distance_m", "distance_km", "lat, lon"],
                      [[row["stop_name"], round(row["distance_m"]), f"{row['distance_m'] / 1000:.2f}",
                        f"{row['stop_latitude']:.5f}, {row['stop_longitude']:.5f}"]],
                      total=1, truncated=0, narrow="", empty="")
    return ToolResult(ok=True, text=text, rows=[row])
