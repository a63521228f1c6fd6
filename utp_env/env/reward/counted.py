"""What a plan gets credit for: the rule of what counts (`counted_context`), which the env's reward
(utp_env/env/reward/) applies before it reads any metric.

An element of a plan counts only if the plan *schedules* it (a point-of-interest item with a start
and a later end), the database *knows* it in a city of the trip that is that day's city (a venue
open for the whole visit, an event on that date, the night's or the previous night's stay, an
arrival at a departure point of a leg that leaves that day after it, a service that runs on the
day's date at the stated times between that day's cities), and *once* (a venue once per trip, a leg
once, an arrival once per leg). docs/ENV.md "Reward" is this rule in words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Protocol

from utp_env.evaluation.commonsense import (
    VENUE_KINDS,
    in_destination,
    venue_closed_because,
)
from utp_env.evaluation.context import DayContext, LegContext, PlanContext, Visit
from utp_env.plan_format.text import is_absent
from utp_env.resolve import VenueName, departure_point_names
from utp_env.tools.clock import MINUTES_PER_DAY, format_hhmm
from utp_env.tools.database import normalize
from utp_env.tools.schema import VENUE_TABLE


def trip_cities(ctx: PlanContext) -> frozenset[str]:
    """The normalised cities of the trip the query asks for: its origin and every city the trip may
    go to (`commonsense.in_destination`)."""
    org = normalize(ctx.query.org)
    return frozenset({org, *(key for day in ctx.days for key in day.city_keys if in_destination(ctx, key))})


StayKey = tuple[str, str | None]
"""A stay as a summary field names it: its normalised name and the normalised city it states (None
when it states none)."""


def stay_key(text: str | None) -> StayKey | None:
    """The stay a summary field names (`StayKey`); None for an absent field."""
    if is_absent(text):
        return None
    assert text is not None  # is_absent(None)
    name = VenueName.of(text)
    return name.key, normalize(name.stated_city) if name.stated_city is not None else None


def night_keys(ctx: PlanContext) -> list[frozenset[StayKey]]:
    """Per day, the stays its accommodation items may name: that night's accommodation (its summary
    field; no night follows the trip's last day) and the previous night's (the morning end of it)."""
    last = ctx.query.days - 1
    tonight = [stay_key(day.day.accommodation) if day.index < last else None for day in ctx.days]
    return [frozenset(k for k in (tonight[i], tonight[i - 1] if i else None) if k is not None)
            for i in range(len(ctx.days))]


def is_night_stay(v: Visit, nights: frozenset[StayKey]) -> bool:
    """Whether an accommodation item is at one of `nights`: the same name, in the city the summary
    field states (the city the item states, else the one it was found in): a hotel chain's branch in
    another city is another stay."""
    city = normalize(v.stated_city) if v.stated_city is not None else v.city_key
    return any(key == v.key and (stated is None or stated == city) for key, stated in nights)


def _leg_key(lc: LegContext) -> tuple[Any, ...]:
    return (lc.leg.mode, lc.leg.number, lc.origin_key, lc.dest_key, lc.day)


def off_timetable(lc: LegContext, date: str | None) -> str | None:
    """Why a found flight, train or bus is not as its timetable runs (another date, departure or
    journey time, or a planned arrival before the scheduled one), or why a cab is not as the database
    has cabs (it states a number: cabs have none); None when it is."""
    leg, res = lc.leg, lc.resolved
    if leg.mode == "cab":
        return f"states the number {leg.number!r}, and cabs have none" if leg.number else None
    if res.row is None or res.scheduled_dep is None or res.scheduled_arr is None:
        return None
    if res.runs_on_date is False:
        return f"does not run on {date}"
    if leg.dep % MINUTES_PER_DAY != res.scheduled_dep:
        return f"departs {format_hhmm(res.scheduled_dep)}, not {format_hhmm(leg.dep)}"
    if leg.arr - leg.dep != res.scheduled_arr - res.scheduled_dep:
        return (f"takes {res.scheduled_arr - res.scheduled_dep} min as scheduled, not the stated "
                f"{leg.arr - leg.dep}")
    if leg.planned_arrival < leg.arr:
        return f"is planned to arrive at {format_hhmm(leg.planned_arrival)}, before its scheduled arrival"
    return None


def leg_counts(lc: LegContext, day: DayContext, trip: frozenset[str]) -> bool:
    """Whether a leg is one the reward credits: found in the database, as its timetable runs on the
    day's date (`off_timetable`), between two different cities of that day and of the trip."""
    return (lc.resolved.found and off_timetable(lc, day.date) is None and lc.origin_key != lc.dest_key
            and lc.origin_key in trip and lc.dest_key in trip
            and lc.origin_key in day.city_keys and lc.dest_key in day.city_keys)


def _scheduled(v: Visit) -> bool:
    item = v.item
    return item is not None and item.start is not None and item.end is not None and item.end > item.start


def known_here(v: Visit, day: DayContext, trip: frozenset[str]) -> bool:
    """Whether a venue item was found in the database in one of that day's cities, a city of the trip,
    and in the city it states, if it states one (`Name, Surat` found only in Amritsar is not known
    where the plan puts it)."""
    if v.ref is None or v.city_key not in day.city_keys or v.city_key not in trip:
        return False
    return v.stated_city is None or normalize(v.stated_city) == v.city_key


def _open(ctx: PlanContext, v: Visit, date: str | None) -> bool:
    if v.kind not in ("attraction", "restaurant") or v.ref is None or v.item is None:
        return True
    start, end = v.item.start, v.item.end
    assert start is not None and end is not None  # scheduled
    return venue_closed_because(ctx.db, VENUE_TABLE[v.kind], v.ref.row, date, start, end) is None


def departure_of(ctx: PlanContext, day: DayContext, v: Visit, legs: Iterable[LegContext],
                  taken: set[int]) -> LegContext | None:
    """The first leg of `legs` not yet `taken` that leaves after arrival item `v` ends from the place
    it names (`resolve.departure_point_names`; any name for a cab), or None."""
    end = v.item.end if v.item is not None else None
    for lc in sorted(legs, key=lambda lc: lc.leg.dep):
        if id(lc) in taken or (end is not None and lc.leg.dep < end):
            continue
        names = departure_point_names(ctx.db, lc.leg.mode, lc.resolved.row, lc.leg.origin)
        if lc.leg.mode == "cab" or v.key in names:
            taken.add(id(lc))
            return lc
    return None


def counted_context(ctx: PlanContext) -> PlanContext:
    """The plan as the reward credits it: a `PlanContext` whose days hold only the items and legs
    that count (the module's rule, in plan order; the `Visit` and `LegContext` objects are `ctx`'s)."""
    trip = trip_cities(ctx)
    nights = night_keys(ctx)
    venues: set[tuple[str, int]] = set()
    leg_keys: set[tuple[Any, ...]] = set()
    days: list[DayContext] = []
    for day in ctx.days:
        legs = []
        for lc in day.legs:
            key = _leg_key(lc)
            if key not in leg_keys and leg_counts(lc, day, trip):
                leg_keys.add(key)
                legs.append(lc)
        taken: set[int] = set()
        items: list[Visit] = []
        for v in day.items:
            if not _scheduled(v):
                continue
            if v.kind == "transit":
                if departure_of(ctx, day, v, legs, taken) is None:
                    continue
            elif v.kind in VENUE_KINDS:
                if not known_here(v, day, trip):
                    continue
                if v.kind == "accommodation":
                    if not is_night_stay(v, nights[day.index]):
                        continue
                else:
                    assert v.ref is not None  # known_here
                    venue = (v.ref.table, v.ref.row)
                    if venue in venues or not _open(ctx, v, day.date):
                        continue
                    venues.add(venue)
            else:  # a journey item (the legs are the journey), or an item of no known kind
                continue
            items.append(v)
        timed = [(v, v.item.start, v.item.end) for v in items if v.item is not None
                 and v.item.start is not None and v.item.end is not None]
        days.append(DayContext(day.index, day.day, day.date, day.city_keys, items, legs, items, timed))
    visits = [v for day in days for v in day.visits]
    by_kind: dict[str, list[Visit]] = {}
    for v in visits:
        by_kind.setdefault(v.kind, []).append(v)
    return replace(ctx, days=days, visits=visits, legs=[lc for day in days for lc in day.legs], by_kind=by_kind)


class Scope(Protocol):
    """The part of a trip a level asks (`utp_env.env.levels.LevelTask`): which elements it credits."""

    @property
    def scope_key(self) -> str:
        """A text that tells this part from every other (memo keys)."""
        ...

    def asks_element(self, day: int, kind: str) -> bool:
        """Whether an element of day `day` (1-based) of kind `kind` (a `Visit.kind`, or "transport" for a
        leg) is part of what the level asks."""
        ...


def scoped_context(counted: PlanContext, scope: Scope | None) -> PlanContext:
    """`counted` (a `counted_context`) keeping only the elements `scope` asks; `counted` itself without a
    scope (the whole trip)."""
    if scope is None:
        return counted
    days: list[DayContext] = []
    for day in counted.days:
        number = day.day.day
        items = [v for v in day.items if scope.asks_element(number, v.kind)]
        legs = [lc for lc in day.legs if scope.asks_element(number, "transport")]
        kept = {id(v) for v in items}
        timed = [t for t in day.timed if id(t[0]) in kept]
        days.append(DayContext(day.index, day.day, day.date, day.city_keys, items, legs, items, timed))
    visits = [v for day in days for v in day.visits]
    by_kind: dict[str, list[Visit]] = {}
    for v in visits:
        by_kind.setdefault(v.kind, []).append(v)
    return replace(counted, days=days, visits=visits, legs=[lc for day in days for lc in day.legs], by_kind=by_kind)


def knows_something(counted: PlanContext) -> bool:
    """Whether anything of the plan counts: a venue, stay or service the database knows where the plan
    puts it. A plan with nothing (an invented plan, another city's) scores 0."""
    return bool(counted.legs) or any(v.kind in VENUE_KINDS for v in counted.visits)
