"""Demonstrations of each level of the task (utp_env/env/levels.py) as tool calls an episode of the level
makes, for SFT (`utp_env.rl.sft`) and the learning curve (`utp_env.rl.curve`).

Two kinds, both played through the env so every answer in a transcript is the env's own:

- **tiny** (`tiny_calls`), for the tiny model of `--tiny`, which can carry a behaviour to an unseen query only
  by copying words of its context: at levels 1, 3 and 4 look the trip's first leg up (`lookup_leg_calls`: one
  service per answer, mode by mode) and `add_leg` the service the answer lists, then `submit`; at level 2 look
  the city's attractions and restaurants up (`LIST_LIMIT` each) and `add_item` venues the answers list into the
  reference plan's time slots of the day (`one_day_calls`), then `submit`.
- **model** (`model_calls`), for a real model: the reference planner's own lookups for the part the level asks
  (`level_lookups`), then the calls that build the reference plan's part (`scripted.level_calls`: its leg with
  the buffered arrival, its day's visits and meals), or at levels 3-4 the whole plan with `submit_plan`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from utp_env.env.core import UTPEnv
from utp_env.env.levels import LevelTask
from utp_env.itinerary import Plan
from utp_env.plan_format import format_plan
from utp_env.query import Query
from utp_env.rl.scripted import level_calls
from utp_env.tools.clock import format_stamp, weekday
from utp_env.tools.database import Database, normalize
from utp_env.tools.lookup.transport import SEARCH_TOOL_OF_MODE, ServiceTable, services
from utp_env.tools.schema import NUMBER_COLUMN, SERVICE_TABLE, ServiceMode

Call = tuple[str, dict[str, Any]]
LOOKUP_ORDER: tuple[ServiceMode, ...] = ("bus", "train", "flight")
"""The order the level-4 tiny demonstrations look the first leg up in: buses first (bus ids run the same way in
every world, so the tiny tokenizer has another world's as single tokens too), then trains, then flights."""
LEVEL_LOOKUP_ORDER: dict[int, tuple[ServiceMode, ...]] = {1: ("train", "bus", "flight")}
"""Where a level's tiny demonstrations look up in another order: at level 1, trains first (a train runs from
the origin to the first city on the first date for 86 % of the mini validation queries, a bus for 66 %), so
that one search usually finds the leg."""
LIST_LIMIT = 4
"""Venues per answer in the level-2 tiny demonstrations (what the tiny model reads)."""


def lookup_leg_calls(db: Database, query: Query, plan: Plan,
                     order: tuple[ServiceMode, ...] = LOOKUP_ORDER) -> list[Call]:
    """Look up the trip's first leg (the query's origin to the first city of the reference `plan`, on the
    first date) mode by mode in `order`, one service per answer (`limit` 1), until an answer lists one; add
    that service with `add_leg` (its number as the answer shows it); then `submit`. When no mode runs that
    day, `submit` after the lookups (an empty plan).

    Everything the model must write is in the task text (origin, date, city), in its own earlier call, or
    in the env's last answer (the service number)."""
    first = next((leg for day in plan.days for leg in day.transport), None)
    if first is None:
        return [("submit", {})]
    origin, destination, date = query.org, first.destination, query.dates[0]
    calls: list[Call] = []
    for mode in order:
        table = cast("ServiceTable", SERVICE_TABLE[mode])
        calls.append((SEARCH_TOOL_OF_MODE[mode], {"origin": origin, "destination": destination, "date": date,
                                                   "limit": 1}))
        rows = services(db, table, origin, destination, weekday(date))  # sorted by departure, as the answer
        if rows.size:
            number = str(db.tables[table].value(NUMBER_COLUMN[table], int(rows[0])))
            leg = {"day": 1, "mode": mode, "origin": origin, "destination": destination, "number": number}
            return [*calls, ("add_leg", leg), ("submit", {})]
    return [*calls, ("submit", {})]


def listed(db: Database, table: str, city: str, limit: int = LIST_LIMIT) -> list[int]:
    """The rows `search_attractions` / `search_restaurants` lists first for `city` (by rating), as the answer."""
    from utp_env.tools.lookup.venues import find_attractions, find_restaurants

    rows = find_attractions(db, city, None) if table == "attractions" else find_restaurants(db, city, None, None)
    return [int(r) for r in rows[:limit]]


def one_day_calls(db: Database, task: LevelTask, plan: Plan) -> list[Call]:
    """Level 2's tiny demonstration: `search_attractions` and `search_restaurants` of the day's city
    (`LIST_LIMIT` each), then each attraction and meal of the reference `plan`'s day at its times, at the
    venue the reference chose when the answer lists it, else at the first listed venue not yet used that is
    open then; then `submit`."""
    from utp_env.evaluation.commonsense import venue_closed_because

    assert task.city is not None  # level 2 names its city
    number = task.days[0]
    date = task.query.dates[number - 1]
    day = plan.days[number - 1]
    calls: list[Call] = [("search_attractions", {"city": task.city, "limit": LIST_LIMIT}),
                         ("search_restaurants", {"city": task.city, "limit": LIST_LIMIT})]
    shown = {kind: listed(db, table, task.city) for kind, table in (("attraction", "attractions"),
                                                                   ("restaurant", "restaurants"))}
    used: set[tuple[str, int]] = set()
    for item in day.items:
        kind = item.venue_type or ""
        if kind not in shown or item.start is None or item.end is None:
            continue
        table = "attractions" if kind == "attraction" else "restaurants"
        names = db.tables[table].columns["name"]
        wanted = normalize(item.name.rsplit(", ", 1)[0])
        rows = shown[kind]
        chosen = next((r for r in rows if normalize(names[r]) == wanted and (table, r) not in used), None)
        if chosen is None:
            chosen = next((r for r in rows if (table, r) not in used
                           and venue_closed_because(db, table, r, date, item.start, item.end) is None), None)
        if chosen is None:
            continue
        used.add((table, chosen))
        args: dict[str, Any] = {"day": number, "name": str(names[chosen]), "activity": "visit", "kind": kind,
                                "start": format_stamp(item.start), "end": format_stamp(item.end)}
        if item.meal is not None:
            args["meal"] = item.meal
        calls.append(("add_item", args))
    return [*calls, ("submit", {})]


def tiny_calls(task: LevelTask, db: Database, plan: Plan) -> list[Call]:
    """The tiny model's demonstration of `task` from the reference `plan` (module docstring)."""
    if task.level.number == 2:
        return one_day_calls(db, task, plan)
    return lookup_leg_calls(db, task.query, plan, LEVEL_LOOKUP_ORDER.get(task.level.number, LOOKUP_ORDER))


def level_lookups(task: LevelTask, lookups: list[Call]) -> list[Call]:
    """The reference planner's lookups (`demos.planner_lookups`) that concern the part `task` asks: at level 1
    the first leg's cities, at level 2 the day's city; all of them at levels 3-4."""
    if task.level.whole_task:
        return lookups
    if task.level.number == 1:
        pair = (normalize(task.query.org), normalize(task.first_city or ""))
        return [(n, a) for n, a in lookups
                if (normalize(str(a.get("origin", ""))), normalize(str(a.get("destination", "")))) == pair]
    city = normalize(task.city or "")
    return [(n, a) for n, a in lookups if normalize(str(a.get("city", ""))) == city]


def model_calls(task: LevelTask, env: UTPEnv, plan: Plan) -> list[Call]:
    """A real model's demonstration of `task` (module docstring): the planner's lookups for the part, then the
    reference plan's part built with the itinerary tools, or at levels 3-4 submitted whole."""
    from utp_env.rl.demos import planner_lookups

    lookups = level_lookups(task, planner_lookups(task.query, env))
    if task.level.whole_task:
        return [*lookups, ("submit_plan", {"plan": format_plan(plan)})]
    return [*lookups, *level_calls(task, plan)]


def calendar_dates(db: Database) -> list[str]:
    """Every date of the database's calendar (the tiny tokenizer keeps each as one token)."""
    from utp_env.tools.lookup.common import calendar

    span = calendar(db)
    if span is None:
        return []
    day, last = dt.date.fromisoformat(span[0]), dt.date.fromisoformat(span[1])
    out = []
    while day <= last:
        out.append(day.isoformat())
        day += dt.timedelta(days=1)
    return out
