"""Complete Information (paper Table 8: "no key information should be left out of the plan") and the
extra check `timed_items`: each rule its own part (`report.subchecks`, keyed
"complete_information/<part>"); `readings.complete_information` picks the parent's reading
(docs/PAPER.md). `commonsense.commonsense_checks` combines the parts into the check.
"""

from __future__ import annotations

from typing import Any

from utp_env.config import CompleteInformationReading
from utp_env.evaluation.context import DayContext, PlanContext
from utp_env.evaluation.report import CheckResult, combine, verdict
from utp_env.itinerary import Day
from utp_env.plan_format.text import is_absent
from utp_env.tools.database import normalize

# --- complete information ------------------------------------------------------------------
# The paper's "no key information should be left out of the plan" (Table 8) is TravelPlanner's
# `is_not_absent` (evaluation/commonsense_constraint.py), which TripCraft copies and extends with the
# `event` and `point_of_interest_list` fields. Each rule is its own part (`report.subchecks`, keyed
# "complete_information/<part>"); `readings.complete_information` picks the parent (docs/PAPER.md).

# The day fields each parent counts towards "at least half of the key information is filled": every
# field of its day format (the day number and the city are always filled), against needed = n x days.
TRAVELPLANNER_FIELDS = ("days", "current_city", "transportation", "breakfast", "attraction", "lunch", "dinner",
                        "accommodation")
TRIPCRAFT_FIELDS = (*TRAVELPLANNER_FIELDS, "event", "point_of_interest_list")
NEEDED_PER_DAY = {"travelplanner": 6, "tripcraft": 8}  # `needed_info = 6 * days` / `8 * days`
FILLED_SHARE = 0.5


def _filled(text: str | None) -> bool:
    return not is_absent(text)


def day_fields_filled(day: Day, fields: tuple[str, ...]) -> int:
    """How many of the paper-format `fields` of `day` hold something (not empty, not `-`)."""
    return _fields_filled(_present(day.__dict__), fields)


def _fields_filled(present: dict[str, bool], fields: tuple[str, ...]) -> int:
    """`day_fields_filled` of a day's `_present` answers."""
    return sum([present[f] for f in fields])


def _present(values: dict[str, Any]) -> dict[str, bool]:
    """Whether each paper-format field of a day holds something, from the day's field values
    (`Day.__dict__`): what `_fields_filled` counts and the rules of `_parents_parts` read, each tested once."""
    return {"days": True, "current_city": True, "transportation": bool(values["transport"]),
            "breakfast": _filled(values["breakfast"]), "attraction": bool(values["attractions"]),
            "lunch": _filled(values["lunch"]), "dinner": _filled(values["dinner"]),
            "accommodation": _filled(values["accommodation"]), "event": bool(values["events"]),
            "point_of_interest_list": bool(values["items"])}


def _is_travel_day(day: Day) -> bool:
    """The parents' test `'from ' in current_city`: the day moves between cities."""
    return len(day.cities) > 1


def _day_label(day: DayContext) -> str:
    return f"day {day.index + 1} ({day.day.current_city})"


def _day_count(ctx: PlanContext) -> list[str]:
    """The day-count rule of every reading: the plan has as many days as the query."""
    if len(ctx.days) == ctx.query.days:
        return []
    return [f"the plan has {len(ctx.days)} day(s), the query asks for {ctx.query.days}"]


def _parents_parts(ctx: PlanContext, parent: str) -> dict[str, CheckResult]:
    """TravelPlanner's or TripCraft's `is_not_absent`, one part per rule, over the query's days."""
    q = ctx.query
    days = ctx.days[:q.days]  # the parents read `range(min(question['days'], len(plan)))`
    problems: dict[str, list[str]] = {name: [] for name in (
        "city_number", "transportation", "attraction", "accommodation", "meals")}
    problems["days"] = _day_count(ctx)
    org = normalize(q.org)
    cities = {key for day in days for key in day.city_keys}
    if days and _is_travel_day(days[0].day) and days[0].city_keys[0] != org:
        problems["city_number"].append(f"day 1 leaves from {days[0].day.cities[0]}, not {q.org}")
    visited = len(cities - {org})
    if visited != q.visiting_city_number:
        problems["city_number"].append(f"{visited} cities other than {q.org} in the plan, the query asks for "
                                       f"{q.visiting_city_number}")
    tripcraft = parent == "tripcraft"
    if tripcraft:
        problems["point_of_interest_list"] = []
        problems["transit_distance"] = []
    fields = TRIPCRAFT_FIELDS if tripcraft else TRAVELPLANNER_FIELDS
    filled = 0
    for day in days:
        values = day.day.__dict__  # the day's fields, read at dict speed
        present = _present(values)  # (each field's test once, for the rules and the count below)
        travel = len(values["cities"]) > 1  # `_is_travel_day`
        if travel and not present["transportation"]:
            problems["transportation"].append(f"{_day_label(day)}: changes city with no transportation")
        if not travel and not present["attraction"]:
            problems["attraction"].append(f"{_day_label(day)}: no attraction on a day that is not a travel day")
        if day.index != q.days - 1 and not present["accommodation"]:
            problems["accommodation"].append(f"{_day_label(day)}: no accommodation for the night")
        if not travel:
            missing = [m for m in ("breakfast", "lunch", "dinner") if not present[m]]
            if missing:
                problems["meals"].append(f"{_day_label(day)}: no {', '.join(missing)} on a day that is not a "
                                         "travel day")
        if tripcraft:
            items = values["items"]
            if not items:
                problems["point_of_interest_list"].append(f"{_day_label(day)}: the point-of-interest list is empty")
            for item in items:
                fields_of = item.__dict__
                if fields_of["transit_stop"] is not None and fields_of["transit_distance_m"] is None:
                    problems["transit_distance"].append(f"{_day_label(day)}: {item.name!r} names its nearest "
                                                        f"transit {item.transit_stop!r} without a distance")
        filled += _fields_filled(present, fields)
    needed = NEEDED_PER_DAY[parent] * q.days
    share = filled / needed if needed else 1.0
    problems["filled_fields"] = ([f"{filled} of the {needed} key fields are filled ({100 * share:.0f}%, "
                                  f"fewer than {100 * FILLED_SHARE:.0f}%)"] if share < FILLED_SHARE else [])
    return {name: verdict(found) for name, found in problems.items()}


def _basic_parts(ctx: PlanContext) -> dict[str, CheckResult]:
    """The project's first rules of complete information (the `basic` reading): every day of the
    query, no empty day, a stay for every night, transport on every travel day, a start and end time
    for every point-of-interest item."""
    problems: dict[str, list[str]] = {name: [] for name in (
        "empty_days", "accommodation", "transportation", "timed_items")}
    problems["days"] = _day_count(ctx)
    last = len(ctx.days) - 1
    for day in ctx.days:
        n = day.index + 1
        if not day.visits and not day.legs:
            problems["empty_days"].append(f"day {n} is empty")
            continue
        if day.index < last and not any(v.kind == "accommodation" for v in day.visits):
            problems["accommodation"].append(f"day {n} has no accommodation")
        if len(day.day.cities) > 1 and not day.legs:
            problems["transportation"].append(f"day {n} travels {day.day.current_city} without transport")
        problems["timed_items"] += untimed_items(day)
    return {name: verdict(found) for name, found in problems.items()}


def untimed_items(day: DayContext) -> list[str]:
    """The point-of-interest items of `day` without a start or an end time."""
    if len(day.timed) == len(day.items):  # `timed` holds the items with both times
        return []
    return [f"{visit.label} has no start/end time" for visit in day.items if not visit.timed]


def complete_information_parts(ctx: PlanContext, reading: CompleteInformationReading = "tripcraft",
                               ) -> dict[str, CheckResult]:
    """The rules of Complete Information under `reading` (`EvaluationReadings.complete_information`)."""
    return _basic_parts(ctx) if reading == "basic" else _parents_parts(ctx, reading)


def complete_information(ctx: PlanContext, reading: CompleteInformationReading = "tripcraft") -> CheckResult:
    """No key information left out of the plan: every day of the query and the asked number of
    cities; transportation on a day that changes city; an attraction, a breakfast, a lunch and a
    dinner on a day spent in one city; an accommodation every night but the last; a non-empty
    point-of-interest list every day, with a distance for every nearest transit it names; at least
    half of the day fields filled."""
    return combine(complete_information_parts(ctx, reading))


def timed_items(ctx: PlanContext) -> CheckResult:
    """An extra check, not the parents' (their Complete Information does not read the times): every
    point-of-interest item has a start and an end time."""
    problems = [p for day in ctx.days for p in untimed_items(day)]
    return verdict(problems, any(day.items for day in ctx.days), "no point-of-interest items")
