"""Levels of the task: the same travel-planning task, asked in parts a small policy can learn one by one.

Level 4 is the paper's task (`utp_env/UTP-v0`, unchanged). Below it, each level asks a part of the
same trip, of the same benchmark query, and is scored by the same reward (utp_env/env/reward/) on
that part only:

- **Level 1** (`utp_env/UTP-L1-v0`), book the first leg of the trip: one search, one `add_leg`, `submit`.
  It asks day 1's first leg; it offers the transport searches, `cab_route`, `delay_stats`, `add_leg`,
  `remove_leg`, `view_plan` and `submit`.
- **Level 2** (`utp_env/UTP-L2-v0`), plan one day in the destination city: its attractions and meals, on
  the first full day of the trip in one city (day 2); it offers the venue searches, `crowd_profile`,
  `nearest_transit`, the item tools, `view_plan`, `check_plan` and `submit`.
- **Level 3** (`utp_env/UTP-L3-v0`), a short trip: the benchmark's 3-day queries (one city), whole.
- **Level 4** (`utp_env/UTP-L4-v0`, the same as `utp_env/UTP-v0`), the paper's task.

**A level's query is a view of a benchmark query** (`LevelTask`, made by `level_task`): the same query
of the same split (train, validation or test), so a level never reads a query that its split does
not hold, and what is held out at level 4 is held out at every level. What a level does not ask is
either taken from the query's reference plan and *given* (level 1 names the trip's first city, which
for a trip to a state is the reference planner's choice; level 2 gives the days before the asked day
and the asked day's stay, locked: the tools refuse to change them) or left out of the plan.

**Scored on what it asks** (`utp_env.env.reward.levels.score_level`): the reward's checks that apply to
that part (each level's `checks`), with Complete Information and the city route read on the part
(`completeness_parts`, `route`), the hard constraints it can honour (`hard`), and the metric terms of
what it asks, each counted only on the asked part (`LevelTask.asks_element`) against the reference
plan's same part. Everything else of the reward is the level-4 definition. `success` (the level's
pass) is every check the level scores passing with something counted.

One definition: this table (`LEVELS`) is what the env, its registration, the RL recipes, docs/ENV.md and
the tests read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.query import Query

Part = Literal["legs", "arrivals", "stays", "visits", "meals", "events"]
"""Kinds of plan content a level may ask: transport legs, arrivals at a departure point, stays
(check-in, night, checkout), attraction visits, restaurant meals, events."""
PART_OF_KIND: dict[str, Part] = {"transit": "arrivals", "accommodation": "stays", "attraction": "visits",
                                 "restaurant": "meals", "event": "events"}
"""The part of a point-of-interest item, by its venue kind (`evaluation.context.Visit.kind`)."""
ALL_PARTS: frozenset[Part] = frozenset(("legs", "arrivals", "stays", "visits", "meals", "events"))
Route = Literal["none", "outbound", "trip"]
"""Which city route a level checks: none, the outbound leg to the level's first city, or the whole trip."""
LevelNumber = Literal[1, 2, 3, 4]
FULL_LEVEL: LevelNumber = 4
TRANSPORT_SEARCHES = ("search_buses", "search_trains", "search_flights")


class LevelUnavailable(ValueError):
    """A query has no view at a level (a level-3 view of a 5-day trip; a level-1 view of a trip to a
    state without the reference plan that names its first city)."""


@dataclass(frozen=True)
class Level:
    """One level of the task (module docstring): what it asks, which tools it offers, how it is scored."""

    number: LevelNumber
    name: str
    title: str
    instruction: str
    """How to act, in the task text of the level (levels 1-2; levels 3-4 use the full task's)."""
    asks: frozenset[Part]
    tools: tuple[str, ...] | None
    """The tools offered (None: every tool of the env)."""
    horizons: frozenset[int] | None = None
    """The trip lengths whose queries the level views (None: every query)."""
    checks: tuple[str, ...] | None = None
    """The reward's commonsense checks scored (None: all of them, as at level 4)."""
    completeness_parts: tuple[str, ...] | None = None
    """The parts of Complete Information scored (None: the whole check, as at level 4)."""
    route: Route = "trip"
    hard: tuple[str, ...] | None = None
    """The hard constraints scored when the query sets them (None: every one it sets, as at level 4)."""
    terms: tuple[str, ...] | None = None
    """The reward terms scored (None: every term, as at level 4)."""

    @property
    def env_id(self) -> str:
        return f"utp_env/UTP-L{self.number}-v0"

    @property
    def whole_task(self) -> bool:
        """Whether the level scores a whole trip with the level-4 reward (levels 3 and 4)."""
        return self.asks == ALL_PARTS


LEVELS: dict[int, Level] = {level.number: level for level in (
    Level(1, "first_leg", "book the first leg of the trip",
          "Find a service with search_buses, search_trains or search_flights (origin, destination, date), or a "
          "cab with cab_route, add it with add_leg (day 1, its mode and number, a cab its departure; and "
          "planned_arrival: its arrival plus a buffer for its expected delay, which delay_stats gives), then "
          "call submit.",
          asks=frozenset({"legs"}),
          tools=(*TRANSPORT_SEARCHES, "cab_route", "delay_stats", "add_leg", "remove_leg", "view_plan", "submit"),
          checks=("within_sandbox", "complete_information", "reasonable_city_route", "non_conflicting_transport"),
          completeness_parts=("transportation",), route="outbound", hard=("budget", "transportation"),
          terms=("commonsense_pass_rate", "hard_pass_rate", "tdas")),
    Level(2, "one_day", "plan one day in the destination city: its visits and meals",
          "Look the city's attractions and restaurants up, then add at least one attraction and a breakfast, a "
          "lunch and a dinner to the day with add_item (each with a start and an end; meals at least 4 hours "
          "apart; open when you go; visits sized for the crowds and your risk profile), then call submit.",
          asks=frozenset({"visits", "meals"}),
          tools=("search_attractions", "search_restaurants", "crowd_profile", "nearest_transit", "add_item",
                 "move_item", "remove_item", "view_plan", "check_plan", "submit"),
          checks=("within_sandbox", "complete_information", "meal_gaps", "valid_poi_list", "within_current_city",
                  "diverse_restaurants", "diverse_attractions", "open_hours", "transit_distances"),
          completeness_parts=("attraction", "meals", "point_of_interest_list", "transit_distance"), route="none",
          hard=("budget",),
          terms=("commonsense_pass_rate", "hard_pass_rate", "bas", "cats", "temporal_meal", "temporal_attraction",
                 "spatial", "persona")),
    Level(3, "short_trip", "a short trip: 3 days in one city", "", asks=ALL_PARTS, tools=None,
          horizons=frozenset({3})),
    Level(4, "full_trip", "the paper's task", "", asks=ALL_PARTS, tools=None),
)}
"""The levels, by number."""


def level_of(number: object, argument: str = "level") -> Level:
    """The level numbered `number`; a ValueError naming `argument` and the levels otherwise."""
    if isinstance(number, bool) or not isinstance(number, int) or number not in LEVELS:
        known = ", ".join(f"{n} ({lv.name})" for n, lv in LEVELS.items())
        raise ValueError(f"{argument} must be one of the levels {known}, not {number!r}")
    return LEVELS[number]


# ---------------------------------------------------------------- a query's view at a level


@dataclass(frozen=True)
class LevelTask:
    """One benchmark query as a level asks it (module docstring).

    `days` are the day numbers the level asks content on (every day of the trip at levels 3-4);
    `given` is the part of the plan the level gives, locked (an empty plan when it gives nothing);
    `first_city` is where the trip's first leg goes (levels 1-2); `stay` the asked day's given stay
    and `day_start`, `day_end` the minutes between which the given stay leaves the day free (level 2).
    """

    level: Level
    query: Query
    days: tuple[int, ...]
    given: Plan
    first_city: str | None = None
    stay: str | None = None
    day_start: int | None = None
    day_end: int | None = None
    given_items: dict[int, tuple[PlanItem, ...]] = field(default_factory=dict)
    """The given point-of-interest items of each asked day (level 2's stay items), by day number."""

    @property
    def city(self) -> str | None:
        """The city of the asked day of level 2 (its given day's city)."""
        if self.level.number != 2:
            return None
        return self.given.days[self.days[0] - 1].cities[-1]

    @property
    def scope_key(self) -> str:
        """A text that tells this view from every other of the same query (memo keys)."""
        return f"level {self.level.number}, days {self.days}, first city {self.first_city}"

    def asks_element(self, day: int, kind: str) -> bool:
        """Whether the level credits a plan element: on an asked day (1-based), of a part the level asks
        (`kind`: a `Visit.kind`, or "transport" for a leg). What the level gives is of parts it does not
        ask (level 2 gives the asked day's stay, and asks its visits and meals)."""
        if day not in self.days:
            return False
        part = "legs" if kind == "transport" else PART_OF_KIND.get(kind)
        return part is not None and part in self.level.asks

    def is_given(self, day: int, element: PlanItem | TransportLeg) -> bool:
        """Whether `element` of day `day` (1-based) is one the level gives (locked)."""
        if isinstance(element, PlanItem) and element in self.given_items.get(day, ()):
            return True
        if day > len(self.given.days) or day in self.days:
            return False
        given = self.given.days[day - 1]
        return element in given.items or element in given.transport

    def view(self, plan: Plan) -> Plan:
        """The plan of this level made from a plan of the whole trip (the reference planner's, the
        deterministic baseline's, a degenerate policy's): the given part, and `plan`'s content of what the
        level asks on the asked days. At levels 3-4 the plan itself."""
        if self.level.whole_task:
            return plan
        days = [d.model_copy(deep=True) for d in self.given.days]
        for number in self.days:
            source = plan.days[number - 1] if number <= len(plan.days) else None
            if number <= len(days):
                days[number - 1] = _asked_day(self, days[number - 1], source)
            elif source is not None:
                days.append(_asked_day(self, Day(day=number, date=source.date, cities=[source.cities[0]]), source))
        return Plan(query_id=self.query.query_id, days=days, source=plan.source)


def _asked_day(task: LevelTask, base: Day, source: Day | None) -> Day:
    """Day `base` (the given day) with what the level asks of it taken from `source`."""
    if source is None:
        return base
    asks = task.level.asks
    day = base.model_copy(deep=True)
    if "legs" in asks and source.transport:
        first = min(source.transport, key=lambda leg: leg.dep)
        day.transport = [first.model_copy()]
        day.cities = [first.origin, first.destination]
    items = list(day.items)
    items += [i.model_copy() for i in source.items if task.asks_element(day.day, i.venue_type or "unknown")]
    day.items = sorted(items, key=lambda i: (i.start if i.start is not None else -1))
    if "meals" in asks:
        day.breakfast, day.lunch, day.dinner = source.breakfast, source.lunch, source.dinner
    if "visits" in asks:
        day.attractions = list(source.attractions)
    return day


def _first_city(query: Query, reference: Plan | None) -> str:
    if query.days == 3:
        return query.dest  # a one-city trip: the destination is a city
    legs = [leg for day in (reference.days if reference is not None else []) for leg in day.transport]
    if not legs:
        raise LevelUnavailable(f"query {query.query_id} goes to the state {query.dest}: level 1 names its first "
                               "city from the query's reference plan, and it has none")
    return legs[0].destination


def level_task(level: Level, query: Query, reference: Plan | None) -> LevelTask:
    """The view of `query` at `level` (`LevelTask`); `reference` is the query's reference plan, from which
    levels 1-2 take what they give. `LevelUnavailable` when the query has no view at the level."""
    if level.horizons is not None and query.days not in level.horizons:
        trips = " or ".join(str(h) for h in sorted(level.horizons))
        raise LevelUnavailable(f"level {level.number} ({level.title}) views {trips}-day queries; "
                               f"{query.query_id} is a {query.days}-day trip")
    if level.whole_task:
        return LevelTask(level, query, tuple(range(1, query.days + 1)), Plan(query_id=query.query_id, days=[]))
    first_city = _first_city(query, reference)
    if level.number == 1:
        return LevelTask(level, query, (1,), Plan(query_id=query.query_id, days=[]), first_city=first_city)
    return _one_day_task(level, query, reference, first_city)


def _one_day_task(level: Level, query: Query, reference: Plan | None, first_city: str) -> LevelTask:
    """Level 2's view: the reference plan's first full day in one city (not the trip's last), with the days
    before it and its stay items given."""
    days = reference.days if reference is not None else []
    asked = next((d for d in days[:-1] if len(d.cities) == 1 and d.accommodation), None)
    if reference is None or asked is None:
        raise LevelUnavailable(f"query {query.query_id}: level 2 asks the first full day of the reference plan "
                               "in one city, and the query's reference plan has none")
    stays = tuple(i.model_copy() for i in asked.items if i.venue_type == "accommodation")
    morning = [i.end for i in stays if i.end is not None and i.start is not None and i.end <= 12 * 60]
    evening = [i.start for i in stays if i.start is not None and i.start >= 12 * 60]
    given_day = Day(day=asked.day, date=asked.date, cities=list(asked.cities), accommodation=asked.accommodation,
                    items=list(stays))
    given = Plan(query_id=query.query_id, days=[*(d.model_copy(deep=True) for d in days[:asked.day - 1]), given_day])
    return LevelTask(level, query, (asked.day,), given, first_city=first_city, stay=asked.accommodation,
                     day_start=max(morning) if morning else None, day_end=min(evening) if evening else None,
                     given_items={asked.day: stays})


def level_tasks(level: Level, queries: Iterable[Query], references: dict[str, Plan]) -> list[LevelTask]:
    """The views at `level` of those `queries` that have one (in order)."""
    out = []
    for query in queries:
        try:
            out.append(level_task(level, query, references.get(query.query_id)))
        except LevelUnavailable:
            continue
    return out
