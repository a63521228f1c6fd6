"""The itinerary tools' arguments read against the episode: times in the clock grammar, day and
position numbers, a venue's canonical name in the day's cities, its nearest transit stop. Each
raises a `ToolError` naming the argument and saying how to fix it (the tool then changes nothing).
"""

from __future__ import annotations

from typing import TypeVar

from utp_env.env.episode import Episode
from utp_env.itinerary import Day, PlanItem
from utp_env.resolve import VenueName, find_venue
from utp_env.tools.clock import MINUTES_PER_DAY, parse_stamp
from utp_env.tools.database import Database, normalize, suggest
from utp_env.tools.schema import VENUE_TABLE, VenueKind
from utp_env.tools.toolkit import ToolError

SEARCH_TOOL: dict[VenueKind, str] = {"accommodation": "search_stays", "attraction": "search_attractions",
                                     "restaurant": "search_restaurants", "event": "search_events"}
"""The lookup tool that lists the venues of each kind (named in the error of an unknown venue)."""
T = TypeVar("T")


def clock(text: str, argument: str) -> tuple[int, int | None]:
    """(minutes of the clock time, the stated `+N day` offset or None) of a time argument, read
    with the grammar of `utp_env.tools.clock`; a ToolError naming the argument otherwise."""
    try:
        return parse_stamp(text)
    except ValueError:
        raise ToolError(f"{text!r} is not a time; write HH:MM such as '07:45' (add '+1' for the next day)",
                        argument) from None


def minutes(text: str, argument: str) -> int:
    """Minutes from the day's midnight of a time argument (`'07:40 +1'` -> 1900)."""
    at, days = clock(text, argument)
    return at + MINUTES_PER_DAY * (days or 0)


def day_number(ep: Episode, day: int, argument: str = "day") -> int:
    if day > ep.query.days:
        raise ToolError(f"day {day} is past the end of this {ep.query.days}-day trip", argument)
    return day


def existing_day(ep: Episode, day: int, argument: str = "day") -> Day:
    day_number(ep, day, argument)
    if day > len(ep.plan.days):
        raise ToolError(f"day {day} has nothing planned yet (the plan has {len(ep.plan.days)} day(s))", argument)
    return ep.plan.days[day - 1]


def pick(seq: list[T], index: int, what: str, day: int, argument: str) -> T:
    if index > len(seq):
        raise ToolError(f"day {day} has {len(seq)} {what}(s); give a number from 1 to {len(seq)} "
                        "(see view_plan)" if seq else f"day {day} has no {what}s", argument)
    return seq[index - 1]


def cities_of(ep: Episode, day: int) -> list[str]:
    """The cities an item of `day` may be in: the day's cities, or the previous day's end city."""
    if day <= len(ep.plan.days):
        return list(ep.plan.days[day - 1].cities)
    return [ep.plan.days[-1].end_city] if ep.plan.days else [ep.query.org]


def venue_of(ep: Episode, kind: VenueKind, name: str, cities: list[str], date: str | None) -> tuple[str, str]:
    """(canonical name, city) of a venue of `kind` in one of `cities`; ToolError with suggestions otherwise."""
    table = VENUE_TABLE[kind]
    ref = find_venue(ep.db, name, cities, tables=(table,), date=date)
    if ref is None and "," in name:  # an item of a lived plan (replan.lived_plan), 'Name, City', moved to a day
        venue = VenueName.of(name)
        stated = ep.db.known_city(venue.stated_city) if venue.stated_city else None
        if stated is not None and normalize(stated) not in {normalize(c) for c in cities}:
            raise ToolError(f"{name!r} names the city {stated}, not {' or '.join(cities)}: give the name without "
                            f"its city, or plan it where {stated} is", "name")
        ref = find_venue(ep.db, venue.name, cities, tables=(table,), date=date)
    if ref is None:
        first = cities[0]
        names = [ep.db.tables[table].columns["name"][j] for j in ep.db.city_rows(table, first)]
        close = suggest(name, names)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ToolError(f"no {kind} called {name!r} in {' or '.join(cities)}.{hint} Use {SEARCH_TOOL[kind]} to "
                        "list them; "
                        "a day's cities come from its transport legs", "name")
    return str(ep.db.tables[table].columns["name"][ref.row]), ref.city


def transit_of(db: Database, city: str, kind: str, name: str) -> tuple[str | None, float | None]:
    if kind not in ("attraction", "restaurant", "accommodation"):
        return None, None
    row = db.tables["transit_stops"].find(city, kind, name)
    if row is None:
        return None, None
    cols = db.tables["transit_stops"].columns
    return str(cols["stop_name"][row]), float(cols["distance_m"][row])


def insert_sorted(items: list[PlanItem], item: PlanItem, position: int | None) -> int:
    """Insert `item` at 1-based `position`, else after every item starting no later; return its index."""
    if position is not None:
        i = min(position - 1, len(items))
    else:
        i = len(items)
        if item.start is not None:
            i = next((k for k, other in enumerate(items) if other.start is not None and other.start > item.start),
                     len(items))
    items.insert(i, item)
    return i + 1
