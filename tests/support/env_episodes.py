"""A three-day query of the mini sandbox and the tool calls that plan it: the env's tests and its adapters'."""

from __future__ import annotations

from typing import Any

from utp_env.env.config import query_pool
from utp_env.itinerary import format_hhmm
from utp_env.queries import cheapest_trip
from utp_env.query import Query
from utp_env.tools.database import Database


def three_day_query(db: Database) -> Query:
    return next(q for q in query_pool(db) if q.days == 3 and not q.local_constraint.cuisine)

def plan_actions(db: Database, query: Query) -> list[dict[str, Any]]:
    """Tool calls building a complete 3-day plan on the query's cheapest route, timed by hand."""
    quote = cheapest_trip(query, db)
    assert not isinstance(quote, str), quote
    out_leg, back_leg = quote.legs
    city = out_leg.destination
    stay = db.tables["accommodations"].columns["name"][quote.stays[0]]
    rest = [db.tables["restaurants"].columns["name"][i] for i in db.city_rows("restaurants", city)]
    sights = [db.tables["attractions"].columns["name"][i] for i in db.city_rows("attractions", city)]
    assert len(rest) >= 3 and len(sights) >= 2

    def leg(day: int, leg_: Any) -> dict[str, Any]:
        args = {"day": day, "mode": leg_.mode, "origin": leg_.origin, "destination": leg_.destination,
                "planned_arrival": format_hhmm(leg_.arr + 30)}
        if leg_.mode == "cab":
            args["departure"] = format_hhmm(leg_.dep)
        else:
            args["number"] = leg_.number
        return {"tool": "add_leg", "args": args}

    def item(day: int, name: str, activity: str, start: int, end: int, **extra: Any) -> dict[str, Any]:
        return {"tool": "add_item", "args": {"day": day, "name": name, "activity": activity,
                                             "start": format_hhmm(start), "end": format_hhmm(end), **extra}}

    arrive = out_leg.arr % 1440 + 30
    depart = back_leg.dep
    return [
        leg(1, out_leg),
        {"tool": "set_stay", "args": {"name": stay, "city": city, "from_day": 1, "to_day": 2}},
        item(1, stay, "check-in", arrive + 15, arrive + 45),
        item(1, rest[0], "visit", max(arrive + 60, 20 * 60), max(arrive + 60, 20 * 60) + 75,
             kind="restaurant", meal="dinner"),
        item(1, stay, "stay", 22 * 60 + 30, 8 * 60),
        item(2, rest[1], "visit", 8 * 60 + 30, 9 * 60 + 20, kind="restaurant", meal="breakfast"),
        item(2, sights[0], "visit", 10 * 60, 13 * 60),
        item(2, rest[2], "visit", 13 * 60 + 30, 14 * 60 + 30, kind="restaurant", meal="lunch"),
        item(2, sights[1], "visit", 15 * 60, 17 * 60 + 30),
        item(2, rest[0], "visit", 20 * 60, 21 * 60 + 15, kind="restaurant", meal="dinner"),
        item(2, stay, "stay", 22 * 60, 7 * 60),
        item(3, stay, "checkout", max(depart - 180, 0), max(depart - 150, 30)),
        leg(3, back_leg),
    ]
