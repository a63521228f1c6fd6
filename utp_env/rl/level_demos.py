"""Demonstrations of each level of the task (utp_env/env/levels.py) as tool calls an episode of the level
makes, for SFT (`utp_env.rl.sft`) and the learning curve (`utp_env.rl.curve`).

Two kinds, both played through the env so every answer in a transcript is the env's own:

- **tiny** (`tiny_calls`), for the tiny model of `--tiny`, which can carry a behaviour to an unseen query only
  by copying words of its context: at levels 1, 3 and 4 look the trip's first leg up (`lookup_leg_calls`: one
  service per answer, mode by mode) and `add_leg` the service the answer lists, then `submit`; at level 2 plan
  the day by a fixed schedule, each step a venue search of one row and `add_item` of the venue it lists at fixed
  times (`one_day_calls`), then `submit`. Every value such a demonstration writes is a constant of its
  schedule, or stands in the task text or in the answer just before, at a place that does not depend on the
  query.
- **model** (`model_calls`), for a real model: the reference planner's own lookups for the part the level asks
  (`level_lookups`), then the calls that build the reference plan's part (`scripted.level_calls`: its leg with
  the buffered arrival, its day's visits and meals), or at levels 3-4 the whole plan with `submit_plan`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from utp_env.env.core import UTPEnv
from utp_env.env.levels import LevelTask
from utp_env.itinerary import Meal, Plan, parse_hhmm
from utp_env.plan_format import format_plan
from utp_env.query import Query
from utp_env.rl.scripted import level_calls
from utp_env.tools.clock import weekday
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
DAY_SCHEDULE: tuple[tuple[str, dict[str, str], Meal | None, str, str], ...] = (
    ("restaurants", {"sort_by": "cost"}, "breakfast", "08:15", "09:00"),
    ("attractions", {"sort_by": "duration"}, None, "10:00", "12:00"),
    ("restaurants", {"sort_by": "rating"}, "lunch", "13:15", "14:15"),
    ("restaurants", {"price_tier": "$$", "sort_by": "cost"}, "dinner", "19:30", "20:30"),
)
"""Level 2's tiny demonstration, step by step: the venue search (its table and filters, one row), then a visit to
the venue of that row, as that meal (None: a visit to an attraction), from-to (HH:MM). The cheapest restaurant
for breakfast, the shortest visit, the best rated restaurant for lunch, the cheapest of tier $$ for dinner:
orders whose first rows are rarely the venues the given days went to (the reference plan's best rated), and
rarely each other's."""


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


def first_listed(db: Database, table: str, city: str, search: dict[str, str]) -> int | None:
    """The row a venue search of `city` with the filters and order `search` lists first, as its answer; None
    when it lists none."""
    from utp_env.tools.lookup.venues import find_attractions, find_restaurants

    sort_by = search.get("sort_by", "rating")
    rows = (find_attractions(db, city, search.get("category"), sort_by) if table == "attractions"
            else find_restaurants(db, city, search.get("cuisine"), search.get("price_tier"), sort_by))
    return int(rows[0]) if len(rows) else None


def one_day_calls(db: Database, task: LevelTask) -> list[Call]:
    """Level 2's tiny demonstration: each step of `DAY_SCHEDULE` whose times the given stay leaves free, a
    venue search of the day's city (one row) and `add_item` of the venue its answer lists; then `submit`.

    Each venue is the first row of the answer just before the call, and every time is fixed, so a model that
    copies can learn the day from a few demonstrations, as at level 1: the reference plan's own venues and times
    (chosen from its whole trip, its risk profile's buffers and the crowds) can be learned only by a model that
    plans. On the mini sandbox's first 100 train and validation queries of the level, the schedule earns a mean
    reward of 0.52 and 0.53 (55 % and 58 % of the days pass every check; none scores 0); the reference plan, the
    ceiling, earns 0.71 on the full sandbox, so GRPO has room above it."""
    assert task.city is not None  # level 2 names its city
    number = task.days[0]
    free_from, free_until = task.day_start or 0, task.day_end or 24 * 60
    calls: list[Call] = []
    for table, search, meal, start, end in DAY_SCHEDULE:
        if not free_from <= parse_hhmm(start) < parse_hhmm(end) <= free_until:
            continue
        calls.append((f"search_{table}", {"city": task.city, "limit": 1, **search}))
        row = first_listed(db, table, task.city, search)
        if row is None:
            continue
        args: dict[str, Any] = {"day": number, "name": str(db.tables[table].columns["name"][row]),
                                "activity": "visit", "kind": "attraction" if table == "attractions" else "restaurant",
                                "start": start, "end": end}
        calls.append(("add_item", {**args, "meal": meal} if meal is not None else args))
    return [*calls, ("submit", {})]


def tiny_calls(task: LevelTask, db: Database, plan: Plan) -> list[Call]:
    """The tiny model's demonstration of `task` from the reference `plan` (module docstring)."""
    if task.level.number == 2:
        return one_day_calls(db, task)
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
