"""Demonstrations of each level of the task (utp_env/env/levels.py) as tool calls an episode of the level
makes, for SFT (`utp_env.rl.sft`) and the learning curve (`utp_env.rl.curve`).

Two kinds, both played through the env so every answer in a transcript is the env's own:

- **tiny** (`tiny_calls`), for the tiny model of `--tiny`, which can carry a behaviour to an unseen query only
  by copying words of its context: at levels 1, 3 and 4 look the trip's first leg up (`lookup_leg_calls`: one
  service per answer, mode by mode) and `add_leg` the service the answer lists, then `submit`; at level 2 look
  the city's restaurants up (cheapest first) and eat at the ones the answer lists, in its order, at fixed meal
  times, then look its attractions up (shortest visit first) and visit the first at a fixed time
  (`one_day_calls`), then `submit`. Every word such a demonstration writes is in the task text or an answer,
  at a place that does not depend on the query.
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
MEAL_SLOTS: tuple[tuple[Meal, str, str], ...] = (("breakfast", "08:15", "09:00"), ("lunch", "13:15", "14:15"),
                                                 ("dinner", "19:30", "20:30"))
"""Level 2's tiny demonstration: each meal at the restaurant of the same row of the `search_restaurants` answer
(breakfast the first row, lunch the second, dinner the third), from its start to its end (HH:MM)."""
VISIT_SLOT = ("10:00", "12:00")
"""Level 2's tiny demonstration: a visit to the first row of the `search_attractions` answer, from-to (HH:MM)."""
RESTAURANT_ORDER, ATTRACTION_ORDER = "cost", "duration"
"""The `sort_by` of level 2's tiny demonstration's searches: the cheapest restaurants and the shortest visit.
Sorted by rating, the answers' first rows are often the venues the given days already went to (the reference
plan's), and a venue repeated fails the diverse checks: 6 % of the mini train split's days then score 0, none
sorted so; the schedule also fits more days (mean reward 0.52 against 0.42, below)."""


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


def listed(db: Database, table: str, city: str, limit: int, sort_by: str) -> list[int]:
    """The rows `search_attractions` / `search_restaurants` lists first for `city` sorted by `sort_by`, as the
    answer."""
    from utp_env.tools.lookup.venues import find_attractions, find_restaurants

    rows = (find_attractions(db, city, None, sort_by) if table == "attractions"
            else find_restaurants(db, city, None, None, sort_by))
    return [int(r) for r in rows[:limit]]


def one_day_calls(db: Database, task: LevelTask) -> list[Call]:
    """Level 2's tiny demonstration: `search_restaurants` of the day's city (one row per meal of `MEAL_SLOTS`) and
    each meal at its row's restaurant and its slot; then `search_attractions` (one row) and a visit to it at
    `VISIT_SLOT`; then `submit`. A slot outside the hours the given stay leaves free is left out.

    Where a venue sits in the answer and when the schedule goes there depend on nothing the model cannot see,
    so a model that copies can learn it from a few demonstrations: the reference plan's own venues and times
    (chosen from its whole trip, its risk profile's buffers and the crowds) can be learned only by a model that
    plans. On the mini sandbox's first 100 train and validation queries of the level the schedule earns a mean
    reward of 0.52 and 0.54 (52 % and 64 % of the days pass every check; the reference plan, the ceiling, earns
    0.71 on the full sandbox), so GRPO has room above it."""
    assert task.city is not None  # level 2 names its city
    number = task.days[0]
    free_from, free_until = task.day_start or 0, task.day_end or 24 * 60

    def fits(start: str, end: str) -> bool:
        return free_from <= parse_hhmm(start) and parse_hhmm(end) <= free_until

    def visit(table: str, row: int, start: str, end: str) -> Call:
        kind = "attraction" if table == "attractions" else "restaurant"
        return ("add_item", {"day": number, "name": str(db.tables[table].columns["name"][row]), "activity": "visit",
                             "kind": kind, "start": start, "end": end})

    meals = len(MEAL_SLOTS)
    calls: list[Call] = [("search_restaurants", {"city": task.city, "limit": meals, "sort_by": RESTAURANT_ORDER})]
    for (meal, start, end), row in zip(MEAL_SLOTS, listed(db, "restaurants", task.city, meals, RESTAURANT_ORDER),
                                       strict=False):
        if fits(start, end):
            name, args = visit("restaurants", row, start, end)
            calls.append((name, {**args, "meal": meal}))
    calls.append(("search_attractions", {"city": task.city, "limit": 1, "sort_by": ATTRACTION_ORDER}))
    attractions = listed(db, "attractions", task.city, 1, ATTRACTION_ORDER)
    calls += [visit("attractions", row, *VISIT_SLOT) for row in attractions if fits(*VISIT_SLOT)]
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
